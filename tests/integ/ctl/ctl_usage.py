"""Metering and billing against a real gpupoold, checked against the controller's own records.

Two tenants run jobs on two nodes (A100s priced by the hour, H100s by a cost model), agents
played by a beater thread (one job's replicas report 50% utilisation). One job is requeued and
placed again, one is preempted by a higher-priority job, one (a fractional GPU) is cancelled;
the controller is killed with SIGKILL while jobs run. Then everything is cancelled and:

- /v1/usage by tenant, node, model and job equals what this test computes from the jobs' events
  (Scheduled to the end of each placement) and their resources: GPU-hours to the last bit of the
  double, cost exactly (the exact sum rounded to the cent, each row its exact share rounded down
  or up), and the rows of every grouping add up to the same total, to the cent;
- the kill -9 in the middle lost nothing and counted nothing twice;
- the ledger checks itself at start: open records whose placement ended are closed at the
  placement's end, placements without an open record get one from their start (both simulated
  by editing the database while the controller is down);
- "used" counts only reported utilisation; a user sees only their own tenant;
- `gpupool usage -o csv|json|xlsx` writes the same rows (the xlsx read back with zipfile);
- a bad price table stops gpupoold at start, naming the file, line and field.
"""
import atexit
import csv
import io
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import zipfile
from fractions import Fraction

from pool import Beater, Pool, check, events, node_doc, submit, wait

GPUPOOLD, GPUPOOL = sys.argv[1], sys.argv[2]
tmp = tempfile.mkdtemp(prefix="gpupool-usage.")
atexit.register(shutil.rmtree, tmp, True)

# Prices far above real ones, so that the few seconds the jobs run cost many cents.
PRICES = """currency: USD
shared_discount: 0.2
cpu_core_hour: 40.25
memory_gib_hour: 5.125
prices:
  - model: A100-80GB
    from: 2020-01-01
    hourly: 2500.5
  - model: H100-80GB
    from: 2020-01-01
    cost: {purchase: 30000000, depreciation_months: 36, power_w: 700, electricity_kwh: 0.15,
           overhead: 0.1}
"""


def cost_model(purchase, months, power_w, kwh, overhead):
    """hourly = (purchase / (months x 730) + power_w / 1000 x kwh) x (1 + overhead), rounded
    half up to a micro-unit (docs/billing.md)."""
    h = (Fraction(purchase) / (months * 730) + Fraction(power_w) / 1000 * kwh) * (1 + overhead)
    return Fraction(int(h * 10**6 + Fraction(1, 2)), 10**6)


HOURLY = {"A100-80GB": Fraction("2500.5"),
          "H100-80GB": cost_model(30000000, 36, 700, Fraction("0.15"), Fraction("0.1"))}
DISCOUNT = Fraction(2, 10)
CPU_HOUR, GIB_HOUR = Fraction("40.25"), Fraction("5.125")
MODEL = {"n0": "A100-80GB", "n1": "H100-80GB"}
ENDS = ("Preempted", "Requeued", "Cancelled", "Succeeded", "Failed", "Restarting", "IdleStopped")

# ---- a bad table stops the start ----
bad = os.path.join(tmp, "bad.yaml")
with open(bad, "w") as f:
    f.write(PRICES.replace("hourly: 2500.5", "hourly: 2500.5.0"))
try:
    r = subprocess.run([GPUPOOLD, "--data-dir", os.path.join(tmp, "bad-data"), "--listen",
                        "127.0.0.1:0", "--billing-price-table", bad],
                       capture_output=True, text=True, timeout=60)
except subprocess.TimeoutExpired:
    check(False, "gpupoold started with a bad price table")
check(r.returncode != 0 and "bad.yaml:8: prices[0].hourly: must be a decimal" in r.stderr,
      "a bad price table stops gpupoold, naming file, line and field", r.returncode, r.stderr)

good = os.path.join(tmp, "prices.yaml")
with open(good, "w") as f:
    f.write(PRICES)

RES = {  # job name -> (tenant, resources)
    "a-train": ("team-a", {"gpus": 2, "gpu_models": ["A100-80GB"], "cpu_milli": 4000,
                           "memory_mib": 16384}),
    "a-share": ("team-a", {"gpu_milli": 500, "gpu_memory_mib": 10240,
                           "gpu_models": ["A100-80GB"], "cpu_milli": 1000, "memory_mib": 2048}),
    "b-low": ("team-b", {"gpus": 3, "gpu_models": ["H100-80GB"], "cpu_milli": 2000,
                         "memory_mib": 8192}),
    "b-one": ("team-b", {"gpus": 1, "gpu_models": ["H100-80GB"], "cpu_milli": 500,
                         "memory_mib": 1024}),
    "a-high": ("team-a", {"gpus": 3, "gpu_models": ["H100-80GB"], "cpu_milli": 3000,
                          "memory_mib": 4096}),
}


