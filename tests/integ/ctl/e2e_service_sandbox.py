"""A service in podman sandboxes: `gpupool up` (gpupoold, one agent over the mock NVML, the real
podman with storage of the test's own) and a service of two replicas over the host root, each a
small python3 HTTP server in its own container (slirp4netns), steered through requests to each
replica's own proxy address.

- the agent's HTTP readiness probe reaches each replica inside its container's network
  namespace: both become ready, and the service's address balances over both;
- a replica whose /ready answers 503 leaves the endpoints and the balancing;
- an exec liveness probe runs through `podman exec` in the container (in its working
  directory): failing, it restarts the replica (ReplicaUnhealthy naming the command).
Arguments: the gpupool program (gpupoold, gpupool-agent, gpupool-run beside it).
"""
import os
import shutil
import subprocess
import sys
import tempfile

from oci import Storage
from pool import Client, check, events, free_ports, open_to_all, pool_down, wait

SERVER = r"""
import http.server, json, os, sys
job = os.environ["GPUPOOL_JOB_ID"]
state = {"unready": False}
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        code, body = 200, b""
        if self.path == "/ready":
            code = 503 if state["unready"] else 200
        elif "/set?" in self.path:
            q = self.path.split("?", 1)[1]
            if q.startswith("unready="):
                state["unready"] = q.endswith("=1")
            elif q == "sick=1":
                open("sick", "w").close()
        else:
            body = json.dumps({"job": int(job), "path": self.path}).encode()
        self.send_response(code)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
http.server.HTTPServer(("127.0.0.1", int(os.environ["GPUPOOL_PORT"])), H).serve_forever()
"""

gpupool = sys.argv[1]
build = os.path.dirname(os.path.dirname(os.path.abspath(gpupool)))
tmp = tempfile.mkdtemp(prefix="gpupool-e2e-service.", dir=build)
os.chmod(tmp, 0o755)
pool = os.path.join(tmp, "pool")
port = free_ports(2)
st = Storage()
env = dict(st.env)
env.pop("GPUPOOL_RUNTIME", None)
# SERVER goes in the command itself: the sandbox has a /tmp of its own, and this directory may be
# under the host's /tmp (a clean clone in CI).


def steer(client, job, what):
    """A request to one replica's own address: its server changes what it answers."""
    s, d = client.get("/v1/jobs/%d/proxy/set?%s" % (job, what))
    check(s == 200, "steer replica %d: %s" % (job, what), s, d)


try:
    up = subprocess.run([gpupool, "up", "--data-dir", pool, "--port", str(port), "--nodes",
                         "pcie-t4:1"], capture_output=True, text=True, timeout=120, env=env)
    check(up.returncode == 0 and "is up" in up.stdout, "gpupool up", up.stdout, up.stderr)
    base = "http://127.0.0.1:%d" % port
    admin = Client(base, open(os.path.join(pool, "admin.token")).read().strip())
    check(admin.post("/v1/tenants", {"name": "svc"})[0] == 201, "tenant")
    s, d = admin.post("/v1/tokens", {"name": "sam", "role": "user", "tenant": "svc"})
    check(s == 201, "a user", s, d)
    sam = Client(base, d["token"])
    open_to_all(tmp)
    spec = {"name": "web", "kind": "service", "port": 8080, "replicas": 2,
            "command": ["python3", "-c", SERVER], "resources": {"gpus": 1},
            "readiness_probe": {"http_get": {"path": "/ready"}, "period": "1s",
                                "failure_threshold": 1},
            "liveness_probe": {"exec": {"command": ["sh", "-c", "test ! -e sick"]},
                               "period": "1s", "failure_threshold": 2}}
    s, d = sam.post("/v1/jobs", spec)
    check(s == 201, "submit the service", s, d)

    def doc():
        s, d = sam.get("/v1/services/web")
        check(s == 200, "the service", s, d)
        return d

    wait("both replicas ready", lambda: len(doc()["endpoints"]) == 2, 120)
    containers = st.containers()
    check(len(containers) == 2, "two containers", containers)
    ids = sorted(r["job"] for r in doc()["replica_jobs"])
    seen = set()
    for _ in range(8):
        s, d = sam.get("/v1/services/web/hello")
        check(s == 200 and d["path"] == "/hello", "through the service's address", s, d)
        seen.add(d["job"])
    check(sorted(seen) == ids, "both containers serve", seen, ids)

    steer(sam, ids[0], "unready=1")
    wait("one ready", lambda: len(doc()["endpoints"]) == 1, 60)
    for _ in range(4):
        s, d = sam.get("/v1/services/web/hello")
        check(s == 200 and d["job"] == ids[1], "only the ready one serves", s, d)
    steer(sam, ids[0], "unready=0")
    wait("both ready again", lambda: len(doc()["endpoints"]) == 2, 60)

    steer(sam, ids[1], "sick=1")
    wait("restarted for its liveness", lambda: sam.get("/v1/jobs/%d" % ids[1])[1]["restarts"] >= 1,
         60)
    ev = [e for e in events(sam, str(ids[1])) if e["type"] == "ReplicaUnhealthy"]
    check(ev and "LivenessFailed: exec sh: exit 1" in ev[0]["message"],
          "ReplicaUnhealthy from the exec probe in the container", ev)
    wait("both ready after the restart", lambda: len(doc()["endpoints"]) == 2, 120)
    s, d = sam.post("/v1/jobs/web/cancel")
    check(s == 200, "cancel the service", s, d)
finally:
    down, leftover = pool_down(gpupool, pool, tmp, tmp)
    st.close()
    shutil.rmtree(tmp, ignore_errors=True)
check(down.returncode == 0, "gpupool down", down.stdout, down.stderr)
check(not leftover, "down stopped every job", leftover)
print("ok")
