#!/usr/bin/env python3
"""Writes docs/results/controller.md from the raw outputs of bench/ctl.sh: the controller on
SQLite and on PostgreSQL side by side. Every measured number comes from the benchmarks' output;
goals and the comparison figures are quoted."""
import argparse
import os
import re
import statistics

STORES = ("sqlite", "postgresql")
NAMES = {"sqlite": "SQLite", "postgresql": "PostgreSQL 15"}


def parse(path):
    rows = []
    if not os.path.exists(path):
        return rows
    with open(path) as f:
        for line in f:
            if not line.strip():
                continue
            kv = dict(re.findall(r"(\w+)=(\S+)", line))
            if "kind" in kv:
                kv["what"] = kv["kind"]  # ctl_latency's kind of call
            kv["kind"] = next(w for w in line.split() if "=" not in w)
            rows.append(kv)
    return rows


def stat(vals, fmt):
    vals = [float(v) for v in vals]
    if not vals:
        return "n/a"
    if len(vals) == 1:
        return fmt.format(vals[0])
    return f"{fmt.format(statistics.median(vals))} (runs: {', '.join(fmt.format(v) for v in vals)})"


def verdict(ok):
    return "met" if ok else "**not met**"


def median(vals):
    return statistics.median(vals) if vals else None


def live_section(ctl, ref_runs, quiet_runs, skipped, head):
    """The live pool's rows: registration, submit rate against 1,000 nodes, heartbeats, the
    latency of reads and writes while the backlog is placed and nodes are lost, memory."""
    reg = next((r for r in ctl if r["kind"] == "ctl_register"), None)
    if not reg or not any(r["kind"] == "ctl_latency" for r in ctl):
        return []
    nodes = int(reg["nodes"])
    out = ["", f"## A live pool of {nodes:,} nodes (ctl_bench: heartbeats, latency, memory)\n",
           head, "|---|---|---|---|"]

    def cells(fn):
        return " | ".join("skipped: no server" if s in skipped else fn(s) for s in STORES)

    def reg_cell(s):
        v = median([float(r["seconds"]) for r in ctl if r["kind"] == "ctl_register"
                    and r["store"] == s])
        if v is None:
            return "n/a"
        return f"{v:.1f}: {verdict(v < 5)}" if nodes >= 10000 else f"{v:.1f} (goal at 10,000)"
    out.append(f"| register {nodes:,} nodes × 8 GPUs through the API (8 clients; each node "
               f"heartbeats from its registration on), seconds | < 5 at 10,000 | "
               f"{cells(reg_cell)} |")

    def quiet_cell(s):
        v = median([float(r["seconds"]) for r in quiet_runs if r["kind"] == "ctl_register"
                    and r["store"] == s])
        if v is None:
            return "n/a"
        return f"{v:.1f}: {verdict(v < 5)}" if nodes >= 10000 else f"{v:.1f} (goal at 10,000)"
    if quiet_runs:
        out.append(f"| the same registration with each node's heartbeat every 30 s instead "
                   f"of every second, seconds | < 5 at 10,000 | {cells(quiet_cell)} |")

    def sub_cell(s):
        big = median([float(r["jobs_per_s"]) for r in ctl if r["kind"] == "ctl_submit"
                      and r["store"] == s])
        ref = median([float(r["jobs_per_s"]) for r in ref_runs if r["kind"] == "ctl_submit"
                      and r["store"] == s])
        if big is None or ref is None:
            return "n/a"
        return (f"{big:,.0f} vs {ref:,.0f} at 1,000 nodes ({big / ref - 1:+.0%}): "
                f"{verdict(big >= 0.9 * ref)}")
    out.append(f"| accepted jobs/s at {nodes:,} nodes against the same submits at 1,000 nodes | "
               f"within 10% | {cells(sub_cell)} |")

    def beat_cell(s):
        rs = [r for r in ctl if r["kind"] == "ctl_beats" and r["store"] == s]
        if not rs:
            return "n/a"
        r = rs[0]
        cell = (f"{float(r['per_s']):,.0f}/s of {float(r['target_per_s']):,.0f}/s; longest gap "
                f"{int(r['gap_max_ms']) / 1000:.1f} s")
        mem, sto = int(r.get("applied_memory", -1)), int(r.get("applied_store", -1))
        if mem >= 0 and sto >= 0 and mem + sto > 0:
            cell += (f"; applied in memory {mem:,}, through the store {sto:,} "
                     f"({mem / (mem + sto):.0%} in memory)")
        return cell
    iv = next((r["interval_ms"] for r in ctl if r["kind"] == "ctl_beats"), "?")
    nb = next((r["beaters"] for r in ctl if r["kind"] == "ctl_beats"), "?")
    out.append(f"| heartbeats sent (each node every {iv} ms, from {nb} threads) and the longest a "
               "live node went without one | every node each interval; gap < 40 s "
               "(nodes.heartbeat_timeout) | " + cells(beat_cell) + " |")
    kinds = [("heartbeat", "heartbeat (write)"), ("submit", "submit (write)"),
             ("list_pending", "GET /v1/jobs?state=Pending&limit=100"),
             ("get_node", "GET /v1/nodes/X")]
    for phase, what in (("submit", "while the jobs are submitted"),
                        ("backlog", "while the backlog is placed"),
                        ("loss", "while nodes are lost and their jobs moved")):
        for kind, name in kinds:
            rs = [r for r in ctl if r["kind"] == "ctl_latency" and r["phase"] == phase
                  and r.get("what") == kind]
            if not rs:
                continue

            def lat_cell(s, rs=rs):
                mine = [r for r in rs if r["store"] == s]
                if not mine:
                    return "n/a"
                r = mine[0]
                p99 = float(r["p99_ms"])
                return (f"p50 {float(r['p50_ms']):.0f}, p99 {p99:.0f}, max "
                        f"{float(r['max_ms']):.0f} ({r['n']} calls, {r['failed']} failed): "
                        f"{verdict(p99 < 1000 and r['failed'] == '0')}")
            out.append(f"| {name} {what}, ms | p99 < 1000 | {cells(lat_cell)} |")

    def loss_cell(s):
        rs = [r for r in ctl if r["kind"] == "ctl_loss" and r["store"] == s]
        if not rs:
            return "n/a"
        r = rs[0]
        moved = ("their jobs placed again" if r["pending_left"] == "0"
                 else "jobs left pending: " + r["pending_left"])
        return f"{float(r['seconds']):.0f} s for {int(r['nodes']):,} nodes ({moved})"
    out.append("| a loss: heartbeats of 10% of the nodes stop, until the controller has marked "
               "them lost (nodes.lost_timeout, 2 min) and placed their jobs elsewhere | — | "
               + cells(loss_cell) + " |")

    def rss_cell(s, at):
        rs = [r for r in ctl if r["kind"] == "ctl_rss" and r["store"] == s and r["at"] == at]
        if not rs:
            return "n/a"
        r = rs[0]
        mib = float(r["mib"])
        ok = f": {verdict(mib < 2048)}" if at == "peak" else ""
        return f"{mib:,.0f} MiB ({int(r['pending']):,} pending, {int(r['running']):,} running){ok}"
    for at, what, goal in (("submitted", "once the jobs are submitted (resident)", "—"),
                           ("placed", "once the backlog is placed (resident)", "—"),
                           ("peak", "peak over the whole run (VmHWM), counts at the end",
                            "< 2 GiB")):
        out.append(f"| gpupoold's memory {what} | {goal} | "
                   f"{cells(lambda s, at=at: rss_cell(s, at))} |")
    loads = [r for r in ctl if r["kind"] == "load"]
    if loads:
        out.append("")
        out.append("Load average (1 min) of the machine: " + ", ".join(
            f"{r['at']} {r['avg1']}" for r in loads) + ".\n")
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("--results", required=True)
    a = ap.parse_args()
    ctl = parse(os.path.join(a.out_dir, "ctl.txt"))
    ref_runs = [r for r in ctl if r.get("ref")]  # the 1,000-node reference submits
    quiet_runs = [r for r in ctl if r.get("quiet")]  # registration with few heartbeats
    ctl = [r for r in ctl if not r.get("ref") and not r.get("quiet")]
    store = parse(os.path.join(a.out_dir, "store.txt"))
    sched = parse(os.path.join(a.out_dir, "sched.txt"))
    shapes = [r for r in parse(os.path.join(a.out_dir, "shapes.txt")) if r.get("phase") == "shapes"]
    skipped = {r.get("store") for r in ctl if r["kind"] == "skipped"}

    def rows(kind, st, src=ctl):
        return [r for r in src if r["kind"] == kind and r.get("store", r.get("backend")) == st]

    def cell(kind, st, key, fmt, src=ctl):
        if st in skipped:
            return "skipped: no server"
        return stat([r[key] for r in rows(kind, st, src)], fmt)

    any_row = lambda kind: next((r for r in ctl if r["kind"] == kind), None)
    reg, sub, cyc = any_row("ctl_register"), any_row("ctl_submit"), any_row("ctl_cycle")
    head = f"| measure | goal | {' | '.join(NAMES[s] for s in STORES)} |"
    lines = [
        "# Controller: throughput and scheduling latency, SQLite and PostgreSQL\n",
        "Generated by `bench/ctl.sh` (`make bench`) from the benchmarks' own output; "
        "medians where there were several runs, each run listed.\n",
        "## The controller end to end (ctl_bench)\n",
        head,
        "|---|---|---|---|",
    ]

    def line(what, goal, kind, key, fmt):
        lines.append(f"| {what} | {goal} | "
                     f"{' | '.join(cell(kind, s, key, fmt) for s in STORES)} |")

    if reg:
        line(f"register {int(reg['nodes']):,} nodes × 8 GPUs through the API (8 clients), "
             "seconds", "—", "ctl_register", "seconds", "{:.1f}")
    if sub:
        line(f"accepted jobs/s, durable: {int(sub['jobs']):,} submits over HTTP by "
             f"{sub['clients']} concurrent clients on loopback", "≥ 2,000", "ctl_submit",
             "jobs_per_s", "{:,.0f}")
    if cyc:
        line(f"one scheduling cycle with {int(cyc['pending']):,} pending jobs on "
             f"{int(cyc['nodes']):,} nodes × 8 GPUs: decided, committed and applied, seconds",
             "< 1", "ctl_cycle", "seconds", "{:.2f}")
        line("jobs that cycle placed", "—", "ctl_cycle", "placed", "{:,.0f}")
    if any_row("ctl_schedule"):
        line("from lifting the quota until no job is pending, seconds", "—", "ctl_schedule",
             "seconds", "{:.2f}")
    if any_row("ctl_wall"):
        line("the whole run (start, registration, submits, the cycle), seconds", "—",
             "ctl_wall", "seconds", "{:,.0f}")
    lines += live_section(ctl, ref_runs, quiet_runs, skipped, head)
    if store:
        n_sub = next(r["n"] for r in store if r["op"] == "submit")
        lines += [
            "",
            "## The store alone (store_bench)\n",
            head,
            "|---|---|---|---|",
        ]
        for op, what in (("submit", f"{int(n_sub):,} submit transactions one after another "
                                    "(job, event, audit record; each committed), per second"),
                         ("cycle", "one transaction placing {n} jobs (epoch, placement, job "
                                   "update, event, usage row each), jobs per second"),
                         ("walk", "reading back every job ({n}), jobs per second")):
            rs = [r for r in store if r["op"] == op]
            if not rs:
                continue
            cells = []
            for s in STORES:
                v = [r["per_s"] for r in rs if r["backend"] == s]
                cells.append("skipped: no server" if s in skipped else stat(v, "{:,.0f}"))
            lines.append(f"| {what.format(n=format(int(rs[0]['n']), ','))} | — | "
                         f"{' | '.join(cells)} |")
    cycles = [r for r in sched if r["kind"] == "sched_cycle" and r.get("phase") == "cycle"]
    if cycles:
        c = cycles[0]
        lines += [
            "",
            "## The scheduler alone (sched_bench, libgpcore without a store)\n",
            "| measure | goal | measured |",
            "|---|---|---|",
            f"| one scheduling cycle, {int(c['pending']):,} pending jobs on "
            f"{int(c['nodes']):,} nodes × 8 GPUs with {int(c['running']):,} running "
            f"(placed {c['placed']}, evicted {c['evicted']}), seconds | < 1 | "
            f"{stat([r['seconds'] for r in cycles], '{:.3f}')} |",
        ]
    if shapes:
        c = shapes[0]
        us = [float(r["us_per_decision"]) for r in shapes]
        fresh = [float(r["new_shape_us"]) for r in shapes]
        seen = [float(r["seen_shape_us"]) for r in shapes]
        lines += [
            "",
            "## Placement with many request shapes (placement_bench --shapes, libgpcore alone)\n",
            "| measure | goal | measured |",
            "|---|---|---|",
            f"| one decision, each request drawn from {int(c['shapes']):,} distinct shapes (GPU "
            f"fractions and memory, 1/2/4/8 whole GPUs, CPU only; CPU and memory of their own) on "
            f"{int(c['nodes']):,} nodes × 8 GPUs about {float(c['allocated_pct']):.0f}% allocated "
            f"({c['policy']}), µs | ≤ 20 | {stat(us, '{:,.0f}')}: "
            f"{verdict(statistics.median(us) <= 20)} |",
            f"| of which a decision for a shape not seen before, µs | — | {stat(fresh, '{:,.0f}')} |",
            f"| of which a decision for a shape seen before, µs | — | {stat(seen, '{:,.0f}')} |",
        ]
    lines += [
        "",
        "For scale: kube-scheduler's CI floor is about 680 pods/s at 5,000 nodes; Slurm "
        "documents 500 jobs/s.\n",
        "The job mix: one job in 8 asks for one whole GPU, the rest for a quarter GPU with 10 GiB "
        "of GPU memory, so the pool can hold all of them. Every submit carries an "
        "Idempotency-Key; a 2xx answer means the job is committed (SQLite: WAL, "
        "synchronous=FULL, concurrent submits share one fsync; PostgreSQL: synchronous_commit "
        "on, a local server on the same machine, default settings otherwise).\n",
        "The backlog: while the jobs are submitted, the tenant's quota of one GPU holds all but "
        "a few of them back; then the quota is lifted and the scheduler places them. A cycle "
        "commits its decisions in transactions of at most 2,000 writes (placement, job, event, "
        "usage row, audit each; on PostgreSQL also of at most (ha.lease_ttl - "
        "ha.renew_interval) / 4 of writing, 500 ms, so that the leader's lease is renewed "
        "between them), applying each to memory once committed and releasing the "
        "state lock between them so reads are answered; when changes wait for the committer "
        "(heartbeats, submits) the cycle stops after the transaction in progress, they run, and "
        "the next cycle decides the rest again. The cycle row is gpupoold's own figure for the "
        "first cycle (the `seconds` of its `cycle placed=` log line), so with a live pool it "
        "covers the first transaction only; the row after it is the whole backlog.\n",
        "The live pool: every node's heartbeat (its GPUs' readings and the replicas it was last "
        "told to run, reported Running) is sent from its registration on by 32 threads (gpupoold with 64 HTTP threads) at the "
        "agent's default interval, "
        "the nodes spread over it; gpupoold runs with its default heartbeat (40 s) and lost "
        "(2 min) timeouts. When the threads cannot keep up on this machine each node beats "
        "less often; what matters for a live node is the longest gap between two of its "
        "heartbeats. The prober sends a page of pending jobs, one node's document and one "
        "small submit every 100 ms throughout; the heartbeats are timed too.\n",
        "Registration: node and token lookups are indexed (no walk over every node or token per "
        "registration), a node's document collects only its own holders, and the "
        "authentication table follows the tokens a group appended or revoked in place (a "
        "binary-search insert per new token) instead of being rebuilt and sorted after every "
        "group. A registration is one agent token, one node and their records in a group "
        "commit; with 8 clients that is about one fsync per 8 registrations, shared with the "
        "heartbeats that arrive meanwhile. Kicked cycles that place nothing (no job waits while "
        "nodes register) back off to one a second. Lists by state visit only the jobs in those "
        "states, and a submit judges the pool from the node index (its nodes and GPU models) "
        "without a pass over every node.\n",
        "Many shapes: each live class carries a summary of what it offers, so a class that cannot "
        "hold the request is passed over unscored, and each request shape has a score table of "
        "its own; a decision still scores every feasible class this shape has not met yet, and "
        "with many shapes that is most of the classes created since the shape was last placed: "
        "the policy's scoring is most of what is left (docs/results/placement.md).\n",
        "On PostgreSQL each write of a transaction is a round trip to the server (prepared "
        "statements; a write that may be refused carries its own savepoint in the same round "
        "trip), so a cycle that places many jobs costs about a round trip per row; SQLite writes "
        "in the process.\n",
        "Machine: the development machine (2 cores, shared); client, server and PostgreSQL share "
        "them.\n",
    ]
    with open(os.path.join(a.results, "controller.md"), "w") as f:
        f.write("\n".join(lines))


if __name__ == "__main__":
    main()
