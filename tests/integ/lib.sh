# Helpers for the integration tests of the gpupool program; sourced by the test scripts.
#
# Each script gets the binary and the fixture directory as arguments, works in a temporary
# directory removed on exit, and fails on the first broken expectation with a message that shows
# the command, what was expected and what came out.

set -euo pipefail

GP_BIN=${1:?usage: $0 GPUPOOL_BINARY FIXTURE_DIR}
FIX=${2:?usage: $0 GPUPOOL_BINARY FIXTURE_DIR}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/gpupool-integ.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

fail() {
    echo "FAIL: $*" >&2
    if [ -s "$TMP/stderr" ]; then
        echo "--- stderr of the last command:" >&2
        head -n 20 "$TMP/stderr" >&2
    fi
    exit 1
}

# run ARGS...: runs the binary; leaves stdout, stderr and the exit status in $TMP/stdout,
# $TMP/stderr and $RC, never failing itself.
run() {
    LAST_CMD="gpupool $*"
    set +e
    "$GP_BIN" "$@" >"$TMP/stdout" 2>"$TMP/stderr"
    RC=$?
    set -e
}

expect_rc() {
    [ "$RC" -eq "$1" ] || fail "$LAST_CMD: exit status $RC, expected $1"
}

# expect_stderr TEXT...: stderr holds every TEXT (fixed strings).
expect_stderr() {
    for text in "$@"; do
        grep -qF -- "$text" "$TMP/stderr" || fail "$LAST_CMD: stderr lacks \"$text\""
    done
}

expect_stdout() {
    for text in "$@"; do
        grep -qF -- "$text" "$TMP/stdout" || fail "$LAST_CMD: stdout lacks \"$text\""
    done
}

# expect_error TEXT...: exit status 2, nothing on stdout, one line on stderr holding every TEXT.
expect_error() {
    expect_rc 2
    [ ! -s "$TMP/stdout" ] || fail "$LAST_CMD: wrote to stdout on an error: $(head -c 200 "$TMP/stdout")"
    local lines
    lines=$(wc -l <"$TMP/stderr")
    [ "$lines" -eq 1 ] || fail "$LAST_CMD: $lines lines on stderr, expected one"
    expect_stderr "$@"
}

# start_gpupoold GPUPOOLD_BINARY: starts gpupoold on 127.0.0.1 (a port the kernel picks) with its
# data in $TMP/data, stopped on exit; sets DATA, GPD_PID, PORT and exports GPUPOOL_SERVER.
start_gpupoold() {
    DATA="$TMP/data"
    mkdir -p "$DATA"
    "$1" --data-dir "$DATA" --listen 127.0.0.1:0 >"$TMP/gpupoold.out" 2>"$TMP/gpupoold.err" &
    GPD_PID=$!
    trap 'kill "$GPD_PID" 2>/dev/null; wait "$GPD_PID" 2>/dev/null; rm -rf "$TMP"' EXIT
    PORT=
    for _ in $(seq 100); do
        PORT=$(sed -n 's/.*listening=127\.0\.0\.1:\([0-9]*\).*/\1/p' "$TMP/gpupoold.err" | head -n 1)
        [ -n "$PORT" ] && [ -s "$DATA/admin.token" ] && break
        kill -0 "$GPD_PID" 2>/dev/null || fail "gpupoold exited: $(tail -n 5 "$TMP/gpupoold.err")"
        sleep 0.1
    done
    [ -n "$PORT" ] || fail "gpupoold did not log its port: $(tail -n 5 "$TMP/gpupoold.err")"
    export GPUPOOL_SERVER="http://127.0.0.1:$PORT"
}

NODES="$FIX/nodes.csv"
MINI="$FIX/openb_pod_list_mini.csv"
MULTI="$FIX/tiny_multigpu.csv"
HEADER="trace,policy,seed,unalloc_pct_at_100,unalloc_pct_at_130,placed,failed,wall_ms"
