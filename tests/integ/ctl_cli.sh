#!/usr/bin/env bash
# The server commands of gpupool against a real gpupoold on 127.0.0.1 (a port the kernel picks)
# with a temporary data directory: objects, a simulated node, submitting by flags and from
# YAML, get/describe/cancel by name, exit statuses, tenant isolation and login.
# Arguments: the gpupool binary, the gpupoold binary.
source "$(dirname "$0")/lib.sh"

GPD=${2:?usage: $0 GPUPOOL_BINARY GPUPOOLD_BINARY}
mkdir -p "$TMP/home"
export HOME="$TMP/home"
unset XDG_CONFIG_HOME GPUPOOL_SERVER GPUPOOL_TOKEN

start_gpupoold "$GPD"
ADMIN=(--token-file "$DATA/admin.token")

# json_field FIELD: the value of a top-level string or number field in $TMP/stdout, as
# `-o json` prints it (indented by two spaces, one field a line).
json_field() {
    sed -n "s/^  \"$1\": //p" "$TMP/stdout" | sed 's/,$//; s/^"//; s/"$//'
}

# ---- objects ----
run tenant create team-a --quota-gpus 2 --quota-model A100-80GB=2 "${ADMIN[@]}"
expect_rc 0
expect_stdout "tenant team-a created"
run tenant create team-b "${ADMIN[@]}"
expect_rc 0
run queue create train --weight 2 --guarantee-gpus 2 --capability-gpus 4 "${ADMIN[@]}"
expect_rc 0
run queue set train --weight 3 "${ADMIN[@]}" -o json
expect_rc 0
[ "$(json_field weight)" = "3.0" ] || fail "queue set: weight $(json_field weight), expected 3"
grep -A1 '"guarantee"' "$TMP/stdout" | grep -qF '"gpus": 2' || fail "queue set changed the guarantee"
run get queues "${ADMIN[@]}"
expect_rc 0
expect_stdout "NAME" "WEIGHT" "train" "default"
run get tenant team-a -o yaml "${ADMIN[@]}"
expect_rc 0
expect_stdout "name: team-a" "A100-80GB: 2"
# team-a's users may submit to the train queue (grants), team-b's only to the default one.
run tenant set team-a --queues default,train "${ADMIN[@]}" -o json
expect_rc 0
grep -qF '"train"' "$TMP/stdout" || fail "tenant set --queues: train not granted"
grep -A1 '"models"' "$TMP/stdout" | grep -qF 'A100-80GB' || fail "tenant set changed the quota"

run token create --name alice --role user --tenant team-a "${ADMIN[@]}"
expect_rc 0
USER_TOKEN=$(cat "$TMP/stdout")
[ "$(wc -l <"$TMP/stdout")" -eq 1 ] && [ -n "$USER_TOKEN" ] || fail "token create: not one secret line"
USER=(--token "$USER_TOKEN")
run token list "${ADMIN[@]}"
expect_rc 0
expect_stdout "alice" "user" "team-a"

# ---- a simulated node, registered with the join token ----
curl -sf -o "$TMP/node.json" -X POST "$GPUPOOL_SERVER/v1/nodes" \
    -H "Authorization: Bearer $(cat "$DATA/join.token")" -H "Content-Type: application/json" \
    -d '{"name":"n1","cpu_milli":64000,"memory_mib":262144,"gpus":[
          {"uuid":"GPU-0","model":"A100-80GB","memory_mib":81920,"numa":0,"nvlink":[1]},
          {"uuid":"GPU-1","model":"A100-80GB","memory_mib":81920,"numa":0,"nvlink":[0]}]}' ||
    fail "node registration refused"
run get nodes "${USER[@]}"
expect_rc 0
expect_stdout "NAME" "SCHEDULABLE" "n1" "Ready" "2xA100-80GB"

# ---- submit by flags and from YAML ----
run submit --name train --queue train --gpus 1 --gpu-model A100-80GB --cpu 4 --memory 16Gi \
    --env EPOCHS=3 --max-runtime 2h --restart on-failure --max-restarts 2 "${USER[@]}" \
    -- python train.py --epochs 3
expect_rc 0
TRAIN_ID=$(cat "$TMP/stdout")
[[ "$TRAIN_ID" =~ ^[0-9]+$ ]] || fail "submit printed \"$TRAIN_ID\", not a job id"

cat >"$TMP/job.yaml" <<'EOF'
name: frac
queue: train
replicas: 2
resources:
  gpu_milli: 500
  gpu_memory_mib: 10240
command: [sleep, "100"]
EOF
run submit -f "$TMP/job.yaml" "${USER[@]}"
expect_rc 0
FRAC_ID=$(cat "$TMP/stdout")
[[ "$FRAC_ID" =~ ^[0-9]+$ ]] && [ "$FRAC_ID" != "$TRAIN_ID" ] || fail "submit -f printed \"$FRAC_ID\""

# wait_state JOB STATE: polls `get job JOB -o json` until its state is STATE (10 s at most).
wait_state() {
    for _ in $(seq 100); do
        run get job "$1" -o json "${USER[@]}"
        expect_rc 0
        [ "$(json_field state)" = "$2" ] && return 0
        sleep 0.1
    done
    fail "job $1: state $(json_field state) after 10 s, expected $2 (reason: $(json_field reason))"
}
wait_state "$TRAIN_ID" Scheduled
[ "$(json_field name)" = train ] || fail "get job $TRAIN_ID: name $(json_field name)"
wait_state frac Scheduled

