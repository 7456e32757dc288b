#!/usr/bin/env python3
"""The measurements behind bench/services.sh, on this machine with the production programs
(build/bin): `gpupool up` with one mock-NVML node whose agent runs replicas as host processes
(GPUPOOL_RUNTIME=none), each in a network namespace of its own. The replicas run
bench/http_bench_server.py (keep-alive HTTP/1.1, a 3-byte answer, its answered requests per
second at /metrics). The load is wrk (Debian's wrk 4.1). Raw results go to --results (JSON) for
bench/services_report.py.

1. Proxy overhead. A notebook serving on port 8080; wrk for --duration seconds, --runs times
   each, at 1 connection (one thread) and at 16 connections (two threads):
     direct   wrk inside the replica's network namespace (nsenter --net) to 127.0.0.1:8080;
     proxy    wrk to the controller, /v1/jobs/ID/proxy/ with the tenant user's token
              (Authorization header), through the agent's tunnel into the namespace;
     service  wrk to /v1/services/NAME/ of a service of 2 ready replicas (the controller picks a
              ready replica per request).
   Per run: requests/s and wrk's latency percentiles (50, 90, 99).
2. Autoscaler reaction to a load step. A service of 1 replica, autoscale on the Prometheus
   gauge bench_requests_per_second (target --target per replica, min 1, max 4, scale-up window
   0 s, scale-down window --down-window s), readiness probe HTTP GET / every 1 s. At t0 wrk
   starts 8 connections through /v1/services/NAME/ for --load seconds; then the load stops
   (t1). From the service's events (their time_ms) and its document polled every 100 ms:
     decided     the first ScaledUp event after t0;
     ready       the first poll that shows as many ready endpoints as that decision asked for;
     scaled_in   the first ScaledDown event after t1 (the window holds it back on purpose);
   --steps load steps, each from 1 replica.

Usage: services.py --bin DIR --results FILE [--runs N] [--duration S] [--steps N]
                   [--target RPS] [--load S] [--down-window S]
"""
import argparse
import glob
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integ", "ctl"))
import benchinfo  # noqa: E402
from pool import Client, free_ports, pool_down  # noqa: E402

SERVER = os.path.join(HERE, "http_bench_server.py")
PORT = 8080


def fail(msg, *details):
    print("services: " + msg, file=sys.stderr)
    for d in details:
        print("   " + (d if isinstance(d, str) else json.dumps(d))[:3000], file=sys.stderr)
    sys.exit(1)


def wait(what, cond, timeout=60, step=0.1):
    deadline = time.time() + timeout
    while time.time() < deadline:
        v = cond()
        if v:
            return v
        time.sleep(step)
    fail("timed out waiting for " + what)


UNITS = {"us": 1e-3, "ms": 1.0, "s": 1e3}


def parse_wrk(text):
    """requests/s and the latency percentiles (ms) wrk --latency printed; errors it counted."""
    r = {"rps": None, "p50_ms": None, "p90_ms": None, "p99_ms": None, "errors": 0}
    m = re.search(r"Requests/sec:\s+([\d.]+)", text)
    if m:
        r["rps"] = float(m.group(1))
    for pct in ("50", "90", "99"):
        m = re.search(r"^\s+%s%%\s+([\d.]+)(us|ms|s)\b" % pct, text, re.M)
        if m:
            r["p%s_ms" % pct] = float(m.group(1)) * UNITS[m.group(2)]
    for m in re.finditer(r"(?:Non-2xx or 3xx responses|Socket errors:.*?timeout)\s*:?\s*(\d+)",
                         text):
        r["errors"] += int(m.group(1))
    m = re.search(r"(\d+) requests in", text)
    r["requests"] = int(m.group(1)) if m else 0
    return r


def wrk(url, conns, duration, token=None, netns_pid=None):
    argv = ["wrk", "-t%d" % min(2, conns), "-c%d" % conns, "-d%ds" % duration, "--latency",
            "--timeout", "10s"]
    if token:
        argv += ["-H", "Authorization: Bearer " + token]
    argv.append(url)
    if netns_pid:
        argv = ["nsenter", "--net=/proc/%d/ns/net" % netns_pid] + argv
    out = subprocess.run(argv, capture_output=True, text=True, timeout=duration + 60)
    if out.returncode != 0:
        fail("wrk failed", " ".join(argv), out.stdout, out.stderr)
    r = parse_wrk(out.stdout)
    if r["rps"] is None:
        fail("wrk printed no rate", out.stdout)
    return r


