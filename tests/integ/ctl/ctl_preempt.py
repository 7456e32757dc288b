"""Preemption and reclaim.

Priority: a high-priority job (class high: PreemptLowerPriority) evicts the cheapest preemptible
lower-priority job and is placed in its room; non-preemptible jobs are never evicted; a class
with policy Never never preempts.

Reclaim: queue research is owed 8 GPUs; queue batch borrows the whole node with preemptible
jobs; when research submits, batch's jobs are reclaimed until research has its guarantee.
"""
import sys

from pool import Pool, check, node_doc, submit

with Pool(sys.argv[1]) as p:
    p.register(node_doc("n0"))
    p.tenant("team-a")
    p.grant("team-a", classes=["low", "normal", "high"])
    alice = p.user("alice", "team-a")

    # Fill the node: 4 + 2 GPUs preemptible, 2 GPUs not.
    submit(alice, "low-4", gpus=4, preemptible=True, priority_class="low")
    submit(alice, "low-2", gpus=2, preemptible=True, priority_class="low")
    submit(alice, "keep-2", gpus=2, preemptible=False, priority_class="low")
    for n in ("low-4", "low-2", "keep-2"):
        p.wait_state(alice, n, "Scheduled")

    # A normal job (policy Never) waits; a high one evicts only what it needs.
    s, d = submit(alice, "normal-2", gpus=2)
    p.settle()
    check(p.job(alice, "normal-2")["state"] == "Pending", "class Never does not preempt")
    s, d = submit(alice, "high-2", gpus=2, priority_class="high")
    d = p.wait_state(alice, "high-2", "Scheduled")
    low2 = p.job(alice, "low-2")
    check(low2["state"] in ("Preempted", "Pending"), "the cheapest victim (2 GPUs) is evicted",
          low2)
    low2 = p.wait_state(alice, "low-2", "Pending")  # Preempted -> Pending at the next cycle
    check(p.job(alice, "low-4")["state"] == "Scheduled", "the 4-GPU job keeps running")
    check(p.job(alice, "keep-2")["state"] == "Scheduled", "non-preemptible job untouched")
    s, ev = alice.get("/v1/jobs/low-2/events")
    check([e["type"] for e in ev["items"]] == ["Submitted", "Scheduled", "Preempted"],
          "events record the preemption", ev)
    check("preempted by job %d" % d["id"] in ev["items"][2]["message"],
          "the event names the preemptor", ev["items"][2])

    # Never preempt without making room: an 8-GPU high job cannot fit even by evicting every
    # preemptible job (keep-2 stays), so nothing is evicted.
    s, d = submit(alice, "high-8", gpus=8, priority_class="high")
    p.settle()
    check(p.job(alice, "high-8")["state"] == "Pending", "high-8 cannot fit")
    check(p.job(alice, "low-4")["state"] == "Scheduled", "so low-4 is not evicted for nothing")

with Pool(sys.argv[1]) as p:
    p.register(node_doc("n0"))
    p.tenant("team-a")
    alice = p.user("alice", "team-a")
    p.queue("research", guarantee={"gpus": 8})
    p.queue("batch", weight=1, guarantee={"gpus": 0})
    p.grant("team-a", queues=["default", "research", "batch"])
    for i in range(4):
        submit(alice, "b%d" % i, gpus=2, queue="batch", preemptible=True)
    for i in range(4):
        p.wait_state(alice, "b%d" % i, "Scheduled")
    s, d = submit(alice, "r0", gpus=4, queue="research")
    p.wait_state(alice, "r0", "Scheduled")
    states = [p.job(alice, "b%d" % i)["state"] for i in range(4)]
    check(states.count("Pending") + states.count("Preempted") == 2,
          "two 2-GPU batch jobs reclaimed for research's 4", states)
    for i in range(4):
        s, ev = alice.get("/v1/jobs/b%d/events" % i)
        types = [e["type"] for e in ev["items"]]
        if "Preempted" in types:
            check("reclaim" in ev["items"][types.index("Preempted")]["message"],
                  "the eviction says reclaimed", ev)
print("ok")
