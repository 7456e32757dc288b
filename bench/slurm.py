#!/usr/bin/env python3
"""gpupool and Slurm side by side on this machine; bench/slurm.sh runs it (see its header).

Measures, for each system, RUNS times:
  submit   JOBS one-GPU jobs submitted through the command line by CLIENTS concurrent clients,
           one process per submit (xargs -P CLIENTS), while nothing may start: Slurm's partition
           is DOWN, gpupool's nodes are all cordoned. submits/s = JOBS / wall seconds; CPU per
           submit = the user+system CPU of the submit processes (getrusage of the children of
           xargs) / JOBS; the server's CPU per job = the CPU its daemons used meanwhile
           (/proc/PID/stat: slurmctld and munged; gpupoold) / JOBS.
  release  one command lets work start (scontrol update PartitionName=gpu State=UP; gpupool
           nodes uncordon of the 16 nodes) and the time from before it to the first poll that
           counts 128 running jobs (squeue -h -t R; GET /v1/jobs?state=Running), polled every
           POLL seconds.
Plus, without any server load, the CPU of one submit process measured alone (SOLO sequential
submits of each gpupool binary given, e.g. the one before and after a change).

Slurm runs in a PID and mount namespace of its own (unshare --pid --mount-proc --kill-child): 16
slurmd (slurmd -N nK, one port each on 127.0.0.1) with 8 GPUs each as gres (Count=8, no device
files, AutoDetect=off), slurmctld and munged with a key, socket, state and logs in the work
directory; when the namespace's first process dies every process in it dies, jobs included.
gpupool runs as `gpupool up` with 16 mock DGX A100 nodes; its jobs run as host processes.
Results: one JSON file (--results)."""
import argparse
import json
import os
import resource
import shutil
import signal
import socket
import stat
import statistics
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchinfo  # noqa: E402

NODES = 16
GPUS_PER_NODE = 8
TARGET = NODES * GPUS_PER_NODE


def log(*a):
    print("slurm-bench:", *a, file=sys.stderr, flush=True)


def free_ports(n):
    socks, ports = [], []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
        ports.append(s.getsockname()[1])
    for s in socks:
        s.close()
    return ports


