#!/usr/bin/env python3
"""Writes docs/results/autoscale.md from bench/autoscale.py's JSON.

Usage: autoscale_report.py RESULTS.json [OUT.md]
"""
import json
import statistics
import sys

KEYS = [("decide_up_s", "load up -> ScaledUp event"),
        ("running_up_s", "load up -> new replica jobs Running"),
        ("ready_up_s", "load up -> all replicas ready"),
        ("decide_down_s", "load down -> ScaledDown event"),
        ("gone_down_s", "load down -> back to one replica job")]


def main():
    r = json.load(open(sys.argv[1]))
    out = sys.argv[2] if len(sys.argv) > 2 else "docs/results/autoscale.md"
    steps = r["steps"]
    lines = [
        "# Autoscaler: reaction to a load step",
        "",
        "Written by `bench/autoscale_report.py` from `bench/autoscale.py` (do not edit by hand).",
        "",
        "A real gpupoold and gpupool-agent (`--runtime none`, mock NVML, heartbeats every %d ms,"
        " scheduler interval %d ms) on one machine; a service autoscaled on a Prometheus gauge"
        " its replicas expose (target %g, %d..%d replicas, scale-up window %d s, scale-down"
        " window %d s); the agent scrapes every %d s. The gauge steps from 1 to 15 (3 replicas"
        " wanted) and back, %d times." % (
            r["heartbeat_ms"], r["scheduler_interval_ms"], r["target"], r["min_replicas"],
            r["max_replicas"], r["scale_up_window_s"], r["scale_down_window_s"],
            r["scrape_period_s"], len(steps)),
        "",
        "| From the step to | median s | min s | max s |",
        "|---|---|---|---|",
    ]
    for k, what in KEYS:
        v = [s[k] for s in steps]
        lines.append("| %s | %.2f | %.2f | %.2f |" % (what, statistics.median(v), min(v), max(v)))
    lines += [
        "",
        "The decision waits for the agent's next scrape (every %d s: up to that long after the"
        " step), then a heartbeat and the controller's once-a-second decision; scaling in adds"
        " the scale-down window. Starting replicas is the batch path (placement, the agent's"
        " long-poll, gpupool-run), and ready means a readiness probe passed (period 1 s)." % (
            r["scrape_period_s"]),
        "",
    ]
    with open(out, "w") as f:
        f.write("\n".join(lines))


if __name__ == "__main__":
    main()
