"""Faults, driven through the API: agents are played by a beater thread that heartbeats for the
nodes it is given (reporting every desired replica Running) and carries XID events and health
check results.

- fatal XID: the GPU is drained, the job restarts elsewhere with one more restart and the same
  checkpoint directory, a gang restarts as a whole; a recurring double-bit ECC retires the GPU;
- application XID: only the job fails (its restart policy applies); the GPU drains at the 3rd
  within 24 h; XID 43 does nothing;
- XID 79: the whole node is drained and its jobs move;
- health checks: a fatal finding drains the GPU; the controller asks for a recheck after
  faults.recheck_after and a pass returns the GPU; a node-wide finding stops new work;
- operators drain and undrain single GPUs;
- restarts after faults are rate-limited;
- a lost node: its jobs restart elsewhere (or fail with node-lost) exactly once, and the node
  is fenced until its agent runs none of the superseded replicas;
- hot spares take only restarts after a fault;
- a maintenance drain with a deadline takes only jobs that end before it, and requeues the
  rest at the deadline;
- a hung replica (no output, no GPU use) gets an event and a restart.
"""
import sys
import tempfile
import time

from pool import Beater, Pool, check, events, node_doc, submit, wait


def node(p, name):
    s, d = p.admin.get("/v1/nodes/%s" % name)
    check(s == 200, "get node", s, d)
    return d


def where(job):
    pl = job.get("placement") or []
    return [(r["node"], [g["index"] for g in r["gpus"]]) for r in pl]


def running(p, client, ref, timeout=10):
    return p.wait_state(client, ref, "Running", timeout)


ckpt = tempfile.mkdtemp(prefix="gpupool-ckpt.")
args = ["--nodes-heartbeat-timeout", "1s", "--nodes-lost-timeout", "2s",
        "--faults-recheck-after", "1s", "--faults-restart-limit", "3",
        "--jobs-checkpoint-root", ckpt]