def proc_cpu_s(pids):
    """User+system CPU seconds of these processes so far (those that are gone count 0)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        try:
            with open("/proc/%d/stat" % pid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
        except (OSError, ValueError, IndexError):
            pass
    return total


def children_cpu_s():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_submits(argv, jobs, clients, env, cwd, server_pids):
    """JOBS runs of argv, CLIENTS at a time, one process each. Returns the measures."""
    # One line of input per run; with -I{} (and no {} in argv) the line is not passed on:
    # each run is exactly argv.
    cmd = ["xargs", "-P", str(clients), "-I", "{}"] + argv
    feed = "".join("%d\n" % i for i in range(jobs)).encode()
    srv0 = proc_cpu_s(server_pids)
    cpu0 = children_cpu_s()
    t0 = time.monotonic()
    p = subprocess.run(cmd, input=feed, env=env, cwd=cwd, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE)
    wall = time.monotonic() - t0
    cpu = children_cpu_s() - cpu0
    srv = proc_cpu_s(server_pids) - srv0
    if p.returncode != 0:
        raise RuntimeError("submits failed (xargs status %d): %s" %
                           (p.returncode, p.stderr.decode(errors="replace")[-2000:]))
    return {"jobs": jobs, "wall_s": wall, "per_s": jobs / wall,
            "client_cpu_ms": 1000.0 * cpu / jobs, "server_cpu_ms": 1000.0 * srv / jobs}


def shared_libs(binary):
    """How many shared libraries the dynamic loader maps for binary at start (ldd), or None."""
    path = shutil.which(binary) or binary
    try:
        out = subprocess.run(["ldd", path], capture_output=True, text=True, timeout=30).stdout
    except OSError:
        return None
    return sum(1 for line in out.splitlines() if "=>" in line) or None


def wait_count(count, target, poll, limit):
    """Seconds until count() >= target, polled every POLL s, or None after LIMIT s."""
    t0 = time.monotonic()
    while True:
        n = count()
        if n >= target:
            return time.monotonic() - t0, n
        if time.monotonic() - t0 > limit:
            return None, n
        time.sleep(poll)


def solo_cpu_ms(runs, n, groups=10):
    """CPU milliseconds of one process of each run ({label: (argv, env, cwd)}), over N sequential
    runs of each: GROUPS groups, the runs taking turns group by group so that a change in the
    load of a shared machine falls on all alike; the median over the groups of each."""
    per = {label: [] for label in runs}
    k = max(1, n // groups)
    for _ in range(groups):
        for label, (argv, env, cwd) in runs.items():
            c0 = children_cpu_s()
            for _ in range(k):
                subprocess.run(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, check=True)
            per[label].append(1000.0 * (children_cpu_s() - c0) / k)
    return {label: statistics.median(xs) for label, xs in per.items()}


# ---------------------------------------------------------------- gpupool

class Gpupool:
    def __init__(self, bin_dir, work, port):
        self.bin = os.path.abspath(bin_dir)
        self.dir = os.path.join(work, "gpupool")
        self.port = port
        self.base = "http://127.0.0.1:%d" % port
        self.env = dict(os.environ, HOME=work)
        self.env.pop("GPUPOOL_CONTEXT", None)

    def cli(self, *args, token=None, check=True):
        env = dict(self.env, GPUPOOL_SERVER=self.base,
                   GPUPOOL_TOKEN=token or self.admin_token)
        p = subprocess.run([os.path.join(self.bin, "gpupool")] + list(args), env=env,
                           capture_output=True, text=True)
        if check and p.returncode != 0:
            raise RuntimeError("gpupool %s: %s" % (" ".join(args), p.stderr.strip()))
        return p.stdout

    def up(self):
        shutil.rmtree(self.dir, ignore_errors=True)
        # No per-tenant request rate limit (api.rate_limit, 100/s by default): the clients of
        # one tenant submit faster than that, and Slurm has no such limit by default. The
        # agents run jobs as host processes (GPUPOOL_RUNTIME=none, gpupool-agent --runtime),
        # as slurmd does, not in podman sandboxes: the measure is the control plane.
        subprocess.run([os.path.join(self.bin, "gpupool"), "up", "--data-dir", self.dir,
                        "--port", str(self.port), "--nodes", "dgx-a100:%d" % NODES],
                       env=dict(self.env, GPUPOOL_API_RATE_LIMIT="0", GPUPOOL_RUNTIME="none"),
                       check=True, stdout=subprocess.DEVNULL)
        self.admin_token = open(os.path.join(self.dir, "admin.token")).read().strip()
        self.cli("tenant", "create", "bench")
        doc = json.loads(self.cli("token", "create", "--name", "bench-user", "--role", "user",
                                  "--tenant", "bench", "-o", "json"))
        self.user_token = doc["token"]
        nodes = self.api("/v1/nodes")
        self.nodes = sorted(n["name"] for n in (nodes["items"] if isinstance(nodes, dict)
                                                 else nodes))
        if len(self.nodes) != NODES:
            raise RuntimeError("gpupool up: %d nodes, not %d" % (len(self.nodes), NODES))
        self.server_pids = [self.pid_of("gpupoold")]

    def pid_of(self, name):
        with open(os.path.join(self.dir, "pids", name + ".pid")) as f:
            return int(f.read().split()[0])

    def down(self):
        subprocess.run([os.path.join(self.bin, "gpupool"), "down", "--data-dir", self.dir],
                       env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def api(self, path):
        req = urllib.request.Request(self.base + path,
                                     headers={"Authorization": "Bearer " + self.admin_token})
        with urllib.request.urlopen(req, timeout=30) as r:
            return json.loads(r.read())

    def count(self, state):
        n, after = 0, ""
        while True:
            d = self.api("/v1/jobs?state=%s&limit=1000%s" % (state, after))
            n += len(d["items"])
            if not d.get("next"):
                return n
            after = "&after=%s" % d["next"]

    def submit_argv(self):
        return [os.path.join(self.bin, "gpupool"), "submit", "--gpus", "1", "--", "sleep", "600"]

    def run(self, jobs, clients, poll):
        self.up()
        try:
            self.cli("nodes", "cordon", *self.nodes)
            env = dict(self.env, GPUPOOL_SERVER=self.base, GPUPOOL_TOKEN=self.user_token)
            r = run_submits(self.submit_argv(), jobs, clients, env, self.dir, self.server_pids)
            pending = self.count("Pending")
            if pending != jobs:
                raise RuntimeError("gpupool: %d jobs pending after the submits, not %d" %
                                   (pending, jobs))
            t0 = time.monotonic()
            self.cli("nodes", "uncordon", *self.nodes)
            secs, n = wait_count(lambda: self.count("Running"), min(TARGET, jobs), poll, 120)
            r["release_s"] = None if secs is None else time.monotonic() - t0
            r["running_seen"] = n
            return r
        finally:
            self.down()


# ---------------------------------------------------------------- Slurm

SLURM_CONF = """ClusterName=gpbench
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={work}/munge/munge.socket
SlurmUser=root
SlurmdUser=root
StateSaveLocation={work}/state
SlurmdSpoolDir={work}/spool/%n
SlurmctldPidFile={work}/run/slurmctld.pid
SlurmdPidFile={work}/run/slurmd-%n.pid
SlurmctldLogFile={work}/log/slurmctld.log
SlurmdLogFile={work}/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
SchedulerType=sched/backfill
ReturnToService=2
SlurmdParameters=config_overrides
MaxJobCount=100000
{sched}PlugStackConfig={work}/plugstack.conf
{nodes}
PartitionName=gpu Nodes=ALL Default=YES MaxTime=INFINITE State=DOWN
"""

TUNED = "SchedulerParameters=default_queue_depth=10000\n"

START_SH = """set -u
W={work}
munged -F -f --key-file=$W/munge/munge.key --socket=$W/munge/munge.socket \\
    --pid-file=$W/run/munged.pid --log-file=$W/log/munged.log --seed-file=$W/munge/seed \\
    2>>$W/log/munged.out &
