#!/usr/bin/env bash
# Integration test of gpupool-run, the per-replica supervisor: real jobs (sh, sleep) in a
# temporary directory. Usage: run_supervise.sh GPUPOOL_RUN
#
# Covers: the job's environment (exactly the given GPU UUIDs, gang variables and hostfile), the
# exit code record, SIGTERM killing the whole process group (background grandchildren too), a
# job ignoring SIGTERM killed after the grace period, the log cap, the supervisor surviving the
# SIGKILL of the process that started it (the agent), bad arguments and specs (exit 2, the field
# named), a command that cannot be executed, a second supervisor on the same directory, --user,
# volumes (mounted read-only/read-write in a private namespace as root, linked otherwise, a
# missing one refused with its name), and the cgroup limits where this machine lets us write
# cgroups.
set -euo pipefail

RUN=${1:?usage: $0 GPUPOOL_RUN}
# Jobs as host processes (gpupool-run --runtime none): the podman sandbox has its own test
# (run_sandbox.py); what is checked here holds for both wherever the job is a host process.
export GPUPOOL_RUNTIME=none
TMP=$(mktemp -d "${TMPDIR:-/tmp}/gpupool-run-integ.XXXXXX")
STARTED=() # supervisors started in the background, killed on exit if still there

cleanup() {
    for pid in "${STARTED[@]}"; do
        kill -KILL "$pid" 2>/dev/null || true
    done
    # After a failure a job's group may outlive its supervisor: each job leads its own group.
    for f in "$TMP"/*/child.pid; do
        [ -e "$f" ] && kill -KILL -- "-$(cut -d' ' -f1 "$f")" 2>/dev/null || true
    done
    rm -rf "$TMP"
}
trap cleanup EXIT

fail() {
    echo "FAIL: $*" >&2
    for f in "$TMP"/*/supervisor.log "$TMP"/last.err; do
        [ -s "$f" ] && { echo "--- $f:" >&2; tail -n 20 "$f" >&2; }
    done
    exit 1
}

# field DIR NAME: a field of DIR/status.json ("" when the file is missing).
field() {
    python3 - "$1/status.json" "$2" <<'EOF'
import json, sys
try:
    v = json.load(open(sys.argv[1]))[sys.argv[2]]
except FileNotFoundError:
    v = ""
print(str(v).lower() if isinstance(v, bool) else v)
EOF
}

# wait_for SECONDS COMMAND...: polls COMMAND every 0.1 s; false when it never succeeded.
wait_for() {
    local tries=$(($1 * 10))
    shift
    for ((i = 0; i < tries; i++)); do
        "$@" && return 0
        sleep 0.1
    done
    return 1
}

state_is() { [ "$(field "$1" state)" = "$2" ]; }
group_empty() { ! pgrep -g "$1" >/dev/null 2>&1; }
gone() { ! kill -0 "$1" 2>/dev/null; }

# spec NAME JSON_COMMAND [EXTRA_FIELDS]: writes $TMP/NAME.json for job 1, replica 0.
spec() {
    printf '{"job": 1, "name": "%s", "replica": 0, "epoch": 1, "gpus": [], %s "spec": {"command": %s}}\n' \
        "$1" "${3:-}" "$2" >"$TMP/$1.json"
}

# run_fg NAME [ARGS...]: runs gpupool-run on $TMP/NAME.json in the foreground; sets RC.
run_fg() {
    local name=$1
    shift
    set +e
    "$RUN" --state-dir "$TMP/$name" --spec "$TMP/$name.json" "$@" >"$TMP/last.out" 2>"$TMP/last.err"
    RC=$?
    set -e
}

# run_bg NAME [ARGS...]: starts gpupool-run in a session of its own; SUP is its PID.
run_bg() {
    local name=$1
    shift
    mkdir -p "$TMP/$name"
    setsid "$RUN" --state-dir "$TMP/$name" --spec "$TMP/$name.json" "$@" \
        >"$TMP/$name/supervisor.log" 2>&1 &
    STARTED+=("$!")
    wait_for 10 state_is "$TMP/$name" running || fail "$name: never running"
    SUP=$(cut -d' ' -f1 "$TMP/$name/supervisor.pid")
    STARTED+=("$SUP")
}