with Pool(sys.argv[1], args) as p:
    p.tenant("team-a")
    alice = p.user("alice", "team-a")
    for n in ("n0", "n1"):
        p.register(node_doc(n, ngpus=4))
    b = Beater(p)
    b.nodes |= {"n0", "n1"}

    # ---- a fatal XID: drain the GPU, restart the job elsewhere, same checkpoint dir ----
    s, d = submit(alice, "train", gpus=1, restart_policy="on-failure")
    check(s == 201, "submit", s, d)
    j = running(p, alice, "train")
    (n0, [g0]), = where(j)
    s, des = p.admin.get("/v1/nodes/%s/desired" % n0)
    mine = [r for r in des["desired"] if r["job"] == j["id"]][0]
    check(mine["restart_count"] == 0 and mine["checkpoint_dir"] == "%s/team-a/%d" % (ckpt, j["id"]),
          "the desired replica names its checkpoint directory", mine)
    b.send(n0, events=[{"gpu": g0, "xid": 48}])
    j = wait("the job to run again elsewhere",
             lambda: (lambda x: x if x["state"] == "Running" and x["restarts"] == 1 else None)(
                 p.job(alice, "train")))
    (n1_, [g1]), = where(j)
    check((n1_, g1) != (n0, g0), "restarted on another GPU", j, n0, g0)
    ev = events(alice, "train")
    check(any(e["type"] == "Restarting" and "XID 48" in e["message"] for e in ev),
          "a Restarting event names the XID", ev)
    gd = node(p, n0)["gpus"][g0]
    check(gd["drained"]["reason"].startswith("XID 48") and gd["drained"]["auto"]
          and not gd["drained"]["retired"], "the GPU is drained", gd)
    s, des = p.admin.get("/v1/nodes/%s/desired" % n1_)
    mine = [r for r in des["desired"] if r["job"] == j["id"]][0]
    check(mine["restart_count"] == 1 and mine["checkpoint_dir"] == "%s/team-a/%d" % (ckpt, j["id"]),
          "the restart has restart_count 1 and the same checkpoint directory", mine)
    # A second double-bit ECC on the same GPU retires it; the drain is kept across a restart.
    b.send(n0, events=[{"gpu": g0, "xid": 48}])
    b.flush(n0)
    gd = node(p, n0)["gpus"][g0]
    check(gd["drained"]["retired"] and not gd["drained"]["auto"], "retired at the 2nd DBE", gd)
    # The agent registers again (as after its own restart) with the same inventory: what the
    # controller keeps about the node (drains, faults, a scheduled drain) stays, on disk too.
    other = "n1" if n0 == "n0" else "n0"
    s, d = p.admin.post("/v1/nodes/%s/drain" % other, {"in_s": 7200})
    check(s == 200, "schedule a drain", s, d)
    p.register(node_doc("n0", ngpus=4))
    p.register(node_doc("n1", ngpus=4))
    gd = node(p, n0)["gpus"][g0]
    check(gd.get("drained", {}).get("retired"), "the drain survives registering again", gd)
    b.stop = True
    b.t.join()
    p.restart()
    alice = p.client(alice.token)
    gd = node(p, n0)["gpus"][g0]
    check(gd.get("drained", {}).get("retired"), "the drain survives a controller restart", gd)
    check(gd.get("faults"), "the GPU's fault history survives registering again", gd)
    check(node(p, other).get("drain_deadline_ms"), "a scheduled drain survives registering again",
          node(p, other))
    s, d = p.admin.post("/v1/nodes/%s/uncordon" % other)
    check(s == 200 and "drain_deadline_ms" not in d, "uncordon ends the scheduled drain", s, d)
    b = Beater(p)
    b.nodes |= {"n0", "n1"}
    # Operators: undrain (404 for a bad GPU, 403 for users).
    s, d = alice.post("/v1/nodes/%s/gpus/%d/undrain" % (n0, g0))
    check(s == 403, "users may not undrain", s, d)
    s, d = p.admin.post("/v1/nodes/%s/gpus/9/undrain" % n0)
    check(s == 404 and "no GPU 9" in d["error"]["message"], "a bad GPU index is 404", s, d)
    s, d = p.admin.post("/v1/nodes/%s/gpus/%d/undrain" % (n0, g0))
    check(s == 200 and "drained" not in d["gpus"][g0], "undrained by an operator", s, d)
    s, d = p.admin.post("/v1/nodes/%s/gpus/%d/drain" % (n0, g0), {"reason": "fan"})
    check(s == 200 and d["gpus"][g0]["drained"]["reason"] == "drained by admin: fan"
          and not d["gpus"][g0]["drained"]["auto"], "drained by an operator", s, d)
    s, d = p.admin.post("/v1/nodes/%s/gpus/%d/drain" % (n0, g0), {"why": "x"})
    check(s == 400 and "why" in d["error"]["message"], "a bad drain body is 400", s, d)
    p.admin.post("/v1/nodes/%s/gpus/%d/undrain" % (n0, g0))
    s, d = alice.post("/v1/jobs/train/cancel")
    check(s == 200, "cancel", s, d)

    # ---- application XIDs: only the job fails; the 3rd within 24 h drains the GPU ----
    for k in range(3):
        s, d = submit(alice, "app-%d" % k, gpus=4)
        check(s == 201, "submit", s, d)
        j = running(p, alice, "app-%d" % k)
        (na, ga), = where(j)
        b.send(na, events=[{"gpu": ga[0], "xid": 13}])
        j = p.wait_state(alice, "app-%d" % k, "Failed")
        check("XID 13" in j["reason"], "fails with the XID", j)
        drained = "drained" in node(p, na)["gpus"][ga[0]]
        check(drained == (k == 2), "drained only at the 3rd application fault", k, na, ga)
        if k < 2:
            # keep the faults on the same GPU: the next 4-GPU job lands on the same node
            p.admin.post("/v1/nodes/%s/cordon" % ("n1" if na == "n0" else "n0"))
        else:
            p.admin.post("/v1/nodes/%s/uncordon" % ("n1" if na == "n0" else "n0"))
    p.admin.post("/v1/nodes/%s/gpus/%d/undrain" % (na, ga[0]))
    s, d = submit(alice, "calm", gpus=1, restart_policy="on-failure")
    j = running(p, alice, "calm")
    (nc, [gc]), = where(j)
    b.send(nc, events=[{"gpu": gc, "xid": 43}])
    b.flush(nc)
    j = p.job(alice, "calm")
    check(j["state"] == "Running" and j["restarts"] == 0 and "drained" not in node(p, nc)["gpus"][gc],
          "XID 43 changes nothing", j)
    # XID 63 keeps the job and takes the GPU out of service; XID 74 restarts only jobs holding
    # more than one GPU.
    b.send(nc, events=[{"gpu": gc, "xid": 63}, {"gpu": gc, "xid": 74}])
    b.flush(nc)
    j = p.job(alice, "calm")
    gd = node(p, nc)["gpus"][gc]
    check(j["state"] == "Running" and j["restarts"] == 0 and gd["drained"]["reason"].startswith(
        "XID 63"), "XID 63 and 74 leave a one-GPU job running, the GPU drained", j, gd)
    s, d = submit(alice, "pair", gpus=2, restart_policy="on-failure")
    j = running(p, alice, "pair")
    (npair, gpair), = where(j)
    b.send(npair, events=[{"gpu": gpair[1], "xid": 74}])
    j = wait("the 2-GPU job restarted", lambda: (lambda x: x if x["restarts"] == 1 else None)(
        p.job(alice, "pair")))
    check(node(p, npair)["gpus"][gpair[1]]["drained"]["reason"].startswith("XID 74"),
          "XID 74 drains the GPU", j)
    for jn in ("calm", "pair"):
        alice.post("/v1/jobs/%s/cancel" % jn)
    p.admin.post("/v1/nodes/%s/gpus/%d/undrain" % (nc, gc))
    p.admin.post("/v1/nodes/%s/gpus/%d/undrain" % (npair, gpair[1]))

    # ---- a gang restarts as a whole; XID 79 drains the whole node ----
    s, d = submit(alice, "gang", gpus=4, replicas=2, restart_policy="on-failure")
    check(s == 201, "submit gang", s, d)
    j = running(p, alice, "gang")
    before = where(j)
    check(sorted(x[0] for x in before) == ["n0", "n1"], "the gang spans both nodes", before)
    b.send("n1", events=[{"gpu": 2, "xid": 79}])
    b.flush("n1")
    nd = node(p, "n1")
    check(nd["cordoned"] and nd["draining"] and nd["gpus"][2]["drained"]["reason"].startswith(
        "XID 79"), "XID 79 drains the node", nd)
    j = p.job(alice, "gang")
    check(j["restarts"] == 1 and j["state"] in ("Pending", "Scheduled"),
          "the whole gang restarted (no room for it now)", j)
    ev = events(alice, "gang")
    check(sum(1 for e in ev if e["type"] == "Restarting") == 1, "restarted once", ev)
    alice.post("/v1/jobs/gang/cancel")
    p.admin.post("/v1/nodes/n1/uncordon")
    p.admin.post("/v1/nodes/n1/gpus/2/undrain")

    # ---- restarts after faults are rate-limited (faults.restart_limit 3) ----
    s, d = submit(alice, "flaky", gpus=1, restart_policy="always")
    for k in range(4):
        j = wait("flaky to run", lambda: (lambda x: x if x["state"] == "Running" and
                                          x["restarts"] == k else None)(p.job(alice, "flaky")))
        (nf, [gf]), = where(j)
        b.send(nf, events=[{"gpu": gf, "xid": 62}])
        b.flush(nf)
        p.admin.post("/v1/nodes/%s/gpus/%d/undrain" % (nf, gf))
    j = p.wait_state(alice, "flaky", "Failed")
    check("3 restarts after faults" in j["reason"] and j["restarts"] == 3,
          "the 4th fault within the window fails the job", j)

    # ---- health checks ----
    b.send("n0", health={"seq": 0, "at_ms": 1, "conditions": [
        {"check": "remapped-rows", "gpu": 1, "severity": "fatal", "message": "row remap failed"},
        {"check": "ecc", "gpu": 0, "severity": "warning", "message": "pending"}]})
    b.flush("n0")
    nd = node(p, "n0")
    check(nd["gpus"][1]["drained"]["reason"] == "health check: row remap failed"
          and "drained" not in nd["gpus"][0], "a fatal finding drains its GPU only", nd["gpus"])
    seq = wait("a recheck to be asked for",
               lambda: p.admin.get("/v1/nodes/n0/desired")[1]["check_seq"])
    check(node(p, "n0")["gpus"][1]["drained"]["check_seq"] == seq, "the GPU waits for it")
    b.send("n0", health={"seq": seq - 1, "at_ms": 2, "conditions": []})
    b.flush("n0")
    check("drained" in node(p, "n0")["gpus"][1], "an older check does not return it")
    b.send("n0", health={"seq": seq, "at_ms": 3, "conditions": []})
    b.flush("n0")
    check("drained" not in node(p, "n0")["gpus"][1], "a passing recheck returns it")
    b.send("n0", health={"seq": seq, "at_ms": 4, "conditions": [
        {"check": "driver", "gpu": -1, "severity": "fatal", "message": "no driver"}]})
    b.flush("n0")
    nd = node(p, "n0")
    check(not nd["schedulable"] and nd["unhealthy"] == "driver: no driver",
          "a node-wide finding stops new work", nd)
    b.send("n0", health={"seq": seq, "at_ms": 5, "conditions": []})
    b.flush("n0")
    check(node(p, "n0")["schedulable"], "and a pass lets it take work again")
    s, d = p.admin.post("/v1/nodes/n0/check")
    check(s == 200 and p.admin.get("/v1/nodes/n0/desired")[1]["check_seq"] == seq + 1,
          "operators ask for a check", s, d)
    s, d = p.admin.post("/v1/nodes/n0/heartbeat", {"health": []})
    check(s == 400 and "health" in d["error"]["message"], "a bad health report is 400", s, d)
    before = node(p, "n0")
    s, d = p.admin.post("/v1/nodes/n0/heartbeat", {"events": [{"gpu": 2, "xid": 79}], "health": {
        "seq": seq + 1, "conditions": [{"check": "driver", "gpu": 7, "severity": "fatal"}]}})
    check(s == 400 and d["error"]["message"] == "health.conditions[0].gpu: 7, the node has 4 GPUs",
          "a finding for a GPU the node lacks is 400", s, d)
    after = node(p, "n0")
    check(after["gpus"][2]["xid_errors"] == before["gpus"][2]["xid_errors"] and
          after["health"] == before["health"], "and nothing of that heartbeat is applied", after)
    s, d = p.admin.post("/v1/nodes/n0/heartbeat", {"health": {"seq": 1, "conditions": [
        {"check": "driver", "gpu": -1, "severity": "fatal", "message": "x", "fix": "y"}]}})
    check(s == 400 and d["error"]["message"] == "health.conditions[0].fix: unknown field",
          "an unknown member of a finding is 400", s, d)

    # ---- a lost node ----
    s, d = submit(alice, "keep", gpus=4, restart_policy="on-failure")
    s, d = submit(alice, "once", gpus=4, restart_policy="never")
    jk, jo = running(p, alice, "keep"), running(p, alice, "once")
    lost = where(jk)[0][0]
    other = "n1" if lost == "n0" else "n0"
    check(where(jo)[0][0] == other, "one job per node", jk, jo)
    old = [{"job": jk["id"], "replica": 0, "epoch": jk["placement"][0]["epoch"],
            "state": "Running"}]
    b.nodes.discard(lost)
    alice.post("/v1/jobs/once/cancel")  # room on the other node for the moved job
    j = wait("the job on the lost node to move",
             lambda: (lambda x: x if x["state"] == "Running" and x["restarts"] == 1 else None)(
                 p.job(alice, "keep")), 15)
    check(where(j)[0][0] == other and
          any(e["type"] == "Restarting" and "node-lost" in e["message"]
              for e in events(alice, "keep")),
          "restarted elsewhere after node-lost", j, events(alice, "keep"))
    nd = node(p, lost)
    check(nd["state"] == "NotReady" and nd["fenced"], "the lost node is fenced", nd)
    # It comes back still running the superseded replica: fenced until that stops.
    b.stale[lost] = old
    b.nodes.add(lost)
    time.sleep(1)
    nd = node(p, lost)
    check(nd["state"] == "Ready" and nd["fenced"] and not nd["schedulable"],
          "back, but fenced while the old replica runs", nd)
    j = p.job(alice, "keep")
    check(j["state"] == "Running" and j["restarts"] == 1 and where(j)[0][0] == other,
          "a report of the old placement changes nothing", j)
    b.stale[lost] = []
    wait("the fence to lift", lambda: node(p, lost)["schedulable"], 10)
    alice.post("/v1/jobs/keep/cancel")
    # restart policy never: the job fails with node-lost
    s, d = submit(alice, "never", gpus=1, restart_policy="never")
    jn = running(p, alice, "never")
    gone = where(jn)[0][0]
    b.nodes.discard(gone)
    j = p.wait_state(alice, "never", "Failed", 15)
    check("node-lost" in j["reason"], "fails with node-lost", j)
    b.nodes.add(gone)
    wait("the node back", lambda: node(p, gone)["schedulable"], 10)
    b.stop = True
    b.t.join()

