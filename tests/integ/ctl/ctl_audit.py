"""The audit log of a real gpupoold (GET /v1/audit, gpupool audit).

- Every change made through the API leaves exactly one record with the right actor, role,
  tenant, action and object: objects, tokens, jobs (by a user, an operator, an admin), nodes.
- Placements: the scheduler's placement.allocate (node and GPUs), placement.free when a job is
  cancelled, requeued, drained (by whom), preempted (by the scheduler) or reported finished by
  its agent (by the controller).
- Refused requests (400, 401, 403, 404, 405, 409), reads, retried submits and heartbeats leave
  no record; users and operators may not read the log (403); no record holds a token's secret.
- The log survives kill -9.
- If the record cannot be written, the change is not made: with a trigger that aborts inserts
  into the audit table, changes answer 503 and nothing changed (objects, jobs, placements); a
  placement whose record cannot be written is not made; once the trigger is gone, changes work.
- gpupool audit: table, JSON, filters, pages, durations and RFC 3339 times, refusals.
"""
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

from pool import Pool, check, node_doc, submit

GPUPOOLD = sys.argv[1]
GPUPOOL = sys.argv[2] if len(sys.argv) > 2 else None


def matches(rec, want):
    for k, v in want.items():
        if k == "detail":
            for dk, dv in v.items():
                got = rec["detail"].get(dk) if isinstance(rec["detail"], dict) else None
                if not (dv(got) if callable(dv) else got == dv):
                    return False
        elif rec.get(k) != v:
            return False
    return True


class Audit:
    """Reads the log as admin and checks what the last step appended."""

    def __init__(self, p):
        self.p = p
        self.last = 0

    def read(self, query=""):
        items, after = [], 0
        while True:
            sep = "&" if query else ""
            s, d = self.p.admin.get("/v1/audit?limit=1000&after=%d%s%s" % (after, sep, query))
            check(s == 200, "read the audit log", s, d)
            items += d["items"]
            if d["next"] is None:
                return items
            after = int(d["next"])

    def new(self):
        s, d = self.p.admin.get("/v1/audit?limit=1000&after=%d" % self.last)
        check(s == 200 and d["next"] is None, "read the new records", s, d)
        if d["items"]:
            self.last = d["items"][-1]["id"]
        return d["items"]

    def skip(self):
        self.new()

    def expect(self, what, *want):
        """The records since the last check are exactly want, in order."""
        recs = self.new()
        ok = len(recs) == len(want) and all(matches(r, w) for r, w in zip(recs, want))
        check(ok, "audit records of: " + what, list(want), recs)
        return recs

    def none(self, what):
        self.expect(what)


def rec(action, actor, role, tenant, obj, **detail):
    """What a record must hold (obj None: any object)."""
    w = {"action": action, "actor": actor, "role": role, "tenant": tenant}
    if obj is not None:
        w["object"] = obj
    if detail:
        w["detail"] = detail
    return w


def step(a, what, call, status, *want, then=None):
    """Runs call (returns (status, doc)), checks the status and the records it left; then, when
    given, waits for what follows asynchronously (a placement) before the records are read."""
    t0 = int(time.time() * 1000)
    s, d = call()
    t1 = int(time.time() * 1000)
    check(s == status, what + ": status", status, s, d)
    if then:
        then()
        wait_records(a, what, len(want))
        t1 = int(time.time() * 1000)
    recs = a.expect(what, *want)
    for r in recs:
        check(t0 - 5 <= r["time_ms"] <= t1 + 5, what + ": record time", t0, t1, r)
    return d


def wait_records(a, what, n):
    """Waits until n new records are there (the scheduler's come asynchronously)."""
    deadline = time.time() + 15
    while True:
        s, d = a.p.admin.get("/v1/audit?limit=1000&after=%d" % a.last)
        if len(d["items"]) >= n or time.time() > deadline:
            return
        time.sleep(0.05)


def submit_key(client, name, key):
    spec = {"name": name, "command": ["sleep", "1000"], "resources": {"gpus": 1}}
    return client.post("/v1/jobs", spec, headers={"Idempotency-Key": key})


def where(node, ngpus):
    return lambda v: (isinstance(v, list) and len(v) == 1 and v[0]["node"] == node and
                      len(v[0]["gpus"]) == ngpus)


