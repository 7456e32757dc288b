"""Per-job and per-tenant history on a real gpupoold and a real gpupool-agent over the mock NVML
(--runtime none): the agent reports each running replica's GPU utilisation and the GPU memory
its processes hold, the controller keeps them as series.

- GET /v1/jobs/{id}/metrics follows what the job's GPU reported: the mock's `util` and a `proc`
  of the job's process with its memory give gpu_util, gpu_mem_mib and gpu_mem_util (the memory
  over the GPU's total); when the utilisation changes, a later point shows the new value while
  a wider point holds both (min and max);
- step is honoured: rounded up to the 10 s tier, the points aligned to it; a job of two replicas
  has series per replica besides the job's;
- GET /v1/tenants/{name}/metrics shows the GPUs and GPU memory its jobs hold;
- a job that ended keeps its history until history.max_jobs (2 here) makes room for another;
- bad input answers 400 naming the parameter (from after to, a step of 0, unparsable times, a
  range needing more than 10,000 points); another tenant's job or tenant, and an unknown job,
  404.
Arguments: gpupoold, gpupool-agent, the mock NVML library, the inventories directory.
"""
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mockagent import MockAgent  # noqa: E402
from pool import Pool, check, job_processes, kill_replica_leftovers, wait  # noqa: E402

gpupoold, agent_bin, mock, inventories = sys.argv[1:5]
inventory = os.path.join(inventories, "pcie-t4.yaml")  # 4 x T4, 15360 MiB each
tmp = tempfile.mkdtemp(prefix="gpupool-history.")
mark = os.path.basename(tmp).replace(".", "-")
T4_MIB = 15360


def series(doc, metric, replica=None):
    for s in doc["series"]:
        if s["metric"] == metric and s.get("replica") == replica:
            return s
    return None


def last_point(doc, metric, replica=None):
    """(time, mean, min, max) of the newest point with samples, or None."""
    s = series(doc, metric, replica)
    if not s:
        return None
    for i in range(len(doc["times"]) - 1, -1, -1):
        if s["mean"][i] is not None:
            return doc["times"][i], s["mean"][i], s["min"][i], s["max"][i]
    return None


