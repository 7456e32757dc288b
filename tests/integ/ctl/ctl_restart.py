"""Restarting gpupoold loses nothing: tenants, queues, priority classes, nodes, tokens, jobs with
their states, reasons and events, and placements (same nodes, GPUs and epochs) — after a clean
stop and after kill -9."""
import signal
import sys

from pool import Pool, check, node_doc, submit


def snapshot(p, alice):
    s, jobs = p.admin.get("/v1/jobs?limit=1000")
    s, tenants = p.admin.get("/v1/tenants")
    s, queues = p.admin.get("/v1/queues")
    s, classes = p.admin.get("/v1/priorityclasses")
    s, nodes = p.admin.get("/v1/nodes")
    s, events = alice.get("/v1/jobs/run-0/events")
    keep = ("id", "name", "tenant", "queue", "state", "reason", "placement", "replicas")
    return {
        "jobs": [{k: j[k] for k in keep} for j in jobs["items"]],
        "tenants": tenants["items"], "queues": queues["items"], "classes": classes["items"],
        "nodes": [{k: n[k] for k in ("name", "gpus", "cordoned", "cpu_milli")}
                  for n in nodes["items"]],
        "events": events["items"],
    }


with Pool(sys.argv[1]) as p:
    p.register(node_doc("n0"))
    p.register(node_doc("n1", ngpus=4, model="H100-80GB"))
    p.register(node_doc("n2"))
    p.tenant("team-a", gpus=11, models={"H100-80GB": 2})
    p.queue("research", weight=2, guarantee={"gpus": 4}, capability={"gpus": 12})
    s, d = p.admin.post("/v1/priorityclasses", {"name": "urgent", "value": 5000,
                                                "preemption_policy": "PreemptLowerPriority"})
    check(s == 201, "priority class", s, d)
    p.grant("team-a", classes=["normal", "urgent"], queues=["default", "research"])
    alice = p.user("alice", "team-a")
    for i in range(6):
        submit(alice, "run-%d" % i, gpus=2, queue="research" if i % 2 else "default")
    submit(alice, "share", resources={"gpu_milli": 500, "gpu_memory_mib": 10240})
    submit(alice, "over-quota", gpus=2)
    p.wait_state(alice, "run-0", "Scheduled")
    p.wait_state(alice, "share", "Scheduled")
    s, d = alice.post("/v1/jobs/run-5/cancel")
    check(s == 200 and d["state"] == "Cancelled", "cancel", s, d)
    s, d = p.admin.post("/v1/nodes/n1/cordon")
    p.settle()
    before = snapshot(p, alice)
    check(any(j["state"] == "Pending" for j in before["jobs"]), "some jobs wait (quota)", before)

    for sig in (signal.SIGTERM, signal.SIGKILL):
        p.restart(sig)
        alice = p.client(alice.token)  # the token survives the restart
        p.settle()
        after = snapshot(p, alice)
        for key in before:
            check(after[key] == before[key], "%s unchanged after restart (%s)" % (key, sig),
                  before[key], after[key])
    # And the state keeps working: a new submit after the restart gets a fresh id.
    s, d = submit(alice, "after")
    check(s == 201 and d["id"] > max(j["id"] for j in before["jobs"]), "ids keep growing", d)
print("ok")
