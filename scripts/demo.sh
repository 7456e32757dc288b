#!/usr/bin/env bash
# make demo: a whole pool on this machine, with work running on it.
#   1. gpupool up: gpupoold and three agents with simulated GPUs (two 8 x A100-80GB nodes with
#      NVLink, one 4 x T4 node) through the mock NVML library — or this machine's GPUs when its
#      NVML library loads;
#   2. a read-only volume (a directory of this machine), a tenant and three jobs: a 2-node gang
#      of 8 GPUs each, 2 whole GPUs that read the volume, a quarter GPU with 10 GiB;
#   3. shows them running, where they run and what they print; the pool stays up.
# Exits non-zero when a step fails or the three jobs do not all reach Running (within 30 s).
# DEMO_DIR (default out/demo, created with its parents) and DEMO_PORT (default 7070: the
# controller's; the agents bind free ports of their own) choose where it runs.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BUILD:-build}/bin
DIR=${DEMO_DIR:-out/demo}
PORT=${DEMO_PORT:-7070}
if [ -d "$DIR/pids" ]; then  # a demo pool from before: stop it and start afresh
    "$BIN/gpupool" down --data-dir "$DIR" >/dev/null
fi
rm -rf "$DIR"
"$BIN/gpupool" up --data-dir "$DIR" --port "$PORT"
export GPUPOOL_SERVER="http://127.0.0.1:$PORT"
GPUPOOL_TOKEN=$(cat "$DIR/admin.token")
export GPUPOOL_TOKEN
gp() { echo "\$ gpupool $*" >&2; "$BIN/gpupool" "$@"; }
echo
gp get nodes
"$BIN/gpupool" tenant create demo --quota-gpus 24 >/dev/null 2>&1 || true
mkdir -p "$DIR/datasets"
echo "hello from the datasets volume" >"$DIR/datasets/README"
gp volume create datasets --path "$(realpath "$DIR/datasets")" --read-only >/dev/null
gp submit --tenant demo --name gang --gpus 8 --replicas 2 \
    -- sh -c 'echo "node $GPUPOOL_NODE_RANK of $GPUPOOL_NNODES, $GPUPOOL_NPROC_PER_NODE processes each (ranks $RANK.. of $WORLD_SIZE), master $MASTER_ADDR:$MASTER_PORT"; sleep 600'
gp submit --tenant demo --name two-gpus --gpus 2 --topology prefer-nvlink --volume datasets \
    -- sh -c 'echo "my GPUs: $CUDA_VISIBLE_DEVICES; $(cat $GPUPOOL_DATA_DIR/datasets/README)"; sleep 600'
gp submit --tenant demo --name quarter --gpu-milli 250 --gpu-memory 10Gi \
    -- sh -c 'echo "my share: $GPUPOOL_GPU_CORE_LIMIT% of a GPU, $GPUPOOL_GPU_MEMORY_LIMIT_MIB MiB"; sleep 600'
running=0
for _ in $(seq 150); do  # 30 s at most
    running=$("$BIN/gpupool" get jobs -o json | python3 -c \
        'import json,sys; print(sum(j["state"] == "Running" for j in json.load(sys.stdin)["items"]))')
    [ "$running" = 3 ] && break
    sleep 0.2
done
if [ "$running" != 3 ]; then
    echo >&2
    "$BIN/gpupool" get jobs --all-states -o wide >&2 || true
    echo "make demo: only $running of the 3 jobs reached Running; see $DIR/logs/" >&2
    echo "(stop the pool with: $BIN/gpupool down --data-dir $DIR)" >&2
    exit 1
fi
echo
gp get jobs -o wide
echo
gp describe job gang
echo
for f in "$DIR"/agents/*/replicas/*/stdout.log; do
    echo "$f: $(head -n 1 "$f")"
done
echo
gp usage --by job
echo
echo "Dashboard: $GPUPOOL_SERVER/ui/ (log in with the token in $DIR/admin.token)."
echo "Metrics:   $GPUPOOL_SERVER/metrics, agents through $GPUPOOL_SERVER/v1/sd/prometheus."
echo "The pool keeps running: try 'gpupool get nodes -o wide' or 'gpupool cancel gang'"
echo "(with GPUPOOL_SERVER=$GPUPOOL_SERVER and GPUPOOL_TOKEN=\$(cat $DIR/admin.token))."
echo "Stop it with: $BIN/gpupool down --data-dir $DIR"