def placements(p, jobs):
    """(job name, job id, tenant, node, start, end) of every placement, from the events."""
    out = []
    for name, jid in jobs.items():
        start = node = None
        for e in events(p.admin, jid):
            if e["type"] == "Scheduled":
                check(start is None, "a placement starts while one runs", name, e)
                start, node = e["time_ms"], e["message"].split(" ")[0]
            elif e["type"] in ENDS and start is not None:
                out.append((name, jid, RES[name][0], node, start, e["time_ms"]))
                start = None
        check(start is None, "job %s still placed" % name)
    return out


def amounts(name, length):
    """Integer amounts of a placement of job name lasting length ms: GPU-milli x ms, CPU-milli x
    ms, MiB x ms."""
    res = RES[name][1]
    milli = res["gpus"] * 1000 if "gpus" in res else res["gpu_milli"]
    return milli * length, res["cpu_milli"] * length, res["memory_mib"] * length


def money(name, node, length):
    """The exact cost of a placement, in currency units."""
    res = RES[name][1]
    hours = Fraction(length, 3600000)
    price = HOURLY[MODEL[node]]
    if "gpus" in res:
        gpu = price * res["gpus"]
    else:
        gpu = price * (1 - DISCOUNT) * Fraction(res["gpu_milli"], 1000)
    return hours * (gpu + CPU_HOUR * Fraction(res["cpu_milli"], 1000) +
                    GIB_HOUR * Fraction(res["memory_mib"], 1024))


