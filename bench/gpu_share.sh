#!/usr/bin/env bash
# libgpushare's numbers, written to docs/results/gpushare.md (or --out FILE) from what this run
# measured:
#   1. the cost per intercepted call through the fake driver (shim_bench: alloc+free pairs and
#      launches, without the library, preloaded without limits, with limits from the
#      environment and from a region) — runs anywhere;
#   2. on a machine with a GPU: the CUDA checks of the memory limit (gpu_mem_limit through the
#      runtime: cudaMalloc, cudaMallocAsync, managed, VMM; gpu_check through the driver API),
#      and the kernel-launch cost with and without the library (gpu_launch: throughput and
#      the launching thread's CPU time per launch, in LAUNCH_PAIRS alternating pinned pairs).
# Raw outputs go to out/gpu-share/. Usage: bench/gpu_share.sh [--out FILE]
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
BIN=$BUILD/bin
LIB=$(realpath "$BUILD/lib/libgpushare.so")
FAKE=${FAKE_DIR:-$BUILD/tests/shim/fake}
OUTFILE=docs/results/gpushare.md
[ "${1:-}" = "--out" ] && OUTFILE=$2
RAW=out/gpu-share
rm -rf "$RAW" && mkdir -p "$RAW"

echo "gpu_share: shim_bench through the fake driver" >&2
"$BIN/shim_bench" --iters 200000 --shim "$LIB" --fake-dir "$FAKE" > "$RAW/shim_bench.txt" 2>&1
echo "rc=$?" >> "$RAW/shim_bench.txt"

if "$BIN/gpu_launch" 10 1 > /dev/null 2>&1; then
    echo "gpu_share: CUDA checks and launch throughput on $(nvidia-smi -L 2>/dev/null | head -1)" >&2
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$RAW/gpu.txt" 2>&1
    env LD_PRELOAD="$LIB" GPUPOOL_GPU_MEMORY_LIMIT_MIB=1024 "$BIN/gpu_mem_limit" 1024 \
        > "$RAW/gpu_mem_limit.txt" 2>&1
    echo "rc=$?" >> "$RAW/gpu_mem_limit.txt"
    [ -x "$BIN/gpu_check" ] && { "$BIN/gpu_check" "$LIB" > "$RAW/gpu_check.txt" 2>&1; echo "rc=$?" >> "$RAW/gpu_check.txt"; }
    # Launch cost: PAIRS pairs of runs with and without the library, alternating which goes
    # first (ABBA), all pinned to one CPU, so that a drift of the machine falls on both alike;
    # the report compares each pair and gives the median change with its confidence interval.
    PIN=()
    command -v taskset > /dev/null && PIN=(taskset -c "${LAUNCH_CPU:-2}")
    for ((i = 0; i < ${LAUNCH_PAIRS:-24}; i++)); do
        order="nolib lib"
        [ $((i % 2)) = 1 ] && order="lib nolib"
        for mode in $order; do
            if [ $mode = lib ]; then
                env LD_PRELOAD="$LIB" GPUPOOL_GPU_MEMORY_LIMIT_MIB=4096 \
                    "${PIN[@]}" "$BIN/gpu_launch" 100000 5
            else
                "${PIN[@]}" "$BIN/gpu_launch" 100000 5
            fi > "$RAW/launch-$i-$mode.txt" 2>&1
        done
    done
    if [ -x "$BIN/gpu_core_check" ]; then
        env LD_PRELOAD="$LIB" GPUPOOL_GPU_CORE_LIMIT=30 GPUPOOL_GPU_CORE_POLICY=strict \
            "$BIN/gpu_core_check" > "$RAW/gpu_core_check.txt" 2>&1
        echo "rc=$?" >> "$RAW/gpu_core_check.txt"
    fi
else
    echo "gpu_share: no GPU here: only the fake-driver numbers" >&2
fi
python3 bench/gpu_share_report.py "$RAW" > "$OUTFILE"
echo "gpu_share: wrote $OUTFILE" >&2
