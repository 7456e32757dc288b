"""kill -9 of gpupoold in the middle of 1,000 concurrent submits, on a whole pool (`gpupool up`
with two mock-NVML nodes, their agents, real supervisors and processes).

50 client threads submit 1,000 jobs, each with an Idempotency-Key of its own; a submit whose
answer does not come (connection refused or reset) or is a 5xx (or 429) is retried with the
same key, with backoff, until the controller answers. Once a few hundred submits are
acknowledged, gpupoold is killed with SIGKILL and started again on the same data directory,
with the command line and environment it had (read from /proc, as `gpupool up` started it).
Afterwards:

- every acknowledged job (2xx) exists, by id, under its own name; the list of the tenant's jobs
  holds each name once, and as many jobs as there were distinct keys, all acknowledged;
- allocations are consistent: per GPU the holders take at most 1000 milli and at most the GPU's
  memory, allocated_milli is the holders' sum, and every Scheduled or Running job's placement is
  among its GPUs' holders and the other way round;
- the agents were not restarted, reconnect (their nodes' heartbeat_ms moves past the restart)
  and the job started before the crash keeps running: same placement epoch, same replica
  directory, same process (pid in child.pid, alive), Running, no restart.

The storm's jobs ask for A100s, which only four nodes registered through the API have (a small
thread beats for them and reports their replicas Running, as an agent would), so they are
placed (whole GPUs, fractions, 2-replica gangs) without starting 1,000 processes; the long job
runs on a T4 node of the real pool. Settings the controller may not have yet (the per-tenant
API rate limit, the lost-node timeout) are passed through the environment only when its
--dump-config lists them.

Arguments: the gpupool program (gpupoold, gpupool-agent, gpupool-run beside it).
"""
import glob
import http.client
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from pool import (Client, alive_marked, all_jobs, allocation_problems, check, free_ports, kill9,
                  node_doc, pid_alive, proc_argv_env, respawn, settings_env, wait)

JOBS, CLIENTS, KILL_AT = 1000, 50, 300
FAKE_NODES = 4

gpupool = sys.argv[1]
bindir = os.path.dirname(os.path.abspath(gpupool))
tmp = os.path.realpath(tempfile.mkdtemp(prefix="gpupool-crash."))
pool = os.path.join(tmp, "pool")
mark = os.path.basename(tmp).replace(".", "-")
seed = int(os.environ.get("GPUPOOL_TEST_SEED", random.randrange(1 << 30)))
print("seed=%d" % seed)
rng = random.Random(seed)

env = dict(os.environ)
env.update(settings_env(os.path.join(bindir, "gpupoold"), {
    "api.rate_limit": "0",            # 50 clients of one tenant: no 429s
    "api.token_rate_limit": "0",      # nor for the admin token's checks
    "nodes.heartbeat_timeout": "10m",  # the API nodes beat from a thread that may lag
    "nodes.lost_timeout": "10m",
}))


def pid_of(name):
    with open(os.path.join(pool, "pids", name + ".pid")) as f:
        return int(f.read())


def quiet(fn, *args, **kw):
    """fn's answer, or (None, error) while the controller is down."""
    try:
        return fn(*args, **kw)
    except (OSError, http.client.HTTPException) as e:
        return None, str(e)


