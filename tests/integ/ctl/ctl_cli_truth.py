"""The CLI tells the truth about nodes and waiting jobs, against a real gpupoold with agents
played by a beater thread:

- `gpupool get nodes` (table and -o wide) and `gpupool describe node` show drained GPUs (after
  XIDs, retired, by an operator) and how they return, a scheduled maintenance drain and its
  deadline, cordon, fencing after a lost node and a failed node-wide health check;
- a job kept off the only free node by its maintenance deadline says "maintenance: NODE drains
  at HH:MM UTC and the job may run 3h" (gpupool_jobs_pending counts it as "maintenance"), not
  "capacity: ...";
- quota reasons and refusals use the unit of the quota: GPUs, GPUs of a model, GiB.

Arguments: the gpupoold binary, the gpupool binary.
"""
import datetime
import os
import re
import shutil
import subprocess
import sys
import tempfile

from pool import Beater, Pool, check, node_doc, submit, wait

GPUPOOLD, GPUPOOL = sys.argv[1], sys.argv[2]
home = tempfile.mkdtemp(prefix="gpupool-cli-home.")


def cli(p, *args):
    env = dict(os.environ, HOME=home, GPUPOOL_SERVER=p.base)
    env.pop("GPUPOOL_TOKEN", None)
    r = subprocess.run([GPUPOOL] + list(args) + ["--token", p.admin_token], capture_output=True,
                       text=True, timeout=30, env=env)
    check(r.returncode == 0, "gpupool %s" % " ".join(args), r.stdout, r.stderr)
    return r.stdout


def rows(table):
    """The rows of a `gpupool get` table by their first cell, each a list of cells (cells are
    separated by three spaces or more; a cell holds at most single spaces)."""
    lines = table.strip("\n").splitlines()
    return {c[0]: c for c in (re.split(r" {3,}", line.strip()) for line in lines[1:])}


def header(table):
    return re.split(r" {3,}", table.splitlines()[0].strip())


def cell(table, name, column):
    check(column in header(table) and name in rows(table), "a %s cell for %s" % (column, name),
          table)
    return rows(table)[name][header(table).index(column)]


def section(text, title):
    """The table under a "Title:" line of `gpupool describe`, up to the next blank line."""
    check("\n%s:\n" % title in text, "a %s: section" % title, text)
    start = text.index("\n%s:\n" % title) + len(title) + 3
    end = text.find("\n\n", start)
    return text[start:] if end < 0 else text[start:end + 1]


def field(text, label):
    m = re.search(r"^%s:\s+(.*)$" % re.escape(label), text, re.M)
    check(m is not None, "a %s: line" % label, text)
    return m.group(1)


def node(p, name):
    s, d = p.admin.get("/v1/nodes/%s" % name)
    check(s == 200, "get node", s, d)
    return d


