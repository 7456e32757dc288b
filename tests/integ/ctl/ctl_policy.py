"""Grants of priority classes and queues to tenants, against a real gpupoold (and the CLI).

- a tenant without grants: its users submit with the default class and queue only; naming
  another is 403 naming the class (queue) and the tenant, and nothing is stored;
- a tenant granted classes and queues: its users use those, and only those;
- admins and operators are not bound by grants;
- a user cannot grant its own tenant anything (PUT /v1/tenants is for admins);
- bad grants (unknown class or queue, not a list, a bad name, twice) are 400 naming the field,
  and nothing is stored;
- a class or queue that a tenant is granted cannot be deleted (409 naming the tenant) until the
  grant is removed;
- grants survive a restart; `gpupool tenant set --priority-classes/--queues` sets and removes
  them.
Arguments: gpupoold, gpupool.
"""
import os
import subprocess
import sys

from pool import Pool, check, submit

gpupoold, gpupool = sys.argv[1:3]


def jobs_of(client):
    s, d = client.get("/v1/jobs")
    check(s == 200, "list jobs", s, d)
    return d["items"]


def refused(s, d, status, *words):
    check(s == status and all(w in d.get("error", {}).get("message", "") for w in words),
          "%d naming %s" % (status, ", ".join(words)), s, d)


