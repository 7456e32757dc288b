#!/usr/bin/env bash
# gpupool and Slurm 22.05 side by side on this machine; writes docs/results/slurm.md (or
# --out FILE) from what it measured:
#   1. CLI submits: 8 clients submit 2,000 one-GPU jobs, one process per submit
#      (`sbatch --wrap 'sleep 600' --gres=gpu:1` against `gpupool submit --gpus 1 -- sleep 600`)
#      while nothing may start (Slurm's partition DOWN; gpupool's nodes cordoned): submits/s and
#      the CPU of each submit process;
#   2. release: one command lets work start (partition UP; nodes uncordoned) and the time until
#      128 jobs run on the 128 GPUs;
#   3. the CPU of one `gpupool submit` alone (and of --baseline BIN's, e.g. the build before a
#      change), and of one sbatch alone.
# Slurm: 16 slurmd with 8 GPUs each as gres, slurmctld and munged, all on 127.0.0.1 in a PID
# namespace of their own with their files in a temporary directory (bench/slurm.py says how);
# gpupool: `gpupool up` with 16 mock DGX A100 nodes, jobs as host processes. Root installs
# Slurm from Debian if it is missing (apt-get install slurm-wlm); without root or Slurm it says
# so and measures gpupool alone. Raw results: out/slurm/slurm.json; bench/slurm_report.py writes
# the report. About 7 minutes with the defaults (3 runs) on a busy 2-core machine, 2 with --quick.
#
#   bench/slurm.sh [--out FILE] [--runs N] [--jobs N] [--clients N] [--baseline GPUPOOL_BIN]
#                  [--quick] [--no-slurm]
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BUILD:-build}/bin
OUTFILE=docs/results/slurm.md
RAW=out/slurm
args=()
slurm=yes
while [ $# -gt 0 ]; do
    case "$1" in
    --out) OUTFILE=${2:?--out needs FILE}; shift 2 ;;
    --raw) RAW=${2:?--raw needs DIR}; shift 2 ;;
    --runs|--jobs|--clients|--baseline) args+=("$1" "${2:?$1 needs a value}"); shift 2 ;;
    --quick) args+=(--runs 1 --jobs 400 --solo 20); shift ;;
    --no-slurm) slurm="not asked for (--no-slurm)"; shift ;;
    -h|--help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "slurm.sh: $1: unknown argument (see --help)" >&2; exit 2 ;;
    esac
done
for prog in gpupool gpupoold gpupool-agent gpupool-run; do
    if [ ! -x "$BIN/$prog" ]; then
        echo "slurm.sh: $BIN/$prog missing: build first (make build)" >&2
        exit 2
    fi
done
if [ ! -e "${BUILD:-build}/lib/libgpupool-nvml-mock.so" ]; then
    echo "slurm.sh: ${BUILD:-build}/lib/libgpupool-nvml-mock.so missing: build first" >&2
    exit 2
fi
have_slurm() {
    for tool in sbatch squeue scontrol sinfo scancel slurmctld slurmd munged mungekey; do
        command -v "$tool" >/dev/null || return 1
    done
}
if [ "$slurm" = yes ]; then
    if [ "$(id -u)" != 0 ]; then
        slurm="not measured: needs root (slurmd and munged run as root)"
    elif ! have_slurm; then
        echo "slurm.sh: installing Slurm from Debian (apt-get install slurm-wlm)" >&2
        if ! DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
            slurm-wlm >/dev/null || ! have_slurm; then
            slurm="not measured: slurm-wlm could not be installed"
        fi
    fi
fi
if [ "$slurm" != yes ]; then
    echo "slurm.sh: Slurm $slurm; measuring gpupool alone" >&2
fi
for tool in xargs unshare python3; do
    command -v "$tool" >/dev/null || { echo "slurm.sh: $tool not found" >&2; exit 77; }
done
WORK=$(mktemp -d /tmp/gpupool-slurm-bench.XXXXXX)
cleanup() {
    # bench/slurm.py stops what it started; this is for when it was killed.
    if [ -s "$WORK/slurm.pgid" ]; then
        kill -KILL -- "-$(cat "$WORK/slurm.pgid")" 2>/dev/null || true
    fi
    if [ -d "$WORK/gpupool" ]; then
        "$BIN/gpupool" down --data-dir "$WORK/gpupool" >/dev/null 2>&1 || true
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$RAW" "$(dirname "$OUTFILE")"
python3 -u bench/slurm.py --bin "$BIN" --work "$WORK" --results "$RAW/slurm.json" \
    --slurm "$slurm" ${args[@]+"${args[@]}"}
python3 bench/slurm_report.py "$RAW/slurm.json" > "$OUTFILE"
echo "slurm: wrote $OUTFILE" >&2
