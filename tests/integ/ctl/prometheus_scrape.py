"""A real Prometheus (/usr/bin/prometheus) scraping a pool the way docs/metrics.md tells
operators to set it up: gpupoold's /metrics as a static target, and the agents discovered
through gpupoold's /v1/sd/prometheus (http_sd_configs).

The pool: a gpupoold, one node registered with the address of an agent endpoint and kept Ready
by heartbeats, two jobs (one placed, one waiting for capacity). The agent endpoint is a small
HTTP server serving one DCGM_FI_DEV_GPU_UTIL sample (agent_endpoint below: the one place to
swap in a real gpupool-agent). Prometheus's HTTP API is polled until gpupoold's gpupool_jobs
shows the jobs, the discovered agent target is up with the node's labels, and the agent's
sample is stored with its Hostname. Prometheus is killed at the end.

Skipped (77) when Prometheus is not installed, unless CI is set: then it fails.
"""
import http.server
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

from pool import Beater, Pool, check, node_doc, submit

PROMETHEUS = "/usr/bin/prometheus"
DEADLINE_S = 60

if not os.path.exists(PROMETHEUS):
    if os.environ.get("CI"):
        check(False, PROMETHEUS + " is missing (the CI image must have it)")
    print("skipped: %s is not installed" % PROMETHEUS)
    sys.exit(77)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class StubAgent:
    """An agent's metrics endpoint: GET /metrics answers one DCGM sample for its node."""

    def __init__(self, node, util):
        body = ("# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %%).\n"
                "# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n"
                'DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-%s-0",Hostname="%s"} %d\n'
                % (node, node, util)).encode()

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                if self.path.split("?")[0] != "/metrics":
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.address = "127.0.0.1:%d" % self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def agent_endpoint(node, util):
    """Something serving the node's agent metrics: (its host:port, a function that stops it).
    A stub for now; a real gpupool-agent over the mock NVML can take its place (the checks
    below only need DCGM_FI_DEV_GPU_UTIL with the node's Hostname)."""
    a = StubAgent(node, util)
    return a.address, a.stop


CONFIG = """global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: gpupoold
    static_configs:
      - targets: ["%(ctl)s"]
  - job_name: gpupool-agent
    honor_labels: true
    http_sd_configs:
      - url: http://%(ctl)s/v1/sd/prometheus
        refresh_interval: 1s
"""


def api(base, path, **params):
    url = base + path + ("?" + urllib.parse.urlencode(params) if params else "")
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            doc = json.loads(r.read().decode())
    except (OSError, ValueError):
        return None  # not up yet
    return doc.get("data") if doc.get("status") == "success" else None


def query(base, expr):
    """{frozenset(labels): value} of an instant query, or None."""
    data = api(base, "/api/v1/query", query=expr)
    if data is None or data.get("resultType") != "vector":
        return None
    return {frozenset(r["metric"].items()): float(r["value"][1]) for r in data["result"]}


tmp = tempfile.mkdtemp(prefix="gpupool-prom.")
prom = None
stop_agent = None
try:
    with Pool(sys.argv[1]) as p:
        p.tenant("team-a")
        alice = p.user("alice", "team-a")
        address, stop_agent = agent_endpoint("s1", 42)
        doc = node_doc("s1", ngpus=2)
        doc["address"] = address
        p.register(doc)
        b = Beater(p)
        b.nodes.add("s1")
        s, d = submit(alice, "fits", gpus=2)
        check(s == 201, "submit", s, d)
        p.wait_state(alice, "fits", "Running")
        s, d = submit(alice, "waits", gpus=1)
        check(s == 201, "submit", s, d)

        ctl = "127.0.0.1:%d" % p.port
        with open(os.path.join(tmp, "prometheus.yml"), "w") as f:
            f.write(CONFIG % {"ctl": ctl})
        port = free_port()
        base = "http://127.0.0.1:%d" % port
        log = open(os.path.join(tmp, "prometheus.log"), "wb")
        prom = subprocess.Popen([PROMETHEUS, "--config.file", os.path.join(tmp, "prometheus.yml"),
                                 "--storage.tsdb.path", os.path.join(tmp, "data"),
                                 "--web.listen-address", "127.0.0.1:%d" % port],
                                stdout=log, stderr=log)

        def prom_log():
            with open(os.path.join(tmp, "prometheus.log"), "rb") as f:
                return f.read().decode(errors="replace")[-4000:]

        want = {"jobs": False, "target": False, "sample": False}
        seen = {}
        deadline = time.time() + DEADLINE_S
        while not all(want.values()):
            check(prom.poll() is None, "prometheus exited", prom_log())
            if time.time() > deadline:
                check(False, "within %ds: %s" % (DEADLINE_S, [k for k, v in want.items()
                                                              if not v]),
                      json.dumps(seen)[:3000], prom_log())
            r = query(base, 'gpupool_jobs{job="gpupoold",tenant="team-a",queue="default"}')
            if r is not None:
                seen["jobs"] = {",".join("%s=%s" % kv for kv in sorted(k)): v
                                for k, v in r.items()}
                states = {dict(k)["state"]: v for k, v in r.items()}
                want["jobs"] = states == {"Running": 1, "Pending": 1}
            t = api(base, "/api/v1/targets")
            if t is not None:
                agents = [a for a in t.get("activeTargets", [])
                          if a.get("scrapePool") == "gpupool-agent"]
                seen["targets"] = agents
                want["target"] = len(agents) == 1 and agents[0]["health"] == "up" and \
                    agents[0]["labels"].get("Hostname") == "s1" and \
                    agents[0]["labels"].get("instance") == address and \
                    agents[0]["discoveredLabels"].get("__meta_gpupool_node") == "s1" and \
                    agents[0]["discoveredLabels"].get("__meta_gpupool_state") == "Ready" and \
                    agents[0]["discoveredLabels"].get("__meta_gpupool_model") == "A100-80GB"
            r = query(base, 'DCGM_FI_DEV_GPU_UTIL{job="gpupool-agent"}')
            if r is not None:
                seen["sample"] = [dict(k) for k in r]
                want["sample"] = len(r) == 1 and list(r.values())[0] == 42 and \
                    dict(list(r)[0]).get("Hostname") == "s1" and \
                    "exported_Hostname" not in dict(list(r)[0])
            if not all(want.values()):
                time.sleep(0.5)
        up = query(base, 'up{job="gpupoold"}')
        check(up and list(up.values()) == [1], "gpupoold's target is up", up)
        print("prometheus: %s" % json.dumps(seen)[:2000])
        b.stop = True
        b.t.join()
finally:
    if prom and prom.poll() is None:
        prom.terminate()
        try:
            prom.wait(timeout=20)
        except subprocess.TimeoutExpired:
            prom.kill()
            prom.wait()
    if stop_agent:
        stop_agent()
    shutil.rmtree(tmp, ignore_errors=True)
print("ok")