# --- the environment: exactly the assigned GPUs, gang variables, hostfile ---
cat >"$TMP/env.json" <<'EOF'
{"job": 12, "name": "envjob", "replica": 1, "epoch": 4, "world_size": 2, "restart_count": 3,
 "gpus": [{"index": 2, "uuid": "GPU-11111111-2222", "milli": 1000, "memory_mib": 81920, "mig_start": -1},
          {"index": 5, "uuid": "GPU-33333333-4444", "mig_uuid": "MIG-55555555-6666"}],
 "spec": {"command": ["sh", "-c", "env; cat \"$GPUPOOL_HOSTFILE\""],
          "env": {"CUDA_VISIBLE_DEVICES": "0,1,2,3", "WORLD_SIZE": "64", "MY_VAR": "mine"}},
 "rank": 1, "nproc_per_node": 2, "master_addr": "10.0.0.7", "master_port": 29500,
 "hostfile": ["10.0.0.7 slots=2", {"host": "10.0.0.8", "slots": 2}],
 "env_extra": {"CUDA_DEVICE_MEMORY_LIMIT_0": "40960m"}}
EOF
run_fg env
[ "$RC" -eq 0 ] || fail "env: exit status $RC"
OUT="$TMP/env/stdout.log"
for want in CUDA_VISIBLE_DEVICES=GPU-11111111-2222,MIG-55555555-6666 \
    NVIDIA_VISIBLE_DEVICES=GPU-11111111-2222,MIG-55555555-6666 GPUPOOL_JOB_ID=12 \
    GPUPOOL_REPLICA=1 GPUPOOL_RESTART_COUNT=3 GPUPOOL_NNODES=2 GPUPOOL_NODE_RANK=1 \
    GPUPOOL_NPROC_PER_NODE=2 PET_NNODES=2 PET_NODE_RANK=1 PET_NPROC_PER_NODE=2 \
    PET_MASTER_ADDR=10.0.0.7 PET_MASTER_PORT=29500 WORLD_SIZE=4 RANK=2 LOCAL_RANK=0 \
    LOCAL_WORLD_SIZE=2 MASTER_ADDR=10.0.0.7 MASTER_PORT=29500 "GPUPOOL_HOSTFILE=$TMP/env/hostfile" \
    MY_VAR=mine CUDA_DEVICE_MEMORY_LIMIT_0=40960m "10.0.0.7 slots=2" "10.0.0.8 slots=2" \
    "PWD=$TMP/env/work"; do
    grep -qxF -- "$want" "$OUT" || fail "env: the job's environment lacks the line $want"
done
[ "$(grep -c '^CUDA_VISIBLE_DEVICES=' "$OUT")" -eq 1 ] || fail "env: CUDA_VISIBLE_DEVICES twice"
state_is "$TMP/env" exited || fail "env: state $(field "$TMP/env" state)"

# Not a gang: no gang variables, no hostfile.
spec single '["sh", "-c", "env"]' '"env_extra": {}, '
run_fg single
grep -qE '^(WORLD_SIZE|RANK|MASTER_ADDR|MASTER_PORT|GPUPOOL_HOSTFILE|PET_[A-Z_]*)=' \
    "$TMP/single/stdout.log" && fail "single: gang variables set for a job that is not a gang"
grep -qx 'GPUPOOL_NNODES=1' "$TMP/single/stdout.log" || fail "single: GPUPOOL_NNODES not 1"
grep -qx 'CUDA_VISIBLE_DEVICES=' "$TMP/single/stdout.log" || fail "single: GPUs visible without GPUs"

# --- the exit code is recorded; gpupool-run itself exits 0 ---
spec code '["sh", "-c", "echo out; echo err >&2; exit 7"]'
run_fg code
[ "$RC" -eq 0 ] || fail "code: gpupool-run exited $RC"
[ "$(field "$TMP/code" exit_code)" = 7 ] || fail "code: exit_code $(field "$TMP/code" exit_code)"
state_is "$TMP/code" exited || fail "code: not exited"
grep -qx out "$TMP/code/stdout.log" && grep -qx err "$TMP/code/stderr.log" ||
    fail "code: stdout/stderr not in their logs"
[ "$(cut -d' ' -f1 "$TMP/code/child.pid")" = "$(field "$TMP/code" pid)" ] || fail "code: child.pid"