for i in $(seq 100); do [ -S $W/munge/munge.socket ] && break; sleep 0.05; done
slurmctld -D -i -f $W/etc/slurm.conf >>$W/log/slurmctld.out 2>&1 &
for n in {names}; do
    slurmd -D -N $n -f $W/etc/slurm.conf >>$W/log/slurmd-$n.out 2>&1 &
done
wait
"""


class Slurm:
    def __init__(self, work):
        self.work = os.path.join(work, "slurm")
        self.names = ["n%d" % (i + 1) for i in range(NODES)]
        self.proc = None

    def env(self):
        return dict(os.environ, SLURM_CONF=os.path.join(self.work, "etc", "slurm.conf"))

    def ctl(self, *args, check=True):
        p = subprocess.run(list(args), env=self.env(), capture_output=True, text=True)
        if check and p.returncode != 0:
            raise RuntimeError("%s: %s" % (" ".join(args), (p.stderr or p.stdout).strip()))
        return p.stdout

    def setup(self):
        w = self.work
        for d in ("etc", "munge", "state", "spool", "run", "log", "jobs"):
            os.makedirs(os.path.join(w, d), exist_ok=True)
        os.chmod(os.path.join(w, "munge"), 0o700)
        subprocess.run(["mungekey", "--create", "--keyfile", os.path.join(w, "munge",
                                                                           "munge.key")],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        ports = free_ports(NODES + 2)
        nodes = "\n".join(
            "NodeName=%s NodeAddr=127.0.0.1 NodeHostname=localhost Port=%d CPUs=64 "
            "RealMemory=1000000 Gres=gpu:a100:%d State=UNKNOWN" % (n, ports[2 + i], GPUS_PER_NODE)
            for i, n in enumerate(self.names))
        self.conf = dict(host=socket.gethostname().split(".")[0], work=w, ctld_port=ports[0],
                         slurmd_port=ports[1], nodes=nodes)
        self.write_conf(False)
        # Slurm 22.05 counts a node's GPUs from the device files gres.conf names (Count= alone
        # registers 0 GPUs): character devices in the work directory, with /dev/null's numbers,
        # stand for /dev/nvidia0..7 (no task plugin constrains devices, nothing opens them).
        os.makedirs(os.path.join(w, "dev"), exist_ok=True)
        for i in range(GPUS_PER_NODE):
            os.mknod(os.path.join(w, "dev", "nvidia%d" % i), 0o600 | stat.S_IFCHR,
                     os.makedev(1, 3))
        with open(os.path.join(w, "etc", "gres.conf"), "w") as f:
            f.write("AutoDetect=off\nNodeName=n[1-%d] Name=gpu Type=a100 File=%s/dev/nvidia[0-%d]\n"
                    % (NODES, w, GPUS_PER_NODE - 1))
        open(os.path.join(w, "plugstack.conf"), "w").close()
        with open(os.path.join(w, "start.sh"), "w") as f:
            f.write(START_SH.format(work=w, names=" ".join(self.names)))
        self.proc = subprocess.Popen(
            ["unshare", "--pid", "--fork", "--kill-child", "--mount-proc", "bash",
             os.path.join(w, "start.sh")], env=self.env(), start_new_session=True)
        # For bench/slurm.sh's clean-up, should this program be killed.
        with open(os.path.join(os.path.dirname(w), "slurm.pgid"), "w") as f:
            f.write("%d\n" % self.proc.pid)
        self.wait_idle()
        self.server_pids = [self.pid_file("slurmctld"), self.pid_file("munged")]

    def write_conf(self, tuned):
        """slurm.conf with Slurm's scheduler defaults, or tuned: the main scheduler looks at
        every pending job in each pass (default_queue_depth=10000; the default, 100, leaves the
        rest to the periodic and backfill passes)."""
        sched = TUNED if tuned else ""
        with open(os.path.join(self.work, "etc", "slurm.conf"), "w") as f:
            f.write(SLURM_CONF.format(sched=sched, **self.conf))

    def tune(self, tuned):
        self.write_conf(tuned)
        self.ctl("scontrol", "reconfigure")
        self.wait_idle()

    def wait_idle(self):
        deadline = time.monotonic() + 60
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError("Slurm's namespace ended; see %s/log" % self.work)
            out = subprocess.run(["sinfo", "-h", "-N", "-o", "%N %T"], env=self.env(),
                                 capture_output=True, text=True).stdout.split()
            idle = sum(1 for s in out[1::2] if s == "idle")
            if idle == NODES:
                return
            if time.monotonic() > deadline:
                raise RuntimeError("Slurm: %d of %d nodes idle after 60 s (%s); see %s/log" %
                                   (idle, NODES, " ".join(out), self.work))
            time.sleep(0.2)

    def pid_file(self, name):
        # The pid files hold the namespace's pids: find the host's pid by the command name.
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open("/proc/%s/cmdline" % pid, "rb") as f:
                    argv = f.read().split(b"\0")
            except OSError:
                continue
            if argv and os.path.basename(argv[0]).decode(errors="replace") == name and any(
                    self.work.encode() in a for a in argv):
                return int(pid)
        raise RuntimeError("Slurm: no %s process found" % name)

    def count(self, state):
        out = self.ctl("squeue", "-h", "-t", state, "-o", "%i")
        return len(out.split())

    def run(self, jobs, clients, poll):
        self.ctl("scontrol", "update", "PartitionName=gpu", "State=DOWN")
        argv = ["sbatch", "--wrap", "sleep 600", "--gres=gpu:1"]
        r = run_submits(argv, jobs, clients, self.env(), os.path.join(self.work, "jobs"),
                        self.server_pids)
        pending = self.count("PD")
        if pending != jobs:
            raise RuntimeError("Slurm: %d jobs pending after the submits, not %d" %
                               (pending, jobs))
        t0 = time.monotonic()
        self.ctl("scontrol", "update", "PartitionName=gpu", "State=UP")
        secs, n = wait_count(lambda: self.count("R"), min(TARGET, jobs), poll, 300)
        r["release_s"] = None if secs is None else time.monotonic() - t0
        r["running_seen"] = n
        self.ctl("scancel", "--partition", "gpu")
        deadline = time.monotonic() + 120
        while self.count("PD,R,CG,CF,S") > 0 and time.monotonic() < deadline:
            time.sleep(0.5)
        return r

    def stop(self):
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--results", required=True)
    ap.add_argument("--jobs", type=int, default=2000)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--poll", type=float, default=0.05)
    ap.add_argument("--solo", type=int, default=100, help="runs of one submit alone")
    ap.add_argument("--baseline", default="", help="another gpupool binary to compare alone")
    ap.add_argument("--slurm", default="yes", help="yes, or a reason Slurm is not measured")
    a = ap.parse_args()
    t_start = time.monotonic()
    res = {"args": vars(a), "machine": benchinfo.machine(
        slurm=["dpkg-query", "-W", "-f", "slurm-wlm ${Version}", "slurm-wlm"],
        python=[sys.executable, "--version"]),
        "gpupool": [], "slurm": [], "slurm_tuned": [], "solo": {},
        "slurm_skipped": "" if a.slurm == "yes" else a.slurm}
    res["machine"]["hostname"] = socket.gethostname()
    res["target"] = min(TARGET, a.jobs)  # jobs to see running after the release
    port = free_ports(1)[0]
    gp = Gpupool(a.bin, a.work, port)
    slurm = Slurm(a.work) if a.slurm == "yes" else None
    try:
        # The CPU of one process alone, against the idle held pools (both up, so that their
        # background work falls on every measure alike), each in turn: empty programs linked
        # with jansson only, with jansson and evhttp, and with libcurl (start_cost.c), gpupool started and stopped
        # (--version), the submit (and the baseline's), sbatch.
        gp.up()
        try:
            gp.cli("nodes", "cordon", *gp.nodes)
            env = dict(gp.env, GPUPOOL_SERVER=gp.base, GPUPOOL_TOKEN=gp.user_token)
            submit = ["submit", "--gpus", "1", "--", "sleep", "600"]
            runs = {"start_plain": [os.path.join(gp.bin, "start_plain")],
                    "start_curl": [os.path.join(gp.bin, "start_curl")],
                    "start_evhttp": [os.path.join(gp.bin, "start_evhttp")],
                    "gpupool_version": [os.path.join(gp.bin, "gpupool"), "--version"]}
            runs = {k: (v, env, gp.dir) for k, v in runs.items() if os.access(v[0], os.X_OK)}
            if a.baseline:
                runs["before"] = ([a.baseline] + submit, env, gp.dir)
            runs["after"] = ([os.path.join(gp.bin, "gpupool")] + submit, env, gp.dir)
            if slurm:
                log("starting Slurm: 16 slurmd, slurmctld, munged in %s" % slurm.work)
                slurm.setup()
                runs["sbatch"] = (["sbatch", "--wrap", "sleep 600", "--gres=gpu:1"],
                                  slurm.env(), os.path.join(slurm.work, "jobs"))
            for label, ms in solo_cpu_ms(runs, a.solo).items():
                res["solo"][label] = {"cpu_ms": ms, "binary": runs[label][0][0],
                                      "libs": shared_libs(runs[label][0][0])}
                log("alone: %s: %.2f ms CPU" % (" ".join(runs[label][0][:2]), ms))
            if slurm:
                slurm.ctl("scancel", "--partition", "gpu")
        finally:
            gp.down()
        for i in range(a.runs):
            if slurm:
                for series, tuned in (("slurm", False), ("slurm_tuned", True)):
                    slurm.tune(tuned)
                    r = slurm.run(a.jobs, a.clients, a.poll)
                    log("run %d %s: %.1f submits/s, %.2f ms CPU each, release->%d running: %s s"
                        % (i + 1, series, r["per_s"], r["client_cpu_ms"], res["target"],
                           r["release_s"]))
                    res[series].append(r)
            r = gp.run(a.jobs, a.clients, a.poll)
            log("run %d gpupool: %.1f submits/s, %.2f ms CPU each, release->%d running: %s s" %
                (i + 1, r["per_s"], r["client_cpu_ms"], res["target"], r["release_s"]))
            res["gpupool"].append(r)
    finally:
        if slurm:
            slurm.stop()
        gp.down()
    res["machine"]["load_end"] = os.getloadavg()
    res["seconds"] = time.monotonic() - t_start
    with open(a.results, "w") as f:
        json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
