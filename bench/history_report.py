#!/usr/bin/env python3
"""Writes docs/results/history.md from the output of bench/history_bench.py (every number from
it). Usage: history_report.py RAW OUT.md"""
import os
import platform
import re
import statistics
import sys


def main():
    raw, out = sys.argv[1:3]
    rows = []
    with open(raw) as f:
        for line in f:
            if line.startswith("history_heartbeat "):
                rows.append(dict(re.findall(r"(\w+)=(\S+)", line)))
    if not rows:
        sys.exit("history_report: no history_heartbeat lines in " + raw)
    med = {}
    for on in ("off", "on"):
        sel = [r for r in rows if r["history"] == on]
        med[on] = {k: statistics.median(float(r[k]) for r in sel)
                   for k in ("server_mean_us", "client_mean_us")}
        med[on]["runs"] = ", ".join("%.1f" % float(r["server_mean_us"]) for r in sel)
    r0 = rows[0]
    lines = [
        "# The per-job history's cost on the heartbeat",
        "",
        "Written by `bench/history.sh` (bench/history_bench.py, bench/history_report.py); do not "
        "edit.",
        "",
        "A real gpupoold on loopback (SQLite), %s nodes of 8 GPUs with one single-GPU job on each "
        "GPU; every heartbeat carries the node's %s running replicas with `util` and "
        "`gpu_mem_mib`, sent one after another, %s heartbeats per run; the history on "
        "(`history.max_jobs` 500) and off (0), alternating. Server: the heartbeat route's mean "
        "duration as gpupoold measures it (`gpupool_http_request_duration_seconds`); client: "
        "the round trip. Medians of the runs. Machine: %s, %d CPUs, shared with other work while "
        "measured (expect noise of tens of µs)." % (
            r0["nodes"], r0["reports"], r0["beats"], platform.machine(), os.cpu_count()),
        "",
        "| History | Server mean (µs) | Runs (µs) | Client round trip (µs) |",
        "|---|---|---|---|",
    ]
    for on in ("off", "on"):
        lines.append("| %s | %.1f | %s | %.1f |" % (on, med[on]["server_mean_us"], med[on]["runs"],
                                                    med[on]["client_mean_us"]))
    diff = med["on"]["server_mean_us"] - med["off"]["server_mean_us"]
    lines += ["", "Difference of the medians (server): %+.1f µs per heartbeat of %s reports "
              "(%+.1f%%)." % (diff, r0["reports"], 100 * diff / med["off"]["server_mean_us"]), ""]
    with open(out, "w") as f:
        f.write("\n".join(lines))


if __name__ == "__main__":
    main()