port = free_ports(4)
base = "http://127.0.0.1:%d" % port
stop = threading.Event()
try:
    up = subprocess.run([gpupool, "up", "--data-dir", pool, "--port", str(port), "--nodes",
                         "pcie-t4:2"], capture_output=True, text=True, timeout=120, env=env)
    check(up.returncode == 0, "gpupool up", up.stdout, up.stderr)
    admin = Client(base, open(os.path.join(pool, "admin.token")).read().strip())
    join = Client(base, open(os.path.join(pool, "join.token")).read().strip())
    for t in ("long", "storm"):
        s, d = admin.post("/v1/tenants", {"name": t})
        check(s == 201, "tenant " + t, s, d)
    s, d = admin.post("/v1/tokens", {"name": "stormer", "role": "user", "tenant": "storm"})
    check(s == 201, "user token", s, d)
    user = Client(base, d["token"])

    # The job that must survive the crash, on a T4 node of the real pool.
    s, d = admin.post("/v1/jobs", {"name": "long", "tenant": "long", "command": [
        "sh", "-c", "sleep 600 # long-" + mark], "resources": {"gpus": 1,
                                                             "gpu_models": ["Tesla T4"]}})
    check(s == 201, "submit the long job", s, d)
    long_id = d["id"]
    before = wait("the long job running", lambda: (lambda j: j["state"] == "Running" and j)(
        admin.get("/v1/jobs/%d" % long_id)[1]), timeout=60)
    rep = before["placement"][0]
    rdir = os.path.join(pool, "agents", rep["node"], "replicas",
                        "%d-0-%d" % (long_id, rep["epoch"]))
    wait("the long job's child.pid", lambda: os.path.exists(os.path.join(rdir, "child.pid")))
    long_pid = int(open(os.path.join(rdir, "child.pid")).read().split()[0])
    check(pid_alive(long_pid), "the long job's process runs", long_pid)

    # Four A100 nodes with no agent: a thread beats for them, reporting their replicas Running.
    fakes = {}
    for i in range(FAKE_NODES):
        s, d = join.post("/v1/nodes", node_doc("api-%d" % i, ngpus=8))
        check(s in (200, 201), "register api-%d" % i, s, d)
        fakes["api-%d" % i] = Client(base, d["token"])

    def beat_fakes():
        desired = {name: [] for name in fakes}
        while not stop.is_set():
            for name, c in fakes.items():
                reps = [{"job": r["job"], "replica": r["replica"], "epoch": r["epoch"],
                         "state": "Running"} for r in desired[name]]
                s, d = quiet(c.post, "/v1/nodes/%s/heartbeat" % name, {"replicas": reps},
                             timeout=10)
                if s == 200:
                    desired[name] = d["desired"]
            stop.wait(0.5)

    beater = threading.Thread(target=beat_fakes, daemon=True)
    beater.start()

    # The storm.
    def spec_of(i):
        spec = {"name": "storm-%d" % i, "command": ["sleep", "1000"]}
        kind = i % 10
        if kind < 6:
            spec["resources"] = {"gpu_milli": 250, "gpu_memory_mib": 10240}
        elif kind < 9:
            spec["resources"] = {"gpus": 1}
        else:
            spec["resources"] = {"gpus": 2}
            spec["replicas"] = 2
        spec["resources"]["gpu_models"] = ["A100-80GB"]
        return spec

    keys = ["crash-%s-%d" % (mark, i) for i in range(JOBS)]
    acked = {}       # key -> (status, job id)
    troubles = []    # answers that are neither acknowledgements nor retryable
    retries = [0]
    lock = threading.Lock()

    def client_thread(t):
        r = random.Random(seed + t)
        for i in range(t, JOBS, CLIENTS):
            delay, deadline = 0.05, time.time() + 120
            while True:
                s, d = quiet(user.post, "/v1/jobs", spec_of(i),
                             headers={"Idempotency-Key": keys[i]}, timeout=30)
                if s in (200, 201):
                    with lock:
                        acked[keys[i]] = (s, d["id"], d["name"])
                    break
                if (s is None or s >= 500 or s == 429) and time.time() < deadline:
                    with lock:
                        retries[0] += 1
                    time.sleep(delay * (0.5 + r.random()))
                    delay = min(delay * 2, 1.0)
                    continue
                with lock:
                    troubles.append((keys[i], s, d))
                break

    threads = [threading.Thread(target=client_thread, args=(t,)) for t in range(CLIENTS)]
    t0 = time.time()
    for t in threads:
        t.start()
    wait("%d submits acknowledged" % KILL_AT, lambda: len(acked) >= KILL_AT, timeout=120)
    ctl_pid = pid_of("gpupoold")
    ctl_argv, ctl_env = proc_argv_env(ctl_pid)
    kill9(ctl_pid)
    at_kill = len(acked)
    time.sleep(rng.uniform(0.2, 1.0))
    respawn(ctl_argv, ctl_env, pool, "gpupoold")
    restart_ms = int(time.time() * 1000)
    for t in threads:
        t.join(timeout=180)
    check(not any(t.is_alive() for t in threads), "every client finished")
    print("acknowledged %d before the kill, %d in all in %.1f s; %d retries; %d answered 200 "
          "(the key's job already existed)" % (at_kill, len(acked), time.time() - t0, retries[0],
                                               sum(1 for s, _, _ in acked.values() if s == 200)))
    check(not troubles, "every submit acknowledged (only 5xx and lost answers retried)",
          troubles[:5])
    check(at_kill < JOBS and retries[0] > 0, "the kill came in the middle of the storm", at_kill,
          retries[0])

    # Every acknowledged job exists exactly once.
    def by_id(v):
        return v, admin.get("/v1/jobs/%d" % v[1])

    with ThreadPoolExecutor(8) as ex:
        for (status, jid, name), (s, d) in ex.map(by_id, acked.values()):
            check(s == 200 and d["name"] == name, "acknowledged job %d (%s) exists" % (jid, name),
                  s, d)
    jobs = all_jobs(admin, "tenant=storm&")
    names = [j["name"] for j in jobs]
    check(len(names) == len(set(names)), "no job twice",
          sorted(n for n in set(names) if names.count(n) > 1)[:10])
    check(len(jobs) == len(set(keys)) == len(acked), "one job per key", len(jobs), len(acked))
    check({j["id"] for j in jobs} == {v[1] for v in acked.values()}, "the jobs are the "
          "acknowledged ones")

    # Allocations: a snapshot of the nodes between two equal snapshots of the jobs.
    def consistent():
        j1 = all_jobs(admin)
        s, nodes = admin.get("/v1/nodes")
        j2 = all_jobs(admin)
        if s != 200 or j1 != j2:
            return None
        return nodes["items"], j2

    nodes, jobs = wait("a stable snapshot", consistent, timeout=60)
    problems = allocation_problems(nodes, jobs)
    check(not problems, "allocations consistent", *problems[:10])
    placed = sum(1 for j in jobs if j["state"] in ("Scheduled", "Running"))
    check(placed > 1, "the storm's jobs were placed", placed)

    # The agents reconnect and the long job runs on, untouched.
    for name in ("agent-pcie-t4-1", "agent-pcie-t4-2"):
        check(pid_alive(pid_of(name)), "%s still runs (not restarted)" % name)
    wait("the agents' heartbeats resume", lambda: all(
        n["state"] == "Ready" and n["heartbeat_ms"] > restart_ms
        for n in admin.get("/v1/nodes")[1]["items"] if n["name"].startswith("pcie-t4")),
        timeout=60)
    after = admin.get("/v1/jobs/%d" % long_id)[1]
    check(after["state"] == "Running" and after["restarts"] == 0 and
          after["placement"][0]["epoch"] == rep["epoch"] and
          after["placement"][0]["node"] == rep["node"], "the long job runs on, same placement",
          before, after)
    check(pid_alive(long_pid) and alive_marked("long-" + mark), "the long job's process lives",
          long_pid)
    check(int(open(os.path.join(rdir, "child.pid")).read().split()[0]) == long_pid and
          sorted(glob.glob(os.path.join(pool, "agents", "*", "replicas", "%d-*" % long_id))) ==
          [rdir], "the same replica directory and process", rdir)
    print("%d jobs placed, allocations consistent, the long job's process %d runs on" %
          (placed, long_pid))
finally:
    stop.set()
    down = subprocess.run([gpupool, "down", "--data-dir", pool], capture_output=True, text=True,
                          timeout=120)
    leftover = []
    for _ in range(50):
        leftover = alive_marked("long-" + mark) + alive_marked(pool)
        if not leftover:
            break
        time.sleep(0.1)
    # Sanitizer builds: a report by any process of the pool (the daemons log to POOL/logs, the
    # supervisors to their replica directories) fails the test.
    reports = []
    for path in (glob.glob(os.path.join(pool, "logs", "*.log")) +
                 glob.glob(os.path.join(pool, "agents", "*", "*", "*", "supervisor.log"))):
        text = open(path, errors="replace").read()
        for marker in ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:"):
            if marker in text:
                i = text.index(marker)
                reports.append("%s: %s" % (os.path.basename(path), text[i:i + 1500]))
    shutil.rmtree(tmp, ignore_errors=True)
check(down.returncode == 0, "gpupool down", down.stdout, down.stderr)
check(not leftover, "down stopped every process", leftover)
check(not reports, "no sanitizer report in the pool's logs", *reports)
print("ok")
