#!/usr/bin/env bash
# Runs every benchmark and regenerates docs/results/ from what they print:
#   1. one FGD replay of the default trace on one core (10 seeds, wall time of each);
#   2. the full grid: 12 traces x every policy x 10 seeds on 2 cores (--jobs 2), timed (the 9
#      traces with published figures, then gpuspec05, cpu0 and cpu037, which have none);
#   3. the default trace again with random tie-breaks (what tie-breaking does to each policy);
#   4. derived traces: the default trace with 10/20/25/33% of its GPU pods pinned to GPU models
#      (bench/trace_gpuspec.py, written to out/traces/), FGD and ours;
#   5. placement throughput on a synthetic 10,000-node x 8-GPU pool (FGD, ours and BestFit).
# Raw outputs go to out/bench/; docs/results/*.md are written by bench/report.py from them.
# Usage: bench/run.sh [--quick]   (--quick: 2 seeds, for trying the pipeline)
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=${DATA:-../shared/data/alibaba-gpu-v2023}
BIN=build/bin
OUT=out/bench
SEEDS=42-51
[ "${1:-}" = "--quick" ] && SEEDS=42-43
TRACES="default gpushare40 gpushare60 gpushare80 gpushare100 multigpu20 multigpu30 multigpu40 multigpu50"
TRACES="$TRACES gpuspec05 cpu0 cpu037"
DERIVED="10 20 25 33"
mkdir -p "$OUT" docs/results

nodes="$DATA/openb_node_list_gpu_node.csv"
pods=()
for t in $TRACES; do pods+=(--pods "$DATA/openb_pod_list_$t.csv"); done

pin() { if command -v taskset >/dev/null; then taskset -c 0 "$@"; else "$@"; fi; }

echo "bench: one FGD replay of the default trace on one core" >&2
pin "$BIN/gpupool" sim --nodes "$nodes" --pods "$DATA/openb_pod_list_default.csv" \
    --policy fgd --seeds "$SEEDS" --jobs 1 > "$OUT/fgd-default-1core.csv"

echo "bench: full grid on 2 cores" >&2
start=$(date +%s.%N)
"$BIN/gpupool" sim --nodes "$nodes" "${pods[@]}" --policy all --seeds "$SEEDS" --jobs 2 \
    --out "$OUT/grid" > "$OUT/grid.csv"
end=$(date +%s.%N)
python3 -c "import sys; print(\"grid_seconds=%.1f cores=2 seeds=%s\" % (float(sys.argv[2]) - float(sys.argv[1]), sys.argv[3]))" "$start" "$end" "$SEEDS" > "$OUT/grid-time.txt"

echo "bench: default trace with random tie-breaks, for comparison" >&2
"$BIN/gpupool" sim --nodes "$nodes" --pods "$DATA/openb_pod_list_default.csv" --policy all \
    --seeds "$SEEDS" --ties random --jobs 2 > "$OUT/ties-random.csv"

echo "bench: derived gpuspec traces (pinned shares $DERIVED %)" >&2
derived=()
for p in $DERIVED; do
    f="out/traces/openb_pod_list_gpuspec${p}d.csv"
    python3 bench/trace_gpuspec.py --percent "$p" --out "$f" \
        --default "$DATA/openb_pod_list_default.csv" \
        --spec-from "$DATA/openb_pod_list_gpuspec05.csv" --nodes "$nodes"
    derived+=(--pods "$f")
done
"$BIN/gpupool" sim --nodes "$nodes" "${derived[@]}" --policy fgd,ours --seeds "$SEEDS" \
    --jobs 2 > "$OUT/derived.csv"

echo "bench: placement throughput" >&2
{
    pin "$BIN/placement_bench" --policy fgd
    pin "$BIN/placement_bench" --policy ours
    pin "$BIN/placement_bench" --policy bestfit
} > "$OUT/placement.txt"

cp "$OUT"/grid/alloc-*.svg docs/results/
python3 bench/report.py --out-dir "$OUT" --results docs/results
echo "bench: wrote docs/results/alibaba-v2023.md and docs/results/speed.md" >&2
