#!/usr/bin/env python3
"""What the per-job history costs the heartbeat: a real gpupoold on loopback, NODES nodes of 8
GPUs with one single-GPU job on each GPU, then BEATS heartbeats per node as their agents send
them (every replica Running with `util` and `gpu_mem_mib`), one after another. The same with
the history on (history.max_jobs 500, the default) and off (0), alternating, RUNS times each.

Prints one line per run:
  history_heartbeat history=on|off nodes=N reports=8 beats=B server_mean_us=X client_mean_us=Y
server_mean_us: the mean duration of the heartbeat route as gpupoold measures it (its
gpupool_http_request_duration_seconds histogram: decode, the committer's transaction, the
answer); client_mean_us: the round trip as this client sees it.
Usage: history_bench.py GPUPOOLD [--nodes 8] [--beats 500] [--runs 3]
"""
import argparse
import os
import random
import re
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "integ", "ctl"))
from pool import Pool, check, node_doc, wait  # noqa: E402

ROUTE = 'route="/v1/nodes/{node}/heartbeat",method="POST",code="200"'


def server_stats(p):
    s, text = p.admin.get("/metrics")
    check(s == 200 and isinstance(text, str), "GET /metrics", s)
    total = count = 0.0
    for line in text.splitlines():
        if ROUTE in line:
            m = re.match(r"gpupool_http_request_duration_seconds_(sum|count)\{.*\} (\S+)", line)
            if m and m.group(1) == "sum":
                total = float(m.group(2))
            elif m:
                count = float(m.group(2))
    return total, count


def one_run(gpupoold, on, nodes, beats, rng):
    with Pool(gpupoold, ["--history-max-jobs", "500" if on else "0"]) as p:
        p.tenant("bench")
        names = ["n%d" % i for i in range(nodes)]
        for n in names:
            p.register(node_doc(n, ngpus=8))
        for i in range(nodes * 8):
            s, d = p.admin.post("/v1/jobs", {"name": "j%d" % i, "tenant": "bench",
                                             "command": ["sleep", "1000"],
                                             "resources": {"gpus": 1}})
            check(s == 201, "submit", s, d)

        def desired(n):
            s, d = p.admin.get("/v1/nodes/%s/desired" % n)
            check(s == 200, "desired", s, d)
            return d["desired"]

        placed = {}
        wait("every job placed", lambda: all(len(desired(n)) == 8 for n in names), 60)
        for n in names:
            placed[n] = [{"job": r["job"], "replica": r["replica"], "epoch": r["epoch"],
                          "state": "Running"} for r in desired(n)]

        def beat(n):
            for r in placed[n]:
                r["util"] = rng.randrange(101)
                r["gpu_mem_mib"] = rng.randrange(81920)
            t0 = time.perf_counter()
            s, d = p.admin.post("/v1/nodes/%s/heartbeat" % n, {"replicas": placed[n]})
            check(s == 200, "heartbeat", s, d)
            return time.perf_counter() - t0

        for n in names:  # every job Running before the measure
            beat(n)
        sum0, count0 = server_stats(p)
        client = 0.0
        for _ in range(beats):
            for n in names:
                client += beat(n)
        sum1, count1 = server_stats(p)
        n = count1 - count0
        print("history_heartbeat history=%s nodes=%d reports=8 beats=%d server_mean_us=%.1f "
              "client_mean_us=%.1f" % ("on" if on else "off", nodes, int(n),
                                       (sum1 - sum0) / n * 1e6, client / (beats * nodes) * 1e6),
              flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gpupoold")
    ap.add_argument("--nodes", type=int, default=8)
    ap.add_argument("--beats", type=int, default=500)
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    rng = random.Random(1)
    for _ in range(a.runs):
        for on in (False, True):
            one_run(a.gpupoold, on, a.nodes, a.beats, rng)


if __name__ == "__main__":
    main()
