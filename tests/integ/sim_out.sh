#!/usr/bin/env bash
# gpupool sim --out DIR: creates DIR with its parents and writes summary.md, results.csv (the
# stdout rows), curves.csv (one row per arrival) and one well-formed SVG chart per trace.
source "$(dirname "$0")/lib.sh"

OUT="$TMP/nested/out"
run sim --nodes "$NODES" --pods "$MINI" --pods "$MULTI" --policy fgd,random --seeds 1-2 \
    --jobs 2 --out "$OUT"
expect_rc 0
for f in summary.md results.csv curves.csv alloc-mini.svg alloc-tiny_multigpu.svg; do
    [ -s "$OUT/$f" ] || fail "--out: $f missing or empty"
done
cmp -s "$TMP/stdout" "$OUT/results.csv" || fail "results.csv differs from stdout"

# summary.md: a Markdown table with one row per trace x policy.
grep -q '^| trace | policy |' "$OUT/summary.md" || fail "summary.md: no table header"
for t in mini tiny_multigpu; do
    for p in fgd random; do
        n=$(grep -c "^| $t | $p |" "$OUT/summary.md" || true)
        [ "$n" -eq 1 ] || fail "summary.md: $n rows for $t / $p"
    done
done
grep -q '±' "$OUT/summary.md" || fail "summary.md: no mean ± sd"

# curves.csv: arrivals numbered from 1 per replay, arrived % never falls, allocated % stays
# within 0..arrived %, and every replay of the grid is there.
[ "$(head -n 1 "$OUT/curves.csv")" = "trace,policy,seed,arrival,arrived_pct,allocated_pct" ] ||
    fail "curves.csv header: $(head -n 1 "$OUT/curves.csv")"
awk -F, '
    NR == 1 { next }
    { key = $1 "," $2 "," $3 }
    key != prev { prev = key; n = 0; last = 0; runs++ }
    {
        n++
        if ($4 != n) { print key ": arrival " $4 " after " n - 1; bad = 1 }
        if ($5 + 0 < last) { print key ": arrived % falls at arrival " $4; bad = 1 }
        if ($6 > $5 + 0.001 || $6 < 0) { print key ": allocated " $6 " vs arrived " $5; bad = 1 }
        last = $5 + 0
    }
    END {
        if (runs != 8) { print runs " replays in curves.csv, expected 8"; bad = 1 }
        exit bad
    }' "$OUT/curves.csv" >&2 || fail "curves.csv is inconsistent"

# The charts: well-formed XML, the trace in the title, one line per policy plus "ideal".
check_xml() {
    if command -v xmllint >/dev/null; then
        xmllint --noout "$1"
    else
        python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' "$1"
    fi
}
for t in mini tiny_multigpu; do
    svg="$OUT/alloc-$t.svg"
    check_xml "$svg" >&2 || fail "$svg is not well-formed XML"
    grep -q "<title>\|<text[^>]*>GPU allocation vs arrival: $t" "$svg" || fail "$svg: no title naming $t"
    n=$(grep -c '<polyline' "$svg")
    [ "$n" -eq 3 ] || fail "$svg: $n polylines, expected 3 (ideal, fgd, random)"
    for label in ideal fgd random; do
        grep -q ">$label</text>" "$svg" || fail "$svg: no legend entry $label"
    done
done

# An existing directory is reused; the files are replaced.
run sim --nodes "$NODES" --pods "$MINI" --policy fgd --seeds 1 --out "$OUT"
expect_rc 0
[ "$(grep -c . "$OUT/results.csv")" -eq 2 ] || fail "results.csv not replaced on a second run"

# A directory that cannot be created is an internal failure (exit 1), named on stderr.
: >"$TMP/file"
run sim --nodes "$NODES" --pods "$MINI" --policy fgd --seeds 1 --out "$TMP/file/sub"
expect_rc 1
expect_stderr "$TMP/file"

echo "sim_out: ok"
