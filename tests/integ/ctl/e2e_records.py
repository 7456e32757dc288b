"""Replica records a job has tampered with, on a `gpupool up` pool (real agent, real supervisors).

A job that runs as the agent's user can write its replica directory. Whatever it does to the
records there, the agent must neither start a second supervisor for the placement nor lose the
ability to stop it:

- status.json garbled (not JSON);
- status.json and supervisor.pid both garbled (the agent finds the supervisor itself);
- supervisor.pid naming another live process (pid 1): never signalled, the real supervisor is;
- status.json replaced by a FIFO (a read that would block the agent).

For each: several agent rounds later the job is still Running with the one supervisor it had
(the agent's log shows one start, no second gpupool-run was refused in the directory), and a
cancel stops its process and its supervisor.
Arguments: the gpupool program (gpupoold, gpupool-agent, gpupool-run beside it).
"""
import glob
import os
import subprocess
import sys
import tempfile

from pool import Client, check, free_ports, pid_alive, pool_down, wait

gpupool = sys.argv[1]
tmp = tempfile.mkdtemp(prefix="gpupool-records.")
pool = os.path.join(tmp, "pool")
mark = os.path.basename(tmp).replace(".", "-")
NODE = "pcie-t4-1"


def replica_dir(jid):
    dirs = glob.glob(os.path.join(pool, "agents", NODE, "replicas", "%d-0-*" % jid))
    return dirs[0] if len(dirs) == 1 else None


def read_pid(path):
    with open(path) as f:
        return int(f.read().split()[0])


def agent_log():
    with open(os.path.join(pool, "logs", "agent-%s.log" % NODE), errors="replace") as f:
        return f.read()


def tamper_status_garbled(rdir):
    with open(os.path.join(rdir, "status.json"), "w") as f:
        f.write("{not json")


def tamper_both_garbled(rdir):
    tamper_status_garbled(rdir)
    with open(os.path.join(rdir, "supervisor.pid"), "w") as f:
        f.write("garbage\n")


def tamper_pid_of_init(rdir):
    with open("/proc/1/stat") as f:
        start = f.read().rsplit(")", 1)[1].split()[19]
    with open(os.path.join(rdir, "supervisor.pid"), "w") as f:
        f.write("1 %s\n" % start)
    tamper_status_garbled(rdir)


def tamper_status_fifo(rdir):
    os.unlink(os.path.join(rdir, "status.json"))
    os.mkfifo(os.path.join(rdir, "status.json"))


CASES = [("garbled", tamper_status_garbled), ("both", tamper_both_garbled),
         ("init", tamper_pid_of_init), ("fifo", tamper_status_fifo)]

port = free_ports(2)
try:
    up = subprocess.run([gpupool, "up", "--data-dir", pool, "--port", str(port), "--nodes",
                         "pcie-t4:1"], capture_output=True, text=True, timeout=60)
    check(up.returncode == 0 and "is up" in up.stdout, "gpupool up", up.stdout, up.stderr)
    token = open(os.path.join(pool, "admin.token")).read().strip()
    admin = Client("http://127.0.0.1:%d" % port, token)
    check(admin.post("/v1/tenants", {"name": "rec"})[0] == 201, "tenant")

    def job(ref):
        s, d = admin.get("/v1/jobs/%s" % ref)
        check(s == 200, "get job %s" % ref, s, d)
        return d

    def heartbeat_ms():
        return admin.get("/v1/nodes/" + NODE)[1]["heartbeat_ms"]

    def rounds(n):
        """Returns after the agent has sent n more heartbeats (each round also converges)."""
        for _ in range(n):
            last = heartbeat_ms()
            wait("an agent round", lambda: heartbeat_ms() != last)

    jobs = {}
    for name, _ in CASES:
        s, d = admin.post("/v1/jobs", {"name": name, "tenant": "rec", "resources": {"gpus": 1},
                                       "command": ["sh", "-c", "sleep 600 # %s-%s" % (name, mark)]})
        check(s == 201, "submit " + name, s, d)
        jobs[name] = d["id"]
    for name, jid in jobs.items():
        wait(name + " running", lambda: job(jid)["state"] == "Running")
        wait(name + "'s records", lambda: replica_dir(jid) and all(
            os.path.exists(os.path.join(replica_dir(jid), f))
            for f in ("status.json", "child.pid", "supervisor.pid")))

    procs = {}
    for name, tamper in CASES:
        rdir = replica_dir(jobs[name])
        procs[name] = (read_pid(os.path.join(rdir, "supervisor.pid")),
                       read_pid(os.path.join(rdir, "child.pid")))
        tamper(rdir)
    rounds(4)

    log = agent_log()
    for name, jid in jobs.items():
        sup, child = procs[name]
        starts = log.count("start job=%d replica=0 " % jid)
        check(starts == 1, "%s: one supervisor started, not one per round" % name, starts,
              log[-3000:])
        with open(os.path.join(replica_dir(jid), "supervisor.log"), errors="replace") as f:
            slog = f.read()
        check("supervised by" not in slog and "not taking" not in slog,
              "%s: no second gpupool-run in the directory" % name, slog)
        check(job(jid)["state"] == "Running" and pid_alive(sup) and pid_alive(child),
              "%s: still running under its supervisor" % name, job(jid))
    check(pid_alive(1), "init untouched")

    for name, jid in jobs.items():
        s, d = admin.post("/v1/jobs/%d/cancel" % jid)
        check(s == 200, "cancel " + name, s, d)
    for name, jid in jobs.items():
        sup, child = procs[name]
        wait("%s: its process and its supervisor stopped" % name,
             lambda: not pid_alive(child) and not pid_alive(sup), timeout=60)
        check(job(jid)["state"] == "Cancelled", "%s: cancelled" % name, job(jid))
    check(pid_alive(1), "init untouched")
finally:
    down, leftover = pool_down(gpupool, pool, tmp, mark)
check(down.returncode == 0, "gpupool down", down.stdout, down.stderr)
check(not leftover, "down stopped every job", leftover)
print("ok")
