#!/usr/bin/env bash
# Chaos run: a local pool (gpupool up: 4 mock-NVML nodes, 24 GPUs), a steady stream of jobs
# (whole GPUs, fractions, 2-replica gangs, checkpointing as they go), and for --duration seconds
# random faults: kill -9 of gpupoold and of agents (each started again as gpupool up starts it),
# fatal (48) and application (13) XIDs through the mock's control files. Then the pool settles
# and the invariants are checked: no acknowledged job lost, no GPU double-allocated, every restart
# accounted for. bench/chaos.py does the work; its header defines each fault and invariant.
#
# With --ha: the same on several gpupoold (--controllers, default 3) sharing one PostgreSQL 15
# that the run starts (tests/pg/pg_fixture.sh; as root through runuser as the postgres user),
# the agents and the submitting CLI given every controller (--server URL,URL,...); the faults
# are leader_kill (kill -9 of the leader, started again 0.5-3 s later), pg_restart (pg_ctl
# restart -m fast), agent_kill, xid48 and xid13, and every failover is timed. When PostgreSQL
# cannot be started the run says why and exits 0 (results {"skipped": WHY}).
# bench/chaos_ha.py does that work; its header defines the faults and the failover time.
#
#   bench/chaos.sh [--ha [--controllers N]] [--duration SECONDS] [--results FILE] [--seed N]
#                  [--settle SECONDS] [--nodes SPEC] [--active N] [--kinds K,..] [--keep]
#
# Defaults: 600 s, results in out/bench/chaos.json (out/bench/chaos-ha.json with --ha; raw
# JSON; bench/chaos_report.py turns them into docs/results/reliability.md, as `make chaos`
# does). The programs come from $BUILD/bin
# (default build/bin). The last line printed is
#   chaos: jobs=N faults=M restarts=R lost=L double_alloc=D
# and the exit status is 0 when L and D are 0, else 1.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
duration=600
results=
ha=
args=()
while [ $# -gt 0 ]; do
    case "$1" in
    --duration) duration=${2:?--duration needs SECONDS}; shift 2 ;;
    --duration=*) duration=${1#*=}; shift ;;
    --results) results=${2:?--results needs FILE}; shift 2 ;;
    --results=*) results=${1#*=}; shift ;;
    --seed|--settle|--nodes|--active|--kinds) args+=("$1" "${2:?$1 needs a value}"); shift 2 ;;
    --keep) args+=("$1"); shift ;;
    --ha) ha=1; shift ;;
    --controllers) args+=("$1" "${2:?$1 needs a value}"); shift 2 ;;
    -h|--help) sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
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
if [ -n "$ha" ]; then
    exec python3 -u bench/chaos_ha.py --bin "$BUILD/bin" --duration "$duration" \
        --results "${results:-out/bench/chaos-ha.json}" ${args[@]+"${args[@]}"}
fi
results=${results:-out/bench/chaos.json}
exec python3 -u bench/chaos.py --bin "$BUILD/bin" --duration "$duration" --results "$results" \
    ${args[@]+"${args[@]}"}
