#!/usr/bin/env python3
"""The autoscaler's reaction to a load step, through the production programs.

Usage: autoscale.py GPUPOOLD GPUPOOL_AGENT NVML_MOCK INVENTORIES [STEPS] > out.json

A real gpupoold and one real gpupool-agent (--runtime none, the mock NVML, heartbeats every
200 ms) on 127.0.0.1; a service of one replica, a small python3 HTTP server exposing the gauge
`inflight` (its value read from a file the bench writes), autoscaled on it with target 5,
min_replicas 1, max_replicas 3, scale_up_window 0s and scale_down_window 2s (each replica in its
own network namespace, where the agent scrapes it). STEPS times (default 5): the load goes from 1 to 15 (the decision:
ceil(1 x 15 / 5) = 3 replicas), then back to 1. Measured from the moment the file changes:

  decide_up_s    until the ScaledUp event (the agent's scrape every 5 s, a heartbeat, the
                 controller's decision once a second);
  running_up_s   until the new replica jobs are Running (placed, started by the agent);
  ready_up_s     until the service has 3 ready endpoints (their readiness probes passed);
  decide_down_s  until the ScaledDown event (the same path, plus the 2 s scale-down window);
  gone_down_s    until only one replica job is left.

Prints one JSON document: the settings and each step's figures. bench/autoscale_report.py writes
docs/results/autoscale.md from it.
"""
import json
import os
import shutil
import signal
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "integ", "ctl"))
from mockagent import MockAgent  # noqa: E402
from pool import Pool, check, free_port, kill_replica_leftovers, wait  # noqa: E402

SERVER = r"""
import http.server, os, sys
load = os.environ["LOAD_FILE"]
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b""
        if self.path == "/metrics":
            body = ("inflight %s\n" % open(load).read().strip()).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
class S(http.server.HTTPServer):
    allow_reuse_port = True
    allow_reuse_address = True
with open(os.environ["LOAD_FILE"] + ".pid-" + os.environ["GPUPOOL_JOB_ID"], "w") as f:
    f.write(str(os.getpid()))
S(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
"""


def event_time(client, ref, kind, after_ms):
    s, d = client.get("/v1/jobs/%s/events" % ref)
    check(s == 200, "events", s, d)
    times = [e["time_ms"] for e in d["items"] if e["type"] == kind and e["time_ms"] >= after_ms]
    return min(times) if times else None


def replica_jobs(client):
    s, d = client.get("/v1/services/svc")
    check(s == 200, "service", s, d)
    return d["replica_jobs"]


def ready(client):
    s, d = client.get("/v1/services/svc")
    return len(d["endpoints"]) if s == 200 else 0


def set_load(path, v):
    with open(path + ".tmp", "w") as f:
        f.write("%s\n" % v)
    os.replace(path + ".tmp", path)
    return time.time()


def step(client, load_file):
    t0 = set_load(load_file, 15)
    t0_ms = int(t0 * 1000)
    r = {}
    up = wait("ScaledUp", lambda: event_time(client, "svc", "ScaledUp", t0_ms), 120)
    r["decide_up_s"] = up / 1000 - t0
    wait("3 Running", lambda: len([x for x in replica_jobs(client) if x["state"] == "Running"])
         == 3, 120)
    r["running_up_s"] = time.time() - t0
    wait("3 ready", lambda: ready(client) == 3, 120)
    r["ready_up_s"] = time.time() - t0
    t1 = set_load(load_file, 1)
    down = wait("ScaledDown", lambda: event_time(client, "svc", "ScaledDown", int(t1 * 1000)),
                120)
    r["decide_down_s"] = down / 1000 - t1
    wait("one replica job", lambda: len(replica_jobs(client)) == 1, 120)
    r["gone_down_s"] = time.time() - t1
    wait("1 ready", lambda: ready(client) == 1, 120)
    return r


def main():
    gpupoold, agent_bin, mock, inventories = sys.argv[1:5]
    steps = int(sys.argv[5]) if len(sys.argv) > 5 else 5
    tmp = tempfile.mkdtemp(prefix="gpupool-autoscale.")
    load_file = os.path.join(tmp, "load")
    set_load(load_file, 1)
    port = free_port()
    agent = None
    out = {"target": 5, "min_replicas": 1, "max_replicas": 3, "scale_up_window_s": 0,
           "scale_down_window_s": 2, "scrape_period_s": 5, "heartbeat_ms": 200,
           "scheduler_interval_ms": 100, "steps": []}
    try:
        with Pool(gpupoold) as p:
            p.tenant("bench")
            c = p.user("bench", "bench")
            token_file = os.path.join(tmp, "join.token")
            with open(token_file, "w") as f:
                f.write(p.join_token + "\n")
            agent = MockAgent(agent_bin, mock, tmp, "t4",
                              os.path.join(inventories, "pcie-t4.yaml"), p.base, token_file,
                              "--runtime", "none")
            wait("the node", lambda: p.admin.get("/v1/nodes/t4")[0] == 200)
            spec = {"name": "svc", "kind": "service", "port": port, "replicas": 1,
                    "command": ["python3", "-c", SERVER, str(port)],
                    "env": {"LOAD_FILE": load_file}, "resources": {"gpus": 1},
                    "readiness_probe": {"http_get": {"path": "/metrics"}, "period": "1s",
                                        "failure_threshold": 1},
                    "autoscale": {"min_replicas": 1, "max_replicas": 3, "metric": "prometheus",
                                  "target": 5, "prometheus": {"name": "inflight"},
                                  "scale_up_window": "0s", "scale_down_window": "2s"}}
            s, d = c.post("/v1/jobs", spec)
            check(s == 201, "the service", s, d)
            wait("1 ready", lambda: ready(c) == 1, 120)
            for i in range(steps):
                r = step(c, load_file)
                out["steps"].append(r)
                print("step %d: %s" % (i + 1, json.dumps(r)), file=sys.stderr)
            c.post("/v1/jobs/svc/cancel")
            agent.stop()
    finally:
        if agent and agent.proc.poll() is None:
            agent.stop()
        kill_replica_leftovers(tmp)
        for f in os.listdir(tmp):
            if ".pid-" in f:
                try:
                    os.kill(int(open(os.path.join(tmp, f)).read()), signal.SIGKILL)
                except (ValueError, OSError):
                    pass
        shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
