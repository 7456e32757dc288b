"""Job ends: a job past its max runtime is Failed (final, even with a restart policy) and its
GPUs are freed; a failed replica restarts the job by its restart policy with the restart
counted, until max_restarts; a replica reporting with a superseded epoch changes nothing."""
import sys
import time

from pool import Pool, check, node_doc, submit

with Pool(sys.argv[1]) as p:
    agent = p.register(node_doc("n0", ngpus=2))
    p.tenant("team-a")
    alice = p.user("alice", "team-a")

    s, d = submit(alice, "brief", gpus=1, max_runtime="1s", restart_policy="on-failure")
    p.wait_state(alice, "brief", "Scheduled")
    d = p.wait_state(alice, "brief", "Failed", timeout=10)
    check("max runtime" in d["reason"] and d["restarts"] == 0,
          "failed for its runtime, not restarted", d)
    check(d["placement"] == [], "its GPUs are freed", d)

    s, d = submit(alice, "flaky", gpus=1, restart_policy="on-failure", max_restarts=1)
    job = p.wait_state(alice, "flaky", "Scheduled")
    old_epoch = job["placement"][0]["epoch"]

    def report(job, state, code):
        rep = job["placement"][0]
        s, hb = agent.post("/v1/nodes/n0/heartbeat", {"replicas": [
            {"job": job["id"], "replica": 0, "epoch": rep["epoch"], "state": state,
             "exit_code": code}]})
        check(s == 200, "heartbeat", s, hb)

    report(job, "Running", 0)
    check(p.job(alice, "flaky")["state"] == "Running", "Running once the agent says so")
    report(job, "Failed", 137)
    job2 = p.wait_state(alice, "flaky", "Scheduled")
    check(job2["restarts"] == 1 and job2["placement"][0]["epoch"] > old_epoch,
          "restarted once with a new epoch", job2)
    report(job, "Failed", 1)  # the superseded epoch: ignored
    check(p.job(alice, "flaky")["state"] == "Scheduled", "a stale report changes nothing")
    report(job2, "Failed", 3)
    d = p.wait_state(alice, "flaky", "Failed")
    check(d["exit_code"] == 3 and d["restarts"] == 1, "out of restarts: Failed with its code", d)
    s, ev = alice.get("/v1/jobs/flaky/events")
    types = [e["type"] for e in ev["items"]]
    check(types == ["Submitted", "Scheduled", "Running", "Restarting", "Scheduled", "Failed"],
          "the history tells it", types)
print("ok")
