#!/usr/bin/env bash
# Controller benchmarks; writes docs/results/controller.md from what they print:
#   1. ctl_bench: a real gpupoold on loopback (SQLite, synchronous=FULL); 1,000 nodes x 8 GPUs
#      registered through the API; 20,000 jobs submitted over HTTP by 8 concurrent clients;
#      accepted jobs/s and the time until every job is scheduled. Three runs.
#   2. sched_bench: one scheduling cycle of libgpcore with 100,000 pending jobs on 10,000 nodes.
# Raw outputs go to out/bench/.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=build/bin
OUT=out/bench
mkdir -p "$OUT" docs/results
echo "bench: controller end to end (3 runs)" >&2
: > "$OUT/ctl.txt"
for run in 1 2 3; do
    "$BIN/ctl_bench" --gpupoold "$BIN/gpupoold" --nodes 1000 --jobs 20000 --clients 8 \
        | sed "s/^/run=$run /" >> "$OUT/ctl.txt"
done
echo "bench: one scheduling cycle, 100,000 pending on 10,000 nodes (3 runs)" >&2
: > "$OUT/sched.txt"
for run in 1 2 3; do
    "$BIN/sched_bench" --nodes 10000 --pending 100000 | sed "s/^/run=$run /" >> "$OUT/sched.txt"
done
python3 bench/ctl_report.py --out-dir "$OUT" --results docs/results
echo "bench: wrote docs/results/controller.md" >&2
