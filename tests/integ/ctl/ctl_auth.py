"""Authentication, roles and tenant isolation on every endpoint of a real gpupoold.

- Every documented operation except /healthz, /readyz, /openapi.json, /metrics,
  /v1/sd/prometheus and the web dashboard's files refuses a missing or unknown token with 401.
- Users get 403 on what their role may not do, and another tenant's objects do not exist for
  them: 404 on every job endpoint, filtered lists, 404 for the other tenant itself.
- Join tokens only register nodes; agent tokens only heartbeat their own node.
- Revoked tokens stop working at once.
"""
import sys

from pool import Pool, check, node_doc, submit

with Pool(sys.argv[1]) as p:
    admin = p.admin
    p.tenant("team-a")
    p.tenant("team-b")
    alice = p.user("alice", "team-a")
    bob = p.user("bob", "team-b")
    agent = p.register(node_doc("n1", ngpus=2))

    s, job = submit(alice, "train-a")
    check(s == 201, "alice submits", s, job)
    s, jb = submit(bob, "train-b")
    check(s == 201, "bob submits", s, jb)

    # 401 everywhere a token is needed.
    s, api = admin.get("/openapi.json")
    check(s == 200 and "paths" in api, "openapi.json served", s)
    anon = p.client(None)
    bogus = p.client("gpu_not-a-real-token")
    # /metrics and /v1/sd/prometheus need a token too: metrics.auth is on by default.
    public = {"/healthz", "/readyz", "/openapi.json"}
    # The web dashboard's files need no token either; whether they exist depends on the build.
    dashboard = {"/", "/ui", "/ui/", "/ui/{path}"}
    for path, ops in api["paths"].items():
        concrete = (path.replace("{job}", str(job["id"])).replace("{node}", "n1")
                    .replace("{path}", "index.html")
                    .replace("{tenant}", "team-a").replace("{queue}", "default")
                    .replace("{class}", "normal").replace("{token}", "1"))
        for method in ops:
            if method not in ("get", "post", "put", "delete"):
                continue
            for who in (anon, bogus):
                s, d = who.call(method.upper(), concrete, body={} if method in ("post", "put")
                                else None)
                if path in public:
                    check(s == 200, "%s %s is public" % (method, path), s, d)
                elif path in dashboard:
                    check(s in (200, 404), "%s %s needs no token" % (method, path), s, d)
                else:
                    check(s == 401, "%s %s without a valid token: 401" % (method, path), s, d)
                    check(d["error"]["code"] == "GP_EAUTH", "error code names auth", d)

    # A user acts within its tenant: other tenants' jobs do not exist for it.
    for ref in (str(jb["id"]), "train-b"):
        for method, suffix in (("GET", ""), ("GET", "/events"), ("POST", "/cancel"),
                               ("POST", "/requeue")):
            s, d = alice.call(method, "/v1/jobs/" + ref + suffix,
                              body={} if method == "POST" else None)
            check(s == 404, "alice %s /v1/jobs/%s%s: 404" % (method, ref, suffix), s, d)
    s, d = alice.get("/v1/jobs")
    check(s == 200 and [j["name"] for j in d["items"]] == ["train-a"],
          "alice lists only her tenant's jobs", d)
    s, d = alice.get("/v1/jobs?tenant=team-b")
    check(s == 404, "alice filtering by another tenant: 404", s, d)
    # Newest first, paged with the cursor, still only her tenant's.
    mine = [submit(alice, "extra-%d" % k)[1]["id"] for k in range(3)]
    s, bj = submit(bob, "train-b2")
    check(s == 201, "bob submits again", s, bj)
    s, d = alice.get("/v1/jobs?order=desc&limit=2")
    check(s == 200 and [j["id"] for j in d["items"]] == mine[::-1][:2] and d["next"],
          "alice's newest two first", d)
    s, d = alice.get("/v1/jobs?order=desc&limit=2&after=%s" % d["next"])
    check(s == 200 and [j["name"] for j in d["items"]] == ["extra-0", "train-a"] and
          not d["next"], "then the rest, newest first", d)
    s, d = alice.get("/v1/jobs?order=newest")
    check(s == 400 and "order" in d["error"]["message"], "a bad order is refused", s, d)
    for jid in mine:
        s, d = alice.post("/v1/jobs/%d/cancel" % jid)
        check(s == 200, "cancel an extra job", s, d)
    s, d = bob.post("/v1/jobs/%d/cancel" % bj["id"])
    check(s == 200, "cancel bob's second job", s, d)
    s, d = alice.get("/v1/tenants")
    check(s == 200 and [t["name"] for t in d["items"]] == ["team-a"],
          "alice sees only her tenant", d)
    s, d = alice.get("/v1/tenants/team-b")
    check(s == 404, "another tenant is not found", s, d)
    s, d = submit(alice, "sneaky", tenant="team-b")
    check(s == 404, "alice cannot submit into team-b", s, d)
    s, d = alice.get("/v1/jobs/%d" % jb["id"])
    check(s == 404, "still not found", s, d)
    # Node views hide other tenants' holders.
    s, d = alice.get("/v1/nodes/n1")
    check(s == 200, "users read nodes", s, d)
    for g in d["gpus"]:
        for h in g["holders"]:
            check("job" not in h or h.get("tenant") == "team-a",
                  "another tenant's holder is anonymous", h)
    # A MIG instance of another tenant: anonymous, but where it sits (profile, slices) shows.
    mig = node_doc("n-mig", ngpus=1, model="H100-80GB")
    mig["gpus"][0]["mig"] = True
    p.register(mig)
    s, d = submit(bob, "slice-b", resources={"mig_profile": "3g.40gb"})
    check(s == 201, "submit a MIG job", s, d)
    p.wait_state(bob, "slice-b", ("Scheduled", "Running"))
    s, d = alice.get("/v1/nodes/n-mig")
    check(s == 200, "read the MIG node", s, d)
    hs = d["gpus"][0]["holders"]
    check(len(hs) == 1 and "job" not in hs[0] and hs[0]["mig_profile"] == "3g.40gb" and
          hs[0]["mig_start"] in (0, 4) and hs[0]["mig_memory_slices"] == 4 and
          hs[0]["mig_compute_slices"] == 3, "the MIG holder shows its profile and slices", hs)
    s, d = bob.get("/v1/nodes/n-mig")
    h = d["gpus"][0]["holders"][0]
    check(h["name"] == "slice-b" and h["mig_profile"] == "3g.40gb", "its owner sees it all", h)
    s, d = bob.post("/v1/jobs/slice-b/cancel")
    check(s == 200, "cancel the MIG job", s, d)

    # Roles: users may not manage the pool.
    for method, path, body in (("POST", "/v1/tenants", {"name": "x"}),
                               ("PUT", "/v1/tenants/team-a", {}),
                               ("DELETE", "/v1/tenants/team-a", None),
                               ("POST", "/v1/queues", {"name": "q"}),
                               ("POST", "/v1/priorityclasses", {"name": "p", "value": 1}),
                               ("GET", "/v1/tokens", None),
                               ("POST", "/v1/tokens", {"name": "t", "role": "admin"}),
                               ("POST", "/v1/nodes/n1/cordon", {}),
                               ("POST", "/v1/nodes", node_doc("n9")),
                               ("POST", "/v1/nodes/n1/heartbeat", {})):
        s, d = alice.call(method, path, body=body)
        check(s == 403, "user %s %s: 403" % (method, path), s, d)

    # Join tokens register nodes and nothing else; agents heartbeat only their own node.
    joiner = p.client(p.join_token)
    s, d = joiner.get("/v1/jobs")
    check(s == 403, "join token cannot list jobs", s, d)
    s, d = agent.get("/v1/jobs")
    check(s == 403, "agent token cannot list jobs", s, d)
    p.register(node_doc("n2", ngpus=1))
    s, d = agent.post("/v1/nodes/n2/heartbeat", {})
    check(s == 404, "agent of n1 cannot heartbeat n2", s, d)
    s, d = agent.post("/v1/nodes/n1/heartbeat", {})
    check(s == 200, "agent heartbeats its node", s, d)

    # Operators manage nodes and queues but not tenants or tokens.
    s, d = admin.post("/v1/tokens", {"name": "ops", "role": "operator"})
    check(s == 201, "operator token", s, d)
    ops = p.client(d["token"])
    s, d = ops.post("/v1/nodes/n2/cordon")
    check(s == 200 and d["cordoned"], "operator cordons", s, d)
    s, d = ops.post("/v1/tenants", {"name": "t3"})
    check(s == 403, "operator cannot create tenants", s, d)
    s, d = ops.get("/v1/jobs/%d" % jb["id"])
    check(s == 200, "operators see every tenant's jobs", s, d)

    # Revocation takes effect at once; secrets are never listed.
    s, d = admin.get("/v1/tokens")
    check(s == 200 and all("token" not in t for t in d["items"]), "no secrets listed", d)
    bob_id = [t["id"] for t in d["items"] if t["name"] == "bob"][0]
    s, d = admin.delete("/v1/tokens/%d" % bob_id)
    check(s == 200 and d["revoked"], "revoke bob", s, d)
    s, d = bob.get("/v1/jobs")
    check(s == 401, "revoked token refused", s, d)
print("ok")
