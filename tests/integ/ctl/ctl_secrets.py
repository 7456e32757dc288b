"""Secret env values on a real gpupoold, a real gpupool-agent (mock NVML, jobs as host
processes) and the gpupool CLI.

- {value, secret: true} (and `gpupool submit --secret-env NAME`, the value from the caller's
  environment) is accepted; a plain {value} becomes a string; bad forms are 400 naming the field;
  a submitted "sealed" value is refused (only gpupoold seals).
- The plaintext is nowhere in the SQLite file or its WAL, nor in any answer: job get and list,
  events, audit, the CLI's get -o json/yaml and describe, nodes, an admin's read of a node's
  desired replicas; those show {"secret": true}.
- The desired replicas of the node's own agent carry the value; another node's do not; the job's
  process sees it (an end-to-end run with a real agent).
- A sealed value moved to another job, or changed, is refused, never sent.
- A wrong key file, or a missing one, stops gpupoold at start naming the file.
Arguments: gpupoold, gpupool, gpupool-agent, the mock NVML library, the inventories directory.
"""
import hashlib
import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mockagent import MockAgent  # noqa: E402
from pool import check, kill_replica_leftovers, node_doc, Pool, wait  # noqa: E402

gpupoold, gpupool, agent_bin, mock, inventories = sys.argv[1:6]
tmp = tempfile.mkdtemp(prefix="gpupool-secrets.")
SECRET = "s3cr3t-Pa55w0rd-%s" % os.path.basename(tmp)
BOB_SECRET = "b0b-0nly-%s" % os.path.basename(tmp)
CLI_SECRET = "cli-env-%s" % os.path.basename(tmp)
agents = []


def spec(name, env, model="A100-80GB"):
    return {"name": name, "command": ["sh", "-c", 'printf %s "$DB_PASSWORD" | sha256sum'],
            "resources": {"gpus": 1, "gpu_models": [model]}, "env": env}


def clean(text, what):
    for s in (SECRET, BOB_SECRET, CLI_SECRET):
        check(s not in text, what + ": carries a secret value", text[:800])
    check("gps1." not in text, what + ": carries a sealed value", text[:800])


def env_of(desired, job_id):
    for r in desired["desired"]:
        if r["job"] == job_id:
            return r["spec"]["env"]
    return None


def cli(p, token, *args, env=None):
    e = dict(os.environ, GPUPOOL_SERVER=p.base, GPUPOOL_TOKEN=token, **(env or {}))
    r = subprocess.run([gpupool] + list(args), capture_output=True, text=True, timeout=60, env=e)
    return r.returncode, r.stdout + r.stderr