with Pool(gpupoold) as p:
    admin = p.admin
    p.queue("batch")
    p.tenant("team-a")
    s, d = admin.post("/v1/tenants", {"name": "team-b", "priority_classes": ["normal", "high"],
                                      "queues": ["default", "batch"]})
    check(s == 201 and d["priority_classes"] == ["normal", "high"]
          and d["queues"] == ["default", "batch"], "team-b created with its grants", s, d)
    alice, bob = p.user("alice", "team-a"), p.user("bob", "team-b")

    # ---- a tenant without grants: the default class and queue only ----
    s, d = submit(alice, "plain")
    check(s == 201 and d["priority_class"] == "normal" and d["queue"] == "default",
          "team-a submits with the defaults", s, d)
    s, d = submit(alice, "urgent", priority_class="high")
    refused(s, d, 403, "priority class high: not granted to tenant team-a")
    s, d = submit(alice, "batchy", queue="batch")
    refused(s, d, 403, "queue batch: not granted to tenant team-a")
    s, d = submit(alice, "low", priority_class="low")
    refused(s, d, 403, "priority class low", "team-a")
    check([j["name"] for j in jobs_of(alice)] == ["plain"], "nothing stored by the refusals",
          jobs_of(alice))

    # ---- a tenant with grants: those, and only those ----
    s, d = submit(bob, "urgent", priority_class="high", queue="batch")
    check(s == 201 and d["priority_class"] == "high" and d["queue"] == "batch",
          "team-b submits with its granted class and queue", s, d)
    s, d = submit(bob, "low", priority_class="low")
    refused(s, d, 403, "priority class low: not granted to tenant team-b")

    # ---- admins and operators are not bound ----
    s, d = submit(admin, "staff-urgent", tenant="team-a", priority_class="high", queue="batch")
    check(s == 201, "an admin submits for team-a with any class and queue", s, d)
    s, d = admin.post("/v1/tokens", {"name": "ops", "role": "operator"})
    check(s == 201, "operator token", s, d)
    s, d = submit(p.client(d["token"]), "ops-low", tenant="team-a", priority_class="low")
    check(s == 201, "an operator submits for team-a with any class", s, d)

    # ---- a user cannot grant itself ----
    s, d = alice.put("/v1/tenants/team-a", {"priority_classes": ["high"]})
    check(s == 403, "a user cannot change its tenant's grants", s, d)
    s, d = submit(alice, "urgent", priority_class="high")
    refused(s, d, 403, "not granted to tenant team-a")
    s, d = alice.post("/v1/tokens", {"name": "alice-admin", "role": "admin"})
    check(s == 403, "a user cannot make itself an admin token", s, d)

    # ---- bad grants: 400 naming the field, nothing stored ----
    bad = [({"priority_classes": ["nope"]}, "priority_classes[0]: no priority class named nope"),
           ({"queues": ["default", "gone"]}, "queues[1]: no queue named gone"),
           ({"priority_classes": "high"}, "priority_classes: must be a list"),
           ({"queues": [7]}, "queues[0]: must be a queue name"),
           ({"priority_classes": ["Bad Name"]}, "priority_classes[0]"),
           ({"priority_classes": ["high", "high"]}, "priority_classes[1]: high is listed twice")]
    for doc, msg in bad:
        s, d = admin.post("/v1/tenants", dict(doc, name="team-x"))
        refused(s, d, 400, msg)
        s, d = admin.put("/v1/tenants/team-a", doc)
        refused(s, d, 400, msg)
    s, d = admin.get("/v1/tenants/team-x")
    check(s == 404, "no tenant stored by a bad create", s, d)
    s, d = admin.get("/v1/tenants/team-a")
    check(s == 200 and "priority_classes" not in d and "queues" not in d,
          "team-a unchanged by bad updates", s, d)

    # ---- deleting what a tenant is granted ----
    s, d = admin.post("/v1/priorityclasses", {"name": "urgent", "value": 500})
    check(s == 201, "create class urgent", s, d)
    p.queue("spare")
    s, d = admin.put("/v1/tenants/team-b", {"priority_classes": ["normal", "urgent"],
                                            "queues": ["default", "spare"]})
    check(s == 200, "grant urgent and spare to team-b", s, d)
    s, d = admin.delete("/v1/priorityclasses/urgent")
    refused(s, d, 409, "priority class urgent: granted to tenant team-b")
    s, d = admin.delete("/v1/queues/spare")
    refused(s, d, 409, "queue spare: granted to tenant team-b")
    s, d = submit(bob, "gone", priority_class="high")
    refused(s, d, 403, "priority class high: not granted to tenant team-b")

    # ---- grants survive a restart; the CLI sets and removes them ----
    p.restart()  # a new port: new clients
    admin, bob = p.admin, p.client(bob.token)
    s, d = admin.get("/v1/tenants/team-b")
    check(s == 200 and d["priority_classes"] == ["normal", "urgent"]
          and d["queues"] == ["default", "spare"], "grants kept across a restart", s, d)
    env = dict(os.environ, GPUPOOL_SERVER=p.base, GPUPOOL_TOKEN=p.admin_token)

    def cli(*args):
        r = subprocess.run([gpupool] + list(args), capture_output=True, text=True, env=env,
                           timeout=30)
        return r.returncode, r.stdout + r.stderr

    rc, out = cli("tenant", "set", "team-b", "--priority-classes", "normal,high", "--queues",
                  "none")
    check(rc == 0, "gpupool tenant set --priority-classes --queues", rc, out)
    s, d = admin.get("/v1/tenants/team-b")
    check(s == 200 and d["priority_classes"] == ["normal", "high"] and "queues" not in d,
          "the CLI set the classes and removed the queues", s, d)
    rc, out = cli("tenant", "set", "team-b", "--priority-classes", "normal,nope")
    check(rc != 0 and "priority_classes[1]: no priority class named nope" in out,
          "the CLI reports a bad grant naming the field", rc, out)
    s, d = admin.delete("/v1/priorityclasses/urgent")
    check(s == 200, "an urgent no tenant is granted any more is deleted", s, d)
    s, d = submit(bob, "urgent2", priority_class="high")
    check(s == 201, "team-b uses high again", s, d)
    s, d = submit(bob, "spare-q", queue="batch")
    refused(s, d, 403, "queue batch: not granted to tenant team-b")
    s, d = admin.delete("/v1/queues/spare")
    check(s == 200, "the queue no tenant lists is deleted", s, d)
    rc, out = cli("tenant", "create", "team-c", "--priority-classes", "low", "--queues",
                  "default")
    check(rc == 0, "gpupool tenant create with grants", rc, out)
    carol = p.user("carol", "team-c")
    s, d = submit(carol, "c1", priority_class="low")
    check(s == 201, "team-c uses low", s, d)
    s, d = submit(carol, "c2")
    refused(s, d, 403, "priority class normal: not granted to tenant team-c")
    check(p.stop() == 0, "gpupoold exits cleanly", p.read_log()[-3000:])

print("ok")