# ---- hot spares, maintenance deadlines and hung replicas ----
args = ["--faults-spare-fraction", "0.25", "--nodes-heartbeat-timeout", "2s"]
with Pool(sys.argv[1], args) as p:
    p.tenant("team-a")
    alice = p.user("alice", "team-a")
    p.register(node_doc("n0", ngpus=4))
    p.register(node_doc("n1", ngpus=4))
    b = Beater(p)
    b.nodes |= {"n0", "n1"}
    time.sleep(0.5)
    spares = [(n["name"], g["index"]) for n in p.admin.get("/v1/nodes")[1]["items"]
              for g in n["gpus"] if g["spare"]]
    check(spares == [("n1", 2), ("n1", 3)], "2 of 8 GPUs are spares, the last ones", spares)
    for k in range(6):
        submit(alice, "fill-%d" % k, gpus=1, restart_policy="on-failure")
    for k in range(6):
        running(p, alice, "fill-%d" % k)
    submit(alice, "extra", gpus=1)
    p.settle(0.5)
    j = p.job(alice, "extra")
    check(j["state"] == "Pending", "spares do not take new work", j)
    j = p.job(alice, "fill-0")
    (nf, [gf]), = where(j)
    b.send(nf, events=[{"gpu": gf, "xid": 95}])
    j = wait("the faulted job on a spare",
             lambda: (lambda x: x if x["state"] == "Running" and x["restarts"] == 1 else None)(
                 p.job(alice, "fill-0")))
    check(where(j)[0][0] == "n1" and where(j)[0][1][0] in (2, 3), "it runs on a spare", j)
    check(p.job(alice, "extra")["state"] == "Pending", "the new job still waits")
    for k in range(6):
        alice.post("/v1/jobs/fill-%d/cancel" % k)
    alice.post("/v1/jobs/extra/cancel")
    p.admin.post("/v1/nodes/%s/gpus/%d/undrain" % (nf, gf))

    # Maintenance: n0 drains in 6 s; until then it takes only jobs that end before.
    p.admin.post("/v1/nodes/n1/cordon")
    s, d = p.admin.post("/v1/nodes/n0/drain", {"in_s": 6})
    check(s == 200 and not d["cordoned"] and d["drain_deadline_ms"] > 0, "drain scheduled", s, d)
    s, d = p.admin.post("/v1/nodes/n0/drain", {"in_s": 3, "deadline_ms": 5})
    check(s == 400 and "give one" in d["error"]["message"], "one of in_s and deadline_ms", s, d)
    submit(alice, "long", gpus=1)
    submit(alice, "short", gpus=1, max_runtime=2)
    submit(alice, "ends-after", gpus=1, max_runtime=60, restart_policy="on-failure")
    running(p, alice, "short")
    p.settle(0.5)
    check(p.job(alice, "long")["state"] == "Pending", "a job without a max runtime waits")
    check(p.job(alice, "ends-after")["state"] == "Pending", "a job ending after the deadline waits")
    nd = wait("the deadline", lambda: (lambda x: x if x["draining"] else None)(node(p, "n0")), 15)
    check(nd["cordoned"] and "drain_deadline_ms" not in nd, "drained at its deadline", nd)
    p.admin.post("/v1/nodes/n0/uncordon")
    p.admin.post("/v1/nodes/n1/uncordon")
    for n in ("long", "short", "ends-after"):
        alice.post("/v1/jobs/%s/cancel" % n)
    # A job running at the deadline is requeued with one more restart.
    s, d = submit(alice, "at-deadline", gpus=1, restart_policy="never")
    j = running(p, alice, "at-deadline")
    nd = where(j)[0][0]
    p.admin.post("/v1/nodes/%s/drain" % nd, {"in_s": 1})
    j = wait("the requeue", lambda: (lambda x: x if x["restarts"] == 1 else None)(
        p.job(alice, "at-deadline")), 10)
    check(any(e["type"] == "Requeued" and "maintenance" in e["message"]
              for e in events(alice, "at-deadline")), "requeued for maintenance", j)
    j = running(p, alice, "at-deadline")
    check(where(j)[0][0] != nd, "and runs elsewhere", j)
    alice.post("/v1/jobs/at-deadline/cancel")
    p.admin.post("/v1/nodes/%s/uncordon" % nd)

    # Hung replicas.
    s, d = submit(alice, "hangs", gpus=1, hang_timeout="2s", restart_policy="on-failure")
    check(s == 201, "submit with hang_timeout", s, d)
    s, d = submit(alice, "bad-hang", gpus=1, hang_timeout="soon")
    check(s == 400 and "hang_timeout" in d["error"]["message"], "a bad hang_timeout", s, d)
    j = running(p, alice, "hangs")
    b.idle[j["id"]] = 1000
    time.sleep(0.6)
    check(p.job(alice, "hangs")["restarts"] == 0, "idle below the timeout is fine")
    b.idle[j["id"]] = 2500
    j = wait("the hung job to restart", lambda: (lambda x: x if x["restarts"] >= 1 else None)(
        p.job(alice, "hangs")))
    check(any(e["type"] == "Hung" for e in events(alice, "hangs")), "a Hung event", j)
    b.stop = True
    b.t.join()

print("ok")
