"""Node identity on a real gpupoold and a real gpupool-agent over the mock NVML.

- A join token registers only a node name not yet known: a known name is 409, naming the node and
  saying re-admitting takes an admin or the node's own credential, and the answer carries no token.
- An agent token registers only its own node (403 for another, no token in the answer).
- Every registration issues a new agent token and revokes the node's older ones, but the one
  the node's own agent registered with, which lives until the new one is used.
- An admin re-admits any node.
- No answer (registration, node list and get, desired, tokens, audit) carries another node's
  agent or control token.
- A restarted agent re-registers with its own credential (STATE_DIR/agent.token, 0600); one whose
  credential was revoked is refused (the join token cannot take a known node); after the
  controller's store is reset it joins anew with the join token.
Arguments: gpupoold, gpupool-agent, the mock NVML library, the inventories directory, gpupool.
"""
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mockagent import MockAgent  # noqa: E402
from pool import Pool, check, node_doc, wait  # noqa: E402

gpupoold, agent_bin, mock, inventories, gpupool = sys.argv[1:6]
inventory = os.path.join(inventories, "pcie-t4.yaml")
tmp = tempfile.mkdtemp(prefix="gpupool-ident.")


def no_tokens(status, doc, what):
    text = json.dumps(doc)
    check("gpn_" not in text and "gpc_" not in text and "token" not in (doc or {}),
          what + ": the answer carries no token", status, doc)


def secrets_absent(text, secrets, what):
    for name, value in secrets.items():
        check(value not in text, "%s: carries %s" % (what, name), text[:600])


