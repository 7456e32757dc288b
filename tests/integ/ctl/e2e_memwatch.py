"""The agent's GPU memory watch, end to end: `gpupool up` (gpupoold + one agent over the mock NVML
+ real gpupool-run supervisors and processes), the agent's grace set to 2 s and its interval to
300 ms through GPUPOOL_MEMORY_GRACE_SECONDS and GPUPOOL_MEMORY_INTERVAL_MS (inherited by the
agents `gpupool up` starts); a --memory-interval out of bounds is refused.

Processes "use" GPU memory through the mock's control file (proc GPU PID MIB):
- a fractional job (gpu_milli 500, gpu_memory_mib 1024) whose background process uses 2048 MiB
  is stopped: the job is Failed, its reason names the GPU memory and the limit, the event shows in
  `gpupool describe job`, the replica's final record carries it, its process group is gone;
- likewise a fractional job whose process left the job's session (setsid): found through its
  ancestry;
- a fractional job with CPU and memory limits, so a cgroup of its own: a process the test starts
  outside the job (in no session of the job's, not below its supervisor: where a container's
  processes are, below podman's conmon) and moves into the replica's cgroup counts for it, and
  the job is stopped;
- a fractional job under its limit, a whole-GPU job using 15000 MiB and a process of no job are
  left alone (they were above, or under, for at least as long as the stopped ones when those
  failed, and one more round after); the process of no job (init) and one in a cgroup named like
  a replica's that no running replica has are reported in the agent's log, not charged;
- `gpupool down` stops everything.
The cgroup cases need cgroups this test can write (root); without, they are skipped (said so).
Arguments: the gpupool program (gpupoold, gpupool-agent, gpupool-run beside it).
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from pool import Client, alive_marked, check, free_ports, job_main, wait, pool_down

gpupool = sys.argv[1]
tmp = tempfile.mkdtemp(prefix="gpupool-memwatch.")
pool = os.path.join(tmp, "pool")
node = "pcie-t4-1"
agent_dir = os.path.join(pool, "agents", node)
mark = os.path.basename(tmp).replace(".", "-")  # tells this run's processes from any other
nap = "sleep %d" % (400 + sum(map(ord, mark)) % 500)


def children(pid):
    out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


def group_alive(pgid):
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def control(line):
    with open(os.path.join(agent_dir, "nvml-control"), "a") as f:
        f.write(line + "\n")


def replica_dir(job_id, epoch):
    for sub in ("replicas", "finished"):
        path = os.path.join(agent_dir, sub, "%d-0-%d" % (job_id, epoch))
        if os.path.isdir(path):
            return path
    return None


def final_status(job_id, epoch):
    path = replica_dir(job_id, epoch)
    try:
        with open(os.path.join(path, "status.json")) as f:
            st = json.load(f)
    except (OSError, TypeError, ValueError):
        return None
    return st if st.get("state") in ("killed", "exited") else None


def move_to_cgroup(pid, dirs):
    for path in dirs:
        with open(os.path.join(path, "cgroup.procs"), "w") as f:
            f.write(str(pid))


def replica_cgroups(job_id, epoch, leader):
    """The directories of a replica's cgroup in every hierarchy (src/agent/cgroup.h), as its
    leader process is in them (another pool on the machine may have a job of the same id)."""
    mark = "/gpupool/job%d-r0-e%d-p" % (job_id, epoch)
    rels = set()
    with open("/proc/%d/cgroup" % leader) as f:
        for ln in f:
            rel = ln.split(":", 2)[2].strip()
            if mark in rel:  # up to the replica's own directory (the leader may be below it)
                at = rel.index(mark) + len(mark)
                rels.add(rel[:rel.find("/", at)] if "/" in rel[at:] else rel)
    return [d for rel in rels
            for d in glob.glob("/sys/fs/cgroup" + rel) + glob.glob("/sys/fs/cgroup/*" + rel)]


# The watch's interval is an agent flag, bounded.
agent_bin = os.path.join(os.path.dirname(os.path.abspath(gpupool)), "gpupool-agent")
bad = subprocess.run([agent_bin, "--memory-interval", "10"], capture_output=True, text=True)
check(bad.returncode == 2 and "--memory-interval: a whole number of milliseconds, 50..60000"
      in bad.stderr, "a bad --memory-interval is refused", bad.returncode, bad.stderr)

port = free_ports(2)
env = dict(os.environ, GPUPOOL_MEMORY_GRACE_SECONDS="2", GPUPOOL_MEMORY_INTERVAL_MS="300")
outsiders = []  # processes this test started and moved into cgroups
fake_cgroup = None
try:
    up = subprocess.run([gpupool, "up", "--data-dir", pool, "--port", str(port), "--nodes",
                         "pcie-t4:1"], capture_output=True, text=True, timeout=60, env=env)
    check(up.returncode == 0 and "is up" in up.stdout, "gpupool up", up.stdout, up.stderr)
    alog = os.path.join(pool, "logs", "agent-%s.log" % node)
    wait("the agent's memory watch with a 2 s grace, every 300 ms",
         lambda: "memwatch grace_s=2 interval_ms=300" in open(alog).read())
    token = open(os.path.join(pool, "admin.token")).read().strip()
    admin = Client("http://127.0.0.1:%d" % port, token)
    s, d = admin.post("/v1/tenants", {"name": "mw"})
    check(s == 201, "tenant", s, d)

    def submit(name, cmd, **resources):
        spec = {"name": name, "tenant": "mw", "command": ["sh", "-c", cmd],
                "resources": resources}
        s, d = admin.post("/v1/jobs", spec)
        check(s == 201, "submit " + name, s, d)
        return d["id"]

    def job(ref):
        s, d = admin.get("/v1/jobs/%s" % ref)
        check(s == 200, "get job", s, d)
        return d

    def running(name):
        """The running job, its GPU index, epoch and main process (its shell, in its sandbox)."""
        d = wait(name + " running", lambda: job(name)["state"] == "Running" and job(name))
        place = d["placement"][0]
        epoch = place["epoch"]
        leader = wait(name + "'s process", lambda: job_main("%s-%s" % (name, mark)))
        return d, place["gpus"][0]["index"], epoch, leader

    frac = {"gpu_milli": 500, "gpu_memory_mib": 1024}
    hog = submit("hog", "%s & wait # hog-%s" % (nap, mark), **frac)
    has_setsid = shutil.which("setsid") is not None  # util-linux
    if has_setsid:
        submit("escape", "setsid %s & wait # escape-%s" % (nap, mark), **frac)
    submit("calm", "%s & wait # calm-%s" % (nap, mark), **frac)
    submit("whole", "%s & wait # whole-%s" % (nap, mark), gpus=1)
    boxed = submit("boxed", "%s & wait # boxed-%s" % (nap, mark), cpu_milli=500, memory_mib=256,
                   **frac)

    d, hog_gpu, hog_epoch, hog_leader = running("hog")
    check(d["placement"][0]["gpus"][0]["memory_mib"] == 1024, "hog's limit", d)
    hog_child = wait("hog's background process", lambda: children(hog_leader))[0]
    if has_setsid:
        _, esc_gpu, _, esc_leader = running("escape")
        esc_child = wait("escape's background process", lambda: children(esc_leader))[0]
        with open("/proc/%d/stat" % esc_child) as f:
            sid = int(f.read().rsplit(")", 1)[1].split()[3])
        check(sid == esc_child and sid != esc_leader, "escape's process left the job's session",
              sid, esc_child, esc_leader)
    _, calm_gpu, _, calm_leader = running("calm")
    _, whole_gpu, _, whole_leader = running("whole")
    _, boxed_gpu, boxed_epoch, boxed_leader = running("boxed")
    with open("/proc/%d/cgroup" % boxed_leader) as f:
        in_cgroup = "/gpupool/job%d-r0-e%d-p" % (boxed, boxed_epoch) in f.read()
    boxed_dirs = replica_cgroups(boxed, boxed_epoch, boxed_leader) if in_cgroup else []
    if boxed_dirs:
        outsider = subprocess.Popen(["sleep", "600"], start_new_session=True)
        outsiders.append(outsider)
        move_to_cgroup(outsider.pid, boxed_dirs)
        with open("/proc/%d/cgroup" % outsider.pid) as f:
            check("/gpupool/job%d-r0-e%d-p" % (boxed, boxed_epoch) in f.read(),
                  "the outsider is in the replica's cgroup", boxed_dirs)
        # A cgroup named like a replica's, of none that runs here.
        parent = os.path.dirname(boxed_dirs[0])
        fake_cgroup = os.path.join(parent, "job999999999-r0-e1-p1")
        os.makedirs(fake_cgroup, exist_ok=True)  # a run killed before its cleanup left it
        stray = subprocess.Popen(["sleep", "600"], start_new_session=True)
        outsiders.append(stray)
        move_to_cgroup(stray.pid, [fake_cgroup])
    else:
        print("skipped: the cgroup cases (no replica cgroup: %s)" %
              ("not in one" if not in_cgroup else "its directory not found"))

    # The ones to be left alone first, so they are watched at least as long as the others.
    control("proc %d %d 512" % (calm_gpu, calm_leader))       # under its limit
    control("proc %d %d 15000" % (whole_gpu, whole_leader))   # a whole GPU: no limit
    control("proc %d 1 4096" % calm_gpu)                      # init: a process of no job
    if boxed_dirs:
        control("proc %d %d 1000" % (calm_gpu, stray.pid))      # of no running replica
    control("proc %d %d 2048" % (hog_gpu, hog_child))
    if has_setsid:
        control("proc %d %d 3000" % (esc_gpu, esc_child))
    if boxed_dirs:
        control("proc %d %d 2500" % (boxed_gpu, outsider.pid))

    d = wait("hog failed", lambda: job("hog")["state"] in ("Failed", "Succeeded") and job("hog"))
    check(d["state"] == "Failed" and
          "GPU memory 2048 MiB on GPU %d (GPU-" % hog_gpu in d["reason"] and
          "above the replica's limit of 1024 MiB for" in d["reason"] and d["restarts"] == 0,
          "hog failed for its GPU memory", d)
    wait("hog's processes gone", lambda: not group_alive(hog_leader) and
         not os.path.exists("/proc/%d" % hog_leader) and
         not os.path.exists("/proc/%d" % hog_child))
    check(not alive_marked("hog-" + mark), "no process of hog left", alive_marked("hog-" + mark))
    st = wait("hog's final record", lambda: final_status(hog, hog_epoch))
    check(st["state"] == "killed" and st["stop_reason"].startswith("GPU memory 2048 MiB") and
          st["reason"].startswith(st["stop_reason"] + " (stopped: SIGTERM"),
          "the replica's record carries the reason", st)
    out = subprocess.run([gpupool, "describe", "job", "hog"], capture_output=True, text=True,
                         env=dict(os.environ, GPUPOOL_SERVER="http://127.0.0.1:%d" % port,
                                  GPUPOOL_TOKEN=token))
    check(out.returncode == 0 and "Failed" in out.stdout and
          "replica 0: GPU memory 2048 MiB" in out.stdout, "gpupool describe job shows the event",
          out.stdout, out.stderr)

    if has_setsid:
        d = wait("escape failed", lambda: job("escape")["state"] in ("Failed", "Succeeded")
                 and job("escape"))
        check(d["state"] == "Failed" and "GPU memory 3000 MiB" in d["reason"],
              "a process that left the session still counts for its job", d)
        wait("escape's processes gone", lambda: not alive_marked("escape-" + mark) and
             not os.path.exists("/proc/%d" % esc_child))

    if boxed_dirs:
        d = wait("boxed failed", lambda: job("boxed")["state"] in ("Failed", "Succeeded")
                 and job("boxed"))
        check(d["state"] == "Failed" and "GPU memory 2500 MiB on GPU %d" % boxed_gpu in d["reason"],
              "a process in the replica's cgroup counts for its job, wherever it came from", d)
        # The supervisor kills what is left in the replica's cgroup: the outsider too.
        check(outsider.wait(timeout=60) is not None, "the outsider was stopped with the job")

    # One more round for good measure: the others are still running.
    s, n = admin.get("/v1/nodes/" + node)
    beat = n["heartbeat_ms"]
    wait("another heartbeat", lambda: admin.get("/v1/nodes/" + node)[1]["heartbeat_ms"] > beat)
    for name in ("calm", "whole"):
        d = job(name)
        check(d["state"] == "Running", name + " keeps running", d)
    check(alive_marked("calm-" + mark) and alive_marked("whole-" + mark),
          "their processes are alive")
    log = open(alog).read()
    check("memwatch stop job=%d " % hog in log and "memwatch stop job=%d " % job("calm")["id"]
          not in log,
          "the agent logs its stops", log[-3000:])
    check("pid=1 used_mib=4096: a GPU process of no replica" in log,
          "the process of no job is reported", log[-3000:])
    if boxed_dirs:
        check("pid=%d used_mib=1000: a GPU process of no replica (cgroup " % stray.pid in log and
              "job999999999-r0-e1-p1 of no running replica)" in log,
              "a process in a cgroup of no running replica is reported", log[-3000:])
        check(job("calm")["state"] == "Running", "and not charged to the job on its GPU")
finally:
    for p in outsiders:
        if p.poll() is None:
            p.kill()
        p.wait()
    if fake_cgroup:
        try:
            os.rmdir(fake_cgroup)
        except OSError as e:  # never at the cost of stopping the pool below
            print("cannot remove %s: %s" % (fake_cgroup, e))
    down, leftover = pool_down(gpupool, pool, tmp, mark)
check(down.returncode == 0, "gpupool down", down.stdout, down.stderr)
check(not leftover, "down stopped every job", leftover)
print("ok")
