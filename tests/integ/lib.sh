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

NODES="$FIX/nodes.csv"
MINI="$FIX/openb_pod_list_mini.csv"
MULTI="$FIX/tiny_multigpu.csv"
HEADER="trace,policy,seed,unalloc_pct_at_100,unalloc_pct_at_130,placed,failed,wall_ms"
