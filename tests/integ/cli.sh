#!/usr/bin/env bash
# The program's entry: --help, --version, help COMMAND, no or unknown command.
source "$(dirname "$0")/lib.sh"

run --help
expect_rc 0
expect_stdout "usage: gpupool" "sim"

run --version
expect_rc 0
[ "$(cat "$TMP/stdout")" = "gpupool 0.1.0" ] || fail "--version printed: $(cat "$TMP/stdout")"

run sim --help
expect_rc 0
expect_stdout "usage: gpupool sim" "--nodes" "--pods" "--policy" "--seeds" "--inflate" "--jobs" \
    "--out" "--list-policies"

run help sim
expect_rc 0
expect_stdout "usage: gpupool sim"

run
expect_rc 2
[ ! -s "$TMP/stdout" ] || fail "no command: wrote to stdout"
expect_stderr "usage: gpupool"

run frobnicate
expect_rc 2
[ ! -s "$TMP/stdout" ] || fail "unknown command: wrote to stdout"
expect_stderr "frobnicate" "usage: gpupool"

echo "cli: ok"
