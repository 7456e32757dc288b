"""Heartbeats that change nothing the store keeps are applied in memory and answered at once,
without a store transaction or the committer's queue; those that change something go through
the committer as before.

- gpupool_heartbeats_total{path="memory"|"store"} and gpupool_commit_groups_total (/metrics)
  count them: 40 heartbeats repeating the same replica reports and GPU readings add 40 to
  path="memory", nothing to path="store", and no group; yet what they carry is applied (the
  readings and health shown with the node, liveness, the desired document answered);
- a heartbeat with a replica state change goes through the store: counted as path="store", and
  the Running state it reported is stored before its 200 (it survives a kill -9 right after);
- a hostile agent: node n1's agent reporting n0's replica Failed (right job, replica and epoch)
  is stale, changes nothing and writes nothing; its heartbeat on n0's path is refused (404)
  and goes through the committer like any refused one; a replica report for a job that does
  not exist is stale too;
- a health check's fatal finding for a GPU (a drain) and the job's end (Succeeded) go through
  the store.
"""
import sys
import time

from pool import Pool, check, node_doc, submit, wait

# No scheduling cycle but those asked for: a heartbeat finding the state lock held (by a cycle)
# goes through the committer, and these counts must not depend on when cycles run.
ARGS = ["--scheduler-interval", "1h", "--nodes-lost-timeout", "1h"]


def metrics(p):
    s, text = p.admin.get("/metrics")
    check(s == 200 and isinstance(text, str), "GET /metrics", s, text)
    out = {}
    for line in text.splitlines():
        for key, name in (('gpupool_heartbeats_total{path="memory"}', "memory"),
                          ('gpupool_heartbeats_total{path="store"}', "store"),
                          ("gpupool_commit_groups_total", "groups")):
            if line.startswith(key + " "):
                out[name] = float(line.split()[-1])
    check(len(out) == 3, "the heartbeat and commit counters on /metrics", text[-2000:])
    return out


def running(job, epoch, util=35, **extra):
    rep = {"job": job, "replica": 0, "epoch": epoch, "state": "Running", "util": util}
    rep.update(extra)
    return rep


def beat(client, node, replicas, **extra):
    body = {"replicas": replicas,
            "gpus": [{"index": 0, "utilization": 42, "memory_used_mib": 1000}]}
    body.update(extra)
    return client.post("/v1/nodes/%s/heartbeat" % node, body)


