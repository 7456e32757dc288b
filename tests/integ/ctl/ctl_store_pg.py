"""gpupoold with its store on PostgreSQL (--store-url postgresql://...), on a server this test
starts (tests/pg/pg_fixture.sh: initdb and pg_ctl in a temp dir, on a free port), with two real
gpupool-agents over the mock NVML:

- tenants, a queue, a user, jobs submitted with Idempotency-Keys and placed on the agents' nodes,
  one cancelled;
- gpupoold killed with SIGKILL and started again on the same database: everything acknowledged
  is there (jobs with their ids, names, states, placements and epochs; tenants, queues, tokens);
  a retried key answers the same job;
- PostgreSQL stopped under the running gpupoold: every write answers 503 and nothing of it is
  stored (checked through the API and with SQL once the server is back); reads still answer;
- PostgreSQL started again: writes work without restarting gpupoold (the same process); the
  write refused during the outage, retried with its key, is stored once; nothing acknowledged
  is lost; the audit log is intact: the records from before are unchanged, ids grow, every
  acknowledged change has its record and the refused ones have none.

Arguments: gpupoold, gpupool-agent, libgpupool-nvml-mock.so, the inventories directory, the pg
fixture script.
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from mockagent import MockAgent
from pool import Pool, check, free_port, kill_replica_leftovers, wait

gpupoold, agent_bin, mock, inventories, fixture = sys.argv[1:6]
inventory = os.path.join(inventories, "pcie-t4.yaml")
tmp = tempfile.mkdtemp(prefix="gpupool-storepg.")
urlfile = os.path.join(tmp, "pg.url")


def pg(cmd):
    r = subprocess.run([fixture, cmd, urlfile], capture_output=True, text=True)
    check(r.returncode == 0, "pg_fixture.sh %s" % cmd, r.stdout, r.stderr)


def sql(url, query):
    """One value of query on database url (psql)."""
    r = subprocess.run(["psql", "-XAtq", url, "-c", query], capture_output=True, text=True)
    check(r.returncode == 0, "psql: " + query, r.stderr)
    return r.stdout.strip()


def keyed(client, name, key, **extra):
    spec = {"name": name, "command": ["sleep", "600"], "resources": {"gpus": 1}}
    spec.update(extra)
    return client.post("/v1/jobs", spec, headers={"Idempotency-Key": key})


def snapshot(p):
    s, jobs = p.admin.get("/v1/jobs?limit=1000")
    check(s == 200, "list jobs", s, jobs)
    keep = ("id", "name", "tenant", "queue", "state", "reason", "replicas")
    out = {"jobs": [{k: j[k] for k in keep} for j in jobs["items"]],
           "placements": {j["id"]: [(r["replica"], r["node"], r["epoch"],
                                     [g["uuid"] for g in r["gpus"]])
                                    for r in j.get("placement") or []]
                          for j in jobs["items"]}}
    for what in ("tenants", "queues", "priorityclasses", "tokens"):
        s, d = p.admin.get("/v1/" + what)
        check(s == 200, "list " + what, s, d)
        out[what] = d["items"]
    return out


def audit(p):
    s, d = p.admin.get("/v1/audit?limit=1000")
    check(s == 200 and d.get("next") is None, "the audit log in one page", s, d)
    return d["items"]


agents = []
pg("start")
try:
    base = open(urlfile).read().strip()
    sql(base + "/postgres", "CREATE DATABASE gpupool")
    url = base + "/gpupool"
    # One port for every start, so the agents find the restarted gpupoold by themselves.
    listen = "127.0.0.1:%d" % free_port()
    with Pool(gpupoold, ["--store-url", url, "--listen", listen, "--api-rate-limit", "0",
                         "--api-token-rate-limit", "0"]) as p:
        s, d = p.admin.get("/readyz")
        check(s == 200, "ready on PostgreSQL", s, d)
        join_file = os.path.join(tmp, "join.token")
        with open(join_file, "w") as f:
            f.write(p.join_token + "\n")
        for node in ("pg-n1", "pg-n2"):
            agents.append(MockAgent(agent_bin, mock, tmp, node, inventory, p.base, join_file,
                                    "--runtime", "none"))
        wait("both agents registered and ready",
             lambda: sorted(n["name"] for n in p.admin.get("/v1/nodes")[1]["items"]
                            if n.get("state") == "Ready") == ["pg-n1", "pg-n2"])
        p.tenant("team-a")
        p.tenant("team-b", gpus=2)
        p.queue("batch")
        p.grant("team-a", queues=["default", "batch"])
        alice = p.user("alice", "team-a")
        bob = p.user("bob", "team-b")
        ids = {}
        for i in range(5):
            s, d = keyed(alice, "a-%d" % i, "key-a-%d" % i, queue="batch" if i % 2 else "default")
            check(s == 201, "submit a-%d" % i, s, d)
            ids["a-%d" % i] = d["id"]
        for i in range(3):
            s, d = keyed(bob, "b-%d" % i, "key-b-%d" % i)
            check(s == 201, "submit b-%d" % i, s, d)
            ids["b-%d" % i] = d["id"]
        s, d = keyed(alice, "a-0", "key-a-0")
        check(s in (200, 201) and d["id"] == ids["a-0"], "a retried key is the same job", s, d)
        for name in ("a-0", "a-1", "b-0", "b-1"):
            p.wait_state(alice if name[0] == "a" else bob, name, "Running", timeout=30)
        s, d = alice.post("/v1/jobs/a-4/cancel")
        check(s == 200 and d["state"] == "Cancelled", "cancel a-4", s, d)
        p.settle()
        before = snapshot(p)
        placed = [j for j in before["jobs"] if before["placements"][j["id"]]]
        check(len(placed) >= 4, "jobs placed on the agents' nodes", before)
        check(any(j["name"] == "b-2" and j["state"] == "Pending" for j in before["jobs"]),
              "b-2 waits for team-b's quota", before)
        audit_before = audit(p)

        # ---- kill -9 and a start on the same database ----
        restarted_ms = time.time() * 1000
        p.restart(signal.SIGKILL)
        check(p.base == "http://" + listen, "the same address", p.base)
        wait("the agents beat again after the restart",
             lambda: all(n["heartbeat_ms"] > restarted_ms
                         for n in p.admin.get("/v1/nodes")[1]["items"]))
        p.settle()
        after = snapshot(p)
        for key in before:
            check(after[key] == before[key], "%s unchanged after kill -9" % key, before[key],
                  after[key])
        check(audit(p)[:len(audit_before)] == audit_before, "the audit log kept", audit(p))
        s, d = keyed(bob, "b-0", "key-b-0")
        check(s in (200, 201) and d["id"] == ids["b-0"], "a key retried after the restart", s, d)

        # ---- PostgreSQL stopped under the running gpupoold ----
        pid = p.proc.pid
        audit_mid = audit(p)
        pg("pause")
        refused = [
            ("a new tenant", lambda: p.admin.post("/v1/tenants", {"name": "outage-t"})),
            ("a submit", lambda: keyed(alice, "outage-job", "key-outage")),
            ("a cancel", lambda: alice.post("/v1/jobs/a-1/cancel")),
            ("a queue change", lambda: p.admin.put("/v1/queues/batch", {"weight": 7})),
            ("a token", lambda: p.admin.post("/v1/tokens", {"name": "outage-tok",
                                                            "role": "user",
                                                            "tenant": "team-a"})),
        ]
        for what, call in refused:
            s, d = call()
            check(s == 503, "%s during the outage: 503" % what, s, d)
        s, d = alice.get("/v1/jobs/a-1")
        check(s == 200 and d["state"] == "Running", "reads answer during the outage", s, d)
        check(p.proc.poll() is None, "gpupoold keeps running through the outage",
              p.read_log()[-3000:])

        # ---- PostgreSQL back: writes work in the same process ----
        pg("resume")
        s, d = p.admin.post("/v1/tenants", {"name": "after-t"})
        check(s == 201, "a write after PostgreSQL is back", s, d)
        check(p.proc.pid == pid and p.proc.poll() is None, "the same gpupoold")
        s, d = p.admin.get("/v1/tenants/outage-t")
        check(s == 404, "the tenant refused during the outage is not stored", s, d)
        s, d = alice.get("/v1/jobs/a-1")
        check(s == 200 and d["state"] == "Running", "the refused cancel did nothing", s, d)
        s, d = p.admin.get("/v1/queues/batch")
        check(s == 200 and d.get("weight") != 7, "the refused queue change did nothing", s, d)
        for table, cond in (("tenants", "name = 'outage-t'"), ("jobs", "name = 'outage-job'"),
                            ("tokens", "name = 'outage-tok'"),
                            ("jobs", "idempotency_key = 'key-outage'")):
            n = sql(url, "SELECT count(*) FROM %s WHERE %s" % (table, cond))
            check(n == "0", "nothing of the outage's writes in %s (%s)" % (table, cond), n)
        s, d = keyed(alice, "outage-job", "key-outage")
        check(s == 201, "the refused submit, retried with its key, is stored now", s, d)
        s, d2 = keyed(alice, "outage-job", "key-outage")
        check(s in (200, 201) and d2["id"] == d["id"], "and once", s, d2)

        now = snapshot(p)
        for j in before["jobs"]:
            got = [k for k in now["jobs"] if k["id"] == j["id"]]
            check(got and got[0]["name"] == j["name"], "acknowledged job %s kept" % j["name"],
                  got)
            if j["state"] in ("Running", "Cancelled"):
                check(got[0]["state"] == j["state"] and
                      now["placements"][j["id"]] == before["placements"][j["id"]],
                      "job %s: same state and placement" % j["name"], j, got)
        log = audit(p)
        check(log[:len(audit_mid)] == audit_mid, "the audit log from before the outage is intact",
              audit_mid, log)
        ids_seen = [r["id"] for r in log]
        check(ids_seen == sorted(set(ids_seen)), "audit ids grow", ids_seen)
        objects = {(r["action"], r["object"]) for r in log}
        for name, jid in ids.items():
            check(("job.submit", "job/%d" % jid) in objects, "the submit of %s audited" % name,
                  log)
        check(("tenant.create", "tenant/after-t") in objects, "the write after the outage "
              "audited", log)
        for r in log:
            check("outage-t" not in str(r) and "outage-tok" not in str(r),
                  "no record of a refused write", r)
        for a in agents:
            check(a.proc.poll() is None, "agent %s still running" % a.node, a.log()[-2000:])
        for name in ("a-0", "a-1", "b-0", "b-1", "outage-job"):
            user = bob if name[0] == "b" else alice
            s, d = user.post("/v1/jobs/%s/cancel" % name)
            check(s == 200, "cancel " + name, s, d)
finally:
    for a in agents:
        a.stop()
    kill_replica_leftovers(tmp)  # an agent never stops its jobs when it stops
    pg("stop")
    shutil.rmtree(tmp, ignore_errors=True)
print("ok")