# --- SIGTERM to gpupool-run kills the whole group, background grandchildren included ---
spec tree '["sh", "-c", "sleep 300 & sleep 300 & wait"]'
run_bg tree
PGID=$(field "$TMP/tree" pid)
wait_for 10 sh -c "[ \$(pgrep -g $PGID | wc -l) -ge 3 ]" || fail "tree: grandchildren not running"
kill -TERM "$SUP"
wait_for 20 gone "$SUP" || fail "tree: gpupool-run still running after SIGTERM"
group_empty "$PGID" || fail "tree: processes of group $PGID left: $(pgrep -g "$PGID" | tr '\n' ' ')"
state_is "$TMP/tree" killed || fail "tree: state $(field "$TMP/tree" state)"
[ "$(field "$TMP/tree" escalated)" = false ] || fail "tree: escalated for a job that obeys SIGTERM"

# --- a job ignoring SIGTERM gets SIGKILL after the grace period ---
spec stubborn '["sh", "-c", "trap \"\" TERM; sleep 300 & wait; wait"]'
run_bg stubborn --grace 1
PGID=$(field "$TMP/stubborn" pid)
kill -TERM "$SUP"
wait_for 20 gone "$SUP" || fail "stubborn: gpupool-run still running"
group_empty "$PGID" || fail "stubborn: processes of group $PGID left"
state_is "$TMP/stubborn" killed || fail "stubborn: state $(field "$TMP/stubborn" state)"
[ "$(field "$TMP/stubborn" escalated)" = true ] || fail "stubborn: not escalated"
[ "$(field "$TMP/stubborn" signal)" = 9 ] || fail "stubborn: signal $(field "$TMP/stubborn" signal)"
field "$TMP/stubborn" reason | grep -q 'SIGKILL after the 1 s grace' || fail "stubborn: reason"

# --- the leader's exit kills what it left in its group ---
spec leftover '["sh", "-c", "sleep 300 & echo $! > leftover.pid"]'
run_fg leftover
LEFT=$(cat "$TMP/leftover/work/leftover.pid")
wait_for 5 gone "$LEFT" || fail "leftover: background process $LEFT survived its leader"

# --- the log cap: rotated once to .1, neither file past the cap ---
spec logs '["sh", "-c", "i=0; while [ $i -lt 3000 ]; do echo line-$i; i=$((i+1)); done"]'
run_fg logs --log-max 10000
for f in stdout.log stdout.log.1; do
    size=$(stat -c %s "$TMP/logs/$f")
    [ "$size" -le 10000 ] || fail "logs: $f has $size bytes, cap 10000"
done
[ "$(stat -c %s "$TMP/logs/stdout.log.1")" -eq 10000 ] || fail "logs: .1 not full"
[ "$(tail -n 1 "$TMP/logs/stdout.log")" = line-2999 ] || fail "logs: the newest output lost"

# --- SIGKILL of the process that started gpupool-run (the agent) leaves the job running ---
spec orphan '["sh", "-c", "sleep 2; echo finished"]'
mkdir -p "$TMP/orphan"
(setsid "$RUN" --state-dir "$TMP/orphan" --spec "$TMP/orphan.json" \
    >"$TMP/orphan/supervisor.log" 2>&1 &
    wait) &
AGENT=$!
wait_for 10 state_is "$TMP/orphan" running || fail "orphan: never running"
kill -KILL "$AGENT"
wait "$AGENT" 2>/dev/null || true
SUP=$(cut -d' ' -f1 "$TMP/orphan/supervisor.pid")
STARTED+=("$SUP")
kill -0 "$SUP" || fail "orphan: the supervisor died with the agent"
wait_for 20 state_is "$TMP/orphan" exited || fail "orphan: never exited"
[ "$(field "$TMP/orphan" exit_code)" = 0 ] || fail "orphan: exit_code $(field "$TMP/orphan" exit_code)"
grep -qx finished "$TMP/orphan/stdout.log" || fail "orphan: the job did not run to its end"

# --- bad arguments and bad specs: exit 2, one line naming the field ---
expect_usage() {
    [ "$RC" -eq 2 ] || fail "$1: exit status $RC, expected 2"
    grep -qF -- "$2" "$TMP/last.err" || fail "$1: stderr lacks \"$2\": $(cat "$TMP/last.err")"
    [ "$(wc -l <"$TMP/last.err")" -eq 1 ] || fail "$1: more than one line on stderr"
}
printf '{"job": 1, "replica": 0, "epoch": 1, "spec": {"args": ["x"]}}' >"$TMP/nocmd.json"
run_fg nocmd
expect_usage nocmd "spec.command: required"
[ ! -e "$TMP/nocmd/status.json" ] || fail "nocmd: a record for a spec that was refused"
printf '{"job": 1, "replica": 0, "epoch": 1, "spec": {"command": ["x"]}, "gpus": [{"index": 0}]}' \
    >"$TMP/nouuid.json"
