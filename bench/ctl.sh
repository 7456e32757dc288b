#!/usr/bin/env bash
# Controller benchmarks on both stores; writes docs/results/controller.md from what they print:
#   1. ctl_bench: a real gpupoold on loopback with its default heartbeat and lost timeouts;
#      NODES nodes x 8 GPUs registered through the API and kept alive by heartbeats at the
#      agent's interval; JOBS jobs submitted over HTTP by 8 concurrent clients (accepted jobs/s),
#      held back by the tenant's one-GPU quota; then the quota is lifted and the scheduler places
#      the backlog; then LOSE nodes stop their heartbeats until their jobs are placed elsewhere.
#      Reads, submits and heartbeats are timed throughout (p50/p99/max) and gpupoold's memory
#      read. A second run with 1,000 nodes submits the same jobs (the submit rate's reference);
#      a third registers NODES nodes again with heartbeats every 30 s (registration alone).
#      Once on SQLite (synchronous=FULL) and once on PostgreSQL 15 (STORES=sqlite: SQLite only).
#   2. store_bench: the store alone on each backend (submit transactions, one cycle's
#      transaction, a walk over every job).
#   3. sched_bench: libgpcore's cycle alone, 100,000 pending jobs on 10,000 nodes (3 runs).
#   4. placement_bench --shapes: placement decisions among 1,000 distinct request shapes on
#      10,000 nodes 90% allocated (3 runs).
# PostgreSQL: a throwaway server this script starts (tests/pg/pg_fixture.sh: initdb and pg_ctl
# in a temp dir, on a free port); when it cannot, it says so and measures SQLite only.
# Environment: NODES (10000), JOBS (100000), LOSE (NODES/10), RUNS (1), STORES (both: "sqlite
# postgresql"), OUT (out/bench: the raw outputs; docs/results/controller.md is written from them).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=build/bin
OUT=${OUT:-out/bench}
NODES=${NODES:-10000} JOBS=${JOBS:-100000} RUNS=${RUNS:-1} STORES=${STORES:-sqlite postgresql}
LOSE=${LOSE:-$((NODES / 10))}
mkdir -p "$OUT" docs/results
: >"$OUT/ctl.txt"
: >"$OUT/store.txt"

pgurl=
if [[ " $STORES " != *" postgresql "* ]]; then
    echo "skipped store=postgresql" >>"$OUT/ctl.txt"
elif tests/pg/pg_fixture.sh start "$OUT/pg.url" >"$OUT/pg-start.log" 2>&1; then
    pgurl=$(cat "$OUT/pg.url")
    trap 'tests/pg/pg_fixture.sh stop "$OUT/pg.url"' EXIT
    echo "bench: PostgreSQL 15 started at $pgurl" >&2
else
    why=$(tr '\n' ' ' <"$OUT/pg-start.log" | cut -c1-200)
    echo "bench: PostgreSQL: cannot start a server ($why); measuring SQLite only" >&2
    echo "skipped store=postgresql" >>"$OUT/ctl.txt"
fi

# An empty database on the server, its URL on stdout.
newdb() {
    local db="gp_bench_$1_$$"
    PGOPTIONS="-c client_min_messages=warning" psql -q "$pgurl/postgres" -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" >&2
    echo "$pgurl/$db"
}

echo "load at=start avg1=$(cut -d' ' -f1 /proc/loadavg)" >>"$OUT/ctl.txt"
stores=()
[[ " $STORES " == *" sqlite "* ]] && stores+=(sqlite)
[ -n "$pgurl" ] && stores+=(postgresql)
for store in "${stores[@]}"; do
    for run in $(seq 1 "$RUNS"); do
        echo "bench: controller on $store, $NODES nodes, $JOBS jobs (run $run)" >&2
        url=()
        [ "$store" = postgresql ] && url=(--store-url "$(newdb "ctl$run")")
        start=$(date +%s)
        "$BIN/ctl_bench" --gpupoold "$BIN/gpupoold" --nodes "$NODES" --jobs "$JOBS" --clients 8 \
            --cycle --lose "$LOSE" "${url[@]}" | sed "s/^/run=$run /" >>"$OUT/ctl.txt"
        echo "run=$run ctl_wall store=$store seconds=$(($(date +%s) - start))" >>"$OUT/ctl.txt"
        echo "bench: the same submits on 1,000 nodes (run $run)" >&2
        [ "$store" = postgresql ] && url=(--store-url "$(newdb "ref$run")")
        "$BIN/ctl_bench" --gpupoold "$BIN/gpupoold" --nodes 1000 --jobs "$JOBS" --clients 8 \
            --cycle --submit-only "${url[@]}" | grep '^ctl_submit' | sed "s/^/run=$run ref=1 /" \
            >>"$OUT/ctl.txt"
        echo "bench: registration of $NODES nodes with heartbeats every 30 s (run $run)" >&2
        [ "$store" = postgresql ] && url=(--store-url "$(newdb "quiet$run")")
        "$BIN/ctl_bench" --gpupoold "$BIN/gpupoold" --nodes "$NODES" --jobs 1000 --clients 8 \
            --submit-only --heartbeat-ms 30000 "${url[@]}" | grep '^ctl_register' |
            sed "s/^/run=$run quiet=1 /" >>"$OUT/ctl.txt"
    done
    echo "bench: the store alone on $store" >&2
    if [ "$store" = postgresql ]; then
        surl=$(newdb store)
    else
        rm -f "$OUT/store-bench.db"*
        surl="sqlite:$OUT/store-bench.db"
    fi
    "$BIN/store_bench" --url "$surl" --jobs 20000 --place 10000 >>"$OUT/store.txt"
done

echo "bench: one scheduling cycle of libgpcore, 100,000 pending on 10,000 nodes (3 runs)" >&2
: >"$OUT/sched.txt"
for run in 1 2 3; do
    "$BIN/sched_bench" --nodes 10000 --pending 100000 | sed "s/^/run=$run /" >>"$OUT/sched.txt"
done
echo "load at=end avg1=$(cut -d' ' -f1 /proc/loadavg)" >>"$OUT/ctl.txt"
echo "bench: placement with 1,000 distinct request shapes on 10,000 nodes (3 runs)" >&2
: >"$OUT/shapes.txt"
for run in 1 2 3; do
    "$BIN/placement_bench" --nodes 10000 --steady 5000 --shapes 1000 | grep 'phase=shapes' |
        sed "s/^/run=$run /" >>"$OUT/shapes.txt"
done
python3 bench/ctl_report.py --out-dir "$OUT" --results docs/results
echo "bench: wrote docs/results/controller.md" >&2
