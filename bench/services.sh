#!/usr/bin/env bash
# Notebooks and services, measured through the production programs; writes
# docs/results/services.md (or --out FILE) from what it measured:
#   1. the proxy's overhead: requests/s and latency through the controller
#      (/v1/jobs/ID/proxy/ and a service's /v1/services/NAME/) against the same server reached
#      directly inside its network namespace, at 1 and 16 connections;
#   2. the autoscaler's reaction to a load step: from the load's start to the scaling decision
#      and to the new replicas ready, and from the load's end to the scale-in.
# bench/services.py does the work (its header defines each measure); raw results go to
# out/services/services.json and bench/services_report.py writes the report from them. Needs
# root (replicas in network namespaces of their own) and wrk (scripts/deps.sh); exits 77
# without them. About 5 minutes.
#
#   bench/services.sh [--out FILE] [--quick]   (--quick: one short run of each, for trying it)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BUILD:-build}/bin
OUTFILE=docs/results/services.md
RAW=out/services
args=()
while [ $# -gt 0 ]; do
    case "$1" in
    --out) OUTFILE=${2:?--out needs FILE}; shift 2 ;;
    --raw) RAW=${2:?--raw needs DIR}; shift 2 ;;
    --quick) args=(--runs 1 --duration 2 --steps 1 --load 30 --down-window 5); shift ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "services.sh: $1: unknown argument (see --help)" >&2; exit 2 ;;
    esac
done
for prog in gpupool gpupoold gpupool-agent gpupool-run; do
    if [ ! -x "$BIN/$prog" ]; then
        echo "services.sh: $BIN/$prog missing: build first (make build)" >&2
        exit 2
    fi
done
if [ "$(id -u)" != 0 ]; then
    echo "services.sh: needs root (replicas in network namespaces of their own)" >&2
    exit 77
fi
for tool in wrk nsenter python3; do
    if ! command -v "$tool" >/dev/null; then
        echo "services.sh: $tool not found (scripts/deps.sh installs it)" >&2
        exit 77
    fi
done
mkdir -p "$RAW" "$(dirname "$OUTFILE")"
python3 -u bench/services.py --bin "$BIN" --results "$RAW/services.json" ${args[@]+"${args[@]}"}
python3 bench/services_report.py "$RAW/services.json" > "$OUTFILE"
echo "services: wrote $OUTFILE" >&2