run_fg nouuid
expect_usage nouuid "gpus[0].uuid"
printf '{"job": 1, ' >"$TMP/trunc.json"
run_fg trunc
expect_usage trunc "trunc.json"
spec badgrace '["true"]'
run_fg badgrace --grace soon
expect_usage badgrace "--grace"
set +e
"$RUN" --spec "$TMP/code.json" >/dev/null 2>"$TMP/last.err"
RC=$?
set -e
expect_usage nostatedir "--state-dir: required"
run_fg missing-spec-file
expect_usage missing-spec-file "missing-spec-file.json"

# --- a command that cannot be executed: recorded (127 and why), gpupool-run exits 0 ---
spec noexec '["/nonexistent/program", "arg"]'
run_fg noexec
[ "$RC" -eq 0 ] || fail "noexec: exit status $RC"
state_is "$TMP/noexec" exited || fail "noexec: state"
[ "$(field "$TMP/noexec" exit_code)" = 127 ] || fail "noexec: exit_code"
field "$TMP/noexec" error | grep -qF "exec /nonexistent/program: No such file or directory" ||
    fail "noexec: error \"$(field "$TMP/noexec" error)\""
grep -qF "No such file or directory" "$TMP/noexec/stderr.log" || fail "noexec: not in stderr.log"
printf '{"job": 1, "replica": 0, "epoch": 1, "spec": {"command": ["true"], "working_dir": "%s"}}' \
    /nonexistent/dir >"$TMP/nodir.json"
run_fg nodir
field "$TMP/nodir" error | grep -qF "chdir /nonexistent/dir" || fail "nodir: error"

# --- one supervisor per directory ---
spec twice '["sleep", "300"]'
run_bg twice
run_fg twice
[ "$RC" -eq 1 ] || fail "twice: a second supervisor exited $RC, expected 1"
grep -qF "supervised by gpupool-run pid $SUP" "$TMP/last.err" || fail "twice: $(cat "$TMP/last.err")"
kill -TERM "$SUP"
wait_for 20 gone "$SUP" || fail "twice: still running"

# --- --user: the job runs as that user; switching needs root ---
if [ "$(id -u)" -eq 0 ] && id nobody >/dev/null 2>&1; then
    chmod 0755 "$TMP" # the job's user must reach work/
    spec user '["sh", "-c", "id -u; touch file-in-work"]'
    run_fg user --user nobody
    [ "$(head -n 1 "$TMP/user/stdout.log")" = "$(id -u nobody)" ] || fail "user: not run as nobody"
    [ -e "$TMP/user/work/file-in-work" ] || fail "user: work/ not writable by the user"
    if command -v setpriv >/dev/null; then
        set +e
        setpriv --reuid nobody --regid "$(id -g nobody)" --clear-groups \
            "$RUN" --state-dir "$TMP/user2" --spec "$TMP/user.json" --user root \
            >/dev/null 2>"$TMP/last.err"
        RC=$?
        set -e
        expect_usage user-not-root "needs root"
    fi
else
    run_fg code --user root
    expect_usage user-not-root "needs root"
fi

