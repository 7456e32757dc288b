"""Privileged jobs only where an admin allows them, on a real gpupoold with a real gpupool-agent
(mock NVML, jobs as host processes: --runtime none) and the gpupool CLI.

- A user of a tenant without the permission: a privileged job is refused (403, the message
  naming the field and how an admin allows it), a dry run too, nothing stored; a plain job runs.
- A user cannot grant the permission (PUT and `gpupool tenant set`: 403); a bad value is refused
  naming allow_privileged.
- An admin allows it (`gpupool tenant set T --allow-privileged`): stored, audited, shown by the
  tenant document and `get tenants -o wide`; the job is then accepted, its desired replica
  carries privileged, and it runs, as the node's job user like any other job (--runtime none
  gives it nothing more).
- Another tenant's users are still refused (naming the allowed tenant in the spec is 404), and
  so is an admin submitting for that tenant.
- Withdrawn (`--allow-privileged=false`): the running job keeps running; new ones are refused.
Arguments: gpupoold, gpupool, gpupool-agent, the mock NVML library, the inventories directory.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mockagent import MockAgent  # noqa: E402
from pool import all_jobs, check, kill_replica_leftovers, Pool, wait  # noqa: E402

gpupoold, gpupool, agent_bin, mock, inventories = sys.argv[1:6]
tmp = tempfile.mkdtemp(prefix="gpupool-priv.")
out = os.path.join(tmp, "out")
os.makedirs(out)
agents = []
POD = ("apiVersion: v1\nkind: Pod\nmetadata: {name: k8s-priv}\nspec:\n  restartPolicy: Never\n"
       "  containers:\n  - name: a\n    command: [\"true\"]\n"
       "    securityContext: {privileged: true}\n")
REFUSED = ("privileged: tenant %s may not run privileged jobs (an admin allows it: gpupool "
           "tenant set %s --allow-privileged)")


def cli(p, token, *args, stdin=None):
    e = dict(os.environ, GPUPOOL_SERVER=p.base, GPUPOOL_TOKEN=token)
    r = subprocess.run([gpupool] + list(args), capture_output=True, text=True, timeout=60, env=e,
                       input=stdin)
    return r.returncode, r.stdout, r.stderr


def job(name, script, **extra):
    d = {"name": name, "command": ["sh", "-c", script]}
    d.update(extra)
    return d


def refused(s, d, tenant):
    return s == 403 and d["error"]["message"] == REFUSED % (tenant, tenant)


try:
    with Pool(gpupoold) as p:
        admin = p.admin
        p.tenant("team-a")
        p.tenant("team-b")
        alice, bob = p.user("alice", "team-a"), p.user("bob", "team-b")
        token_file = os.path.join(tmp, "join.token")
        with open(token_file, "w") as f:
            f.write(p.join_token + "\n")
        real = MockAgent(agent_bin, mock, tmp, "t4", os.path.join(inventories, "pcie-t4.yaml"),
                         p.base, token_file, "--runtime", "none")
        agents.append(real)
        wait("t4 registered", lambda: admin.get("/v1/nodes/t4")[0] == 200)

        # ---- without the permission ----
        s, d = admin.get("/v1/tenants/team-a")
        check(s == 200 and d["allow_privileged"] is False, "a new tenant may not", s, d)
        priv = job("priv", 'id -u > %s/priv.txt; sleep 60' % out, privileged=True)
        s, d = alice.post("/v1/jobs", priv)
        check(refused(s, d, "team-a"), "a privileged job is refused", s, d)
        s, d = alice.post("/v1/jobs?dry_run=true", priv)
        check(refused(s, d, "team-a"), "a dry run is refused too", s, d)
        check(not [j for j in all_jobs(admin) if j["name"] == "priv"], "nothing stored")
        s, d = alice.post("/v1/jobs", job("plain", 'id -u > %s/plain.txt; sleep 60' % out,
                                          privileged=False))
        check(s == 201 and "privileged" not in d["spec"], "privileged: false is any job", s, d)

        rc, so, se = cli(p, alice.token, "apply", "-f", "-", stdin=POD)
        check(rc == 1 and "Pod/k8s-priv: spec.containers[0].securityContext.privileged: refused "
              "by the server: " + (REFUSED % ("team-a", "team-a"))[12:] in se and
              "nothing applied" in se, "gpupool apply names the manifest's field", rc, so, se)

        # ---- only an admin grants it ----
        s, d = alice.put("/v1/tenants/team-a", {"allow_privileged": True})
        check(s == 403, "a user cannot allow it (PUT)", s, d)
        rc, so, se = cli(p, alice.token, "tenant", "set", "team-a", "--allow-privileged")
        check(rc == 1 and "not allowed for role user" in se,
              "a user cannot allow it (gpupool tenant set)", rc, so, se)
        s, d = admin.put("/v1/tenants/team-a", {"allow_privileged": "yes"})
        check(s == 400 and d["error"]["message"] == "allow_privileged: must be true or false",
              "a bad value is refused naming the field", s, d)
        rc, so, se = cli(p, admin.token, "tenant", "set", "team-a", "--allow-privileged=maybe")
        check(rc == 2 and "--allow-privileged" in se, "the CLI refuses a bad value", rc, so, se)
        s, d = admin.get("/v1/tenants/team-a")
        check(d["allow_privileged"] is False, "still not allowed", d)

        rc, so, se = cli(p, admin.token, "tenant", "set", "team-a", "--allow-privileged")
        check(rc == 0 and so == "tenant team-a configured\n", "an admin allows it", rc, so, se)
        s, d = admin.get("/v1/tenants/team-a")
        check(s == 200 and d["allow_privileged"] is True, "stored", s, d)
        s, d = admin.get("/v1/audit?limit=1000")
        recs = [r for r in d["items"] if r["action"] == "tenant.update" and
                r["object"] == "tenant/team-a" and r["actor"] == "admin"]
        check(s == 200 and recs and '"allow_privileged": true' in json.dumps(recs[-1]["detail"]),
              "audited", s, recs)
        rc, so, se = cli(p, admin.token, "get", "tenants", "-o", "wide")
        rows = {ln.split()[0]: ln.split() for ln in so.splitlines()}
        check(rc == 0 and rows["NAME"][-1] == "PRIVILEGED" and rows["team-a"][-1] == "true" and
              rows["team-b"][-1] == "false", "get tenants -o wide shows it", rc, so, se)
        rc, so, se = cli(p, admin.token, "get", "tenants")
        check(rc == 0 and "PRIVILEGED" not in so, "only with -o wide", so)

        # ---- now accepted, and carried to the agent ----
        s, d = alice.post("/v1/jobs?dry_run=true", priv)
        check(s == 200 and d["spec"]["privileged"] is True, "the dry run passes", s, d)
        s, d = alice.post("/v1/jobs", priv)
        check(s == 201 and d["spec"]["privileged"] is True, "the privileged job is stored", s, d)
        pid = d["id"]
        p.wait_state(alice, "priv", "Running", timeout=60)
        s, d = admin.get("/v1/nodes/t4/desired")
        rep = [r for r in d["desired"] if r["job"] == pid]
        check(s == 200 and rep and rep[0]["privileged"] is True,
              "the desired replica carries privileged", s, d)
        plain = [r for r in d["desired"] if r["job"] != pid]
        check(plain and all("privileged" not in r for r in plain), "and no other replica", d)
        both = [os.path.join(out, n) for n in ("priv.txt", "plain.txt")]
        wait("both jobs ran", lambda: all(os.path.exists(f) and open(f).read().strip()
                                          for f in both), 60)
        uids = [open(f).read().strip() for f in both]
        check(uids[0] == uids[1], "a host process runs as the node's job user, privileged or not",
              uids)

        rc, so, se = cli(p, alice.token, "apply", "-f", "-", stdin=POD)
        check(rc == 0 and so == "job/k8s-priv created\n", "gpupool apply now applies it", so, se)
        check(p.job(alice, "k8s-priv")["spec"]["privileged"] is True, "stored privileged")

        # ---- one tenant's permission is not another's ----
        s, d = bob.post("/v1/jobs", priv)
        check(refused(s, d, "team-b"), "another tenant's user is refused", s, d)
        s, d = bob.post("/v1/jobs", dict(priv, tenant="team-a", name="spoof"))
        check(s == 404 and d["error"]["message"] == "tenant team-a: not found",
              "nor can it name the allowed tenant as its own", s, d)
        s, d = admin.post("/v1/jobs", dict(priv, tenant="team-b", name="adm"))
        check(refused(s, d, "team-b"), "so is an admin submitting for that tenant", s, d)

        # ---- withdrawn: running jobs go on, new ones are refused ----
        rc, so, se = cli(p, admin.token, "tenant", "set", "team-a", "--allow-privileged=false")
        check(rc == 0, "an admin withdraws it", rc, so, se)
        s, d = admin.get("/v1/tenants/team-a")
        check(d["allow_privileged"] is False, "withdrawn", d)
        s, d = alice.post("/v1/jobs", dict(priv, name="priv2"))
        check(refused(s, d, "team-a"), "a new privileged job is refused again", s, d)
        p.settle(0.5)
        check(p.job(alice, "priv")["state"] == "Running", "the stored one keeps running")
        for name in ("priv", "plain"):
            alice.post("/v1/jobs/%s/cancel" % name)
        check(real.stop() == 0, "the agent stops cleanly", real.log()[-2000:])
finally:
    for a in agents:
        if a.proc.poll() is None:
            a.stop()
    kill_replica_leftovers(tmp)  # an agent never stops its jobs when it stops
    shutil.rmtree(tmp, ignore_errors=True)
print("ok")
