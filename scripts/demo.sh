#!/usr/bin/env bash
# make demo: a whole pool on this machine, with work running on it in sandboxes.
#   1. builds the demo's image, localhost/gpupool-demo:1, into podman's default storage (the one
#      the agents' podman uses): this machine's busybox-static and an /etc/os-release of its own,
#      `podman import`ed; nothing comes from the internet or a registry. It is built again only
#      when missing or when its recipe (this busybox, the recipe's version) changed: a label says;
#   2. gpupool up: gpupoold and three agents with simulated GPUs (two 8 x A100-80GB nodes with
#      NVLink, one 4 x T4 node) through the mock NVML library — or this machine's GPUs when its
#      NVML library loads;
#   3. a read-only volume (a directory of this machine), a tenant and three jobs: a 2-node gang
#      of 8 GPUs each and 2 whole GPUs that read the volume, both from the image (pull policy
#      Never: the node has it), and a quarter GPU with 10 GiB without an image, over the host's
#      root filesystem mounted read-only (its write there fails);
#   4. shows them running, where they run, from which image, and what they print; the pool stays
#      up.
# Exits non-zero when a step fails (podman missing included) or the three jobs do not all reach
# Running (within 30 s). DEMO_DIR (default out/demo, created with its parents) and DEMO_PORT
# (default 7070: the controller's; the agents bind free ports of their own) choose where it runs.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BUILD:-build}/bin
DIR=${DEMO_DIR:-out/demo}
PORT=${DEMO_PORT:-7070}
IMAGE=localhost/gpupool-demo:1
BUSYBOX=/bin/busybox  # busybox-static: one static binary, so the image needs no libraries
RECIPE_LABEL=io.gpupool.demo.recipe

# Builds $IMAGE into podman's default storage unless it is there from the same recipe: version 1
# of the steps below (raise it when they change) over this machine's busybox (its hash), which
# the image's label records. Quiet when it is up to date.
build_image() {
    if ! command -v podman >/dev/null; then
        echo "make demo: podman is missing (scripts/deps.sh installs it)" >&2
        return 1
    fi
    if [ ! -x "$BUSYBOX" ]; then
        echo "make demo: $BUSYBOX is missing (Debian's busybox-static; scripts/deps.sh)" >&2
        return 1
    fi
    local recipe have root a
    recipe="1-$(sha256sum "$BUSYBOX" | cut -c1-16)"
    have=$(podman image inspect --format "{{index .Labels \"$RECIPE_LABEL\"}}" "$IMAGE" \
        2>/dev/null || true)
    [ "$have" = "$recipe" ] && return 0
    root=$(mktemp -d)
    mkdir -p "$root/bin" "$root/etc" "$root/tmp" "$root/work"
    chmod 1777 "$root/tmp"
    cp "$BUSYBOX" "$root/bin/busybox"
    for a in $("$BUSYBOX" --list); do
        [ "$a" = busybox ] || ln -s busybox "$root/bin/$a"
    done
    printf 'NAME="gpupool demo"\nID=gpupool-demo\nPRETTY_NAME="the gpupool demo image (%s)"\n' \
        "$("$BUSYBOX" | head -n 1 | cut -d ' ' -f 1-2)" >"$root/etc/os-release"
    if ! tar -C "$root" --owner=0 --group=0 --numeric-owner -c . |
        podman import --quiet --change ENV=PATH=/bin --change WORKDIR=/work \
            --change "LABEL=$RECIPE_LABEL=$recipe" - "$IMAGE" >/dev/null; then
        rm -rf "$root"
        echo "make demo: podman import of $IMAGE failed" >&2
        return 1
    fi
    rm -rf "$root"
    echo "Built the image $IMAGE from this machine's busybox-static."
}

if [ -d "$DIR/pids" ]; then  # a demo pool from before: stop it and start afresh
    "$BIN/gpupool" down --data-dir "$DIR" >/dev/null
fi
rm -rf "$DIR"
build_image
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
# What a job in the image says about where it is: the image's /etc/os-release.
WHERE='in $(. /etc/os-release; echo "$PRETTY_NAME")'
gp submit --tenant demo --name gang --gpus 8 --replicas 2 \
    --image "$IMAGE" --image-pull-policy Never \
    -- sh -c 'echo "node $GPUPOOL_NODE_RANK of $GPUPOOL_NNODES, $GPUPOOL_NPROC_PER_NODE processes each (ranks $RANK.. of $WORLD_SIZE), master $MASTER_ADDR:$MASTER_PORT, '"$WHERE"'"; sleep 600'
gp submit --tenant demo --name two-gpus --gpus 2 --topology prefer-nvlink --volume datasets \
    --image "$IMAGE" --image-pull-policy Never \
    -- sh -c 'echo "my GPUs: $CUDA_VISIBLE_DEVICES; $(cat $GPUPOOL_DATA_DIR/datasets/README), '"$WHERE"'"; sleep 600'
# No image: the host's root filesystem, read-only (the write fails; were it to succeed, the file
# goes again).
gp submit --tenant demo --name quarter --gpu-milli 250 --gpu-memory 10Gi \
    -- sh -c 'echo "my share: $GPUPOOL_GPU_CORE_LIMIT% of a GPU, $GPUPOOL_GPU_MEMORY_LIMIT_MIB MiB, on the host root: $(touch /usr/.gpupool-demo 2>&1 && rm -f /usr/.gpupool-demo && echo writable)"; sleep 600'
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
for _ in $(seq 50); do  # the jobs' first lines, 10 s at most (a started job may not have written)
    written=1
    for f in "$DIR"/agents/*/replicas/*/stdout.log; do
        [ -s "$f" ] || written=0
    done
    [ "$written" = 1 ] && break
    sleep 0.2
done
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
echo "The pool keeps running: try 'gpupool get nodes -o wide', 'gpupool describe node pcie-t4-3'"
echo "(its container runtime and images) or 'gpupool cancel gang'"
echo "(with GPUPOOL_SERVER=$GPUPOOL_SERVER and GPUPOOL_TOKEN=\$(cat $DIR/admin.token))."
echo "Stop it with: $BIN/gpupool down --data-dir $DIR"
