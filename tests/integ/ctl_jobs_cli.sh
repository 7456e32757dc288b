#!/usr/bin/env bash
# gpupool submit without --name and the defaults of gpupool get jobs, against a real gpupoold on
# 127.0.0.1 (a port the kernel picks) with a temporary data directory and one registered node:
# - a job submitted without --name gets a generated name (the command's base name made valid,
#   a dash, five random characters), different for each submit;
# - `get jobs` lists the active jobs only (not the finished ones), newest first; --all-states
#   adds the finished ones; --order asc puts the oldest first; --state still chooses; bad
#   combinations are usage errors.
# Arguments: the gpupool binary, the gpupoold binary.
source "$(dirname "$0")/lib.sh"

GPD=${2:?usage: $0 GPUPOOL_BINARY GPUPOOLD_BINARY}
mkdir -p "$TMP/home"
export HOME="$TMP/home"
unset XDG_CONFIG_HOME GPUPOOL_SERVER GPUPOOL_TOKEN

start_gpupoold "$GPD"
export GPUPOOL_TOKEN
GPUPOOL_TOKEN=$(cat "$DATA/admin.token")

# ids [FIELD]: the ids (or another field) of the items in $TMP/stdout (`-o json`), one line.
ids() {
    python3 -c 'import json,sys; print(" ".join(str(j[sys.argv[1]]) for j in json.load(sys.stdin)["items"]))' \
        "${1:-id}" <"$TMP/stdout"
}

run tenant create t
expect_rc 0
curl -sf -o /dev/null -X POST "$GPUPOOL_SERVER/v1/nodes" \
    -H "Authorization: Bearer $(cat "$DATA/join.token")" -H "Content-Type: application/json" \
    -d '{"name":"n1","cpu_milli":64000,"memory_mib":262144,"gpus":[
          {"uuid":"GPU-0","model":"A100-80GB","memory_mib":81920,"numa":0,"nvlink":[]},
          {"uuid":"GPU-1","model":"A100-80GB","memory_mib":81920,"numa":0,"nvlink":[]}]}' ||
    fail "node registration refused"

# ---- generated names ----
SUFFIX='[bcdfghjklmnpqrstvwxz2456789]{5}'
name_of() {
    run get job "$1" -o json
    expect_rc 0
    python3 -c 'import json,sys; print(json.load(sys.stdin)["name"])' <"$TMP/stdout"
}
run submit --tenant t --gpus 1 -- python3 train.py --epochs 3
expect_rc 0
A=$(cat "$TMP/stdout")
[[ "$A" =~ ^[0-9]+$ ]] || fail "submit without --name printed \"$A\", not a job id"
NAME_A=$(name_of "$A")
[[ "$NAME_A" =~ ^python3-$SUFFIX$ ]] || fail "generated name \"$NAME_A\" for python3"
run submit --tenant t --gpus 1 -- python3 train.py --epochs 3
expect_rc 0
B=$(cat "$TMP/stdout")
NAME_B=$(name_of "$B")
[[ "$NAME_B" =~ ^python3-$SUFFIX$ ]] && [ "$NAME_B" != "$NAME_A" ] ||
    fail "a second submit got \"$NAME_B\" after \"$NAME_A\""
run submit --tenant t --gpus 1 -- ./My_Script.SH
expect_rc 0
C=$(cat "$TMP/stdout")
[[ "$(name_of "$C")" =~ ^my-script-sh-$SUFFIX$ ]] || fail "generated name for ./My_Script.SH: $(name_of "$C")"
run submit --tenant t --gpus 1 -- ___
expect_rc 0
D=$(cat "$TMP/stdout")
[[ "$(name_of "$D")" =~ ^job-$SUFFIX$ ]] || fail "generated name for ___: $(name_of "$D")"
LONG=$(printf 'x%.0s' $(seq 80))
run submit --tenant t --gpus 1 -- "/opt/$LONG"
expect_rc 0
E=$(cat "$TMP/stdout")
[[ "$(name_of "$E")" =~ ^x{57}-$SUFFIX$ ]] || fail "generated name for a long command: $(name_of "$E")"
run submit --tenant t --name given --gpus 1 -- sleep 1
expect_rc 0
F=$(cat "$TMP/stdout")
[ "$(name_of "$F")" = given ] || fail "--name given: $(name_of "$F")"

# ---- get jobs: active only, newest first ----
run cancel "$C" "$D"
expect_rc 0
run get jobs -o json
expect_rc 0
[ "$(ids)" = "$F $E $B $A" ] || fail "get jobs: ids $(ids), expected the active $F $E $B $A"
run get jobs
expect_rc 0
expect_stdout "$NAME_A" "$NAME_B" "given"
if grep -q Cancelled "$TMP/stdout"; then fail "get jobs lists a cancelled job"; fi
[ "$(awk 'NR > 1 {print $1}' "$TMP/stdout" | tr '\n' ' ')" = "$F $E $B $A " ] ||
    fail "get jobs table: not newest first: $(cat "$TMP/stdout")"
run get jobs --all-states -o json
expect_rc 0
[ "$(ids)" = "$F $E $D $C $B $A" ] || fail "get jobs --all-states: ids $(ids)"
run get jobs --all-states --order asc -o json
expect_rc 0
[ "$(ids)" = "$A $B $C $D $E $F" ] || fail "get jobs --all-states --order asc: ids $(ids)"
run get jobs --order asc -o json
expect_rc 0
[ "$(ids)" = "$A $B $E $F" ] || fail "get jobs --order asc: ids $(ids)"
run get jobs --state cancelled -o json
expect_rc 0
[ "$(ids)" = "$D $C" ] || fail "get jobs --state cancelled: ids $(ids)"
run get jobs --all-states --limit 2 --all -o json
expect_rc 0
[ "$(ids)" = "$F $E $D $C $B $A" ] || fail "get jobs --all-states in pages of 2: ids $(ids)"

# ---- usage errors ----
run get jobs --state running --all-states
expect_rc 2
expect_stderr "--state and --all-states"
run get jobs --order sideways
expect_rc 2
expect_stderr "--order: must be asc"
run get nodes --all-states
expect_rc 2
run get nodes --order asc
expect_rc 2

echo "ctl_jobs_cli: ok"
