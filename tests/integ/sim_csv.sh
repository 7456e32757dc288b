#!/usr/bin/env bash
# gpupool sim's CSV contract: the exact header, one row per (trace, policy, seed) in a fixed
# order, the trace naming, numbers that parse and lie in range, --list-policies, and the same
# rows (wall_ms aside) whatever --jobs is.
source "$(dirname "$0")/lib.sh"

run sim --list-policies
expect_rc 0
mapfile -t POLICIES <"$TMP/stdout"
NPOL=${#POLICIES[@]}
for p in random dotproduct clustering packing bestfit fgd; do
    grep -qx "$p" "$TMP/stdout" || fail "--list-policies lacks $p"
done
[ "$(sort -u "$TMP/stdout" | grep -c .)" -eq "$NPOL" ] || fail "--list-policies: blank or repeated names"

# check_rows FILE: every data row has 8 fields, 2-decimal percentages in 0..100, integer counts
# with placed + failed > 0 and an integer wall_ms.
check_rows() {
    awk -F, '
        function pct(v) { return v ~ /^[0-9]+\.[0-9][0-9]$/ && v + 0 >= 0 && v + 0 <= 100 }
        NR == 1 { next }
        NF != 8 { print "line " NR ": " NF " fields"; bad = 1; next }
        !pct($4) || !pct($5) { print "line " NR ": bad percentage: " $0; bad = 1 }
        $6 !~ /^[0-9]+$/ || $7 !~ /^[0-9]+$/ || $6 + $7 <= 0 { print "line " NR ": bad counts: " $0; bad = 1 }
        $8 !~ /^[0-9]+$/ { print "line " NR ": bad wall_ms: " $0; bad = 1 }
        END { exit bad }' "$1" >&2 || fail "malformed rows in $1"
}

# keys TRACE... : the expected trace,policy,seed keys for the traces, all policies, seeds 1-3.
keys() {
    for t in "$@"; do
        for p in "${POLICIES[@]}"; do
            for s in 1 2 3; do
                echo "$t,$p,$s"
            done
        done
    done
}

run sim --nodes "$NODES" --pods "$MINI" --policy all --seeds 1-3 --jobs 1
expect_rc 0
cp "$TMP/stdout" "$TMP/jobs1.csv"
[ "$(head -n 1 "$TMP/jobs1.csv")" = "$HEADER" ] || fail "header: $(head -n 1 "$TMP/jobs1.csv")"
rows=$(tail -n +2 "$TMP/jobs1.csv" | wc -l)
[ "$rows" -eq $((NPOL * 3)) ] || fail "$rows rows for $NPOL policies x 3 seeds"
keys mini >"$TMP/expected"
tail -n +2 "$TMP/jobs1.csv" | cut -d, -f1-3 | diff "$TMP/expected" - >&2 ||
    fail "rows are not trace, policy (list order), seed (ascending)"
check_rows "$TMP/jobs1.csv"

# Determinism: the same rows, in the same order, with 4 workers.
run sim --nodes "$NODES" --pods "$MINI" --seeds 1-3 --jobs 4
expect_rc 0
diff <(cut -d, -f1-7 "$TMP/jobs1.csv") <(cut -d, -f1-7 "$TMP/stdout") >&2 ||
    fail "--jobs 1 and --jobs 4 differ"

# Several traces: argument order; a plain file name keeps its base name.
run sim --nodes "$NODES" --pods "$MULTI" --pods "$MINI" --seeds 3,1-2 --jobs 3
expect_rc 0
check_rows "$TMP/stdout"
keys tiny_multigpu mini >"$TMP/expected"
tail -n +2 "$TMP/stdout" | cut -d, -f1-3 | diff "$TMP/expected" - >&2 ||
    fail "two traces: rows out of order"
grep "^mini," "$TMP/stdout" | cut -d, -f1-7 | diff <(tail -n +2 "$TMP/jobs1.csv" | cut -d, -f1-7) - >&2 ||
    fail "a trace's rows change when another trace runs beside it"

# --policy keeps the given order and drops repeats; "all" adds the rest in list order.
run sim --nodes "$NODES" --pods "$MINI" --policy fgd,random,fgd --seeds 5
expect_rc 0
[ "$(tail -n +2 "$TMP/stdout" | cut -d, -f1-3 | paste -sd' ')" = "mini,fgd,5 mini,random,5" ] ||
    fail "--policy fgd,random,fgd: $(tail -n +2 "$TMP/stdout" | cut -d, -f1-3 | paste -sd' ')"
run sim --nodes "$NODES" --pods "$MINI" --policy random,all --seeds 5
expect_rc 0
expected=$( (echo random; grep -vx random <(printf '%s\n' "${POLICIES[@]}")) | sed 's/^/mini,/; s/$/,5/' | paste -sd' ')
[ "$(tail -n +2 "$TMP/stdout" | cut -d, -f1-3 | paste -sd' ')" = "$expected" ] ||
    fail "--policy random,all: order $(tail -n +2 "$TMP/stdout" | cut -d, -f2 | paste -sd' ')"

# --inflate: a replay that stops short of 100% has no value at 100 or 130.
run sim --nodes "$NODES" --pods "$MINI" --policy fgd --seeds 1 --inflate 0.5
expect_rc 0
[ "$(tail -n +2 "$TMP/stdout" | cut -d, -f4,5)" = "nan,nan" ] ||
    fail "--inflate 0.5: $(tail -n +2 "$TMP/stdout")"

echo "sim_csv: ok ($NPOL policies)"