class Bench:
    def __init__(self, args):
        self.args = args
        self.tmp = tempfile.mkdtemp(prefix="services-bench.", dir=args.work)
        os.chmod(self.tmp, 0o755)
        self.pool = os.path.join(self.tmp, "pool")
        self.port = free_ports(2)
        self.gpupool = os.path.join(args.bin, "gpupool")

    def up(self):
        env = dict(os.environ, GPUPOOL_RUNTIME="none")
        up = subprocess.run([self.gpupool, "up", "--data-dir", self.pool, "--port",
                             str(self.port), "--nodes", "pcie-t4:1"], capture_output=True,
                            text=True, timeout=120, env=env)
        if up.returncode != 0:
            fail("gpupool up", up.stdout, up.stderr)
        admin = Client("http://127.0.0.1:%d" % self.port,
                       open(os.path.join(self.pool, "admin.token")).read().strip())
        s, d = admin.post("/v1/tenants", {"name": "bench"})
        if s != 201:
            fail("tenant", s, d)
        s, d = admin.post("/v1/tokens", {"name": "bench", "role": "user", "tenant": "bench"})
        if s != 201:
            fail("token", s, d)
        self.token = d["token"]
        self.user = Client(admin.base, self.token)

    def down(self):
        pool_down(self.gpupool, self.pool, self.tmp, SERVER)

    def submit(self, doc):
        s, d = self.user.post("/v1/jobs", doc)
        if s != 201:
            fail("submit %s" % doc["name"], s, d)
        return d

    def replica_pid(self, job_id):
        """The leader process of the job's replica 0 (its network namespace is the replica's)."""
        for path in glob.glob(os.path.join(self.pool, "agents", "*", "replicas",
                                           "%d-0-*" % job_id, "child.pid")):
            with open(path) as f:
                return int(f.read().split()[0])
        return None


def overhead(b, out):
    a = b.args
    nb = b.submit({"name": "echo", "kind": "notebook", "port": PORT,
                   "command": ["python3", SERVER, str(PORT)]})
    base = "http://127.0.0.1:%d" % b.port
    proxy = "%s/v1/jobs/%d/proxy/" % (base, nb["id"])
    wait("the notebook through the proxy", lambda: b.user.get("/v1/jobs/%d/proxy/" % nb["id"])[0]
         == 200, 60)
    pid = wait("the notebook's process", lambda: b.replica_pid(nb["id"]), 30)
    svc = b.submit({"name": "echo-svc", "kind": "service", "port": PORT, "replicas": 2,
                    "command": ["python3", SERVER, str(PORT)],
                    "readiness_probe": {"http_get": {"path": "/"}, "period": "1s"}})

    def ready_endpoints():
        s, d = b.user.get("/v1/services/echo-svc")
        return s == 200 and len(d.get("endpoints") or []) == 2
    wait("2 ready replicas of echo-svc", ready_endpoints, 120)
    targets = [("direct", "http://127.0.0.1:%d/" % PORT, None, pid),
               ("proxy", proxy, b.token, None),
               ("service", "%s/v1/services/echo-svc/" % base, b.token, None)]
    out["overhead"] = []
    for conns in (1, 16):
        for run in range(a.runs):
            for name, url, token, netns in targets:  # interleaved: load changes touch all alike
                r = wrk(url, conns, a.duration, token, netns)
                r.update(target=name, conns=conns, run=run)
                out["overhead"].append(r)
                print("services: %-7s c=%-2d run %d: %8.0f req/s p50 %.2f ms p99 %.2f ms" %
                      (name, conns, run, r["rps"], r["p50_ms"], r["p99_ms"]), file=sys.stderr)
    b.user.post("/v1/jobs/%d/cancel" % nb["id"])
    b.user.post("/v1/jobs/%d/cancel" % svc["id"])


def events_after(b, job_id, kind, t_ms):
    s, d = b.user.get("/v1/jobs/%d/events" % job_id)
    return [e for e in (d.get("items") or []) if e.get("type") == kind and e["time_ms"] >= t_ms]


