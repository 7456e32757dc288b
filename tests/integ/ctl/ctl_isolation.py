"""Tenant isolation, walked over every route the server documents.

Two tenants, alpha and beta, each with a user, jobs (one placed on a node, one pending, one
ended), the shared objects they use (a node, a queue, a priority class, a volume), alpha's
registry credentials and alpha's user token. Then, as beta's user, every operation of GET /openapi.json is called (so a new
route is covered without editing this test) with alpha's ids and names in every path parameter,
with and without a body that names alpha's tenant, and with ?tenant= alpha where the operation
takes it. Allowed answers: 403 or 404; for reads, 200 that shows nothing of alpha (no name of
alpha's anywhere in the document, no alpha job id under "job", every listed item's tenant
beta's). Nothing may change: alpha's jobs, tenant and token are as before.

Revocation: a token revoked by an admin gets 401 on its very next request, and on every route.
"""
import re
import sys

from pool import Pool, check, node_doc

ALPHA, BETA = "tenant-alpha", "tenant-beta"

with Pool(sys.argv[1], ["--api-rate-limit", "0"]) as p:
    admin = p.admin
    p.tenant(ALPHA)
    p.tenant(BETA)
    s, d = admin.post("/v1/tokens", {"name": "alpha-user", "role": "user", "tenant": ALPHA})
    check(s == 201, "alpha's token", s, d)
    alpha_token_id, alpha = d["id"], p.client(d["token"])
    beta = p.user("beta-user", BETA)
    s, d = admin.post("/v1/volumes", {"name": "shared-vol", "path": "/srv/shared"})
    check(s == 201, "a volume", s, d)
    agent = p.register(node_doc("n1", ngpus=2))
    s, d = admin.put("/v1/tenants/%s/registries/alpha.registry.io" % ALPHA,
                     {"username": "alpha-bot", "password": "alpha-pw"})
    check(s == 201, "alpha's registry credentials", s, d)

    def submit(client, name, **extra):
        spec = {"name": name, "command": ["sleep", "600"], "resources": {"gpus": 1}}
        spec.update(extra)
        s, d = client.post("/v1/jobs", spec)
        check(s == 201, "submit " + name, s, d)
        return d

    placed = submit(alpha, "alpha-secret-placed", volumes=["shared-vol"])
    pending = submit(alpha, "alpha-secret-pending", resources={"gpus": 8},
                     allow_unschedulable=True)  # more than a node has: it waits
    ended = submit(alpha, "alpha-secret-ended")
    s, d = alpha.post("/v1/jobs/%d/cancel" % ended["id"])
    check(s == 200, "cancel alpha's third job", s, d)
    submit(beta, "beta-own")
    submit(alpha, "alpha-secret-svc", kind="service", port=8080, resources={"cpu_milli": 100})
    p.wait_state(admin, placed["id"], ("Scheduled", "Running"))
    alpha_ids = {placed["id"], pending["id"], ended["id"]}
    before = {j: p.job(admin, j)["state"] for j in alpha_ids}

    values = {  # what each path parameter is set to: alpha's objects, or the shared ones it uses
        "job": [str(placed["id"]), "alpha-secret-placed", str(pending["id"]), str(ended["id"])],
        "tenant": [ALPHA],
        "token": [str(alpha_token_id)],
        "node": ["n1"],
        "gpu": ["0", "GPU-n1-0"],
        "queue": ["default"],
        "class": ["normal"],
        "volume": ["shared-vol"],
        "path": ["index.html"],  # the dashboard's files (no token, no data)
        "registry": ["alpha.registry.io"],
        "service": ["alpha-secret-svc"],
    }

    def leaks(doc, where="$"):
        """Where doc shows something of alpha's: a string naming alpha, an alpha job under a
        "job" key, a listed item of another tenant."""
        found = []
        if isinstance(doc, str):
            if "alpha" in doc:
                found.append(where)
        elif isinstance(doc, list):
            for i, v in enumerate(doc):
                found += leaks(v, "%s[%d]" % (where, i))
        elif isinstance(doc, dict):
            for k, v in doc.items():
                if "alpha" in k:
                    found.append(where + "." + k)
                if k in ("job", "job_id") and isinstance(v, int) and v in alpha_ids:
                    found.append(where + "." + k)
                found += leaks(v, where + "." + k)
            for i, item in enumerate(doc.get("items") or []):
                if isinstance(item, dict) and "tenant" in item and item["tenant"] != BETA:
                    found.append("%s.items[%d].tenant" % (where, i))
        return found

    probe_spec = {"name": "beta-probe", "tenant": ALPHA, "command": ["true"],
                  "resources": {"cpu_milli": 100}}

    def concrete(path):
        """Every way of filling path's parameters with the values above."""
        names = re.findall(r"{(\w+)}", path)
        for n in names:
            check(n in values, "no value for path parameter {%s} (%s): add one" % (n, path))
        paths = [path]
        for n in names:
            paths = [q.replace("{%s}" % n, v, 1) for q in paths for v in values[n]]
        return paths

    s, api = p.client(None).get("/openapi.json")
    check(s == 200 and api.get("paths"), "openapi.json served", s)
    # /metrics counts jobs and quota use by tenant, for the pool's operators and Prometheus (a
    # metrics token): users may not read it at all (403), which the probes below see.
    not_scoped = set()
    probes = 0
    for path, ops in api["paths"].items():
        if path in not_scoped:
            continue
        for method, op in ops.items():
            if method not in ("get", "post", "put", "delete", "patch"):
                continue
            queries = [""]
            params = [q.get("name") for q in op.get("parameters", []) if q.get("in") == "query"]
            if "tenant" in params:
                queries.append("?tenant=" + ALPHA)
            has_params = "{" in path
            if method in ("post", "put", "patch"):
                bodies = [{}, probe_spec] if has_params else [probe_spec]
            else:
                bodies = [None]
            for url in concrete(path):
                for q in queries:
                    for body in bodies:
                        probes += 1
                        s, d = beta.call(method.upper(), url + q, body=body)
                        what = "beta %s %s%s body=%s" % (method.upper(), url, q,
                                                          "spec" if body else body)
                        if s in (403, 404):
                            continue
                        check(method == "get" and s == 200,
                              what + ": only 403, 404 or a read without alpha's data", s, d)
                        where = leaks(d)
                        check(not where, what + ": shows alpha's data at " + ", ".join(where[:5]),
                              d)
    print("isolation: %d calls over %d paths" % (probes, len(api["paths"])))

    # Nothing changed.
    after = {j: p.job(admin, j)["state"] for j in alpha_ids}
    check(after == before, "alpha's jobs unchanged", before, after)
    s, d = alpha.get("/v1/whoami")
    check(s == 200 and d["tenant"] == ALPHA, "alpha's token still works", s, d)
    s, d = admin.get("/v1/tenants/" + ALPHA)
    check(s == 200, "alpha's tenant still exists", s, d)
    s, d = admin.get("/v1/jobs?name=beta-probe")
    check(s == 200 and not d["items"], "no probe job was stored", d)
    s, d = admin.get("/v1/nodes/n1")
    check(s == 200 and not d.get("cordoned"), "the node is not cordoned", d)
    s, d = admin.get("/v1/tenants/%s/registries" % ALPHA)
    check(s == 200 and [(x["registry"], x["username"]) for x in d["items"]] ==
          [("alpha.registry.io", "alpha-bot")], "alpha's registry credentials unchanged", d)

    # A revoked token stops working at once, everywhere.
    s, d = admin.post("/v1/tokens", {"name": "beta-2", "role": "user", "tenant": BETA})
    check(s == 201, "a second beta token", s, d)
    beta2_id, beta2 = d["id"], p.client(d["token"])
    s, d = beta2.get("/v1/whoami")
    check(s == 200, "the new token works", s, d)
    s, d = admin.delete("/v1/tokens/%d" % beta2_id)
    check(s == 200, "revoke it", s, d)
    s, d = beta2.get("/v1/whoami")
    check(s == 401 and d["error"]["code"] == "GP_EAUTH", "the very next request is 401", s, d)
    public = {"/healthz", "/readyz", "/openapi.json", "/", "/ui", "/ui/", "/ui/{path}"}
    for path, ops in api["paths"].items():
        if path in public:
            continue
        for method in ops:
            if method not in ("get", "post", "put", "delete", "patch"):
                continue
            url = concrete(path)[0]
            s, d = beta2.call(method.upper(), url,
                              body={} if method in ("post", "put", "patch") else None)
            check(s == 401, "revoked token: %s %s is 401" % (method.upper(), url), s, d)
print("ok")