def utc_clock(ms):
    """The wall-clock time of ms in UTC as the scheduler writes it: 14:00, or 14:00:27."""
    t = datetime.datetime.fromtimestamp(ms // 1000, datetime.timezone.utc)
    return t.strftime("%H:%M") + (t.strftime(":%S") if t.second else "")


def reason(p, ref):
    return field(cli(p, "describe", "job", ref), "Reason")


args = ["--nodes-heartbeat-timeout", "1s", "--nodes-lost-timeout", "2s"]
try:
    with Pool(GPUPOOLD, args) as p:
        for n in ("n0", "n1", "n2", "n3"):
            p.register(node_doc(n, ngpus=4))
        b = Beater(p)
        b.nodes |= {"n0", "n1", "n2", "n3"}
        p.tenant("team-a")

        # ---- quota reasons in the unit of the quota ----
        cli(p, "tenant", "create", "team-q", "--quota-gpus", "2")
        cli(p, "tenant", "create", "team-m", "--quota-gpu-memory", "128Gi")
        cli(p, "tenant", "create", "team-x", "--quota-model", "A100-80GB=1")
        for name, tenant, res in (("q1", "team-q", {"gpus": 2}), ("q2", "team-q", {"gpus": 1}),
                                  ("m1", "team-m", {"gpu_milli": 500, "gpu_memory_mib": 61440}),
                                  ("m2", "team-m", {"gpu_milli": 500, "gpu_memory_mib": 61440}),
                                  ("m3", "team-m", {"gpu_milli": 500, "gpu_memory_mib": 61440}),
                                  ("x1", "team-x", {"gpus": 1}), ("x2", "team-x", {"gpus": 1})):
            s, d = submit(p.admin, name, tenant=tenant, resources=res)
            check(s == 201, "submit %s" % name, s, d)
        for name in ("q1", "m1", "m2", "x1"):
            p.wait_state(p.admin, name, "Running")
        p.settle(0.5)
        want = {"q2": "quota: tenant team-q uses 2 of 2 GPUs; the job needs 1",
                "m3": "quota: tenant team-m uses 120 of 128 GiB GPU memory; the job needs 60 GiB",
                "x2": "quota: tenant team-x uses 1 of 1 A100-80GB GPUs; the job needs 1"}
        for name, text in want.items():
            got = reason(p, name)
            check(got.startswith(text), "the quota reason of %s in the quota's unit" % name,
                  got, text)
        s, d = submit(p.admin, "too-big", tenant="team-q", resources={"gpus": 3})
        check(s == 400 and "needs 3 GPUs in all, more than tenant team-q's quota of 2 GPUs"
              in d["error"]["message"], "a refusal names GPUs", s, d)
        s, d = submit(p.admin, "too-much", tenant="team-m", replicas=3,
                      resources={"gpu_milli": 500, "gpu_memory_mib": 50 * 1024})
        check(s == 400 and "needs 150 GiB of GPU memory in all, more than tenant team-m's "
              "quota of 128 GiB" in d["error"]["message"], "a refusal names GiB", s, d)
        for name in want.keys() | {"q1", "m1", "m2", "x1"}:
            s, d = p.admin.post("/v1/jobs/%s/cancel" % name)
            check(s == 200, "cancel %s" % name, s, d)

        # ---- a lost node is fenced: its job moves, and it stays fenced while silent ----
        for n in ("n0", "n1", "n2"):
            cli(p, "nodes", "cordon", n)
        s, d = submit(p.admin, "on-n3", tenant="team-a", gpus=1)
        j = p.wait_state(p.admin, "on-n3", "Running")
        check(j["placement"][0]["node"] == "n3", "the job runs on n3", j)
        b.nodes.discard("n3")
        wait("n3 fenced", lambda: node(p, "n3")["fenced"], 15)
        p.admin.post("/v1/jobs/on-n3/cancel")
        cli(p, "nodes", "uncordon", "n0")
        cli(p, "nodes", "uncordon", "n2")

        # ---- drained GPUs: XID 48 (returns after a check), XID 64 (retired), an operator ----
        b.send("n0", events=[{"gpu": 1, "xid": 48}, {"gpu": 2, "xid": 64}])
        b.flush("n0")
        cli(p, "nodes", "gpu-drain", "n0", "3", "--reason", "fan noise")
        gpus = node(p, "n0")["gpus"]
        check([("drained" in g, g.get("drained", {}).get("retired")) for g in gpus] ==
              [(False, None), (True, False), (True, True), (True, False)],
              "GPUs 1-3 of n0 drained, 2 retired", gpus)
        # ---- n1: cordoned and failing a node-wide health check ----
        b.send("n1", health={"seq": 0, "at_ms": 1, "conditions": [
            {"check": "driver", "gpu": -1, "severity": "fatal", "message": "no driver"}]})
        b.flush("n1")
        # ---- n2: a maintenance drain in 2 hours ----
        cli(p, "nodes", "drain", "n2", "--in", "2h")
        deadline = node(p, "n2")["drain_deadline_ms"]
        check(deadline > 0, "n2 has a drain deadline")

        table = cli(p, "get", "nodes")
        check(cell(table, "n0", "DRAINED-GPUS") == "1,2(retired),3", "drained GPUs in the table",
              table)
        check(cell(table, "n1", "STATE") == "Ready,Cordoned,Unhealthy",
              "cordon and the failed check in the table", table)
        check(re.fullmatch(r"in (119m|120m|2h)", cell(table, "n2", "DRAINS")) is not None
              and cell(table, "n2", "STATE") == "Ready", "the scheduled drain in the table", table)
        check(cell(table, "n3", "STATE") == "NotReady,Fenced", "fencing in the table", table)
        check(cell(table, "n2", "DRAINED-GPUS") == "-" and cell(table, "n0", "DRAINS") == "-",
              "nothing where there is nothing", table)
        wide = cli(p, "get", "nodes", "-o", "wide")
        at = datetime.datetime.fromtimestamp(deadline // 1000, datetime.timezone.utc)
        check(cell(wide, "n2", "DRAIN-AT") == at.strftime("%Y-%m-%dT%H:%M:%SZ")
              and cell(wide, "n0", "DRAINED-GPUS") == "1,2(retired),3"
              and cell(wide, "n3", "STATE") == "NotReady,Fenced", "-o wide shows them too", wide)

        d0 = cli(p, "describe", "node", "n0")
        gt = section(d0, "GPUs")
        check([cell(gt, i, "STATE") for i in "0123"] ==
              ["in service", "drained", "retired", "drained"], "GPU states in describe", d0)
        dt = section(d0, "Drained GPUs")
        check(cell(dt, "1", "RETURNS") == "when a health check passes" and
              cell(dt, "1", "REASON").startswith("XID 48") and
              cell(dt, "2", "RETURNS") == "retired: only by gpu-undrain" and
              "XID 64" in cell(dt, "2", "REASON") and
              cell(dt, "3", "RETURNS") == "by gpu-undrain" and
              cell(dt, "3", "REASON") == "drained by admin: fan noise",
              "each drained GPU with why and how it returns", d0)
        d1 = cli(p, "describe", "node", "n1")
        check(field(d1, "Cordoned") == "true" and field(d1, "Unhealthy") == "driver: no driver"
              and field(d1, "Schedulable") == "false", "describe n1", d1)
        d2 = cli(p, "describe", "node", "n2")
        check(field(d2, "Maintenance").startswith(
            "drains at %s (in " % at.strftime("%Y-%m-%dT%H:%M:%SZ")) and
            field(d2, "Cordoned") == "false", "describe n2 shows the deadline", d2)
        check("Drained GPUs:" not in d2, "no drained GPUs on n2", d2)
        d3 = cli(p, "describe", "node", "n3")
        check(field(d3, "Fenced").startswith("true") and field(d3, "State") == "NotReady",
              "describe n3 shows the fence", d3)

        # ---- a job kept off n2 by its maintenance deadline says so ----
        s, d = submit(p.admin, "long", tenant="team-a", gpus=4, max_runtime=3 * 3600)
        check(s == 201, "submit long", s, d)
        long_id = str(d["id"])
        s, d = submit(p.admin, "open-ended", tenant="team-a", gpus=4)
        check(s == 201, "submit open-ended", s, d)
        s, d = submit(p.admin, "short", tenant="team-a", gpus=4, max_runtime=3600)
        check(s == 201, "submit short", s, d)
        p.wait_state(p.admin, "short", "Running")
        cancel = p.admin.post("/v1/jobs/short/cancel")
        check(cancel[0] == 200, "cancel short", cancel)
        p.settle(0.5)
        clock = re.escape(utc_clock(deadline))
        got = reason(p, "long")
        check(re.match(r"maintenance: n2 drains at (\d{4}-\d\d-\d\d )?%s UTC and the job may "
                       r"run 3h" % clock, got) is not None,
              "a job held off by maintenance says so", got, utc_clock(deadline))
        got = reason(p, "open-ended")
        check(re.match(r"maintenance: n2 drains at (\d{4}-\d\d-\d\d )?%s UTC and the job sets "
                       r"no max runtime" % clock, got) is not None,
              "also without a max runtime", got)
        table = cli(p, "get", "job", "long")
        check(cell(table, long_id, "REASON").startswith("maintenance: n2"),
              "get job shows it", table)
        s, metrics = p.admin.get("/metrics")
        check(s == 200 and re.search(r'gpupool_jobs_pending\{[^}]*reason="maintenance"[^}]*\} 2',
                                     metrics) is not None,
              "the metric counts them as maintenance", s, metrics[-3000:])
        b.stop = True
        b.t.join()
finally:
    shutil.rmtree(home, ignore_errors=True)
print("ok")