def one_step(b, svc_id, name, step):
    a = b.args
    base = "http://127.0.0.1:%d" % b.port

    def ready_count():
        s, d = b.user.get("/v1/services/%s" % name)
        return len(d.get("endpoints") or []) if s == 200 else 0
    wait("%s back to 1 ready replica" % name, lambda: ready_count() == 1, 300, 0.5)
    t0 = time.time()
    load = subprocess.Popen(["wrk", "-t2", "-c8", "-d%ds" % a.load, "--timeout", "10s", "-H",
                             "Authorization: Bearer " + b.token,
                             "%s/v1/services/%s/" % (base, name)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    r = {"step": step, "decided_s": None, "ready_s": None, "asked": None, "scaled_in_s": None}
    while time.time() - t0 < a.load:
        if r["decided_s"] is None:
            ev = events_after(b, svc_id, "ScaledUp", int(t0 * 1000))
            if ev:
                r["decided_s"] = ev[0]["time_ms"] / 1000.0 - t0
                m = re.search(r"-> (\d+) replicas", ev[0]["message"])
                r["asked"] = int(m.group(1)) if m else None
                r["message"] = ev[0]["message"]
        if r["asked"] and r["ready_s"] is None and ready_count() >= r["asked"]:
            r["ready_s"] = time.time() - t0
        if r["ready_s"] is not None:
            break
        time.sleep(0.1)
    load.send_signal(signal.SIGINT)  # wrk prints its summary on SIGINT
    stdout, _ = load.communicate(timeout=30)
    t1 = time.time()
    r["load"] = parse_wrk(stdout)
    while time.time() - t1 < a.down_window + 60:
        ev = events_after(b, svc_id, "ScaledDown", int(t1 * 1000))
        if ev:
            r["scaled_in_s"] = ev[0]["time_ms"] / 1000.0 - t1
            r["scaled_in_message"] = ev[0]["message"]
            break
        time.sleep(0.2)
    print("services: step %d: decided %s s, %s ready %s s, scaled in %s s after the load" %
          (step, r["decided_s"], r["asked"], r["ready_s"], r["scaled_in_s"]), file=sys.stderr)
    return r


def autoscale(b, out):
    a = b.args
    name = "scale"
    svc = b.submit({"name": name, "kind": "service", "port": PORT, "replicas": 1,
                    "command": ["python3", SERVER, str(PORT)],
                    "readiness_probe": {"http_get": {"path": "/"}, "period": "1s"},
                    "autoscale": {"min_replicas": 1, "max_replicas": 4, "metric": "prometheus",
                                  "target": a.target,
                                  "prometheus": {"name": "bench_requests_per_second"},
                                  "scale_up_window": "0s",
                                  "scale_down_window": "%ds" % a.down_window}})
    out["autoscale"] = {"target": a.target, "down_window_s": a.down_window, "load_s": a.load,
                        "steps": [one_step(b, svc["id"], name, i) for i in range(a.steps)]}
    b.user.post("/v1/jobs/%d/cancel" % svc["id"])


def machine():
    return benchinfo.machine(wrk=["wrk", "--version"], python=["python3", "--version"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--results", required=True)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--duration", type=int, default=5)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--target", type=float, default=200.0)
    ap.add_argument("--load", type=int, default=60)
    ap.add_argument("--down-window", type=int, default=15)
    args = ap.parse_args()
    args.bin = os.path.abspath(args.bin)
    os.makedirs(os.path.dirname(os.path.abspath(args.results)), exist_ok=True)
    args.work = os.path.dirname(os.path.abspath(args.results))
    out = {"machine": machine(), "args": {k: getattr(args, k) for k in
                                          ("runs", "duration", "steps", "target", "load",
                                           "down_window")}}
    t0 = time.monotonic()
    b = Bench(args)
    try:
        b.up()
        overhead(b, out)
        autoscale(b, out)
    finally:
        b.down()
    out["machine"]["load_end"] = os.getloadavg()
    out["seconds"] = time.monotonic() - t0
    with open(args.results, "w") as f:
        json.dump(out, f, indent=1)
    print("services: %d s; results in %s" % (out["seconds"], args.results), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
