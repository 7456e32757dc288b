"""Services with a real gpupool-agent (--runtime none, the mock NVML) and real probes: the service
is a small python3 HTTP server whose answers the test steers through files in its directory; each
replica listens in its own network namespace, where the agent's probes connect.

- its replica becomes ready once its readiness probe (HTTP GET /ready) passes, and leaves the
  endpoints when /ready answers 503;
- a liveness probe failing (HTTP GET /healthz answering 500) makes the agent stop the replica
  with "LivenessFailed: ..."; the controller restarts it (ReplicaUnhealthy, restarts 1) and it
  becomes ready again;
- killing the replica's server process brings it back (its restart policy);
- the service's address /v1/services/NAME/... balances over its ready replicas (the prefix
  stripped, X-Forwarded-Prefix set), leaves out one whose readiness fails, and is its tenant's
  alone (another tenant 404, no token 401);
- a rolling update with real probes never has fewer ready replicas than the count;
- an exec readiness probe (a command in the replica's directory) gates readiness the same way;
- autoscaling on the Prometheus gauge the agent scrapes from the replicas: a load scales out to
  2, a quiet spell back to 1.

Arguments: gpupoold, gpupool-agent, the mock NVML library, the inventories directory.
"""
import os
import shutil
import signal
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mockagent import MockAgent  # noqa: E402
from pool import (Pool, check, events, free_port, kill_replica_leftovers,  # noqa: E402
                  wait)

gpupoold, agent_bin, mock, inventories = sys.argv[1:5]
tmp = tempfile.mkdtemp(prefix="gpupool-svc.")
flags = os.path.join(tmp, "flags")
os.makedirs(flags)
PORT = free_port()

SERVER = r"""
import http.server, json, os, socketserver, sys
flags = os.environ["FLAGS"]
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        code, body = 404, b""
        if self.path == "/ready":
            code = 503 if (os.path.exists(os.path.join(flags, "unready")) or os.path.exists(
                os.path.join(flags, "unready-" + os.environ["GPUPOOL_JOB_ID"]))) else 200
        elif self.path.split("?")[0].endswith("/whoami"):
            code, body = 200, json.dumps({
                "job": int(os.environ["GPUPOOL_JOB_ID"]), "path": self.path,
                "prefix": self.headers.get("X-Forwarded-Prefix", "")}).encode()
        elif self.path == "/healthz":
            code = 500 if os.path.exists(os.path.join(flags, "sick")) else 200
        elif self.path == "/metrics":
            load = open(os.path.join(flags, "load")).read().strip() if os.path.exists(
                os.path.join(flags, "load")) else "0"
            code, body = 200, ("inflight %s\n" % load).encode()
        self.send_response(code)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
class S(http.server.HTTPServer):
    allow_reuse_port = True
    allow_reuse_address = True
with open(os.path.join(flags, "pid-%s" % os.environ["GPUPOOL_JOB_ID"]), "w") as f:
    f.write(str(os.getpid()))
S(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
"""


def flag(name, on):
    path = os.path.join(flags, name)
    if on:
        open(path, "w").close()
    elif os.path.exists(path):
        os.unlink(path)


def service(name, **extra):
    spec = {"name": name, "kind": "service", "port": PORT, "replicas": 1,
            "command": ["python3", "-c", SERVER, str(PORT)], "env": {"FLAGS": flags},
            "resources": {"gpus": 1},
            "readiness_probe": {"http_get": {"path": "/ready"}, "period": "1s",
                                "failure_threshold": 1},
            "liveness_probe": {"http_get": {"path": "/healthz"}, "period": "1s",
                               "failure_threshold": 2}}
    spec.update(extra)
    return spec


def replicas(client, name):
    s, d = client.get("/v1/services/%s" % name)
    check(s == 200, "get service", s, d)
    return d["replica_jobs"]


def ready_count(client, name):
    s, d = client.get("/v1/services/%s" % name)
    check(s == 200, "service", s, d)
    return len(d["endpoints"])


