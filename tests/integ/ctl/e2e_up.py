"""gpupool up and down as a new user meets them, with real processes over the mock NVML:
- a failing `up` (an agent whose inventory does not parse) exits 1 naming the agent and why, and
  leaves no process of the pool behind: the gpupoold and the agent it had started are stopped;
- `up --data-dir` a path whose parents do not exist creates them (`make demo` on a fresh clone);
- a listener on port P+1, where `up --port P` used to put its first agent, does not stop it:
  each agent binds a free port itself and registers with it, and answers /metrics there;
- `up` on a pool that is running refuses, naming its processes;
- `down` stops the pool's processes even after an agent and gpupoold were killed and restarted
  by hand with the same command lines (no pid file written for them), and the job running on it.
Arguments: the gpupool program (gpupoold, gpupool-agent, gpupool-run beside it).
"""
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import urllib.error
import urllib.request

from pool import (Client, alive_marked, check, free_ports, kill9, pid_alive, pool_down,
                  proc_argv_env, wait)

gpupool = sys.argv[1]
tmp = tempfile.mkdtemp(prefix="gpupool-up.")
mark = os.path.basename(tmp).replace(".", "-")  # tells this run's processes from any other


def pid_of(pool, name):
    with open(os.path.join(pool, "pids", name + ".pid")) as f:
        return int(f.read())


def restart_by_hand(pool, name):
    """kill -9 of the pool's process NAME, then the same command line and environment started
    again, detached, as a person would: no pid file is written for it. Returns the new pid."""
    old = pid_of(pool, name)
    argv, env = proc_argv_env(old)
    kill9(old)
    with open(os.path.join(pool, "logs", name + ".log"), "ab") as log:
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env,
                             start_new_session=True)
    threading.Thread(target=p.wait, daemon=True).start()  # reaped once `down` stops it
    return p.pid


# ---- a failing up stops what it started ----
bad_pool = os.path.join(tmp, "bad")
bad_inv = os.path.join(tmp, "broken.yaml")
with open(bad_inv, "w") as f:
    f.write("gpus: [not yaml\n")
port = free_ports(1)
try:
    up = subprocess.run([gpupool, "up", "--data-dir", bad_pool, "--port", str(port), "--nodes",
                         "pcie-t4:1,%s:1" % bad_inv], capture_output=True, text=True, timeout=120)
    check(up.returncode == 1 and "agent-broken-2 exited at start" in up.stderr and
          "inventory.yaml" in up.stderr, "a failing up names the agent and why", up.stdout,
          up.stderr)
    ctl_log = open(os.path.join(bad_pool, "logs", "gpupoold.log")).read()
    check("listening=127.0.0.1:%d" % port in ctl_log and
          os.path.exists(os.path.join(bad_pool, "logs", "agent-pcie-t4-1.log")),
          "gpupoold and the good agent had been started", ctl_log[-2000:])
    wait("no process of the failed pool left", lambda: not alive_marked(bad_pool), 10)
finally:
    for pid in alive_marked(bad_pool):
        os.kill(int(pid), signal.SIGKILL)

# ---- up with missing parents and a taken port, down after restarts by hand ----
pool = os.path.join(tmp, "not", "yet", "pool")
port = free_ports(2)
taken = socket.socket()
taken.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
taken.bind(("127.0.0.1", port + 1))
taken.listen()
down, leftover = None, []
try:
    up = subprocess.run([gpupool, "up", "--data-dir", pool, "--port", str(port), "--nodes",
                         "pcie-t4:2"], capture_output=True, text=True, timeout=120)
    check(up.returncode == 0 and "is up" in up.stdout,
          "up with a data directory whose parents are missing, port+1 taken", up.stdout,
          up.stderr)
    token = open(os.path.join(pool, "admin.token")).read().strip()
    admin = Client("http://127.0.0.1:%d" % port, token)
    s, nodes = admin.get("/v1/nodes")
    addrs = [n["address"] for n in nodes["items"]]
    check(s == 200 and len(addrs) == 2 and "127.0.0.1:%d" % (port + 1) not in addrs,
          "both agents registered, neither on the taken port", nodes)

    scrape = open(os.path.join(pool, "scrape.token")).read().strip()
    check(os.stat(os.path.join(pool, "scrape.token")).st_mode & 0o077 == 0,
          "the metrics token is readable by its owner only")

    def metrics(addr, token=scrape):
        req = urllib.request.Request("http://%s/metrics" % addr)
        if token:
            req.add_header("Authorization", "Bearer " + token)
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                return r.read() if r.status == 200 else b""
        except urllib.error.HTTPError as e:
            return e.code

    for a in addrs:
        wait("the agent at %s answering /metrics on the port it registered" % a,
             lambda: b"DCGM_FI_DEV_GPU_UTIL" in metrics(a))
        check(metrics(a, None) == 401, "the agent's /metrics refused without the metrics token")

    again = subprocess.run([gpupool, "up", "--data-dir", pool, "--port", str(port + 2)],
                           capture_output=True, text=True, timeout=60)
    check(again.returncode == 1 and "already running" in again.stderr and
          str(pid_of(pool, "gpupoold")) in again.stderr,
          "up on a running pool refuses, naming its processes", again.stderr)

    s, d = admin.post("/v1/tenants", {"name": "up"})
    check(s == 201, "tenant", s, d)
    s, d = admin.post("/v1/jobs", {"name": "nap", "tenant": "up", "resources": {"gpus": 1},
                                   "command": ["sh", "-c", "sleep 600 # job-" + mark]})
    check(s == 201, "submit", s, d)
    wait("the job running", lambda: admin.get("/v1/jobs/nap")[1]["state"] == "Running" and
         alive_marked("job-" + mark))

    ctl = restart_by_hand(pool, "gpupoold")

    def ready():
        try:
            return admin.get("/readyz")[0] == 200
        except OSError:
            return False

    wait("the restarted gpupoold ready", ready)
    alog = os.path.join(pool, "logs", "agent-pcie-t4-1.log")
    registered = open(alog).read().count("registered node=pcie-t4-1")
    agent = restart_by_hand(pool, "agent-pcie-t4-1")  # registers at start: gpupoold is up
    wait("the restarted agent registered", lambda: open(alog).read().count(
        "registered node=pcie-t4-1") > registered)
    check(pid_alive(agent) and pid_alive(ctl), "both restarted processes run")
    down, leftover = pool_down(gpupool, pool, tmp, "job-" + mark)
    check(down.returncode == 0, "gpupool down", down.stdout, down.stderr)
    check(not pid_alive(agent) and not pid_alive(ctl),
          "down stopped the agent and the gpupoold restarted by hand", down.stdout)
    check(not leftover, "down left no process of the pool", leftover)
finally:
    taken.close()
    if down is None:
        pool_down(gpupool, pool, tmp, "job-" + mark)
    for pid in alive_marked(pool) + alive_marked("job-" + mark):  # whatever a failure left
        os.kill(int(pid), signal.SIGKILL)
    shutil.rmtree(tmp, ignore_errors=True)
print("ok")
