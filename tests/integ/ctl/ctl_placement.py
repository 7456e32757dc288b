"""Where replicas may go, against a real gpupoold with three real gpupool-agents (--runtime none,
the mock NVML, 4 T4 GPUs each) whose labels come from their --labels flag:

- node labels reach the controller and `gpupool describe node`; every node also has
  kubernetes.io/hostname;
- node_selector places a job only on nodes with every pair; a job no node matches stays Pending
  with the reason naming what is missing ("0/3 nodes match: 3 lack gpu-type=h100"), also in
  `gpupool describe job`;
- `gpupool nodes taint` (kubectl's syntax) sets taints: shown by `get nodes` and `describe node`,
  audited, kept across a controller restart and the agent registering again; a NoSchedule taint
  keeps jobs off unless tolerated (the reason names the taint); a NoExecute taint requeues the
  jobs on the node that do not tolerate it (event Requeued naming the taint) and leaves those
  that do; `key-` removes it;
- spread over zone and anti_affinity place a job's replicas, and a service's replica jobs,
  apart;
- `gpupool get jobs -l` and `gpupool cancel -l` with two tenants: a selector never reaches the
  other tenant's jobs; `--show-labels`;
- bad input: a bad taint, a bad selector, a bad spec field, each naming the field.

Arguments: gpupoold, gpupool-agent, the mock NVML library, the inventories directory, gpupool.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mockagent import MockAgent  # noqa: E402
from pool import (Pool, check, events, free_port, kill_replica_leftovers,  # noqa: E402
                  wait)

GPUPOOLD, AGENT, MOCK, INVENTORIES, GPUPOOL = sys.argv[1:6]
tmp = tempfile.mkdtemp(prefix="gpupool-place.")
home = os.path.join(tmp, "home")
os.makedirs(home)
LABELS = {"n0": "zone=a,gpu-type=a100", "n1": "zone=b,gpu-type=a100", "n2": "zone=b,gpu-type=t4"}


def cli(p, token, *args, ok=True):
    env = dict(os.environ, HOME=home, GPUPOOL_SERVER=p.base)
    env.pop("GPUPOOL_TOKEN", None)
    r = subprocess.run([GPUPOOL] + list(args) + ["--token", token], capture_output=True,
                       text=True, timeout=30, env=env)
    if ok:
        check(r.returncode == 0, "gpupool %s" % " ".join(args), r.stdout, r.stderr)
    return r


def field(text, label):
    m = re.search(r"^%s:\s+(.*)$" % re.escape(label), text, re.M)
    check(m is not None, "a %s: line" % label, text)
    return m.group(1)


def spec(name, replicas=1, **extra):
    d = {"name": name, "replicas": replicas, "command": ["sleep", "1000"],
         "resources": {"gpus": 1}}
    d.update(extra)
    return d


def submit(client, doc):
    s, d = client.post("/v1/jobs", doc)
    check(s == 201, "submit %s" % doc["name"], s, d)
    return d["id"]


def nodes_of(p, client, ref):
    d = p.wait_state(client, ref, "Running", 30)
    return [r["node"] for r in d["placement"]]


def reason(p, client, ref, part):
    wait("job %s waits with %r" % (ref, part),
         lambda: part in p.job(client, ref)["reason"], 15)
    return p.job(client, ref)


def start_agent(p, node, token_file):
    return MockAgent(AGENT, MOCK, tmp, node, os.path.join(INVENTORIES, "pcie-t4.yaml"), p.base,
                     token_file, "--runtime", "none", "--labels", LABELS[node])


agents = {}
try:
    # a fixed port: the agents and clients reach the controller again after its restart
    with Pool(GPUPOOLD, extra_args=["--listen", "127.0.0.1:%d" % free_port()]) as p:
        p.tenant("team-a")
        p.tenant("team-b")
        alice = p.user("alice", "team-a")
        bob = p.user("bob", "team-b")
        tok_a = alice.token
        token_file = os.path.join(tmp, "join.token")
        with open(token_file, "w") as f:
            f.write(p.join_token + "\n")
        for n in LABELS:
            agents[n] = start_agent(p, n, token_file)
        for n in LABELS:
            wait("%s registered" % n, lambda n=n: p.admin.get("/v1/nodes/%s" % n)[0] == 200, 30)

        # ---- labels from the agents' --labels ----
        s, d = p.admin.get("/v1/nodes/n2")
        check(d["labels"] == {"zone": "b", "gpu-type": "t4"} and d["taints"] == [],
              "n2's labels from its agent", d)
        out = cli(p, p.admin_token, "describe", "node", "n2").stdout
        check("gpu-type=t4" in field(out, "Labels") and field(out, "Taints") == "-",
              "describe node shows labels", out)

        # ---- node_selector ----
        t4 = submit(alice, spec("on-t4", node_selector={"gpu-type": "t4"}, labels={"app": "web"}))
        check(nodes_of(p, alice, t4) == ["n2"], "node_selector: on n2", p.job(alice, t4))
        host = submit(alice, spec("on-n0", node_selector={"kubernetes.io/hostname": "n0"}))
        check(nodes_of(p, alice, host) == ["n0"], "the implicit hostname label", p.job(alice, host))
        none = submit(alice, spec("on-h100", node_selector={"gpu-type": "h100"}))
        reason(p, alice, none, "0/3 nodes match: 3 lack gpu-type=h100")
        check(p.job(alice, none)["state"] == "Pending", "a job no node matches waits")
        out = cli(p, tok_a, "describe", "job", "on-h100").stdout
        check(field(out, "Reason") == "0/3 nodes match: 3 lack gpu-type=h100" and
              field(out, "Node-Selector") == "gpu-type=h100", "describe job says why", out)
        cli(p, tok_a, "cancel", "on-h100", "on-n0")

        # ---- taints: NoSchedule ----
        r = cli(p, p.admin_token, "nodes", "taint", "n2", "dedicated=ml:NoSchedule")
        check("dedicated=ml:NoSchedule" in r.stdout, "taint answer", r.stdout)
        table = cli(p, p.admin_token, "get", "nodes").stdout
        check("TAINTS" in table.splitlines()[0] and "dedicated=ml:NoSchedule" in table,
              "get nodes shows the taint", table)
        out = cli(p, p.admin_token, "describe", "node", "n2").stdout
        check(field(out, "Taints") == "dedicated=ml:NoSchedule", "describe node: taints", out)
        check(p.job(alice, t4)["state"] == "Running", "NoSchedule leaves running jobs")
        wait_n2 = submit(alice, spec("wants-n2", node_selector={"kubernetes.io/hostname": "n2"}))
        reason(p, alice, wait_n2, "0/3 nodes match: 2 lack kubernetes.io/hostname=n2, "
                                  "1 has taint dedicated=ml:NoSchedule")
        tol = [{"key": "dedicated", "operator": "Equal", "value": "ml", "effect": "NoSchedule"}]
        ok_n2 = submit(alice, spec("tolerates-n2", tolerations=tol,
                                   node_selector={"kubernetes.io/hostname": "n2"}))
        check(nodes_of(p, alice, ok_n2) == ["n2"], "a toleration lets it on n2")
        s, d = p.admin.get("/v1/audit?action=node.taint")
        check(s == 200 and any(x.get("object") == "node/n2" for x in d["items"]),
              "the taint is audited", s, d)
        # a user may not taint
        r = cli(p, tok_a, "nodes", "taint", "n0", "x:NoSchedule", ok=False)
        check(r.returncode != 0, "a user cannot taint", r.stdout, r.stderr)
        for method in ("POST", "PUT"):
            s, d = alice.call(method, "/v1/nodes/n0/taints",
                              {"taints": []} if method == "PUT" else
                              {"add": [{"key": "x", "effect": "NoSchedule"}]})
            check(s == 403, "a user's %s of taints: 403" % method, s, d)
        s, d = p.admin.get("/v1/nodes/n0")
        check(s == 200 and not d.get("taints"), "n0 kept no taint of the user's", s, d)

        # ---- kept across a controller restart and the agent registering again ----
        p.restart()
        s, d = p.admin.get("/v1/nodes/n2")
        check(d["taints"] == [{"key": "dedicated", "value": "ml", "effect": "NoSchedule"}],
              "taints survive a restart", d)
        check(agents["n2"].stop() == 0, "agent n2 stops cleanly", agents["n2"].log()[-3000:])
        agents["n2"] = start_agent(p, "n2", token_file)
        wait("n2 registered again",
             lambda: "registered" in agents["n2"].log() and
             p.admin.get("/v1/nodes/n2")[1].get("registered_ms", 0) > d["registered_ms"], 30)
        s, d = p.admin.get("/v1/nodes/n2")
        check(len(d["taints"]) == 1, "taints survive the agent registering again", d)
        check(p.job(alice, wait_n2)["state"] == "Pending", "still kept off n2")
        cli(p, tok_a, "cancel", "wants-n2", "tolerates-n2", "on-t4")

        # ---- spread and anti_affinity ----
        sp = submit(alice, spec("spread", replicas=2,
                                spread=[{"topology_key": "zone", "max_skew": 1}]))
        where = nodes_of(p, alice, sp)
        check(sorted(where) == ["n0", "n1"], "one replica per zone (n2 is tainted)", where)
        cli(p, tok_a, "cancel", "spread")
        aa = submit(alice, spec("apart", replicas=3, anti_affinity=True, tolerations=tol))
        where = nodes_of(p, alice, aa)
        check(sorted(where) == ["n0", "n1", "n2"], "anti_affinity: one per node", where)
        cli(p, tok_a, "cancel", "apart")
        svc = {"name": "web", "kind": "service", "port": 8080, "replicas": 3,
               "command": ["sleep", "1000"], "resources": {"gpus": 1}, "anti_affinity": True,
               "tolerations": tol}
        s, d = alice.post("/v1/jobs", svc)
        check(s == 201, "create the service", s, d)

        def service_nodes():
            s, d = alice.get("/v1/services/web")
            reps = d.get("replica_jobs", []) if s == 200 else []
            got = [p.job(alice, r["job"]) for r in reps]
            return [x["placement"][0]["node"] for x in got if x["placement"]]
        wait("three service replicas placed", lambda: len(service_nodes()) == 3, 30)
        check(sorted(service_nodes()) == ["n0", "n1", "n2"],
              "a service's replica jobs spread apart", service_nodes())
        cli(p, tok_a, "cancel", "web")

        # ---- NoExecute ----
        stay = submit(alice, spec("stays", node_selector={"kubernetes.io/hostname": "n1"},
                                  tolerations=[{"key": "maint", "operator": "Exists",
                                                "effect": "NoExecute"}]))
        go = submit(alice, spec("goes", node_selector={"kubernetes.io/hostname": "n1"}))
        check(nodes_of(p, alice, stay) == ["n1"] and nodes_of(p, alice, go) == ["n1"],
              "both on n1")
        cli(p, p.admin_token, "nodes", "taint", "n1", "maint:NoExecute")
        d = reason(p, alice, go, "1 has taint maint:NoExecute")
        check(d["state"] == "Pending", "the job that does not tolerate it is requeued", d)
        ev = [e for e in events(alice, go) if e["type"] == "Requeued"]
        check(ev and "taint maint:NoExecute of node n1" in ev[-1]["message"],
              "a Requeued event names the taint", ev)
        check(p.job(alice, stay)["state"] == "Running", "the tolerating job stays")
        cli(p, p.admin_token, "nodes", "taint", "n1", "maint-")
        check(nodes_of(p, alice, go) == ["n1"], "back on n1 once the taint is gone")
        cli(p, tok_a, "cancel", "stays", "goes")

        # ---- selectors with two tenants ----
        a_web = submit(alice, spec("a-web", labels={"app": "web", "tier": "front"},
                                   tolerations=tol))
        a_db = submit(alice, spec("a-db", labels={"app": "db"}, tolerations=tol))
        b_web = submit(bob, spec("b-web", labels={"app": "web"}, tolerations=tol))
        for c, j in ((alice, a_web), (alice, a_db), (bob, b_web)):
            p.wait_state(c, j, "Running", 30)
        s, d = alice.get("/v1/jobs?selector=app%3Dweb&state=Running")
        check(s == 200 and [x["id"] for x in d["items"]] == [a_web],
              "alice's selector sees her own job only", d)
        s, d = bob.get("/v1/jobs?selector=app%3Dweb,!tier&state=Running")
        check([x["id"] for x in d["items"]] == [b_web], "bob's selector", d)
        s, d = p.admin.get("/v1/jobs?selector=app%20in%20(web,db)&state=Running")
        check(sorted(x["id"] for x in d["items"]) == sorted([a_web, a_db, b_web]),
              "an admin's selector sees every tenant", d)
        out = cli(p, tok_a, "get", "jobs", "-l", "app=web", "--show-labels").stdout
        check("a-web" in out and "b-web" not in out and "a-db" not in out and
              "app=web,tier=front" in out and "LABELS" in out.splitlines()[0],
              "get jobs -l --show-labels", out)
        out = cli(p, tok_a, "get", "jobs", "-l", "app!=web").stdout
        check("a-db" in out and "a-web" not in out, "get jobs -l app!=web", out)
        out = cli(p, tok_a, "cancel", "-l", "app=web").stdout
        check("a-web" in out and "b-web" not in out, "cancel -l: alice's only", out)
        check(p.job(alice, a_web)["state"] == "Cancelled" and
              p.job(bob, b_web)["state"] == "Running" and
              p.job(alice, a_db)["state"] == "Running",
              "cancel -l never reaches another tenant's job")
        cli(p, tok_a, "cancel", "-l", "app")

        # ---- bad input ----
        s, d = p.admin.post("/v1/nodes/n0/taints",
                            {"add": [{"key": "k", "value": "v", "effect": "NoRun"}]})
        check(s == 400 and "add[0].effect" in d["error"]["message"], "a bad effect", s, d)
        s, d = p.admin.post("/v1/nodes/n0/taints", {"remove": [{"key": "nothing"}]})
        check(s == 404 and "remove[0]" in d["error"]["message"], "removing no taint", s, d)
        s, d = p.admin.put("/v1/nodes/n0/taints", {"taints": [{"key": "-x", "effect": "NoSchedule"}]})
        check(s == 400 and "taints[0].key" in d["error"]["message"], "a bad key", s, d)
        s, d = p.admin.get("/v1/nodes/n0")
        check(d["taints"] == [], "nothing stored of a refused change", d)
        s, d = alice.get("/v1/jobs?selector=app%3D%3D")
        check(s == 200, "app== selects an empty value", s, d)
        s, d = alice.get("/v1/jobs?selector=app%20web")
        check(s == 400 and d["error"]["message"].startswith("selector: app"), "a bad selector",
              s, d)
        s, d = alice.post("/v1/jobs", spec("bad", tolerations=[{"key": "a"},
                                                               {"operator": "In"}]))
        check(s == 400 and d["error"]["message"] ==
              "tolerations[1].operator: must be Exists or Equal", "a bad toleration", s, d)
        s, d = alice.post("/v1/jobs", spec("bad", node_selector={"gpu-type": "a 100"}))
        check(s == 400 and d["error"]["message"].startswith("node_selector.gpu-type:"),
              "a bad node_selector value", s, d)
        log = p.read_log()
        check(p.stop() == 0, "gpupoold exits cleanly (a sanitizer's report would fail it)",
              log[-3000:])
    for a in agents.values():
        check(a.stop() == 0, "agent %s stops cleanly" % a.node, a.log()[-3000:])
    agents = {}
    print("ok")
finally:
    for a in agents.values():
        a.stop()
    kill_replica_leftovers(tmp)
    shutil.rmtree(tmp, ignore_errors=True)