agents = []
try:
    with Pool(gpupoold) as p:
        admin, join = p.admin, p.client(p.join_token)
        p.tenant("team-a")

        # ---- a join token: new names only ----
        s, n1 = join.post("/v1/nodes", node_doc("n1", ngpus=2))
        check(s == 201 and n1["token"].startswith("gpn_") and n1["control_token"],
              "join registers n1", s, n1)
        s, n2 = join.post("/v1/nodes", node_doc("n2", ngpus=2))
        check(s == 201, "join registers n2", s, n2)
        others = {"n2's agent token": n2["token"], "n2's control token": n2["control_token"]}
        s, d = join.post("/v1/nodes", node_doc("n1", ngpus=2))
        check(s == 409 and "n1" in d["error"]["message"] and "admin" in d["error"]["message"]
              and "own" in d["error"]["message"], "join on a known node: 409 saying why", s, d)
        no_tokens(s, d, "join on a known node")
        s, d = join.post("/v1/nodes", node_doc("n2", ngpus=4))
        check(s == 409, "join cannot replace n2's inventory either", s, d)
        no_tokens(s, d, "join on n2")

        # ---- an agent token: its own node only ----
        a1 = p.client(n1["token"])
        s, d = a1.post("/v1/nodes", node_doc("n2", ngpus=2))
        check(s == 403 and "n2" in d["error"]["message"] and "own" in d["error"]["message"],
              "n1's agent token registering n2: 403", s, d)
        no_tokens(s, d, "n1 registering n2")
        s, d = a1.post("/v1/nodes", node_doc("n3", ngpus=2))
        check(s == 403, "n1's agent token registering a new name: 403", s, d)
        s, d = p.client(n2["token"]).get("/v1/nodes/n1/desired")
        check(s == 404, "n2's agent cannot read n1's desired replicas", s, d)
        s, again = a1.post("/v1/nodes", node_doc("n1", ngpus=2))
        check(s == 200 and again["token"] != n1["token"]
              and again["control_token"] != n1["control_token"],
              "n1 re-registers with its own token: new credentials", s, again)
        secrets_absent(json.dumps(again), others, "n1's re-registration")
        # The credential it registered with stays until the new one is used: an agent that
        # dies before saving its new token comes back with the old one.
        s, d = a1.post("/v1/nodes/n1/heartbeat", {})
        check(s == 200, "n1's old agent token lives until the new one is used", s, d)
        s, lost = a1.post("/v1/nodes", node_doc("n1", ngpus=2))
        check(s == 200 and lost["token"] != again["token"],
              "n1 re-registers again with the old token (the new one was never saved)", s, lost)
        s, d = p.client(again["token"]).post("/v1/nodes/n1/heartbeat", {})
        check(s == 401, "the never-used token of the lost registration is revoked", s, d)
        again = lost
        old = a1
        a1 = p.client(again["token"])
        s, d = a1.post("/v1/nodes/n1/heartbeat", {})
        check(s == 200, "n1's new agent token heartbeats", s, d)
        s, d = old.post("/v1/nodes/n1/heartbeat", {})
        check(s == 401, "n1's old agent token is revoked once the new one is used", s, d)
        s, d = a1.post("/v1/nodes/n1/heartbeat", {})
        check(s == 200, "the new token stays", s, d)

        # ---- an admin re-admits ----
        s, readmit = admin.post("/v1/nodes", node_doc("n1", ngpus=2))
        check(s == 200 and readmit["token"] != again["token"], "admin re-admits n1", s, readmit)
        secrets_absent(json.dumps(readmit), others, "the re-admission")
        check(a1.post("/v1/nodes/n1/heartbeat", {})[0] == 401,
              "the re-admission revokes n1's previous token")
        a1 = p.client(readmit["token"])
        check(a1.post("/v1/nodes/n1/heartbeat", {})[0] == 200, "n1's newest token works")

        # ---- re-admission without the inventory: a new credential for a known node ----
        s, tok = admin.post("/v1/tokens", {"name": "ops", "role": "operator"})
        check(s == 201, "an operator token", s, tok)
        for who, c in (("an operator", p.client(tok["token"])), ("a user", p.user("eve", "team-a")),
                       ("n1's agent", a1), ("the join token", join)):
            s, d = c.post("/v1/nodes/n1/credential", {})
            check(s in (401, 403), "%s cannot re-admit n1" % who, s, d)
            no_tokens(s, d, "%s re-admitting n1" % who)
        s, d = admin.post("/v1/nodes/nope/credential", {})
        check(s == 404 and "nope" in d["error"]["message"], "re-admitting an unknown node: 404",
              s, d)
        tfile = os.path.join(tmp, "n1.agent.token")
        r = subprocess.run([gpupool, "nodes", "readmit", "n1", "--agent-token-file", tfile, "--server",
                            p.base, "--token", p.admin_token], capture_output=True, text=True)
        check(r.returncode == 0 and tfile in r.stdout, "gpupool nodes readmit n1 --agent-token-file",
              r.returncode, r.stdout, r.stderr)
        check(stat.S_IMODE(os.stat(tfile).st_mode) == 0o600, "the token file is 0600",
              oct(os.stat(tfile).st_mode))
        cred = open(tfile).read().strip()
        check(a1.post("/v1/nodes/n1/heartbeat", {})[0] == 401,
              "the credential re-admission revokes every older token at once")
        a1 = p.client(cred)
        check(a1.post("/v1/nodes/n1/heartbeat", {})[0] == 200, "the re-admitted token works")
        s, d = admin.get("/v1/nodes/n1")
        check(s == 200 and len(d["gpus"]) == 2, "the node keeps its inventory", s, d)
        s, d = admin.get("/v1/audit?action=node.readmit")
        check(s == 200 and len(d["items"]) == 1 and cred not in json.dumps(d),
              "one node.readmit record, without the token", s, d)

        # ---- nothing shows another node's (or any) secrets ----
        mine = {"n1's agent token": readmit["token"], "n1's control token":
                readmit["control_token"]}
        everything = dict(others, **mine)
        for who, c in (("admin", admin), ("a user", p.user("alice", "team-a"))):
            for path in ("/v1/nodes", "/v1/nodes/n1", "/v1/nodes/n2"):
                s, d = c.get(path)
                check(s == 200, "%s GET %s" % (who, path), s, d)
                secrets_absent(json.dumps(d), everything, "%s GET %s" % (who, path))
                check("control_token" not in json.dumps(d), "%s GET %s: no control_token" %
                      (who, path), d)
        for path in ("/v1/tokens", "/v1/audit?limit=1000", "/v1/nodes/n1/desired",
                     "/v1/nodes/n2/desired"):
            s, d = admin.get(path)
            check(s == 200, "admin GET " + path, s, d)
            secrets_absent(json.dumps(d), everything, "admin GET " + path)
        s, d = a1.get("/v1/nodes/n1/desired")
        secrets_absent(json.dumps(d), others, "n1's own desired replicas")
        s, d = admin.get("/v1/audit?limit=1000")
        acts = [r for r in d["items"] if r["action"] == "node.register"]
        check(len(acts) == 5, "five registrations in the audit log (refusals change nothing)",
              acts)

        # ---- a real agent: its credential in its state directory, restarts ----
        token_file = os.path.join(tmp, "join.token")
        with open(token_file, "w") as f:
            f.write(p.join_token + "\n")

        def start(node="real1"):
            a = MockAgent(agent_bin, mock, tmp, node, inventory, p.base, token_file,
                          "--runtime", "none")
            agents.append(a)
            return a

        def ready(node="real1"):
            s, d = admin.get("/v1/nodes/" + node)
            return s == 200 and d["state"] == "Ready" and d

        agent = start()
        wait("real1 registered", ready)
        cred = os.path.join(agent.state, "agent.token")
        wait("real1's credential saved", lambda: os.path.exists(cred) and open(cred).read())
        check(stat.S_IMODE(os.stat(cred).st_mode) == 0o600, "agent.token is 0600",
              oct(os.stat(cred).st_mode))
        first = open(cred).read().strip()
        check(p.client(first).post("/v1/nodes/real1/heartbeat", {})[0] == 200,
              "the saved credential is real1's")
        check(agent.stop() == 0, "the agent stops cleanly", agent.log()[-2000:])

        agent = start()
        wait("real1's new credential", lambda: open(cred).read().strip() not in ("", first))
        wait("real1 ready again", ready)
        check("joining anew" not in agent.log(), "the restarted agent used its own credential",
              agent.log()[-3000:])
        wait("the credential before the restart is revoked once the new one is used",
             lambda: p.client(first).post("/v1/nodes/real1/heartbeat", {})[0] == 401)
        s, d = admin.get("/v1/audit?limit=1000")
        last = [r for r in d["items"] if r["action"] == "node.register"
                and r["object"] == "node/real1"]
        check(last and last[-1]["actor"].startswith("agent-real1"),
              "the restart registered as real1's agent, not with the join token", last)
        check(agent.stop() == 0, "the agent stops cleanly", agent.log()[-2000:])

        # A revoked credential: the join token cannot take the known node; the agent says so.
        s, toks = admin.get("/v1/tokens")
        live = [t for t in toks["items"] if t["node"] == "real1" and not t["revoked"]]
        check(len(live) == 1, "real1 has one live agent token", toks)
        s, d = admin.delete("/v1/tokens/%d" % live[0]["id"])
        check(s == 200, "revoke real1's token", s, d)
        agent = start()
        rc = agent.proc.wait(timeout=60)
        log = agent.log()
        check(rc != 0 and "joining anew" in log and "already registered" in log,
              "a revoked agent falls back to the join token and is refused", rc, log[-3000:])

    # ---- the controller's store reset: the old credential is unknown; the join token works ----
    with Pool(gpupoold) as p:
        admin = p.admin
        with open(token_file, "w") as f:
            f.write(p.join_token + "\n")
        agent = start()
        wait("real1 registered with a reset controller", ready, timeout=60)
        check("joining anew" in agent.log(), "the refused credential made it join anew",
              agent.log()[-3000:])
        check(agent.stop() == 0, "the agent stops cleanly", agent.log()[-2000:])
        check(p.stop() == 0, "gpupoold exits cleanly", p.read_log()[-3000:])
finally:
    for a in agents:
        if a.proc.poll() is None:
            a.stop()
    shutil.rmtree(tmp, ignore_errors=True)
print("ok")
