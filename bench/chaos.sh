#!/usr/bin/env bash
# Chaos run: a local pool (gpupool up: 4 mock-NVML nodes, 24 GPUs), a steady stream of jobs
# (whole GPUs, fractions, 2-replica gangs, checkpointing as they go), and for --duration seconds
# random faults: kill -9 of gpupoold and of agents (each started again as gpupool up starts it),
# fatal (48) and application (13) XIDs through the mock's control files. Then the pool settles
# and the invariants are checked: no acknowledged job lost, no GPU double-allocated, every restart
# accounted for. bench/chaos.py does the work; its header defines each fault and invariant.
#
#   bench/chaos.sh [--duration SECONDS] [--results FILE] [--seed N] [--settle SECONDS]
#                  [--nodes SPEC] [--active N] [--kinds K,..] [--keep]
#
# Defaults: 600 s, results in out/bench/chaos.json (raw JSON; bench/chaos_report.py turns them
# into docs/results/reliability.md, as `make chaos` does). The programs come from $BUILD/bin
# (default build/bin). The last line printed is
#   chaos: jobs=N faults=M restarts=R lost=L double_alloc=D
# and the exit status is 0 when L and D are 0, else 1.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
duration=600
results=out/bench/chaos.json
args=()
while [ $# -gt 0 ]; do
    case "$1" in
    --duration) duration=${2:?--duration needs SECONDS}; shift 2 ;;
    --duration=*) duration=${1#*=}; shift ;;
    --results) results=${2:?--results needs FILE}; shift 2 ;;
    --results=*) results=${1#*=}; shift ;;
    --seed|--settle|--nodes|--active|--kinds) args+=("$1" "${2:?$1 needs a value}"); shift 2 ;;
    --keep) args+=("$1"); shift ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "chaos.sh: $1: unknown argument (see --help)" >&2; exit 2 ;;
    esac
done
case "$duration" in
'' | *[!0-9]*) echo "chaos.sh: --duration: a whole number of seconds" >&2; exit 2 ;;
esac
for prog in gpupool gpupoold gpupool-agent gpupool-run; do
    if [ ! -x "$BUILD/bin/$prog" ]; then
        echo "chaos.sh: $BUILD/bin/$prog missing: build first (make build)" >&2
        exit 2
    fi
done
exec python3 -u bench/chaos.py --bin "$BUILD/bin" --duration "$duration" --results "$results" \
    ${args[@]+"${args[@]}"}