def cents_of(x):
    """Half up to the cent, as the controller rounds the total."""
    return int((x * 100 + Fraction(1, 2)) // 1)


def usage(client, by, frm, to, period=None):
    q = "/v1/usage?by=%s&from=%d&to=%d" % (by, frm, to) + ("&period=" + period if period else "")
    s, d = client.get(q)
    check(s == 200, "GET " + q, s, d)
    return d


def cost_cents(s):
    check(re.fullmatch(r"\d+\.\d\d", s or ""), "cost is a decimal with 2 digits", s)
    whole, frac = s.split(".")
    return int(whole) * 100 + int(frac)


def check_report(rep, expect, what):
    """rep's rows against expect: key -> (gpu milli-ms, cpu milli-ms, MiB-ms, exact money)."""
    keys = sorted(expect)
    check([r["key"] for r in rep["rows"]] == keys, what + ": the rows' keys", keys, rep["rows"])
    total_money = sum(m for (_, _, _, m) in expect.values())
    check(cost_cents(rep["total"]["cost"]) == cents_of(total_money),
          what + ": the total is the exact sum rounded to the cent", rep["total"],
          str(total_money))
    check(sum(cost_cents(r["cost"]) for r in rep["rows"]) == cost_cents(rep["total"]["cost"]),
          what + ": the rows add up to the total, to the cent", rep)
    for r in rep["rows"]:
        g, c, m, x = expect[r["key"]]
        check(r["gpu_hours"] == g / 3.6e9, what + ": GPU-hours of " + r["key"], r, g / 3.6e9)
        check(r["cpu_core_hours"] == c / 3.6e9, what + ": CPU core-hours of " + r["key"], r)
        check(r["memory_gib_hours"] == m / (1024 * 3.6e6), what + ": GiB-hours of " + r["key"], r)
        floor = int((x * 100) // 1)
        check(cost_cents(r["cost"]) in (floor, floor + 1),
              what + ": the cost of %s is its exact share rounded" % r["key"], r, str(x))
        check(0 <= r["gpu_hours_used"] <= r["gpu_hours"], what + ": used within allocated", r)
    check(rep["total"]["gpu_hours"] == sum(v[0] for v in expect.values()) / 3.6e9,
          what + ": total GPU-hours", rep["total"])


def ledger(p, sql, *args):
    db = sqlite3.connect(os.path.join(p.dir, "data", "gpupool.db"))
    try:
        return db.execute(sql, args).fetchall()
    finally:
        db.close()


with Pool(GPUPOOLD, ["--billing-price-table", good, "--billing-used-flush-interval", "1s"]) as p:
    t0 = int(time.time() * 1000) - 1000
    p.register(node_doc("n0", ngpus=4, model="A100-80GB"))
    p.register(node_doc("n1", ngpus=4, model="H100-80GB"))
    p.tenant("team-a")
    p.tenant("team-b")
    p.grant("team-a", classes=["normal", "high"])
    p.grant("team-b", classes=["low", "normal"])
    alice = p.user("alice", "team-a")
    bob = p.user("bob", "team-b")
    b = Beater(p)
    b.nodes |= {"n0", "n1"}
    jobs = {}

    def start(client, name, **extra):
        s, d = submit(client, name, resources=RES[name][1], **extra)
        check(s == 201, "submit " + name, s, d)
        jobs[name] = d["id"]
        return d

    start(alice, "a-train")
    start(alice, "a-share")
    start(bob, "b-low", preemptible=True, priority_class="low")
    start(bob, "b-one")
    for n in ("a-train", "a-share", "b-low", "b-one"):
        p.wait_state(p.admin, jobs[n], "Running")
    b.util[jobs["a-train"]] = 50  # its agent reports 50% utilisation; the others report none

    # An open record per placement, visible while the jobs run.
    s, rep = p.admin.get("/v1/usage?by=job&from=%d&to=%d" % (t0, time.time() * 1000 + 3600000))
    check(s == 200 and len(rep["rows"]) == 4 and rep["currency"] == "USD",
          "four running jobs, four rows", s, rep)

    def beater_stop(b):
        b.stop = True
        b.t.join()
        return b.util

    def beater_start(util):
        b = Beater(p)
        b.util.update(util)
        b.nodes |= {"n0", "n1"}
        return b

    # The used figure of a running placement is written now and then (every second here), not
    # with every heartbeat; a written figure survives a crash.
    open_used = "SELECT used_gpu_milli_ms FROM usage WHERE job_id = ? AND end_ms IS NULL"
    wait("a-train's used time written", lambda: ledger(p, open_used, jobs["a-train"])[0][0] > 0)
    # The controller dies with SIGKILL while they run, and starts again.
    util = beater_stop(b)
    used_before = ledger(p, open_used, jobs["a-train"])[0][0]
    p.restart(signal.SIGKILL)
    alice, bob = p.client(alice.token), p.client(bob.token)
    b = beater_start(util)
    log = p.read_log()[p.log_from:]
    check("usage record" not in log, "after kill -9 the ledger matches the placements", log)
    p.settle()
    first_epoch = ledger(p, "SELECT epoch FROM usage WHERE job_id = ? AND end_ms IS NULL",
                         jobs["a-train"])[0][0]

    # a-train is requeued (a second placement follows), b-low is preempted by a-high.
    s, d = p.admin.post("/v1/jobs/%d/requeue" % jobs["a-train"])
    check(s == 200, "requeue", s, d)
    wait("a-train placed again", lambda: sum(
        e["type"] == "Scheduled" for e in events(p.admin, jobs["a-train"])) == 2)
    kept = ledger(p, "SELECT used_gpu_milli_ms FROM usage WHERE job_id = ? AND epoch = ?",
                  jobs["a-train"], first_epoch)[0][0]
    check(kept >= used_before > 0, "the used time written before the crash is kept", kept,
          used_before)
    start(alice, "a-high", priority_class="high")
    p.wait_state(p.admin, jobs["a-high"], ("Scheduled", "Running"))
    wait("b-low preempted", lambda: any(
        e["type"] == "Preempted" for e in events(p.admin, jobs["b-low"])))
    s, d = alice.post("/v1/jobs/%d/cancel" % jobs["a-share"])
    check(s == 200 and d["state"] == "Cancelled", "cancel a-share", s, d)
    p.wait_state(p.admin, jobs["a-train"], "Running")
    time.sleep(0.5)  # a few utilisation reports of the second placement

    # The database is edited while the controller is down, as a crash between the two halves
    # of a change or an older ledger would leave it: a closed record is open again (its
    # placement has ended) and the open record of a running placement is gone.
    util = beater_stop(b)
    p.stop()
    db = sqlite3.connect(os.path.join(p.dir, "data", "gpupool.db"))
    db.execute("DROP TRIGGER usage_closed_final")
    db.execute("DROP TRIGGER usage_no_delete")
    reopened = db.execute("SELECT id, end_ms FROM usage WHERE job_id = ? AND end_ms IS NOT NULL",
                          (jobs["a-share"],)).fetchone()
    db.execute("UPDATE usage SET end_ms = NULL WHERE id = ?", (reopened[0],))
    dropped = db.execute("SELECT start_ms FROM usage WHERE job_id = ? AND end_ms IS NULL",
                         (jobs["b-one"],)).fetchone()
    db.execute("DELETE FROM usage WHERE job_id = ? AND end_ms IS NULL", (jobs["b-one"],))
    db.commit()
    db.close()
    p.start()
    alice, bob = p.client(alice.token), p.client(bob.token)
    b = beater_start(util)
    log = p.read_log()[p.log_from:]
    check("usage record open without its placement; closed at %d (the event that ended its "
          "placement)" % reopened[1] in log, "the reopened record is closed at its placement's end",
          log)
    check("job=%d replica=0 epoch" % jobs["b-one"] in log and "recorded from the job's start" in log,
          "the running placement gets a record from its start", log)
    check(log.count("usage record") == 2, "nothing else was out of step", log)
    db = sqlite3.connect(os.path.join(p.dir, "data", "gpupool.db"))
    row = db.execute("SELECT start_ms FROM usage WHERE job_id = ? AND end_ms IS NULL",
                     (jobs["b-one"],)).fetchone()
    db.close()
    check(row is not None and row[0] == dropped[0], "from the job's start", row, dropped)
    p.settle()

    # Everything ends.
    for n in ("a-train", "b-one", "a-high", "b-low"):
        s, d = p.admin.post("/v1/jobs/%d/cancel" % jobs[n])
        check(s == 200, "cancel " + n, s, d)
    beater_stop(b)
    db = sqlite3.connect(os.path.join(p.dir, "data", "gpupool.db"))
    still = db.execute("SELECT job_id FROM usage WHERE end_ms IS NULL").fetchall()
    db.close()
    check(still == [], "every record closed with its placement", still)
    t1 = int(time.time() * 1000) + 1000

    # ---- the reports against the events ----
    pl = placements(p, jobs)
    check(sum(1 for x in pl if x[0] == "a-train") == 2, "a-train was placed twice", pl)
    check(any(x[0] == "b-low" for x in pl), "b-low ran before its preemption", pl)
    groups = {"tenant": lambda x: x[2], "node": lambda x: x[3], "model": lambda x: MODEL[x[3]],
              "job": lambda x: str(x[1])}
    totals, exact = set(), {}
    for by, keyf in groups.items():
        expect = {}
        for x in pl:
            g, c, m = amounts(x[0], x[5] - x[4])
            e = expect.setdefault(keyf(x), [0, 0, 0, Fraction(0)])
            e[0] += g
            e[1] += c
            e[2] += m
            e[3] += money(x[0], x[3], x[5] - x[4])
        rep = usage(p.admin, by, t0, t1)
        check_report(rep, {k: tuple(v) for k, v in expect.items()}, "by " + by)
        exact[by] = expect
        totals.add(json.dumps(rep["total"], sort_keys=True))
        for period in ("day", "month"):
            rp = usage(p.admin, by, t0, t1, period)
            check(sum(cost_cents(r["cost"]) for r in rp["rows"]) ==
                  cost_cents(rp["total"]["cost"]) == cost_cents(rep["total"]["cost"]),
                  "by %s per %s: the same total to the cent" % (by, period), rp, rep["total"])
    check(len(totals) == 1, "by tenant, node, model and job: one total", totals)

    # Used: only a-train reported utilisation (50%).
    rep = usage(p.admin, "job", t0, t1)
    used = {r["key"]: r["gpu_hours_used"] for r in rep["rows"]}
    alloc = {r["key"]: r["gpu_hours"] for r in rep["rows"]}
    a_train = str(jobs["a-train"])
    check(0 < used[a_train] <= alloc[a_train] / 2 + 1e-9, "a-train used at most half", rep)
    check(all(used[k] == 0 for k in used if k != a_train), "no report, no use", rep)

    # ---- a user sees only their tenant ----
    # Her total is team-a's exact cost rounded on its own (in the report of every tenant, team-a's
    # row may carry one more cent from the distribution of the remainders).
    mine = usage(alice, "node", t0, t1)
    a_total = [r for r in usage(p.admin, "tenant", t0, t1)["rows"] if r["key"] == "team-a"][0]
    check(cost_cents(mine["total"]["cost"]) == cents_of(exact["tenant"]["team-a"][3]) and
          mine["total"]["gpu_hours"] == a_total["gpu_hours"] and
          abs(cost_cents(mine["total"]["cost"]) - cost_cents(a_total["cost"])) <= 1,
          "alice's report by node covers team-a only", mine, a_total)
    check(sum(cost_cents(r["cost"]) for r in mine["rows"]) == cost_cents(mine["total"]["cost"]),
          "alice's rows add up to her total", mine)
    theirs = usage(bob, "tenant", t0, t1)
    check([r["key"] for r in theirs["rows"]] == ["team-b"], "bob sees team-b only", theirs)
    s, d = alice.get("/v1/usage?by=colour")
    check(s == 400 and "by:" in d["error"]["message"], "a bad grouping is 400", s, d)
    s, d = alice.get("/v1/usage?from=2024-05-02&to=2024-05-01")
    check(s == 400, "from after to is 400", s, d)
    s, d = p.client(None).get("/v1/usage")
    check(s == 401, "no token, no report", s, d)

    # ---- the CLI ----
    base = [GPUPOOL, "usage", "--server", p.base, "--token", p.admin_token, "--by", "tenant",
            "--from", str(t0), "--to", str(t1)]
    ref = usage(p.admin, "tenant", t0, t1)
    out = subprocess.run(base + ["-o", "json"], capture_output=True, text=True, timeout=60)
    check(out.returncode == 0, "gpupool usage -o json", out.stderr)
    doc = json.loads(out.stdout)
    check(doc["rows"] == ref["rows"] and doc["total"] == ref["total"], "json: the server's rows",
          doc, ref)
    out = subprocess.run(base + ["-o", "csv"], capture_output=True, timeout=60)
    text = out.stdout.decode()
    check(out.returncode == 0 and text.endswith("\r\n") and "\n" not in text.replace("\r\n", ""),
          "gpupool usage -o csv: lines end in CRLF", out.stdout, out.stderr)
    lines = list(csv.reader(io.StringIO(text, newline="")))
    check(lines[0] == ["tenant", "period_start", "gpu_hours", "gpu_hours_used", "cpu_core_hours",
                       "memory_gib_hours", "cost", "currency"], "csv header", lines)
    check([(l[0], l[6], l[7]) for l in lines[1:]] ==
          [(r["key"], r["cost"], "USD") for r in ref["rows"]], "csv rows", lines, ref)
    check(all(abs(float(l[2]) - r["gpu_hours"]) < 1e-6 for l, r in zip(lines[1:], ref["rows"])),
          "csv GPU-hours", lines, ref)
    out = subprocess.run(base + ["-o", "table"], capture_output=True, text=True, timeout=60)
    check(out.returncode == 0 and "TOTAL" in out.stdout and ref["total"]["cost"] in out.stdout,
          "gpupool usage table", out.stdout, out.stderr)
    xlsx = os.path.join(tmp, "usage.xlsx")
    out = subprocess.run(base + ["-o", "xlsx", "--output", xlsx], capture_output=True, text=True,
                         timeout=60)
    check(out.returncode == 0, "gpupool usage -o xlsx --output", out.stderr)
    with zipfile.ZipFile(xlsx) as z:
        sheet = z.read("xl/worksheets/sheet1.xml").decode()
        strings = z.read("xl/sharedStrings.xml").decode()
        styles = z.read("xl/styles.xml").decode()
    for r in ref["rows"]:
        check(">%s<" % r["key"] in strings, "xlsx: row " + r["key"], strings)
    check(sheet.count("<row ") == len(ref["rows"]) + 2, "xlsx: header, rows and total", sheet)
    check("SUM(G2:G%d)" % (len(ref["rows"]) + 1) in sheet, "xlsx: a total of the cost", sheet)
    check("[$USD]" in styles, "xlsx: a currency format", styles)
    cost_cells = re.findall(r'<c r="G(\d+)"[^>]*><v>([^<]*)</v>', sheet)
    check([float(v) for row, v in cost_cells if row != "1"] == [float(r["cost"]) for r in ref["rows"]],
          "xlsx: cost cells are numbers", cost_cells, ref["rows"])
    out = subprocess.run(base + ["-o", "xlsx"], capture_output=True, timeout=60)
    check(out.returncode == 0 and out.stdout[:2] == b"PK",
          "xlsx to stdout when it is not a terminal", out.stderr)
    out = subprocess.run(base + ["-o", "pdf"], capture_output=True, text=True, timeout=60)
    check(out.returncode == 2, "-o pdf is a usage error", out.returncode, out.stderr)

print("ok")
