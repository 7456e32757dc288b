#!/usr/bin/env bash
# Containers on this machine, measured through the production programs; writes
# docs/results/containers.md (or --out FILE) from what it measured:
#   1. start overhead: a trivial job 50 times each through gpupool-run as a host process
#      (--runtime none), in the podman sandbox over the host root (the default) and in the
#      sandbox from a busybox image; median and p95 of each;
#   2. image pulls from a local docker-registry on 127.0.0.1: busybox and busybox with a 100 MB
#      and a 500 MB layer of random data, 5 pulls each the way gpupool-run pulls, into fresh
#      podman storage; median and MB/s;
#   3. the agent's GPU memory watch: 10 over-limit fractional jobs on a `gpupool up` pool (mock
#      NVML, the agent's defaults); the time from the over-limit reading to the replica stopped,
#      against the 2 s target.
# bench/containers.py does the work (its header defines each measure); raw results go to
# out/containers/containers.json and bench/containers_report.py writes the report from them.
# Needs root, podman, skopeo, docker-registry and busybox-static (scripts/deps.sh); exits 77
# without them. About 3 to 4 minutes.
#
#   bench/containers.sh [--out FILE] [--quick]   (--quick: a few runs of each, for trying it)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BUILD:-build}/bin
OUTFILE=docs/results/containers.md
RAW=out/containers
args=()
while [ $# -gt 0 ]; do
    case "$1" in
    --out) OUTFILE=${2:?--out needs FILE}; shift 2 ;;
    --raw) RAW=${2:?--raw needs DIR}; shift 2 ;;
    --quick) args=(--starts 3 --pulls 1 --pull-sizes 0,10 --watch-runs 2); shift ;;
    -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "containers.sh: $1: unknown argument (see --help)" >&2; exit 2 ;;
    esac
done
for prog in gpupool gpupoold gpupool-agent gpupool-run; do
    if [ ! -x "$BIN/$prog" ]; then
        echo "containers.sh: $BIN/$prog missing: build first (make build)" >&2
        exit 2
    fi
done
if [ "$(id -u)" != 0 ]; then
    echo "containers.sh: needs root (podman storage and cgroups of its own)" >&2
    exit 77
fi
for tool in podman skopeo docker-registry busybox; do
    if ! command -v "$tool" >/dev/null; then
        echo "containers.sh: $tool not found (scripts/deps.sh installs it)" >&2
        exit 77
    fi
done
mkdir -p "$RAW" "$(dirname "$OUTFILE")"
python3 -u bench/containers.py --bin "$BIN" --results "$RAW/containers.json" ${args[@]+"${args[@]}"}
python3 bench/containers_report.py "$RAW/containers.json" > "$OUTFILE"
echo "containers: wrote $OUTFILE" >&2
