#!/usr/bin/env bash
# gpupool sim's bad input: each case exits with status 2, prints nothing on stdout and one line on
# stderr naming the file and line, or the flag and value, that is wrong.
source "$(dirname "$0")/lib.sh"

# Input files.
run sim --nodes "$NODES" --pods "$TMP/no-such-pods.csv" --policy fgd --seeds 1
expect_error "$TMP/no-such-pods.csv"
run sim --nodes "$TMP/no-such-nodes.csv" --pods "$MINI" --policy fgd --seeds 1
expect_error "$TMP/no-such-nodes.csv"
run sim --nodes "$NODES" --pods "$FIX/pods_no_num_gpu.csv" --policy fgd --seeds 1
expect_error "pods_no_num_gpu.csv:1:" "num_gpu"
run sim --nodes "$NODES" --pods "$FIX/pods_bad_number.csv" --policy fgd --seeds 1
expect_error "pods_bad_number.csv:4:" "cpu_milli" "12x00"
# A number too large for any integer (found by the fuzzer: the conversion was undefined).
run sim --nodes "$NODES" --pods "$FIX/pods_huge_number.csv" --policy fgd --seeds 1
expect_error "pods_huge_number.csv:3:" "memory_mib" "out of range"
run sim --nodes "$FIX/nodes_bad_number.csv" --pods "$MINI" --policy fgd --seeds 1
expect_error "nodes_bad_number.csv:3:" "gpu" "eight"
# A bad second trace fails the run before any replay.
run sim --nodes "$NODES" --pods "$MINI" --pods "$FIX/pods_bad_number.csv" --policy fgd --seeds 1
expect_error "pods_bad_number.csv:4:"
run sim --nodes "$NODES" --pods "$MINI" --pods "$MINI" --policy fgd --seeds 1
expect_error "--pods" "mini"

# Policies: the unknown name and the valid ones.
run sim --nodes "$NODES" --pods "$MINI" --policy fgd,nosuchpolicy
expect_error "--policy" "nosuchpolicy" "random" "fgd"
run sim --nodes "$NODES" --pods "$MINI" --policy ""
expect_error "--policy"

# Option values: the flag and the value.
for v in 5-x x 9-3 "" 1,,2 -4 1-2-3 "1, 2" 99999999999999999999; do
    run sim --nodes "$NODES" --pods "$MINI" --seeds "$v"
    expect_error "--seeds" "\"$v\""
done
for v in abc 0 -1 nan inf 1.3x ""; do
    run sim --nodes "$NODES" --pods "$MINI" --inflate "$v"
    expect_error "--inflate" "\"$v\""
done
for v in 0 x -2 1.5 100000; do
    run sim --nodes "$NODES" --pods "$MINI" --jobs "$v"
    expect_error "--jobs" "\"$v\""
done

# Usage.
run sim --pods "$MINI"
expect_error "--nodes"
run sim --nodes "$NODES"
expect_error "--pods"
run sim --nodes "$NODES" --pods "$MINI" --bogus
expect_error "--bogus"
run sim --nodes "$NODES" --pods "$MINI" extra-argument
expect_error "extra-argument"
run sim --nodes "$NODES" --pods
expect_error "--pods"
run sim --list-policies=yes
expect_error "--list-policies"

echo "sim_errors: ok"