with Pool(sys.argv[1], extra_args=ARGS) as p:
    a0 = p.register(node_doc("n0", ngpus=2))
    a1 = p.register(node_doc("n1", ngpus=2))
    s, d = p.admin.post("/v1/nodes/n1/cordon")
    check(s == 200, "cordon n1 (the job goes to n0)", s, d)
    p.tenant("team")
    user = p.user("u", "team")
    s, d = submit(user, "steady", gpus=1)
    check(s == 201, "submit", s, d)
    job = d["id"]
    j = p.wait_state(user, job, "Scheduled")
    epoch = j["placement"][0]["epoch"]

    # The first heartbeats: the node's token, liveness (the controller's grace period).
    s, d = beat(a0, "n0", [])
    check(s == 200, "a first heartbeat", s, d)
    s, d = beat(a1, "n1", [])
    check(s == 200, "n1's first heartbeat", s, d)

    # A replica state change: through the store, stored before its answer.
    m0 = metrics(p)
    s, d = beat(a0, "n0", [running(job, epoch)])
    check(s == 200 and [r["job"] for r in d["desired"]] == [job], "the Running report", s, d)
    m1 = metrics(p)
    check(m1["store"] == m0["store"] + 1 and m1["memory"] == m0["memory"],
          "the state change went through the store", m0, m1)
    check(m1["groups"] > m0["groups"], "the state change was a committed group", m0, m1)
    p.stop(sig=9)
    p.start()
    for c in (a0, a1, user):
        c.base = p.base  # a new port
    j = p.job(user, job)
    check(j["state"] == "Running", "Running survives a kill -9 right after the 200", j)

    # After the restart the node is in its grace period: the first heartbeat retires nothing
    # (same token), changes nothing durable.
    s, d = beat(a0, "n0", [running(job, epoch)])
    check(s == 200, "a heartbeat after the restart", s, d)
    time.sleep(0.5)  # the cycle its coming back Ready asked for

    # The same reports again and again: memory only, no group, no store.
    before = metrics(p)
    N = 40
    for i in range(N):
        s, d = beat(a0, "n0", [running(job, epoch, util=30 + i % 5)],
                    health={"seq": 0, "conditions": [
                        {"check": "nvidia-smi", "gpu": -1, "severity": "warning", "message": "slow %d" % i}]})
        check(s == 200 and [r["job"] for r in d["desired"]] == [job] and "version" in d,
              "heartbeat %d answered with the desired document" % i, s, d)
    after = metrics(p)
    check(after["memory"] == before["memory"] + N and after["store"] == before["store"],
          "%d unchanged heartbeats applied in memory" % N, before, after)
    check(after["groups"] == before["groups"], "no committer group for them", before, after)
    s, n = p.admin.get("/v1/nodes/n0")
    check(s == 200 and n["state"] == "Ready", "n0 Ready", s, n)
    check(n["gpus"][0]["utilization"] == 42 and
          n["gpus"][0]["readings"].get("memory_used_mib") == 1000,
          "the GPU readings of memory heartbeats are shown", n["gpus"][0])
    check(n["health"] and n["health"]["conditions"][0]["message"] == "slow %d" % (N - 1),
          "the health shown is the last heartbeat's", n["health"])
    check(p.job(user, job)["state"] == "Running", "still Running", p.job(user, job))

    # A hostile agent: n1's agent lies about n0's replica, and about a job that does not exist.
    before = metrics(p)
    s, d = beat(a1, "n1", [{"job": job, "replica": 0, "epoch": epoch, "state": "Failed",
                            "exit_code": 1, "reason": "forged"},
                           {"job": job + 1000, "replica": 0, "epoch": 1, "state": "Succeeded"}])
    check(s == 200 and d["desired"] == [], "n1's forged reports are answered as stale", s, d)
    after = metrics(p)
    check(after["memory"] == before["memory"] + 1 and after["groups"] == before["groups"],
          "stale reports write nothing", before, after)
    j = p.job(user, job)
    check(j["state"] == "Running" and j["placement"][0]["epoch"] == epoch,
          "n0's job is untouched by n1's agent", j)
    s, d = beat(a1, "n0", [running(job, epoch)])
    check(s == 404, "n1's agent cannot beat for n0", s, d)
    after2 = metrics(p)
    check(after2["store"] == after["store"] + 1, "a refused heartbeat is the committer's",
          after, after2)

    # A fatal health finding for GPU 1 drains it: through the store.
    before = metrics(p)
    s, d = beat(a0, "n0", [running(job, epoch)], health={"seq": 0, "conditions": [
        {"check": "dcgm", "gpu": 1, "severity": "fatal", "message": "row remap failed"}]})
    check(s == 200, "a fatal finding", s, d)
    after = metrics(p)
    check(after["store"] == before["store"] + 1, "a GPU drain goes through the store",
          before, after)
    s, n = p.admin.get("/v1/nodes/n0")
    check(n["gpus"][1].get("drained"), "GPU 1 drained", n["gpus"][1])

    # The job's end: through the store.
    before = metrics(p)
    s, d = beat(a0, "n0", [{"job": job, "replica": 0, "epoch": epoch, "state": "Succeeded",
                            "exit_code": 0}])
    check(s == 200, "the Succeeded report", s, d)
    after = metrics(p)
    check(after["store"] == before["store"] + 1 and after["groups"] > before["groups"],
          "the job's end goes through the store", before, after)
    check(p.job(user, job)["state"] == "Succeeded", "Succeeded", p.job(user, job))
print("ok")
