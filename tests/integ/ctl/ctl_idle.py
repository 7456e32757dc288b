"""Idle reclamation through the API: agents (a beater thread) report each replica's GPU
utilisation in their heartbeats.

- a job below its idle_utilization for its idle_timeout is stopped: Cancelled with the reason,
  an IdleStopped event, its GPUs free for the next job;
- a job whose utilisation rises above the threshold now and then is never stopped (the clock
  restarts), nor one whose reports carry no utilisation, nor one without idle_timeout;
- a gang is idle only when all its replicas are;
- bad idle settings are refused with the field named.
"""
import sys
import time

from pool import Beater, Pool, check, events, node_doc, submit, wait


with Pool(sys.argv[1]) as p:
    p.tenant("team-a")
    alice = p.user("alice", "team-a")
    p.register(node_doc("n0", ngpus=4))
    b = Beater(p)
    b.nodes.add("n0")

    # ---- bad input ----
    for extra, field in (({"idle_utilization": 5}, "idle_utilization"),
                         ({"idle_timeout": "2s", "idle_utilization": 120}, "idle_utilization"),
                         ({"idle_timeout": "soon"}, "idle_timeout")):
        s, d = submit(alice, "bad", **extra)
        check(s == 400 and field in d.get("error", {}).get("message", ""),
              "%s refused naming %s" % (extra, field), s, d)
    s, d = submit(alice, "bad", resources={}, idle_timeout="2s")
    check(s == 400 and "idle_timeout" in d["error"]["message"], "idle_timeout needs a GPU", s, d)

    # ---- four jobs, one GPU each ----
    s, d = submit(alice, "notebook", idle_timeout="2s", idle_utilization=10)
    check(s == 201, "submit notebook", s, d)
    nb = d["id"]
    s, d = submit(alice, "bursty", idle_timeout="2s")
    check(s == 201, "submit bursty", s, d)
    bursty = d["id"]
    s, d = submit(alice, "blind", idle_timeout="2s")
    check(s == 201, "submit blind", s, d)
    s, d = submit(alice, "no-timeout")
    check(s == 201, "submit no-timeout", s, d)
    nt = d["id"]
    for name in ("notebook", "bursty", "blind", "no-timeout"):
        p.wait_state(alice, name, "Running", 10)
    b.util[nb] = 9          # below its 10%
    b.util[bursty] = 50     # busy for now; below the default 5% with bursts later
    b.util[nt] = 0          # no idle_timeout: never stopped
    t0 = time.monotonic()
    job = wait("the notebook to be stopped",
               lambda: (lambda j: j if j["state"] == "Cancelled" else None)(p.job(alice, "notebook")),
               15)
    took = time.monotonic() - t0
    check(took >= 2.0, "not stopped before its idle_timeout", took)
    check(job["reason"] == "idle: GPU utilisation below 10% for 2s", "the reason says why", job)
    ev = events(alice, "notebook")
    check(any(e["type"] == "IdleStopped" and e["message"] == job["reason"] for e in ev),
          "an IdleStopped event", ev)
    check(not job.get("placement"), "its GPUs are freed", job)

    # bursty: above the threshold for one report every second: never idle for 2 s
    deadline = time.monotonic() + 4
    while time.monotonic() < deadline:
        b.util[bursty] = 50
        time.sleep(0.5)
        b.util[bursty] = 2
        time.sleep(1.0)
    for name in ("bursty", "blind", "no-timeout"):
        check(p.job(alice, name)["state"] == "Running", "%s still runs" % name, p.job(alice, name))

    # bursty left idle: now it goes
    b.util[bursty] = 1
    p.wait_state(alice, "bursty", "Cancelled", 10)

    # the freed GPUs take new work
    s, d = submit(alice, "next", gpus=2)
    check(s == 201, "submit next", s, d)
    p.wait_state(alice, "next", "Running", 10)

    # ---- a gang is idle only when all its replicas are ----
    for name in ("blind", "no-timeout", "next"):
        s, d = alice.post("/v1/jobs/%s/cancel" % name)
        check(s == 200, "cancel %s" % name, s, d)
    s, d = submit(alice, "gang", replicas=2, idle_timeout="2s")
    check(s == 201, "submit gang", s, d)
    gang = d["id"]
    p.wait_state(alice, "gang", "Running", 10)
    orig = b.beat

    def beat_gang(node):
        """Replica 0 idle, replica 1 busy."""
        s, doc = p.admin.get("/v1/nodes/%s/desired" % node)
        reps = [{"job": r["job"], "replica": r["replica"], "epoch": r["epoch"], "state": "Running",
                 "util": 0 if r["replica"] == 0 else 80} for r in doc["desired"]]
        p.admin.post("/v1/nodes/%s/heartbeat" % node, {"replicas": reps})

    b.beat = beat_gang
    time.sleep(3.5)
    check(p.job(alice, "gang")["state"] == "Running", "half a gang idle is not idle",
          p.job(alice, "gang"))
    b.beat = orig
    b.util[gang] = 0
    p.wait_state(alice, "gang", "Cancelled", 10)
    b.stop = True
print("ok")