run get jobs "${USER[@]}"
expect_rc 0
expect_stdout "ID" "NAME" "TENANT" "QUEUE" "STATE" "GPUS" "AGE" "REASON" "train" "2x0.5/10Gi"
run get jobs -o wide --state scheduled "${USER[@]}"
expect_rc 0
expect_stdout "NODES" "PRIORITY" "n1"
run get jobs --limit 1 --all -o json "${USER[@]}"
expect_rc 0
[ "$(grep -c '"submit_time_ms"' "$TMP/stdout")" -eq 2 ] || fail "get jobs --all: not both jobs"
run get job train -o yaml "${USER[@]}"
expect_rc 0
expect_stdout "name: train" "state: Scheduled" "placement:"

run describe job train "${USER[@]}"
expect_rc 0
expect_stdout "Name:" "train" "State:" "Scheduled" "Placement:" "n1" "GPU-" "whole" "Events:" \
    "Submitted" "python train.py --epochs 3"
run describe node n1 "${USER[@]}"
expect_rc 0
expect_stdout "GPUs:" "GPU-0" "GPU-1" "train/0"

# ---- cancel, requeue, nodes ----
run requeue frac "${USER[@]}"
expect_rc 0
expect_stdout "requeued"
run cancel train "${USER[@]}"
expect_rc 0
expect_stdout "job train ($TRAIN_ID) cancelled"
run get job "$TRAIN_ID" -o json "${USER[@]}"
[ "$(json_field state)" = Cancelled ] || fail "cancel: state $(json_field state)"
run cancel train "${USER[@]}"
expect_rc 1
expect_stderr "gpupool: " "Cancelled"
run nodes cordon n1 "${ADMIN[@]}"
expect_rc 0
run get nodes "${ADMIN[@]}"
expect_stdout "Cordoned" "false"
run nodes uncordon n1 "${ADMIN[@]}"
expect_rc 0
run nodes drain n1 "${USER[@]}"
expect_rc 1
expect_stderr "not allowed"

# ---- refusals: exit 1 with the server's message ----
run get job no-such-job "${USER[@]}"
expect_rc 1
expect_stderr "gpupool: job no-such-job: not found"
run submit --name greedy --queue train --gpus 3 "${USER[@]}" -- sleep 1
expect_rc 1
expect_stderr "quota"
[ ! -s "$TMP/stdout" ] || fail "a refused submit printed an id"
run get jobs --server http://127.0.0.1:1 "${USER[@]}"
expect_rc 1
expect_stderr "http://127.0.0.1:1"

# A user sees only the own tenant's jobs.
run submit --name other --tenant team-b --queue train --gpus 1 "${ADMIN[@]}" -- sleep 1
expect_rc 0
OTHER_ID=$(cat "$TMP/stdout")
for ref in other "$OTHER_ID"; do
    run get job "$ref" "${USER[@]}"
    expect_rc 1
    expect_stderr "not found"
done
run cancel other "${USER[@]}"
expect_rc 1
expect_stderr "not found"

# ---- usage errors: exit 2 ----
run submit --name x --frobnicate "${USER[@]}" -- true
expect_rc 2
expect_stderr "--frobnicate" "usage: gpupool submit"
run submit --name x --gpus two "${USER[@]}" -- true
expect_rc 2
expect_stderr "--gpus"
run submit --name x "${USER[@]}"
expect_rc 2
run get widgets "${USER[@]}"
expect_rc 2
run get jobs -o xml "${USER[@]}"
expect_rc 2
run get nodes --state pending "${USER[@]}"
expect_rc 2
run queue frob
expect_rc 2
run get --help
expect_rc 0
expect_stdout "usage: gpupool get" "--all" "--server"

# ---- login: the config file, mode 0600, then no flags needed ----
run login --server "$GPUPOOL_SERVER" --token "$USER_TOKEN"
expect_rc 0
CONFIG="$HOME/.config/gpupool/config"
[ -f "$CONFIG" ] || fail "login wrote no $CONFIG"
[ "$(stat -c %a "$CONFIG")" = 600 ] || fail "config mode $(stat -c %a "$CONFIG"), expected 600"
SAVED_SERVER=$GPUPOOL_SERVER
unset GPUPOOL_SERVER
run whoami
expect_rc 0
expect_stdout "role user" "tenant team-a"
run get job frac -o json
expect_rc 0
[ "$(json_field id)" = "$FRAC_ID" ] || fail "get job frac after login: id $(json_field id)"
run login --server "$SAVED_SERVER" --token not-a-token
expect_rc 1
expect_stderr "token"
grep -qF "$USER_TOKEN" "$CONFIG" || fail "a failed login replaced the config"

# ---- cleanup of objects ----
export GPUPOOL_SERVER=$SAVED_SERVER
run token revoke alice "${ADMIN[@]}"
expect_rc 0
run get jobs --token "$USER_TOKEN"
expect_rc 1
expect_stderr "revoked"
run cancel frac other "${ADMIN[@]}"
expect_rc 0
run queue delete train "${ADMIN[@]}"
expect_rc 1
expect_stderr "queue train: granted to tenant team-a"
run tenant set team-a --queues none "${ADMIN[@]}"
expect_rc 0
run queue delete train "${ADMIN[@]}"
expect_rc 0
expect_stdout "queue train deleted"

echo "ctl_cli: ok"
