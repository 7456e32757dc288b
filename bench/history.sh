#!/usr/bin/env bash
# The per-job history's cost on the heartbeat (bench/history_bench.py: a real gpupoold, heartbeats
# of 8 running replicas each, the history on and off, alternating); writes
# docs/results/history.md from what it prints (bench/history_report.py). Raw output:
# out/bench/history.txt. Environment: NODES (8), BEATS (500), RUNS (3).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=out/bench
mkdir -p "$OUT" docs/results
python3 bench/history_bench.py build/bin/gpupoold --nodes "${NODES:-8}" --beats "${BEATS:-500}" \
    --runs "${RUNS:-3}" | tee "$OUT/history.txt"
python3 bench/history_report.py "$OUT/history.txt" docs/results/history.md
echo "history: wrote docs/results/history.md" >&2
