#!/usr/bin/env bash
# Placement speed of libgpcore alone; writes docs/results/placement.md from what the benchmarks
# print (bench/placement_report.py):
#   1. placement_bench --shapes 1000: 10,000 nodes x 8 GPUs about 91% allocated (fgd), 5,000
#      steady rounds each drawing its request from 1,000 distinct shapes (RUNS runs), and in the
#      first run 20,000 rounds (the classes and the score cache of a long-running controller);
#   2. placement_bench with its defaults (one mix of 10 shapes: fill and steady placements/s);
#   3. sched_bench: one scheduling cycle, 100,000 pending jobs on 10,000 nodes.
# With BASE=<git ref> the same benchmarks of that commit run interleaved with these (built in
# OUT/placement-base, a detached worktree, with this placement_bench.c built -DGP_BENCH_BASELINE),
# for a before/after on one machine under one load; the worktree is removed at the end.
# Each placement_bench run prints a digest of its decisions: equal digests, equal decisions.
# Environment: RUNS (3), BASE (none), OUT (out/bench), BIN (build/bin).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-build/bin} OUT=${OUT:-out/bench} RUNS=${RUNS:-3} BASE=${BASE:-}
mkdir -p "$OUT" docs/results
raw="$OUT/placement.txt"
: >"$raw"

builds=("after:$BIN")
if [ -n "$BASE" ]; then
    wt="$OUT/placement-base"
    git worktree remove --force "$wt" 2>/dev/null || rm -rf "$wt"
    git worktree add --detach "$wt" "$BASE" >&2
    # This placement_bench against that libgpcore, so both print the digest of their decisions.
    cp bench/placement_bench.c "$wt/bench/placement_bench.c"
    cmake -S "$wt" -B "$wt/build" -DGP_UI=OFF -DCMAKE_C_FLAGS=-DGP_BENCH_BASELINE >/dev/null
    cmake --build "$wt/build" -j2 --target placement_bench sched_bench >&2
    builds=("before:$wt/build/bin" "${builds[@]}")
    echo "base ref=$BASE commit=$(git -C "$wt" rev-parse --short HEAD)" >>"$raw"
fi
echo "head commit=$(git rev-parse --short HEAD)" >>"$raw"
echo "load at=start avg1=$(cut -d' ' -f1 /proc/loadavg)" >>"$raw"
for run in $(seq 1 "$RUNS"); do
    for b in "${builds[@]}"; do
        name=${b%%:*} bin=${b#*:}
        echo "bench: run $run, $name: 1,000 shapes, then one shape mix, then a cycle" >&2
        tag="build=$name run=$run"
        "$bin/placement_bench" --nodes 10000 --steady 5000 --shapes 1000 |
            sed "s/^/$tag rounds=5000 /" >>"$raw"
        if [ "$run" = 1 ]; then # long: once
            "$bin/placement_bench" --nodes 10000 --steady 20000 --shapes 1000 |
                grep -E 'phase=(shapes|end)' | sed "s/^/$tag rounds=20000 /" >>"$raw"
        fi
        "$bin/placement_bench" | sed "s/^/$tag mix=default /" >>"$raw"
        "$bin/sched_bench" --nodes 10000 --pending 100000 | sed "s/^/$tag /" >>"$raw"
    done
done
echo "load at=end avg1=$(cut -d' ' -f1 /proc/loadavg)" >>"$raw"
[ -n "$BASE" ] && git worktree remove --force "$OUT/placement-base"
python3 bench/placement_report.py --raw "$raw" --out docs/results/placement.md
echo "bench: wrote docs/results/placement.md" >&2