agent = None
try:
    with Pool(gpupoold) as p:
        p.tenant("team-a")
        alice = p.user("alice", "team-a")
        token_file = os.path.join(tmp, "join.token")
        with open(token_file, "w") as f:
            f.write(p.join_token + "\n")
        agent = MockAgent(agent_bin, mock, tmp, "t4", os.path.join(inventories, "pcie-t4.yaml"),
                          p.base, token_file, "--runtime", "none")
        wait("t4 registered", lambda: p.admin.get("/v1/nodes/t4")[0] == 200)

        # ---- readiness ----
        flag("unready", True)
        s, d = alice.post("/v1/jobs", service("web"))
        check(s == 201, "create the service", s, d)
        rep = wait("its replica job", lambda: (lambda r: r[0] if r else None)(
            replicas(alice, "web")), 20)
        p.wait_state(alice, rep["job"], "Running", 60)
        time.sleep(2.5)  # probes ran, /ready answered 503
        check(ready_count(alice, "web") == 0, "not ready while /ready answers 503",
              agent.log()[-2000:])
        flag("unready", False)
        wait("ready", lambda: ready_count(alice, "web") == 1, 30)
        flag("unready", True)
        wait("unready again", lambda: ready_count(alice, "web") == 0, 30)
        flag("unready", False)
        wait("ready again", lambda: ready_count(alice, "web") == 1, 30)

        # ---- liveness: the agent stops it, the controller restarts it ----
        flag("sick", True)
        wait("restarted for its liveness",
             lambda: p.job(alice, rep["job"])["restarts"] >= 1, 30)
        flag("sick", False)
        ev = events(alice, rep["job"])
        unhealthy = [e for e in ev if e["type"] == "ReplicaUnhealthy"]
        check(unhealthy and "LivenessFailed: HTTP GET /healthz: status 500" in
              unhealthy[0]["message"], "ReplicaUnhealthy with the probe's failure", ev)
        wait("ready after the restart", lambda: ready_count(alice, "web") == 1, 60)

        # ---- its process killed: back by its restart policy ----
        pidfile = os.path.join(flags, "pid-%d" % rep["job"])
        pid = int(open(pidfile).read())
        os.kill(pid, signal.SIGKILL)
        wait("restarted after the kill", lambda: p.job(alice, rep["job"])["restarts"] >= 2, 30)
        wait("ready after the kill", lambda: ready_count(alice, "web") == 1, 60)
        s, d = alice.post("/v1/jobs/web/cancel")
        check(s == 200, "cancel web", s, d)
        p.wait_state(alice, rep["job"], "Cancelled", 10)

        # ---- balancing over the ready replicas ----
        lb = service("lb", replicas=2)
        del lb["liveness_probe"]
        s, d = alice.post("/v1/jobs", lb)
        check(s == 201, "create lb", s, d)
        wait("2 ready", lambda: ready_count(alice, "lb") == 2, 60)
        ids = sorted(r["job"] for r in replicas(alice, "lb"))
        seen = set()
        for _ in range(8):
            s, d = alice.get("/v1/services/lb/whoami?x=1")
            check(s == 200 and d["path"] == "/whoami?x=1" and d["prefix"] == "/v1/services/lb",
                  "passed with the prefix stripped", s, d)
            seen.add(d["job"])
        check(sorted(seen) == ids, "both replicas serve", seen, ids)
        s, d = alice.get("/v1/jobs/lb/proxy/whoami")
        check(s == 200 and d["job"] in ids and d["path"].endswith("/proxy/whoami"),
              "the service through the job proxy too (its path unchanged)", s, d)
        # a rolling update with real probes: never fewer than 2 ready (sampled all along)
        samples = []
        v2 = dict(lb, env={"FLAGS": flags, "VERSION": "2"})
        s, d = alice.put("/v1/services/lb", v2)
        check(s == 200 and d["service"]["revision"] == 2, "lb to revision 2", s, d)
        deadline = time.time() + 90
        while time.time() < deadline:
            s, d = alice.get("/v1/services/lb")
            samples.append(len(d["endpoints"]))
            if len(d["replica_jobs"]) == 2 and all(
                    r["revision"] == 2 and r["ready"] for r in d["replica_jobs"]):
                break
            time.sleep(0.05)
        check(all(r["revision"] == 2 for r in replicas(alice, "lb")), "lb at revision 2")
        check(min(samples) >= 2, "never fewer than 2 ready during the update", min(samples),
              len(samples))
        ids = sorted(r["job"] for r in replicas(alice, "lb"))
        flag("unready-%d" % ids[0], True)
        wait("1 ready", lambda: ready_count(alice, "lb") == 1, 30)
        for _ in range(6):
            s, d = alice.get("/v1/services/lb/whoami")
            check(s == 200 and d["job"] == ids[1], "only the ready replica serves", s, d)
        p.tenant("team-b")
        bob = p.user("bob", "team-b")
        s, d = bob.get("/v1/services/lb/whoami")
        check(s == 404, "another tenant: 404", s, d)
        s, d = p.client(None).get("/v1/services/lb/whoami")
        check(s == 401, "no token: 401", s, d)
        flag("unready-%d" % ids[1], True)
        wait("none ready", lambda: ready_count(alice, "lb") == 0, 30)
        s, d = alice.get("/v1/services/lb/whoami")
        check(s == 503, "no ready replica: 503", s, d)
        s, d = alice.post("/v1/jobs/lb/cancel")
        check(s == 200, "cancel lb", s, d)

        # ---- an exec readiness probe ----
        ex = service("ex", readiness_probe={
            "exec": {"command": ["sh", "-c", 'test ! -e "$0/unready"', flags]}, "period": "1s",
            "failure_threshold": 1})
        del ex["liveness_probe"]
        flag("unready", True)
        s, d = alice.post("/v1/jobs", ex)
        check(s == 201, "create ex", s, d)
        rep = wait("ex's replica", lambda: (lambda r: r[0] if r else None)(
            replicas(alice, "ex")), 20)
        p.wait_state(alice, rep["job"], "Running", 60)
        time.sleep(2.5)
        check(ready_count(alice, "ex") == 0, "exec probe failing: not ready")
        flag("unready", False)
        wait("exec probe passing: ready", lambda: ready_count(alice, "ex") == 1, 30)
        s, d = alice.post("/v1/jobs/ex/cancel")
        check(s == 200, "cancel ex", s, d)
        p.wait_state(alice, rep["job"], "Cancelled", 10)

        # ---- autoscaling on the scraped gauge ----
        auto = service("auto", autoscale={
            "min_replicas": 1, "max_replicas": 2, "metric": "prometheus", "target": 5,
            "prometheus": {"name": "inflight"}, "scale_up_window": "0s",
            "scale_down_window": "2s"})
        del auto["liveness_probe"]
        with open(os.path.join(flags, "load"), "w") as f:
            f.write("20\n")
        s, d = alice.post("/v1/jobs", auto)
        check(s == 201, "create auto", s, d)
        wait("scaled out to 2", lambda: alice.get("/v1/services/auto")[1]["service"]["replicas"]
             == 2, 60)
        wait("2 ready", lambda: ready_count(alice, "auto") == 2, 60)
        up = [e for e in events(alice, "auto") if e["type"] == "ScaledUp"]
        check(up and "value 20.00" in up[0]["message"], "ScaledUp with the scraped value", up)
        # a value the wire refuses is left out: the node's heartbeats still go through
        with open(os.path.join(flags, "load"), "w") as f:
            f.write("1e300\n")
        time.sleep(6)  # past a scrape (every 5 s)
        h1 = p.admin.get("/v1/nodes/t4")[1]["heartbeat_ms"]
        time.sleep(1.5)
        s, node = p.admin.get("/v1/nodes/t4")
        check(node["heartbeat_ms"] > h1, "heartbeats accepted with a huge metric",
              agent.log()[-2000:])
        check(alice.get("/v1/services/auto")[1]["service"]["replicas"] == 2,
              "no value: the count stays")
        with open(os.path.join(flags, "load"), "w") as f:
            f.write("1\n")
        wait("scaled in to 1", lambda: alice.get("/v1/services/auto")[1]["service"]["replicas"]
             == 1, 60)
        s, d = alice.post("/v1/jobs/auto/cancel")
        check(s == 200, "cancel auto", s, d)
        check(agent.stop() == 0, "the agent stops cleanly", agent.log()[-2000:])
        check(p.stop() == 0, "gpupoold stops cleanly (no sanitizer report)",
              p.read_log()[-3000:])
finally:
    if agent and agent.proc.poll() is None:
        agent.stop()
    kill_replica_leftovers(tmp)
    for f in os.listdir(flags):  # the servers' own record of their pids
        try:
            os.kill(int(open(os.path.join(flags, f)).read()), signal.SIGKILL)
        except (ValueError, OSError):
            pass
    shutil.rmtree(tmp, ignore_errors=True)
print("ok")
