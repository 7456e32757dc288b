"""Checks deploy/grafana/gpupool-dashboard.json (and the PromQL of the alert rules):

- it is JSON, a dashboard of schema version 38 or later, with a template variable
  DS_PROMETHEUS of type datasource that every panel and query uses (${DS_PROMETHEUS});
- panel ids are unique, every panel has a grid position and a title, queries have distinct
  refIds within their panel;
- every metric a query names (panels and template variables) is a known metric: one of the
  contract's names below, and, for gpupool_* names, one docs/metrics.md documents; histogram
  series (_bucket, _sum, _count) count as their histogram;
- with --rules FILE, every `expr:` of the rule file passes the same check.

Usage: grafana_dashboard.py DASHBOARD.json DOCS/metrics.md [--rules RULES.yaml]
"""
import json
import re
import sys

# The metric names agents and gpupoold serve (the contract the rules and the dashboard rely
# on), plus Prometheus's own series.
CONTRACT = set("""
DCGM_FI_DEV_GPU_UTIL DCGM_FI_DEV_MEM_COPY_UTIL DCGM_FI_DEV_ENC_UTIL DCGM_FI_DEV_DEC_UTIL
DCGM_FI_DEV_FB_FREE DCGM_FI_DEV_FB_USED DCGM_FI_DEV_FB_RESERVED DCGM_FI_DEV_GPU_TEMP
DCGM_FI_DEV_MEMORY_TEMP DCGM_FI_DEV_POWER_USAGE DCGM_FI_DEV_POWER_MGMT_LIMIT
DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION DCGM_FI_DEV_SM_CLOCK DCGM_FI_DEV_MEM_CLOCK
DCGM_FI_DEV_XID_ERRORS DCGM_FI_DEV_PCIE_REPLAY_COUNTER DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL
DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL
DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL
DCGM_FI_DEV_THERMAL_VIOLATION DCGM_FI_DEV_CLOCK_THROTTLE_REASONS
DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS
DCGM_FI_DEV_ROW_REMAP_FAILURE DCGM_FI_DEV_ECC_SBE_VOL_TOTAL DCGM_FI_DEV_ECC_DBE_VOL_TOTAL
gpupool_slice_memory_used_bytes gpupool_slice_memory_limit_bytes
gpupool_slice_utilization_ratio gpupool_agent_info gpupool_agent_heartbeat_failures_total
gpupool_agent_replicas
gpupool_jobs gpupool_jobs_pending gpupool_job_pending_oldest_seconds
gpupool_scheduler_cycle_seconds gpupool_scheduler_cycles_total gpupool_placements_total
gpupool_evictions_total gpupool_job_restarts_total gpupool_xid_errors_total gpupool_gpus
gpupool_gpu_allocation_ratio gpupool_gpu_fragmentation_ratio gpupool_gpu_drained
gpupool_node_ready gpupool_nodes gpupool_quota_used_gpus gpupool_quota_limit_gpus
gpupool_quota_used_ratio gpupool_http_request_duration_seconds gpupool_alerts_sent_total
gpupool_alerts_failed_total gpupool_build_info
up ALERTS ALERTS_FOR_STATE
""".split())

KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "and", "or",
            "unless", "offset", "bool", "inf", "nan", "atan2"}
CLAUSE = re.compile(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)")

problems = []


def problem(where, what):
    problems.append("%s: %s" % (where, what))


def metric_names(expr):
    """The metric names an expression selects: identifiers that are not functions (followed by
    '('), keywords, label lists of by/on/... clauses, label matchers, strings, durations or
    Grafana's variables."""
    e = re.sub(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'', '""', expr)  # strings
    e = re.sub(r"\{[^}]*\}", " ", e)                                     # label matchers
    e = re.sub(r"\[[^\]]*\]", " ", e)                                    # ranges
    e = re.sub(r"\$\{?\w+\}?", " ", e)                                   # $__rate_interval
    e = CLAUSE.sub(" ", e)
    names = set()
    for m in re.finditer(r"[A-Za-z_:][A-Za-z0-9_:]*", e):
        word = m.group(0)
        rest = e[m.end():].lstrip()
        if word.lower() in KEYWORDS or rest.startswith("("):
            continue
        if re.match(r"\d", e[m.start() - 1:m.start()] or " "):
            continue  # 1e3, 5m
        names.add(word)
    return names


def base_name(name):
    for suffix in ("_bucket", "_sum", "_count"):
        if name.endswith(suffix) and name[:-len(suffix)] in CONTRACT:
            return name[:-len(suffix)]
    return name


def check_expr(where, expr, documented):
    names = metric_names(expr)
    if not names:
        problem(where, "selects no metric: %s" % expr)
    for n in sorted(names):
        b = base_name(n)
        if b not in CONTRACT:
            problem(where, "unknown metric %s" % n)
        elif b.startswith("gpupool_") and b not in documented:
            problem(where, "%s is not documented in docs/metrics.md" % b)


