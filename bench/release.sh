#!/usr/bin/env bash
# Release -> running: from the moment held-back jobs are let go (one PUT lifting their tenant's
# GPU quota from 0) until all of them are Running as the API shows them, on a local pool of mock
# DGX A100 nodes (the production gpupoold, gpupool-agent and gpupool-run; the jobs are host
# processes). Default: 16 nodes x 8 GPUs and 128 one-GPU jobs, 5 runs. Writes
# docs/results/release.md (or --out FILE) from what it measured: bench/release.py measures (its
# header defines each figure), raw results go to out/release/release.json and
# bench/release_report.py writes the report. About a minute.
#
#   bench/release.sh [--out FILE] [--nodes N] [--jobs J] [--runs R]
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BUILD:-build}/bin
OUTFILE=docs/results/release.md
RAW=out/release
args=()
while [ $# -gt 0 ]; do
    case "$1" in
    --out) OUTFILE=${2:?--out needs FILE}; shift 2 ;;
    --raw) RAW=${2:?--raw needs DIR}; shift 2 ;;
    --nodes|--jobs|--runs) args+=("$1" "${2:?$1 needs a number}"); shift 2 ;;
    -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "release.sh: $1: unknown argument (see --help)" >&2; exit 2 ;;
    esac
done
for prog in gpupoold gpupool-agent gpupool-run; do
    if [ ! -x "$BIN/$prog" ]; then
        echo "release.sh: $BIN/$prog missing: build first (make build)" >&2
        exit 2
    fi
done
if [ ! -e "$BIN/../lib/libgpupool-nvml-mock.so" ]; then
    echo "release.sh: $BIN/../lib/libgpupool-nvml-mock.so missing: build first" >&2
    exit 2
fi
mkdir -p "$RAW" "$(dirname "$OUTFILE")"
python3 -u bench/release.py --bin "$BIN" --results "$RAW/release.json" ${args[@]+"${args[@]}"}
python3 bench/release_report.py "$RAW/release.json" > "$OUTFILE"
echo "release: wrote $OUTFILE" >&2