# --- volumes: /data/NAME in a private mount namespace as root, links under work/ otherwise ---
mkdir -p "$TMP/vol-ro" "$TMP/vol-rw"
echo dataset >"$TMP/vol-ro/file"
chmod 0777 "$TMP/vol-rw"
vols='"volumes": [{"name": "ds", "path": "'$TMP/vol-ro'", "read_only": true}, {"name": "ckpt", "path": "'$TMP/vol-rw'"}],'
probe='["sh", "-c", "echo dir=$GPUPOOL_DATA_DIR; ls $GPUPOOL_DATA_DIR | tr \"\\n\" \" \"; echo; cat $GPUPOOL_DATA_DIR/ds/file; touch $GPUPOOL_DATA_DIR/ckpt/written && echo rw-ok; touch $GPUPOOL_DATA_DIR/ds/nope 2>/dev/null && echo ro-broken || echo ro-ok"]'
if [ "$(id -u)" -eq 0 ] && unshare -m true 2>/dev/null; then
    host_data_before=$(ls -A /data 2>/dev/null || true)
    spec vol-mount "$probe" "$vols"
    run_fg vol-mount
    out=$(cat "$TMP/vol-mount/stdout.log")
    [ "$(field "$TMP/vol-mount" exit_code)" = 0 ] || fail "vol-mount: $(field "$TMP/vol-mount" error) $out"
    grep -qx "dir=/data" <<<"$out" || fail "vol-mount: GPUPOOL_DATA_DIR: $out"
    grep -qx "ckpt ds " <<<"$out" || fail "vol-mount: /data holds more or less than the volumes: $out"
    grep -qx dataset <<<"$out" || fail "vol-mount: the read-only volume's file: $out"
    grep -qx rw-ok <<<"$out" && [ -e "$TMP/vol-rw/written" ] || fail "vol-mount: read-write: $out"
    grep -qx ro-ok <<<"$out" && [ ! -e "$TMP/vol-ro/nope" ] || fail "vol-mount: read-only: $out"
    [ "$(ls -A /data 2>/dev/null || true)" = "$host_data_before" ] || fail "vol-mount: the host's /data changed"
    # The job cannot undo read-only once it runs as an unprivileged user.
    if id nobody >/dev/null 2>&1; then
        chmod 0755 "$TMP"
        spec vol-user '["sh", "-c", "mount -o remount,rw /data/ds 2>/dev/null && echo remounted; touch /data/ds/x 2>/dev/null && echo ro-broken || echo ro-ok"]' "$vols"
        run_fg vol-user --user nobody
        [ "$(cat "$TMP/vol-user/stdout.log")" = ro-ok ] || fail "vol-user: $(cat "$TMP/vol-user/stdout.log")"
    fi
    # A volume that does not exist: a failed start naming it.
    spec vol-missing '["true"]' '"volumes": [{"name": "gone", "path": "/nonexistent/gone"}],'
    run_fg vol-missing
    [ "$(field "$TMP/vol-missing" exit_code)" = 127 ] || fail "vol-missing: exit code"
    field "$TMP/vol-missing" error | grep -qF "mounting volume gone (/nonexistent/gone): No such file or directory" ||
        fail "vol-missing: error \"$(field "$TMP/vol-missing" error)\""
fi
if [ "$(id -u)" -ne 0 ] || { id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null; }; then
    as_user=()
    if [ "$(id -u)" -eq 0 ]; then
        chmod 0777 "$TMP"
        as_user=(setpriv --reuid nobody --regid "$(id -g nobody)" --clear-groups)
    fi
    spec vol-link "$probe" "$vols"
    chmod 0644 "$TMP/vol-link.json"
    set +e
    "${as_user[@]}" "$RUN" --state-dir "$TMP/vol-link" --spec "$TMP/vol-link.json" >"$TMP/last.out" 2>"$TMP/last.err"
    set -e
    out=$(cat "$TMP/vol-link/stdout.log" 2>/dev/null || true)
    grep -qx "dir=$TMP/vol-link/work/data" <<<"$out" || fail "vol-link: GPUPOOL_DATA_DIR: $out $(cat "$TMP/last.err")"
    [ "$(readlink "$TMP/vol-link/work/data/ds")" = "$TMP/vol-ro" ] || fail "vol-link: no link to the volume"
    grep -qx dataset <<<"$out" || fail "vol-link: the volume's file through the link: $out"
    spec vol-link-missing '["true"]' '"volumes": [{"name": "gone", "path": "/nonexistent/gone"}],'
    chmod 0644 "$TMP/vol-link-missing.json"
    "${as_user[@]}" "$RUN" --state-dir "$TMP/vol-link-missing" --spec "$TMP/vol-link-missing.json" 2>/dev/null || true
    field "$TMP/vol-link-missing" error | grep -qF "linking volume gone (/nonexistent/gone): No such file or directory" ||
        fail "vol-link-missing: error \"$(field "$TMP/vol-link-missing" error)\""
fi
# A bad volume in the spec: exit 2 naming the field.
spec vol-bad '["true"]' '"volumes": [{"name": "Bad", "path": "/x"}],'
run_fg vol-bad
expect_usage vol-bad "volumes[0].name"