def documented_names(path):
    with open(path, encoding="utf-8") as f:
        return set(re.findall(r"`((?:gpupool|DCGM)_[A-Za-z0-9_]+)`", f.read()))


def check_dashboard(path, documented):
    with open(path, encoding="utf-8") as f:
        d = json.load(f)
    if not isinstance(d.get("schemaVersion"), int) or d["schemaVersion"] < 38:
        problem(path, "schemaVersion must be 38 or later")
    if not d.get("title") or not d.get("uid"):
        problem(path, "a dashboard needs a title and a uid")
    variables = {v.get("name"): v for v in d.get("templating", {}).get("list", [])}
    ds = variables.get("DS_PROMETHEUS")
    if not ds or ds.get("type") != "datasource" or ds.get("query") != "prometheus":
        problem(path, "no template variable DS_PROMETHEUS of type datasource (prometheus)")
    want_ds = {"type": "prometheus", "uid": "${DS_PROMETHEUS}"}
    for name, v in variables.items():
        if v.get("type") != "query":
            continue
        if v.get("datasource") != want_ds:
            problem("variable %s" % name, "datasource must be %s" % want_ds)
        q = v.get("definition") or v.get("query", {}).get("query", "")
        m = re.match(r"label_values\((.+),\s*\w+\)$", q)
        if not m:
            problem("variable %s" % name, "expected label_values(METRIC, LABEL): %s" % q)
        else:
            check_expr("variable %s" % name, m.group(1), documented)
    ids = {}
    npanels = nqueries = 0
    for p in d.get("panels", []):
        for q in [p] + p.get("panels", []):  # panels inside collapsed rows too
            where = "panel %r (id %s)" % (q.get("title"), q.get("id"))
            if not isinstance(q.get("id"), int):
                problem(where, "no integer id")
            elif q["id"] in ids:
                problem(where, "id %d also used by panel %r" % (q["id"], ids[q["id"]]))
            else:
                ids[q["id"]] = q.get("title")
            gp = q.get("gridPos", {})
            if not all(isinstance(gp.get(k), int) for k in ("h", "w", "x", "y")) \
                    or gp["x"] + gp["w"] > 24:
                problem(where, "gridPos must have h, w, x, y within 24 columns: %s" % gp)
            if not q.get("title"):
                problem(where, "no title")
            if q.get("type") == "row":
                continue
            npanels += 1
            if q.get("datasource") != want_ds:
                problem(where, "datasource must be %s" % want_ds)
            refs = set()
            if not q.get("targets"):
                problem(where, "no queries")
            for t in q.get("targets", []):
                nqueries += 1
                if t.get("refId") in refs:
                    problem(where, "refId %s twice" % t.get("refId"))
                refs.add(t.get("refId"))
                if t.get("datasource") != want_ds:
                    problem(where, "query %s: datasource must be %s" % (t.get("refId"), want_ds))
                check_expr("%s query %s" % (where, t.get("refId")), t.get("expr", ""),
                           documented)
    return npanels, nqueries


def check_rules(path, documented):
    n = 0
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            m = re.match(r"\s*expr:\s*(.+)$", line)
            if m:
                n += 1
                check_expr("%s:%d" % (path, lineno), m.group(1), documented)
    if n == 0:
        problem(path, "no expr found")
    return n


def self_test():
    """The name extraction itself, on expressions whose answer is known."""
    cases = {
        'sum by (model, state) (gpupool_gpus{model=~"$model"})': {"gpupool_gpus"},
        'histogram_quantile(0.99, sum by (le) (rate(x_bucket[$__rate_interval])))': {"x_bucket"},
        '(a > 90) and on (Hostname, UUID) (b < 0.25 * c)': {"a", "b", "c"},
        'floor(d / 32) % 4 > 0 or rate(e[5m]) > 1e3': {"d", "e"},
        'ALERTS{alertstate="firing", x="by (y)"}': {"ALERTS"},
    }
    for expr, want in cases.items():
        got = metric_names(expr)
        if got != want:
            problem("self-test", "%s: got %s, expected %s" % (expr, sorted(got), sorted(want)))


def main(argv):
    if len(argv) not in (3, 5) or (len(argv) == 5 and argv[3] != "--rules"):
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    self_test()
    documented = documented_names(argv[2])
    npanels, nqueries = check_dashboard(argv[1], documented)
    nrules = check_rules(argv[4], documented) if len(argv) == 5 else 0
    if problems:
        for p in problems:
            print("FAIL:", p, file=sys.stderr)
        return 1
    print("ok: %d panels, %d queries%s" % (npanels, nqueries,
                                           ", %d rule expressions" % nrules if nrules else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