agent = None
try:
    with Pool(gpupoold, ["--history-max-jobs", "2"]) as p:
        p.tenant("team-a")
        p.tenant("team-b")
        alice = p.user("alice", "team-a")
        bob = p.user("bob", "team-b")
        token_file = os.path.join(tmp, "join.token")
        with open(token_file, "w") as f:
            f.write(p.join_token + "\n")
        agent = MockAgent(agent_bin, mock, tmp, "n1", inventory, p.base, token_file,
                          "--runtime", "none")
        wait("n1 ready", lambda: (lambda s, d: s == 200 and d["state"] == "Ready")(
            *p.admin.get("/v1/nodes/n1")), 30)
        # Every GPU idle unless a test sets it (the inventory's own pattern steps up and down).
        for g in range(4):
            agent.control("util %d 0" % g)

        cmd = ["sh", "-c", "sleep 600 # %s-train" % mark]
        s, d = alice.post("/v1/jobs", {"name": "train", "command": cmd,
                                       "resources": {"gpus": 1}})
        check(s == 201, "submit train", s, d)
        train = d["id"]
        j = p.wait_state(alice, "train", "Running", 30)
        gpu = j["placement"][0]["gpus"][0]["index"]
        pid = wait("train's process", lambda: job_processes(mark + "-train"), 30)[0]
        agent.control("util %d 70" % gpu)
        agent.control("proc %d %d 3072" % (gpu, pid))
        path = "/v1/jobs/%d/metrics" % train

        def reported(util, mem):
            s, d = alice.get(path + "?from=-2m&step=10s")
            check(s == 200, "metrics of train", s, d)
            u, m = last_point(d, "gpu_util"), last_point(d, "gpu_mem_mib")
            return d if u and m and u[1] == util and u[2] == util and m[1] == mem else None

        doc = wait("train's history shows 70% and 3072 MiB", lambda: reported(70, 3072), 30)
        check(doc["step_s"] == 10 and doc["job"] == train and doc["name"] == "train",
              "the answer's frame", doc)
        check(all(t % 10 == 0 for t in doc["times"]) and
              all(b - a == 10 for a, b in zip(doc["times"], doc["times"][1:])),
              "points every 10 s, aligned", doc["times"])
        mu = last_point(doc, "gpu_mem_util")
        check(mu and abs(mu[1] - 100.0 * 3072 / T4_MIB) < 0.01,
              "gpu_mem_util: the memory used over the GPU's total", mu)
        check(series(doc, "gpu_util", 0) is None,
              "a job of one replica has no replica series of its own", doc["series"])
        t70 = last_point(doc, "gpu_util")[0]

        # The utilisation drops: a later point shows 20, the wider point of both holds both.
        agent.control("util %d 20" % gpu)
        doc = wait("train's history follows to 20%", lambda: reported(20, 3072), 30)
        check(last_point(doc, "gpu_util")[0] > t70, "the new value is in a later point", doc)
        s, d = alice.get(path + "?from=-3m&step=5m")
        check(s == 200 and d["step_s"] == 300 and len(d["times"]) in (1, 2) and
              d["times"][0] % 300 == 0, "a 5 minute step", s, d)
        wide = series(d, "gpu_util")
        both = [(lo, hi) for lo, hi in zip(wide["min"], wide["max"]) if lo is not None]
        # (before 70 the GPU showed 0: the minimum may be that)
        check(both and max(hi for _, hi in both) == 70 and min(lo for lo, _ in both) <= 20,
              "wide points keep the extremes: 70 is still their maximum", d)
        s, d = alice.get(path + "?from=-1m&step=1s")
        check(s == 200 and d["step_s"] == 10, "a step below the tier's is rounded up to 10 s",
              s, d)
        s, d = alice.get(path + "?from=-10m&step=25s")
        check(s == 200 and d["step_s"] == 30 and all(t % 30 == 0 for t in d["times"]),
              "a step of 25 s becomes 30 s, aligned", s, d)
        now = int(time.time())
        s, d = alice.get(path + "?from=%d&to=%d" % (now - 600, now))
        check(s == 200 and d["step_s"] == 10 and len(d["times"]) <= 300,
              "unix seconds; the default step", s, d)

        # ---- a job of two replicas: series per replica ----
        cmd2 = ["sh", "-c", "sleep 600 # %s-pair" % mark]
        s, d = alice.post("/v1/jobs", {"name": "pair", "command": cmd2, "replicas": 2,
                                       "resources": {"gpus": 1}})
        check(s == 201, "submit pair", s, d)
        pair = d["id"]
        j = p.wait_state(alice, "pair", "Running", 30)
        gpus = [pl["gpus"][0]["index"] for pl in j["placement"]]
        agent.control("util %d 40" % gpus[0])
        agent.control("util %d 80" % gpus[1])

        def pair_reported():
            s, d = alice.get("/v1/jobs/%d/metrics?from=-1m" % pair)
            r0, r1 = last_point(d, "gpu_util", 0), last_point(d, "gpu_util", 1)
            job = last_point(d, "gpu_util")
            return d if r0 and r1 and job and r0[1] == 40 and r1[1] == 80 and job[1] == 60 \
                else None

        doc = wait("pair's replicas at 40% and 80%, the job at their mean", pair_reported, 30)
        check(series(doc, "gpu_mem_mib", 1) is not None, "per-replica memory series", doc)

        # ---- the tenant's allocation ----
        def allocated():
            s, d = alice.get("/v1/tenants/team-a/metrics?from=-2m")
            check(s == 200, "team-a's metrics", s, d)
            g, m = last_point(d, "gpus_allocated"), last_point(d, "gpu_mem_allocated_mib")
            return d if g and m and g[1] == 3 and m[1] == 3 * T4_MIB else None

        doc = wait("team-a holds 3 GPUs in its history", allocated, 40)
        check(doc["tenant"] == "team-a" and series(doc, "gpus_allocated")["unit"] == "GPUs",
              "the tenant's answer", doc)
        s, d = p.admin.get("/v1/tenants/team-a/metrics")
        check(s == 200, "an admin reads any tenant's", s, d)

        # ---- bad input: 400 naming the parameter ----
        for query, param in (("from=-1m&to=-2m", "from"), ("step=0", "step"),
                             ("step=soon", "step"), ("step=-5s", "step"),
                             ("from=yesterday", "from"), ("to=12:00", "to"),
                             ("from=-7d&step=1s", "step")):
            s, d = alice.get(path + "?" + query)
            check(s == 400 and d["error"]["message"].startswith(param + ":"),
                  "%s: refused naming %s" % (query, param), s, d)

        # ---- other tenants, unknown jobs: 404 ----
        for who, what in ((bob, path), (bob, "/v1/tenants/team-a/metrics"),
                          (alice, "/v1/tenants/team-b/metrics"),
                          (alice, "/v1/jobs/999999/metrics"),
                          (alice, "/v1/tenants/nobody/metrics")):
            s, d = who.get(what)
            check(s == 404, "%s: 404" % what, s, d)

        # ---- a job that ended keeps its history ----
        s, d = alice.post(path.replace("/metrics", "/cancel"), {})
        check(s == 200, "cancel train", s, d)
        p.wait_state(alice, "train", "Cancelled", 30)
        time.sleep(1)
        s, d = alice.get(path)
        check(s == 200 and last_point(d, "gpu_util") and last_point(d, "gpu_util")[1] == 20,
              "an ended job's history, up to its end by default", s, d)
        agent.control("proc-gone %d %d" % (gpu, pid))

        # ---- history.max_jobs 2: a third job with readings drops the one that ended ----
        s, d = alice.post("/v1/jobs", {"name": "third", "command": ["sh", "-c", "sleep 600 # %s"
                                                                     % mark],
                                       "resources": {"gpus": 1}})
        check(s == 201, "submit third", s, d)
        third = d["id"]
        p.wait_state(alice, "third", "Running", 30)
        wait("third's history", lambda: last_point(alice.get(
            "/v1/jobs/%d/metrics?from=-1m" % third)[1], "gpu_util"), 30)
        s, d = alice.get(path)
        check(s == 200 and all(v is None for x in d["series"] for v in x["mean"]),
              "train's history is dropped for the third job (history.max_jobs 2)", d)
        s, d = alice.get("/v1/jobs/%d/metrics?from=-1m" % pair)
        check(s == 200 and last_point(d, "gpu_util"), "pair, still running, keeps its history", d)
    check(agent.stop() == 0, "the agent stops cleanly", agent.log()[-2000:])
finally:
    if agent and agent.proc.poll() is None:
        agent.stop()
    kill_replica_leftovers(tmp)  # an agent never stops its jobs when it stops
    shutil.rmtree(tmp, ignore_errors=True)
print("ok")