try:
    with Pool(gpupoold) as p:
        admin = p.admin
        p.tenant("team-a")
        p.tenant("team-b")
        alice, bob = p.user("alice", "team-a"), p.user("bob", "team-b")
        key = os.path.join(p.dir, "data", "secret.key")
        check(stat.S_IMODE(os.stat(key).st_mode) == 0o600, "secret.key created 0600",
              oct(os.stat(key).st_mode))
        a1 = p.register(node_doc("n1", ngpus=1))
        a2 = p.register(node_doc("n2", ngpus=1, model="H100-80GB"))

        # ---- submission: forms, refusals ----
        for env, field in (({"X": {"secret": True}}, "env.X.value"),
                           ({"X": {"value": 3, "secret": True}}, "env.X.value"),
                           ({"X": {"value": "v", "secret": "yes"}}, "env.X.secret"),
                           ({"X": {"value": "v", "hidden": True}}, "env.X.hidden"),
                           ({"X": {"secret": True, "sealed": "gps1.AAAA"}}, "env.X.sealed")):
            s, d = alice.post("/v1/jobs", spec("bad", env))
            check(s == 400 and field in d["error"]["message"], "refused naming " + field, s, d)
            clean(json.dumps(d), "a refusal")
        s, job = alice.post("/v1/jobs", spec("db", {
            "DB_PASSWORD": {"value": SECRET, "secret": True}, "PLAIN": "visible",
            "ALSO": {"value": "plain-too", "secret": False}}))
        check(s == 201, "alice submits a job with a secret", s, job)
        check(job["spec"]["env"] == {"DB_PASSWORD": {"secret": True}, "PLAIN": "visible",
                                     "ALSO": "plain-too"}, "the answer hides the value", job)
        s, bjob = bob.post("/v1/jobs", spec("bobs", {
            "DB_PASSWORD": {"value": BOB_SECRET, "secret": True}}, model="H100-80GB"))
        check(s == 201, "bob submits a job with a secret", s, bjob)
        os.environ["GP_TEST_CLI_SECRET"] = CLI_SECRET
        rc, out = cli(p, admin.token, "submit", "--tenant", "team-a", "--name", "via-cli",
                      "--gpus", "1", "--secret-env", "GP_TEST_CLI_SECRET", "--", "true")
        check(rc == 0, "gpupool submit --secret-env NAME", out)
        clean(out, "gpupool submit's output")
        rc, out = cli(p, admin.token, "get", "job", "via-cli", "-o", "json")
        check(rc == 0 and json.loads(out)["spec"]["env"] == {"GP_TEST_CLI_SECRET":
                                                             {"secret": True}},
              "the CLI's job has its secret, hidden", out)
        rc, out = cli(p, admin.token, "submit", "--tenant", "team-a", "--gpus", "1",
                      "--secret-env", "GP_TEST_NOT_SET_ANYWHERE", "--", "true")
        check(rc == 2 and "GP_TEST_NOT_SET_ANYWHERE" in out, "--secret-env of an unset name", out)

        placed = p.wait_state(alice, "db", ("Scheduled", "Running"))
        check(placed["placement"][0]["node"] == "n1", "db runs on n1", placed)
        p.wait_state(bob, "bobs", ("Scheduled", "Running"))

        # ---- the node's own agent gets the value; nobody else does ----
        s, d = a1.get("/v1/nodes/n1/desired")
        check(s == 200 and env_of(d, job["id"])["DB_PASSWORD"] == SECRET,
              "n1's agent gets the value", s, d)
        check(BOB_SECRET not in json.dumps(d), "n1's agent does not get bob's value", d)
        s, d = a2.get("/v1/nodes/n2/desired")
        check(s == 200 and env_of(d, bjob["id"])["DB_PASSWORD"] == BOB_SECRET
              and SECRET not in json.dumps(d), "n2's agent: bob's value only", d)
        s, d = admin.get("/v1/nodes/n1/desired")
        check(s == 200 and env_of(d, job["id"])["DB_PASSWORD"] == {"secret": True},
              "an admin's read of n1's desired replicas hides it", d)
        clean(json.dumps(d), "admin's desired")

        # ---- no answer shows it ----
        for who, c in (("admin", admin), ("alice", alice), ("bob", bob)):
            for path in ("/v1/jobs", "/v1/jobs?limit=1000&order=desc", "/v1/jobs/db",
                         "/v1/jobs/%d" % job["id"], "/v1/jobs/%d/events" % job["id"],
                         "/v1/nodes", "/v1/nodes/n1", "/v1/tenants", "/v1/usage"):
                s, d = c.get(path)
                clean(json.dumps(d) if not isinstance(d, str) else d, "%s GET %s" % (who, path))
        s, d = admin.get("/v1/audit?limit=1000")
        check(s == 200, "the audit log", s, d)
        clean(json.dumps(d), "the audit log")
        for args in (("get", "job", "db", "-o", "json"), ("get", "job", "db", "-o", "yaml"),
                     ("get", "jobs", "-o", "json"), ("describe", "job", "db")):
            rc, out = cli(p, admin.token, *args)
            check(rc == 0, "gpupool " + " ".join(args), out)
            clean(out, "gpupool " + " ".join(args))
            if "-o" in args and "jobs" not in args:
                check("secret: true" in out or '"secret": true' in out,
                      "gpupool %s shows the name as secret" % " ".join(args), out)

        # ---- the database holds no plaintext ----
        data = os.path.join(p.dir, "data")
        for f in os.listdir(data):
            if f.startswith("gpupool.db"):
                blob = open(os.path.join(data, f), "rb").read()
                for s_ in (SECRET, BOB_SECRET, CLI_SECRET):
                    check(s_.encode() not in blob, "%s holds a plaintext secret" % f)

        # ---- an end-to-end run: the job's process sees the value ----
        token_file = os.path.join(tmp, "join.token")
        with open(token_file, "w") as f:
            f.write(p.join_token + "\n")
        real = MockAgent(agent_bin, mock, tmp, "t4", os.path.join(inventories, "pcie-t4.yaml"),
                         p.base, token_file, "--runtime", "none")
        agents.append(real)
        wait("t4 registered", lambda: admin.get("/v1/nodes/t4")[0] == 200)
        s, run = alice.post("/v1/jobs", spec("e2e", {"DB_PASSWORD": {"value": SECRET,
                                                                    "secret": True}}, "T4"))
        check(s == 201, "submit a job for the real agent", s, run)
        done = p.wait_state(alice, "e2e", ("Succeeded", "Failed"), timeout=120)
        check(done["state"] == "Succeeded", "the job ran", done, real.log()[-3000:])
        out = os.path.join(real.state, "finished", "%d-0-%d" % (run["id"],
                           done["placement"][0]["epoch"]) if done["placement"] else "x",
                           "stdout.log")
        paths = [os.path.join(r, "stdout.log") for r, _, fs in os.walk(real.state)
                 if "stdout.log" in fs and ("%d-0-" % run["id"]) in r]
        check(paths, "the job's stdout", out)
        want = hashlib.sha256(SECRET.encode()).hexdigest()
        check(want in open(paths[0]).read(), "the process saw the secret value",
              open(paths[0]).read())
        check(real.stop() == 0, "the agent stops cleanly", real.log()[-2000:])

        # ---- a moved or changed sealed value is refused ----
        p.stop()
        db = sqlite3.connect(os.path.join(data, "gpupool.db"))
        rows = dict(db.execute("SELECT name, spec FROM jobs WHERE name IN ('db', 'bobs')"))
        alice_spec, bob_spec = json.loads(rows["db"]), json.loads(rows["bobs"])
        check(alice_spec["env"]["DB_PASSWORD"]["sealed"].startswith("gps1."),
              "the store keeps the sealed form", alice_spec)
        bob_spec["env"]["DB_PASSWORD"] = alice_spec["env"]["DB_PASSWORD"]  # moved
        sealed = alice_spec["env"]["DB_PASSWORD"]["sealed"]
        alice_spec["env"]["DB_PASSWORD"]["sealed"] = sealed[:-6] + (
            "AAAA" if sealed[-6:-2] != "AAAA" else "BBBB") + sealed[-2:]  # changed
        db.execute("UPDATE jobs SET spec = ? WHERE name = 'bobs'", (json.dumps(bob_spec),))
        db.execute("UPDATE jobs SET spec = ? WHERE name = 'db'", (json.dumps(alice_spec),))
        db.commit()
        db.close()
        p.start()
        for agent, node, jid in ((a2, "n2", bjob["id"]), (a1, "n1", job["id"])):
            s, d = p.client(agent.token).get("/v1/nodes/%s/desired" % node)  # the new port
            e = env_of(d, jid)
            check(s == 200 and e and "refused" in e["DB_PASSWORD"], "%s: refused" % node, s, d)
            clean(json.dumps(d), "%s's desired after tampering" % node)
        check("secret value refused" in p.read_log(), "the controller logs the refusal")

        # ---- the key file: another key, or none, stops the start naming it ----
        p.stop()
        shutil.copy(key, key + ".good")
        with open(key, "w") as f:
            f.write("ab" * 32 + "\n")
        for what in ("another key", "no key file"):
            r = subprocess.run([gpupoold, "--data-dir", data, "--listen", "127.0.0.1:0"],
                               capture_output=True, text=True, timeout=60)
            check(r.returncode != 0 and key in r.stderr and "secrets.key_file" in r.stderr,
                  "gpupoold with %s: stops naming the file" % what, r.returncode, r.stderr)
            if os.path.exists(key):
                os.unlink(key)
        shutil.copy(key + ".good", key)
        os.chmod(key, 0o600)
        p.start()
        check(p.admin.get("/v1/jobs/db")[0] == 200, "the right key: starts again")
        check(p.stop() == 0, "gpupoold exits cleanly", p.read_log()[-3000:])
finally:
    for a in agents:
        if a.proc.poll() is None:
            a.stop()
    kill_replica_leftovers(tmp)  # an agent never stops its jobs when it stops
    shutil.rmtree(tmp, ignore_errors=True)
print("ok")
