"""Backfill never delays the reservation of the highest-priority blocked job.

One node of 8 GPUs. `base` holds 6 GPUs for at most 1 h. `large` needs all 8: it is blocked and
gets the reservation. `short` (2 GPUs, at most 10 minutes, ending before `base` can) may use the
gap; `long` (2 GPUs, no limit) may not, since it could hold the node past the reservation. When
`base` and `short` end, `large` starts, ahead of `long`.
"""
import sys

from pool import Pool, check, node_doc, submit

with Pool(sys.argv[1]) as p:
    agent = p.register(node_doc("n0"))
    p.tenant("team-a")
    alice = p.user("alice", "team-a")

    s, base = submit(alice, "base", gpus=6, max_runtime="1h")
    base = p.wait_state(alice, "base", "Scheduled")
    s, large = submit(alice, "large", gpus=8)
    p.settle()
    s, long_ = submit(alice, "long", gpus=2)
    p.settle()
    d = p.job(alice, "long")
    check(d["state"] == "Pending", "an unbounded job does not take the reserved node", d)
    check("backfill" in d["reason"] or "reserv" in d["reason"],
          "its reason names the reservation", d["reason"])
    s, short = submit(alice, "short", gpus=2, max_runtime="10m")
    short = p.wait_state(alice, "short", "Scheduled")
    check(p.job(alice, "large")["state"] == "Pending", "large still waits for base")

    def finish(job):
        reps = [{"job": job["id"], "replica": r["replica"], "epoch": r["epoch"],
                 "state": "Succeeded", "exit_code": 0} for r in job["placement"]]
        s, d = agent.post("/v1/nodes/n0/heartbeat", {"replicas": reps})
        check(s == 200, "heartbeat", s, d)

    finish(base)
    finish(short)
    check(p.job(alice, "base")["state"] == "Succeeded", "base succeeded")
    d = p.wait_state(alice, "large", "Scheduled")
    check(p.job(alice, "long")["state"] == "Pending", "long waits behind large")
print("ok")
