#!/usr/bin/env python3
"""Time of GET /v1/jobs?limit=N over a controller holding many jobs.

Usage: jobs_list.py GPUPOOLD [JOBS] [ROUNDS]

Starts a real gpupoold (tests/integ/ctl/pool.py: 127.0.0.1, a free port, a temporary data
directory), submits JOBS jobs (default 20000; allowed to wait: no node is registered) with a
spec that has env, volumes and durations, then pages through every job with limit=1000 ROUNDS
times (default 5) and asks for the first page with limit=1000 and limit=100 ROUNDS x 20 times.
Prints one JSON line: the median seconds of each. Run it against two builds to compare.
"""
import json
import os
import statistics
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "integ", "ctl"))
from pool import Pool, check  # noqa: E402


def spec(i):
    return {"name": "job-%d" % i, "tenant": "bench", "replicas": 1,
            "resources": {"gpus": 1, "cpu_milli": 4000, "memory_mib": 16384},
            "command": ["python", "train.py"], "args": ["--epochs", "3", "--seed", str(i)],
            "env": {"HF_HOME": "/data/hf", "SEED": str(i), "WANDB_MODE": "offline"},
            "working_dir": "/workspace", "max_runtime": 7200, "hang_timeout": "30m",
            "restart_policy": "on-failure", "allow_unschedulable": True}


def submit_all(p, n, threads=8):
    def worker(k):
        c = p.client(p.admin_token)
        for i in range(k, n, threads):
            s, d = c.post("/v1/jobs", spec(i))
            check(s == 201, "submit", s, d)
    ts = [threading.Thread(target=worker, args=(k,)) for k in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


def timed(f, rounds):
    out = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        f()
        out.append(time.perf_counter() - t0)
    return statistics.median(out)


def main():
    binary = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    with Pool(binary) as p:
        p.tenant("bench")
        t0 = time.perf_counter()
        submit_all(p, n)
        submit_s = time.perf_counter() - t0
        admin = p.admin

        def page_all():
            after, seen = None, 0
            while True:
                q = "/v1/jobs?limit=1000" + ("&after=%s" % after if after else "")
                s, d = admin.get(q, timeout=120)
                check(s == 200, "list", s, d)
                seen += len(d["items"])
                if not d.get("next"):
                    break
                after = d["next"]
            check(seen == n, "every job listed", seen)

        def first(limit):
            return lambda: check(admin.get("/v1/jobs?limit=%d" % limit)[0] == 200, "list")

        print(json.dumps({"jobs": n, "submit_s": round(submit_s, 2),
                          "page_all_limit1000_s": round(timed(page_all, rounds), 4),
                          "first_page_limit1000_s": round(timed(first(1000), rounds * 20), 5),
                          "first_page_limit100_s": round(timed(first(100), rounds * 20), 5)}))


if __name__ == "__main__":
    main()
