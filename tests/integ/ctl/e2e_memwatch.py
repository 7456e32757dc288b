"""The agent's GPU memory watch, end to end: `gpupool up` (gpupoold + one agent over the mock NVML
+ real gpupool-run supervisors and processes), the agent's grace lowered to 2 s through
GPUPOOL_MEMORY_GRACE_SECONDS (inherited by the agents `gpupool up` starts).

Processes "use" GPU memory through the mock's control file (proc GPU PID MIB):
- a fractional job (gpu_milli 500, gpu_memory_mib 1024) whose background process uses 2048 MiB
  is stopped: the job is Failed, its reason names the GPU memory and the limit, the event shows in
  `gpupool describe job`, the replica's final record carries it, its process group is gone;
- likewise a fractional job whose process left the job's session (setsid): found through its
  ancestry;
- a fractional job under its limit, a whole-GPU job using 15000 MiB and a process of no job are
  left alone (they were above, or under, for at least as long as the stopped ones when those
  failed, and one more round after);
- `gpupool down` stops everything.
Arguments: the gpupool program (gpupoold, gpupool-agent, gpupool-run beside it).
"""
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


port = free_ports(2)
env = dict(os.environ, GPUPOOL_MEMORY_GRACE_SECONDS="2")
try:
    up = subprocess.run([gpupool, "up", "--data-dir", pool, "--port", str(port), "--nodes",
                         "pcie-t4:1"], capture_output=True, text=True, timeout=60, env=env)
    check(up.returncode == 0 and "is up" in up.stdout, "gpupool up", up.stdout, up.stderr)
    alog = os.path.join(pool, "logs", "agent-%s.log" % node)
    wait("the agent's memory watch with a 2 s grace",
         lambda: "memwatch grace_s=2" in open(alog).read())
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

    # The ones to be left alone first, so they are watched at least as long as the others.
    control("proc %d %d 512" % (calm_gpu, calm_leader))       # under its limit
    control("proc %d %d 15000" % (whole_gpu, whole_leader))   # a whole GPU: no limit
    control("proc %d 1 4096" % calm_gpu)                      # init: a process of no job
    control("proc %d %d 2048" % (hog_gpu, hog_child))
    if has_setsid:
        control("proc %d %d 3000" % (esc_gpu, esc_child))

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
finally:
    down, leftover = pool_down(gpupool, pool, tmp, mark)
check(down.returncode == 0, "gpupool down", down.stdout, down.stderr)
check(not leftover, "down stopped every job", leftover)
print("ok")
