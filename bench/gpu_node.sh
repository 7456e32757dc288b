#!/usr/bin/env bash
# On a machine with NVIDIA GPUs: what the agent discovers through the real NVML, and a pool that
# runs real CUDA work on them. Writes docs/results/gpu-node.md (or --out FILE) from what it saw:
#   1. gpupool-agent discover (the driver's libnvidia-ml.so.1);
#   2. gpupool up with no --nodes: one agent on this machine's GPUs;
#   3. job "whole": one GPU for a few seconds; it prints CUDA_VISIBLE_DEVICES and, through
#      PyTorch when python3 has it, how many GPUs CUDA shows and their UUIDs, and runs a matmul;
#      job "waiting": asks for every GPU at once, so it waits until "whole" ends;
#   4. jobs "half-a" and "half-b": half a GPU each (compute and memory), placed on one GPU;
#      under libgpushare each sees its memory limit as the device's memory and cannot allocate
#      past it (half-a's limit is half the GPU: without the library it could);
#   5. gpupool down.
# Exits 77 when NVML does not load (no GPU here). Raw outputs go to out/gpu-node/.
# Usage: bench/gpu_node.sh [--out FILE]
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BUILD:-build}/bin
OUTFILE=docs/results/gpu-node.md
[ "${1:-}" = "--out" ] && OUTFILE=$2
RAW=out/gpu-node
DIR=$(mktemp -d /tmp/gpupool-gpu-node.XXXXXX)
PORT=${PORT:-7170}
rm -rf "$RAW" && mkdir -p "$RAW"

if ! "$BIN/gpupool-agent" discover > "$RAW/discover.json" 2> "$RAW/discover.err"; then
    echo "gpu_node: NVML does not load here: $(cat "$RAW/discover.err")" >&2
    exit 77
fi
ngpus=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["gpus"]))' "$RAW/discover.json")

cleanup() { "$BIN/gpupool" down --data-dir "$DIR" >/dev/null 2>&1 || true; }
trap cleanup EXIT
"$BIN/gpupool" up --data-dir "$DIR" --port "$PORT" > "$RAW/up.txt"
export GPUPOOL_SERVER="http://127.0.0.1:$PORT"
GPUPOOL_TOKEN=$(cat "$DIR/admin.token")
export GPUPOOL_TOKEN
gp() { "$BIN/gpupool" "$@"; }
gp get nodes -o wide > "$RAW/nodes.txt"
gp get nodes -o json > "$RAW/nodes.json"
gp tenant create lab > /dev/null

PY=$(command -v python3)
probe="import os
print('CUDA_VISIBLE_DEVICES=' + os.environ.get('CUDA_VISIBLE_DEVICES', ''))
print('GPUPOOL_GPU_MEMORY_LIMIT_MIB=' + os.environ.get('GPUPOOL_GPU_MEMORY_LIMIT_MIB', ''))
print('GPUPOOL_GPU_CORE_LIMIT=' + os.environ.get('GPUPOOL_GPU_CORE_LIMIT', ''))
try:
    import torch
except ImportError:
    torch = None
    print('torch: not installed')
n = torch.cuda.device_count() if torch else 0
if torch:
    print('torch_device_count=%d' % n)
for i in range(n):
    p = torch.cuda.get_device_properties(i)
    print('torch_device=%d name=%s uuid=GPU-%s' % (i, p.name.replace(' ', '_'), p.uuid))
if n:
    x = torch.ones(2048, 2048, device='cuda')
    print('matmul_sum=%.0f' % float((x @ x).sum()))
lim = int(os.environ.get('GPUPOOL_GPU_MEMORY_LIMIT_MIB') or 0)
if n and lim:
    print('preload=' + os.path.basename(os.environ.get('LD_PRELOAD', '')))
    free, total = torch.cuda.mem_get_info()
    print('mem_total_mib=%d' % (total >> 20))
    try:
        big = torch.empty((lim + 256) << 20, dtype=torch.uint8, device='cuda')
        print('over_limit=allocated')
        del big
    except torch.OutOfMemoryError:
        print('over_limit=refused')
    half = torch.empty((lim // 2) << 20, dtype=torch.uint8, device='cuda')
    print('half_limit=allocated')"
gp submit --tenant lab --name whole --gpus 1 -- "$PY" -c "$probe
import time; time.sleep(4)" > /dev/null
gp submit --tenant lab --name waiting --gpus "$ngpus" -- "$PY" -c "$probe" > /dev/null

wait_state() {  # NAME STATE...: until the job is in one of the states (60 s at most)
    local name=$1; shift
    for _ in $(seq 300); do
        s=$(gp get job "$name" -o json | python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])')
        for want in "$@"; do [ "$s" = "$want" ] && return 0; done
        sleep 0.2
    done
    echo "gpu_node: job $name stayed $s" >&2
    return 1
}
wait_state whole Running
sleep 0.5
gp describe job waiting > "$RAW/waiting-pending.txt"
wait_state whole Succeeded Failed
wait_state waiting Succeeded Failed
gp submit --tenant lab --name half-a --gpu-milli 500 --gpu-memory "$(python3 -c '
import json,sys; print(json.load(open(sys.argv[1]))["gpus"][0]["memory_mib"] // 2)' "$RAW/discover.json")" \
    -- "$PY" -c "$probe
import time; time.sleep(3)" > /dev/null
gp submit --tenant lab --name half-b --gpu-milli 500 --gpu-memory 1024 -- "$PY" -c "$probe
import time; time.sleep(3)" > /dev/null
wait_state half-a Running Succeeded Failed
wait_state half-b Running Succeeded Failed
gp get jobs -o wide > "$RAW/jobs-halves.txt"
gp get jobs -o json > "$RAW/jobs-halves.json"
wait_state half-a Succeeded Failed
wait_state half-b Succeeded Failed
gp get jobs -o json > "$RAW/jobs.json"
for j in whole waiting half-a half-b; do
    gp logs "$j" > "$RAW/logs-$j.txt" 2>&1 || true
done
gp get jobs -o wide > "$RAW/jobs.txt"
cleanup
trap - EXIT
python3 bench/gpu_node_report.py "$RAW" > "$OUTFILE"
echo "gpu_node: wrote $OUTFILE" >&2
