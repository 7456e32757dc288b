#!/usr/bin/env python3
"""Derives a gpuspecNN-like pod trace from the default Alibaba v2023 trace.

The published gpuspec traces are the default trace with a share of its GPU pods pinned to GPU
models (the `gpu_spec` column); every other field is unchanged. This script does the same for
any share: it draws PERCENT % of the GPU pods of the default trace at random (seeded) and gives
each a model set drawn from the sets the pinned pods of a published gpuspec trace carry, in their
proportions, among pods of the same kind (a GPU share, one whole GPU, several GPUs). A drawn set
must name a model some node has with at least the pod's GPU count; sets that no node can host are
never drawn. The result is written as CSV to --out (under out/, never committed).

Usage: bench/trace_gpuspec.py --percent 20 --out out/traces/openb_pod_list_gpuspec20d.csv
       [--default FILE] [--spec-from FILE] [--nodes FILE] [--seed N]
"""
import argparse
import collections
import csv
import os
import random
import sys

DATA = "../shared/data/alibaba-gpu-v2023"


def kind(row):
    n = int(row["num_gpu"])
    if n == 0:
        return None
    if n == 1:
        return "share" if int(row["gpu_milli"]) < 1000 else "whole1"
    return "multi"


def spec_pool(path):
    """Model sets of the pinned pods of a published trace, per pod kind (with repeats)."""
    pools = collections.defaultdict(list)
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            if row["gpu_spec"] and kind(row):
                pools[kind(row)].append(row["gpu_spec"])
    if not pools:
        sys.exit("%s: no pod carries a gpu_spec" % path)
    return pools


def node_models(path):
    """For each GPU model, the most GPUs one node of that model has."""
    most = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            if int(row["gpu"]) > 0:
                most[row["model"]] = max(most.get(row["model"], 0), int(row["gpu"]))
    return most


def hostable(spec, count, most):
    return any(most.get(m, 0) >= count for m in spec.split("|"))


def derive(rows, pools, most, percent, rng):
    gpu = [i for i, r in enumerate(rows) if kind(r)]
    pinned = rng.sample(gpu, round(len(gpu) * percent / 100.0))
    everything = [s for pool in pools.values() for s in pool]
    for i in sorted(pinned):
        row = rows[i]
        count = int(row["num_gpu"])
        pool = [s for s in pools.get(kind(row), []) if hostable(s, count, most)]
        if not pool:
            pool = [s for s in everything if hostable(s, count, most)]
        if pool:
            row["gpu_spec"] = rng.choice(pool)
    return sum(1 for r in rows if r["gpu_spec"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--percent", type=float, required=True, help="share of GPU pods to pin, %%")
    ap.add_argument("--out", required=True)
    ap.add_argument("--default", default=os.path.join(DATA, "openb_pod_list_default.csv"))
    ap.add_argument("--spec-from", default=os.path.join(DATA, "openb_pod_list_gpuspec05.csv"))
    ap.add_argument("--nodes", default=os.path.join(DATA, "openb_node_list_gpu_node.csv"))
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    if not 0 <= a.percent <= 100:
        sys.exit("--percent: must be between 0 and 100")
    with open(a.default, newline="") as f:
        reader = csv.DictReader(f)
        fields = reader.fieldnames
        rows = list(reader)
    if any(r["gpu_spec"] for r in rows):
        sys.exit("%s: already carries gpu_spec; derive from the unpinned default trace" % a.default)
    n = derive(rows, spec_pool(a.spec_from), node_models(a.nodes), a.percent, random.Random(a.seed))
    os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
    with open(a.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    print("%s: %d of %d pods pinned to GPU models" % (a.out, n, len(rows)), file=sys.stderr)


if __name__ == "__main__":
    main()