# --- fractional GPUs (gpu_share): libgpushare preloaded, its accounting region created 0660,
# the limits in the job's environment ---
LIB=$(dirname "$RUN")/../lib/libgpushare.so
printf '{"job": 1, "replica": 0, "epoch": 1, "gpus": [{"uuid": "GPU-f", "milli": 0, "memory_mib": 1024}], "gpu_share": {"memory_mib": 1024, "core_percent": 25, "core_policy": "strict"}, "spec": {"command": ["sh", "-c", "echo preload=$LD_PRELOAD; echo region=$GPUPOOL_SHARE_REGION; stat -c %%a $GPUPOOL_SHARE_REGION; echo limits=$GPUPOOL_GPU_MEMORY_LIMIT_MIB,$GPUPOOL_GPU_CORE_LIMIT,$GPUPOOL_GPU_CORE_POLICY"]}}\n' >"$TMP/share.json"
run_fg share
out=$(cat "$TMP/share/stdout.log")
[ "$(field "$TMP/share" exit_code)" = 0 ] || fail "share: $(field "$TMP/share" error) $out"
if [ -e "$LIB" ]; then
    grep -qx "preload=$(realpath "$LIB")" <<<"$out" || fail "share: LD_PRELOAD is not libgpushare: $out"
fi
grep -qx "region=$TMP/share/share.region" <<<"$out" || fail "share: GPUPOOL_SHARE_REGION: $out"
grep -qx 660 <<<"$out" || fail "share: the region's mode: $out"
grep -qx "limits=1024,25,strict" <<<"$out" || fail "share: the limits in the environment: $out"
[ ! -s "$TMP/share/stderr.log" ] || fail "share: the library wrote to a job that uses no GPU: $(cat "$TMP/share/stderr.log")"
# A whole GPU gets neither, and so does a GPU's milli without gpu_share.
for g in '"milli": 1000' '"milli": 250, "memory_mib": 1024'; do
    printf '{"job": 1, "replica": 0, "epoch": 1, "gpus": [{"uuid": "GPU-w", %s}], "spec": {"command": ["sh", "-c", "echo preload=$LD_PRELOAD region=$GPUPOOL_SHARE_REGION"]}}\n' "$g" >"$TMP/whole.json"
    rm -rf "$TMP/whole"
    run_fg whole
    [ "$(cat "$TMP/whole/stdout.log")" = "preload= region=" ] || fail "whole ($g): $(cat "$TMP/whole/stdout.log")"
    [ ! -e "$TMP/whole/share.region" ] || fail "whole ($g): a region without gpu_share"
done

# --- cgroup limits, where this machine lets gpupool-run write cgroups ---
spec limits '["sleep", "30"]' '"cpu_milli": 500, "memory_mib": 128, '
run_bg limits
CG=$(field "$TMP/limits" cgroup)
if [ -n "$CG" ]; then
    PID=$(field "$TMP/limits" pid)
    for dir in ${CG//,/ }; do
        grep -qx "$PID" "$dir/cgroup.procs" || fail "limits: job not in $dir"
        if [ -e "$dir/memory.max" ]; then
            [ "$(cat "$dir/memory.max")" = 134217728 ] || fail "limits: memory.max"
            [ "$(cat "$dir/cpu.max")" = "50000 100000" ] || fail "limits: cpu.max"
        elif [ -e "$dir/memory.limit_in_bytes" ]; then
            [ "$(cat "$dir/memory.limit_in_bytes")" = 134217728 ] || fail "limits: memory limit"
        elif [ -e "$dir/cpu.cfs_quota_us" ]; then
            [ "$(cat "$dir/cpu.cfs_quota_us")" = 50000 ] || fail "limits: cpu quota"
        fi
    done
    kill -TERM "$SUP"
    wait_for 20 gone "$SUP" || fail "limits: still running"
    for dir in ${CG//,/ }; do
        [ ! -e "$dir" ] || fail "limits: $dir not removed"
    done
else
    grep -q "no CPU/memory limits" "$TMP/limits/supervisor.log" || fail "limits: no warning"
    echo "note: cgroups not writable here; checked the warning only"
    kill -TERM "$SUP"
    wait_for 20 gone "$SUP" || fail "limits: still running"
fi

echo "run_supervise: all checks passed"