with Pool(GPUPOOLD) as p:
    admin = p.admin
    a = Audit(p)
    a.none("a fresh controller (defaults and first tokens are not API changes)")

    # ---- objects and tokens: admin and operator ----
    step(a, "tenant create", lambda: admin.post("/v1/tenants", {"name": "team-a",
                                                              "quota": {"gpus": 4}}), 201,
         rec("tenant.create", "admin", "admin", "team-a", "tenant/team-a",
             request="POST /v1/tenants"))
    step(a, "tenant create", lambda: admin.post("/v1/tenants", {"name": "team-b"}), 201,
         rec("tenant.create", "admin", "admin", "team-b", "tenant/team-b"))
    step(a, "tenant update", lambda: admin.put("/v1/tenants/team-a", {
        "quota": {"gpus": 8}, "priority_classes": ["low", "normal", "high"]}),
         200, rec("tenant.update", "admin", "admin", "team-a", "tenant/team-a",
                  request="PUT /v1/tenants/team-a",
                  body=lambda b: b["quota"]["gpus"] == 8))
    secrets = []
    d = step(a, "token create (operator)",
             lambda: admin.post("/v1/tokens", {"name": "ops", "role": "operator"}), 201,
             rec("token.create", "admin", "admin", "", None, name="ops"))
    ops = p.client(d["token"])
    secrets.append(d["token"])
    check(a.read("action=token.create")[-1]["object"] == "token/%d" % d["id"],
          "a token is named by its id", a.read("action=token.create"))
    d = step(a, "token create (user)", lambda: admin.post(
        "/v1/tokens", {"name": "alice", "role": "user", "tenant": "team-a"}), 201,
        rec("token.create", "admin", "admin", "team-a", None, name="alice"))
    alice = p.client(d["token"])
    secrets.append(d["token"])
    d = step(a, "token create", lambda: admin.post(
        "/v1/tokens", {"name": "tmp", "role": "user", "tenant": "team-b"}), 201,
        rec("token.create", "admin", "admin", "team-b", None, name="tmp"))
    secrets.append(d["token"])
    tmp_id = d["id"]
    step(a, "token revoke", lambda: admin.delete("/v1/tokens/%d" % tmp_id), 200,
         rec("token.revoke", "admin", "admin", "team-b", "token/%d" % tmp_id, name="tmp",
             request="DELETE /v1/tokens/%d" % tmp_id))

    step(a, "queue create", lambda: ops.post("/v1/queues", {"name": "research", "weight": 1}),
         201, rec("queue.create", "ops", "operator", "", "queue/research"))
    step(a, "queue update", lambda: ops.put("/v1/queues/research", {"weight": 2}), 200,
         rec("queue.update", "ops", "operator", "", "queue/research",
             body={"weight": 2}))
    step(a, "class create", lambda: ops.post("/v1/priorityclasses",
                                            {"name": "urgent", "value": 100}), 201,
         rec("priorityclass.create", "ops", "operator", "", "priorityclass/urgent"))
    step(a, "class update", lambda: ops.put("/v1/priorityclasses/urgent", {"value": 200}), 200,
         rec("priorityclass.update", "ops", "operator", "", "priorityclass/urgent"))
    step(a, "volume create", lambda: ops.post("/v1/volumes", {"name": "data",
                                                             "path": "/srv/data"}), 201,
         rec("volume.create", "ops", "operator", "", "volume/data"))
    step(a, "volume update", lambda: ops.put("/v1/volumes/data", {"path": "/srv/data2"}), 200,
         rec("volume.update", "ops", "operator", "", "volume/data"))
    step(a, "volume delete", lambda: ops.delete("/v1/volumes/data"), 200,
         rec("volume.delete", "ops", "operator", "", "volume/data"))
    step(a, "class delete", lambda: ops.delete("/v1/priorityclasses/urgent"), 200,
         rec("priorityclass.delete", "ops", "operator", "", "priorityclass/urgent"))
    step(a, "queue delete", lambda: ops.delete("/v1/queues/research"), 200,
         rec("queue.delete", "ops", "operator", "", "queue/research"))
    step(a, "tenant delete", lambda: admin.delete("/v1/tenants/team-b"), 200,
         rec("tenant.delete", "admin", "admin", "team-b", "tenant/team-b"))

    # ---- jobs: a user acts in its tenant; staff name it ----
    d = step(a, "submit (user)", lambda: submit(alice, "one"), 201,
             rec("job.submit", "alice", "user", "team-a", None, name="one",
                 request="POST /v1/jobs"))
    one = d["id"]
    check(a.read("object=job/%d" % one)[0]["action"] == "job.submit", "a job is job/ID")
    d = step(a, "submit with a key", lambda: submit_key(alice, "two", "k"),
             201, rec("job.submit", "alice", "user", "team-a", "job/%d" % (one + 1), name="two"))
    two = d["id"]
    step(a, "a retried submit is not a change",
         lambda: submit_key(alice, "two", "k"), 200)
    d = step(a, "submit (admin)", lambda: submit(admin, "three", tenant="team-a"), 201,
             rec("job.submit", "admin", "admin", "team-a", "job/%d" % (two + 1)))
    three = d["id"]
    step(a, "cancel a pending job (nothing placed: nothing freed)",
         lambda: alice.post("/v1/jobs/three/cancel"), 200,
         rec("job.cancel", "alice", "user", "team-a", "job/%d" % three,
             request="POST /v1/jobs/three/cancel"))

    # ---- refused requests and reads leave nothing ----
    anon = p.client(None)
    refused = [
        ("user creates a tenant", lambda: alice.post("/v1/tenants", {"name": "x"}), 403),
        ("operator revokes a token", lambda: ops.delete("/v1/tokens/1"), 403),
        ("no token", lambda: anon.post("/v1/tenants", {"name": "x"}), 401),
        ("bad body", lambda: admin.post("/v1/tenants", {"name": "x", "bogus": 1}), 400),
        ("bad spec", lambda: submit(alice, "bad", gpus=-1), 400),
        ("no such job", lambda: alice.post("/v1/jobs/nope/cancel"), 404),
        ("no such token", lambda: admin.delete("/v1/tokens/99999"), 404),
        ("no such node", lambda: ops.post("/v1/nodes/nope/drain"), 404),
        ("exists already", lambda: admin.post("/v1/tenants", {"name": "team-a"}), 409),
        ("cancel twice", lambda: alice.post("/v1/jobs/three/cancel"), 409),
        ("method not allowed", lambda: admin.call("PATCH", "/v1/jobs", {}), 405),
    ]
    for what, call, status in refused:
        step(a, "refused: " + what, call, status)
    reads = [lambda: alice.get("/v1/jobs"), lambda: ops.get("/v1/tenants"),
             lambda: admin.get("/v1/tokens"), lambda: alice.get("/v1/whoami"),
             lambda: admin.get("/v1/audit"), lambda: alice.get("/v1/jobs/one/events")]
    for call in reads:
        step(a, "a read", call, 200)
    for who, name in ((alice, "user"), (ops, "operator")):
        s, d = who.get("/v1/audit")
        check(s == 403, "%s cannot read the audit log" % name, s, d)
    s, d = anon.get("/v1/audit")
    check(s == 401, "nor can anyone without a token", s, d)
    for q, what in (("since=yesterday", "since"), ("until=2024-13-01T00:00:00Z", "until"),
                    ("limit=0", "limit"), ("after=x", "after")):
        s, d = admin.get("/v1/audit?" + q)
        check(s == 400 and what in d["error"]["message"], "bad query " + q, s, d)
    a.none("refused requests and reads")

    # ---- placements: the scheduler allocates, the user who cancels frees ----
    s, d = p.client(p.join_token).post("/v1/nodes", node_doc("n0", ngpus=2))
    check(s == 201, "node register", s, d)
    agent = p.client(d["token"])
    secrets += [d["token"], d["control_token"]]
    for ref in (one, two):
        p.wait_state(alice, ref, "Scheduled")
    wait_records(a, "placements", 3)
    recs = a.new()
    check(len(recs) == 3 and matches(recs[0], rec("node.register", "join", "join", "", "node/n0",
                                                  request="POST /v1/nodes")),
          "the node's registration (by the join token)", recs)
    check(sorted(r["object"] for r in recs[1:]) == ["job/%d" % one, "job/%d" % two] and
          all(matches(r, rec("placement.allocate", "scheduler", "", "team-a", None,
                             replicas=where("n0", 1), epoch=lambda e: e > 0)) for r in recs[1:]),
          "the scheduler's placements", recs)
    step(a, "heartbeat (not recorded)", lambda: agent.post("/v1/nodes/n0/heartbeat", {}), 200)
    step(a, "cancel a placed job", lambda: alice.post("/v1/jobs/%d/cancel" % one), 200,
         rec("placement.free", "alice", "user", "team-a", "job/%d" % one, ended="Cancelled",
             reason="cancelled by alice", replicas=where("n0", 1)),
         rec("job.cancel", "alice", "user", "team-a", "job/%d" % one))
    freed, cancelled = a.read("object=job/%d" % one)[-2:]
    check(freed["time_ms"] == cancelled["time_ms"], "the records of one change share its time",
          freed, cancelled)
    step(a, "requeue (operator), placed again", lambda: ops.post("/v1/jobs/%d/requeue" % two),
         200,
         rec("placement.free", "ops", "operator", "team-a", "job/%d" % two, ended="Requeued"),
         rec("job.requeue", "ops", "operator", "team-a", "job/%d" % two),
         rec("placement.allocate", "scheduler", "", "team-a", "job/%d" % two),
         then=lambda: p.wait_state(alice, two, "Scheduled"))
    step(a, "node drain (operator)", lambda: ops.post("/v1/nodes/n0/drain"), 200,
         rec("placement.free", "ops", "operator", "team-a", "job/%d" % two, ended="Requeued",
             reason=lambda r: "drained by ops" in r, replicas=where("n0", 1)),
         rec("node.drain", "ops", "operator", "", "node/n0", request="POST /v1/nodes/n0/drain"))
    p.settle()
    check(p.job(alice, two)["state"] == "Pending", "drained: the job waits")
    a.none("nothing placed on a drained node")
    step(a, "node uncordon, placed again", lambda: ops.post("/v1/nodes/n0/uncordon"), 200,
         rec("node.uncordon", "ops", "operator", "", "node/n0"),
         rec("placement.allocate", "scheduler", "", "team-a", "job/%d" % two),
         then=lambda: p.wait_state(alice, two, "Scheduled"))
    job2 = p.job(alice, two)
    step(a, "node cordon (admin)", lambda: admin.post("/v1/nodes/n0/cordon"), 200,
         rec("node.cordon", "admin", "admin", "", "node/n0"))
    step(a, "node uncordon", lambda: admin.post("/v1/nodes/n0/uncordon"), 200,
         rec("node.uncordon", "admin", "admin", "", "node/n0"))

    s, api = admin.get("/openapi.json")
    if "/v1/nodes/{node}/gpus/{gpu}/drain" in api["paths"]:
        idle = 1 - job2["placement"][0]["gpus"][0]["index"]
        step(a, "gpu drain", lambda: ops.post("/v1/nodes/n0/gpus/%d/drain" % idle,
                                              {"reason": "fan noise"}), 200,
             rec("gpu.drain", "ops", "operator", "", "gpu/n0/%d" % idle,
                 body={"reason": "fan noise"}))
        step(a, "gpu undrain", lambda: ops.post("/v1/nodes/n0/gpus/%d/undrain" % idle), 200,
             rec("gpu.undrain", "ops", "operator", "", "gpu/n0/%d" % idle))

    # The agent reports the job done: the controller frees the placement.
    reps = [{"job": two, "replica": r["replica"], "epoch": r["epoch"], "state": "Succeeded",
             "exit_code": 0} for r in job2["placement"]]
    step(a, "an agent reports the end", lambda: agent.post("/v1/nodes/n0/heartbeat",
                                                          {"replicas": reps}), 200,
         rec("placement.free", "controller", "", "team-a", "job/%d" % two, ended="Succeeded"))

    # Preemption: the scheduler frees the victim's placement.
    s, d = submit(alice, "low", gpus=2, preemptible=True, priority_class="low")
    low = d["id"]
    p.wait_state(alice, low, "Scheduled")
    s, d = submit(alice, "high", gpus=1, priority_class="high")
    high = d["id"]
    p.wait_state(alice, high, "Scheduled")
    wait_records(a, "preemption", 5)
    recs = a.new()
    by = {(r["action"], r["object"]): r for r in recs}
    check(len(recs) == 5 and
          matches(by.get(("placement.free", "job/%d" % low), {}),
                  rec("placement.free", "scheduler", "", "team-a", "job/%d" % low,
                      ended="Preempted", reason=lambda r: "preempted" in r)) and
          ("placement.allocate", "job/%d" % high) in by and
          ("job.submit", "job/%d" % high) in by,
          "the scheduler preempts and places", recs)
    s, d = agent.post("/v1/nodes/n0/heartbeat", {})
    a.skip()

    # ---- no secret in any record ----
    text = json.dumps(a.read())
    for secret in secrets + [p.admin_token, p.join_token]:
        check(secret not in text, "no token secret in the log")

    # ---- kept across kill -9 ----
    before = a.read()
    p.restart(signal.SIGKILL)
    admin = p.admin
    alice = p.client(alice.token)
    ops = p.client(ops.token)
    after = a.read()
    check(after[:len(before)] == before, "the log survives kill -9", before[-3:], after[-3:])
    a.skip()

    # ---- no record, no change ----
    db = sqlite3.connect(os.path.join(p.dir, "data", "gpupool.db"), timeout=10)
    db.execute("CREATE TRIGGER audit_down BEFORE INSERT ON audit "
               "BEGIN SELECT RAISE(ABORT, 'audit unavailable'); END")
    db.commit()
    held = p.job(alice, high)
    check(held["state"] == "Scheduled", "a job holds a GPU", held)
    s, d = admin.post("/v1/tenants", {"name": "team-c"})
    check(s == 503 and "audit" in d["error"]["message"] and
          "audit unavailable" in d["error"]["message"], "no record: the create fails", s, d)
    s, d = admin.get("/v1/tenants/team-c")
    check(s == 404, "and the tenant was not made", s, d)
    s, d = admin.put("/v1/tenants/team-a", {"quota": {"gpus": 1}})
    check(s == 503, "no record: the update fails", s, d)
    s, d = admin.get("/v1/tenants/team-a")
    check(d["quota"]["gpus"] == 8, "and the quota is unchanged", d)
    s, d = alice.post("/v1/jobs/%d/cancel" % high)
    check(s == 503, "no record of the freed placement: the cancel fails", s, d)
    s, d = ops.post("/v1/nodes/n0/drain")
    check(s == 503, "no record: the drain fails", s, d)
    s, d = submit(alice, "blocked")
    check(s == 503, "no record: the submit fails", s, d)
    s, d = admin.post("/v1/tokens", {"name": "t2", "role": "operator"})
    check(s == 503 and "token" not in d, "no record: no token", s, d)
    now = p.job(alice, high)
    check(now["state"] == "Scheduled" and now["placement"] == held["placement"],
          "the job still holds its placement", held, now)
    s, d = admin.get("/v1/nodes/n0")
    check(not d["cordoned"], "the node is not cordoned", d)
    s, d = admin.get("/v1/jobs?name=blocked")
    check(d["items"] == [], "no job was made", d)
    s, d = admin.get("/v1/tokens")
    check("t2" not in [t["name"] for t in d["items"]], "no token was made", d)
    a.none("nothing recorded while the log refuses records")

    # A placement whose record cannot be written is not made.
    db.execute("DROP TRIGGER audit_down")
    db.execute("CREATE TRIGGER audit_no_alloc BEFORE INSERT ON audit "
               "WHEN NEW.action = 'placement.allocate' "
               "BEGIN SELECT RAISE(ABORT, 'audit unavailable'); END")
    db.commit()
    d = step(a, "submit", lambda: submit(alice, "later"), 201,
             rec("job.submit", "alice", "user", "team-a", None))
    later = d["id"]
    p.settle(1.0)
    check(p.job(alice, later)["state"] == "Pending", "not placed without its record")
    check("cannot record placement.allocate" in p.read_log(), "the cycle says why",
          p.read_log()[-2000:])
    db.execute("DROP TRIGGER audit_no_alloc")
    db.commit()
    db.close()
    p.wait_state(alice, later, "Scheduled")
    wait_records(a, "placement", 1)
    a.expect("placed once the log takes records",
             rec("placement.allocate", "scheduler", "", "team-a", "job/%d" % later))
    step(a, "changes work again", lambda: admin.post("/v1/tenants", {"name": "team-c"}), 201,
         rec("tenant.create", "admin", "admin", "team-c", "tenant/team-c"))

    # ---- filters and pages ----
    items = a.read("actor=alice&action=job.submit")
    check([r["object"] for r in items] ==
          ["job/%d" % i for i in (one, two, low, high, later)], "actor and action", items)
    items = a.read("action=placement.*&object=job/%d" % two)
    check([r["action"] for r in items] ==
          ["placement.allocate", "placement.free"] * 3, "prefix and object", items)
    items = a.read("tenant=team-b")
    check([r["action"] for r in items] ==
          ["tenant.create", "token.create", "token.revoke", "tenant.delete"], "tenant", items)
    everything = a.read()
    mid = everything[len(everything) // 2]["time_ms"]
    since = a.read("since=%d" % mid)
    until = a.read("until=%d" % mid)
    check(len(since) + len(until) == len(everything) and
          all(r["time_ms"] >= mid for r in since) and all(r["time_ms"] < mid for r in until),
          "since and until split the log", len(since), len(until), len(everything))
    iso = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(mid // 1000))
    iso += ".%03dZ" % (mid % 1000)
    check(a.read("since=" + iso) == since, "since as RFC 3339", iso)
    s, d = admin.get("/v1/audit?limit=3")
    check(len(d["items"]) == 3 and d["next"] == str(d["items"][2]["id"]), "a page", d)
    s, d2 = admin.get("/v1/audit?limit=3&after=" + d["next"])
    check(d2["items"] == everything[3:6], "the next page", d2)

    # ---- gpupool audit ----
    if GPUPOOL:
        env = dict(os.environ, GPUPOOL_SERVER=p.base)
        env.pop("GPUPOOL_TOKEN", None)

        def cli(*args, token=p.admin_token):
            r = subprocess.run([GPUPOOL, "audit", "--token", token] + list(args), env=env,
                               capture_output=True, text=True, timeout=30)
            return r.returncode, r.stdout, r.stderr

        rc, out, err = cli("--limit", "1000")
        lines = out.splitlines()
        check(rc == 0 and lines[0].split()[:7] ==
              ["TIME", "ACTOR", "ROLE", "TENANT", "ACTION", "OBJECT", "DETAIL"] and
              len(lines) == len(everything) + 1, "gpupool audit: a table", rc, out, err)
        check("job.cancel" in out and "placement.free" in out and "node/n0" in out,
              "gpupool audit: the records", out)
        rc, out, err = cli("-o", "json", "--actor", "alice", "--action", "job.submit")
        check(rc == 0 and [r["object"] for r in json.loads(out)["items"]] ==
              ["job/%d" % i for i in (one, two, low, high, later)], "gpupool audit -o json",
              rc, out, err)
        rc, out, err = cli("-o", "json", "--object", "node/*", "--tenant", "")
        check(rc == 0 and {r["object"] for r in json.loads(out)["items"]} == {"node/n0"},
              "gpupool audit --object", rc, out, err)
        rc, out, err = cli("-o", "json", "--since", "1h", "--until", "2099-01-01T00:00:00Z")
        check(rc == 0 and len(json.loads(out)["items"]) == min(len(everything), 100),
              "gpupool audit --since 1h", rc, err)
        rc, out, err = cli("-o", "json", "--since", "1s")
        check(rc == 0 and len(json.loads(out)["items"]) < len(everything),
              "gpupool audit --since 1s", rc, err)
        rc, out, err = cli("--limit", "2")
        check(rc == 0 and len(out.splitlines()) == 3 and "more records" in err,
              "gpupool audit --limit 2", rc, out, err)
        rc, out, err = cli("--limit", "2", "--all", "-o", "json")
        check(rc == 0 and json.loads(out)["items"] == everything, "gpupool audit --all", rc, err)
        rc, out, err = cli("--since", "yesterday")
        check(rc == 1 and "since" in err, "gpupool audit: a bad time", rc, out, err)
        rc, out, err = cli("--limit", "0")
        check(rc == 2, "gpupool audit: a bad limit", rc, out, err)
        rc, out, err = cli(token=alice.token)
        check(rc == 1 and "not allowed" in err, "gpupool audit: users may not", rc, out, err)
    a.none("reading the log")
print("ok")
