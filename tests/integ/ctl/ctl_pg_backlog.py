"""A leader on PostgreSQL places a large backlog, and moves the jobs of many lost nodes, without
losing its lease.

The leader renews its lease on the connection its committer writes on, under the state lock a
scheduling cycle's transaction holds; a cycle that wrote 2,000 placements in one transaction held
it past a short lease and the leader stopped (exit status 3, "lost the leadership"); so did the
recovery transaction that moved the jobs of a thousand lost nodes at once. A cycle's transaction
on a shared store now commits what it wrote once its time is spent (ctl_cycle_txn_budget_ms) and
the next one goes on; the recovery handles lost nodes for as long and leaves the rest to the next
cycle.

ctl_bench (bench/ctl_bench.c) runs the scenario against a real gpupoold on a fresh database of
the test's PostgreSQL: 250 simulated nodes beating every second, 2,000 one-GPU jobs submitted by
8 clients while a quota of one GPU holds them back, then the quota is lifted and the backlog is
placed; then 100 nodes stop beating and are lost (after 6 s: GPUPOOL_NODES_LOST_TIMEOUT) and
their jobs placed elsewhere; with a lease of 800 ms renewed every 200 ms (GPUPOOL_HA_LEASE_TTL,
GPUPOOL_HA_RENEW_INTERVAL). ctl_bench ends with an error when gpupoold exits before it is done.
Checked: it ends well, every job is placed (none pending) after the backlog and after the loss,
and the backlog took more than one transaction (the first cycle placed fewer than all), with
every call answered.

Arguments: ctl_bench, gpupoold. The PostgreSQL server's URL is in the file GP_TEST_PG_URL_FILE
names (the pg fixture).
"""
import os
import re
import subprocess
import sys
import uuid

from pool import check

ctl_bench, gpupoold = sys.argv[1:3]
with open(os.environ["GP_TEST_PG_URL_FILE"]) as f:
    server = f.read().strip()
db = "backlog_" + uuid.uuid4().hex[:12]
r = subprocess.run(["psql", "-XAtq", server + "/postgres", "-c", "CREATE DATABASE " + db],
                   capture_output=True, text=True)
check(r.returncode == 0, "create the database", r.stderr)
try:
    env = dict(os.environ, GPUPOOL_HA_LEASE_TTL="800ms", GPUPOOL_HA_RENEW_INTERVAL="200ms",
               GPUPOOL_NODES_HEARTBEAT_TIMEOUT="4s", GPUPOOL_NODES_LOST_TIMEOUT="6s")
    r = subprocess.run([ctl_bench, "--gpupoold", gpupoold, "--nodes", "500", "--jobs", "2000",
                        "--clients", "8", "--cycle", "--lose", "200",
                        "--store-url", server + "/" + db],
                       capture_output=True, text=True, env=env, timeout=240)
    out = r.stdout
    check(r.returncode == 0, "the benchmark ran to its end (the leader kept its lease)",
          r.returncode, out[-2000:], r.stderr[-2000:])
    check(re.search(r"^ctl_schedule store=postgresql pending_left=0 ", out, re.M),
          "every job placed", out)
    check(re.search(r"^ctl_loss store=postgresql nodes=200 of=500 lost_seen=1 pending_left=0 ",
                    out, re.M), "the lost nodes' jobs placed elsewhere", out)
    m = re.search(r"^ctl_cycle store=postgresql pending=2000 nodes=500 placed=(\d+) ", out, re.M)
    check(m and 0 < int(m.group(1)) < 1997, "the first cycle placed part of the backlog", out)
    for line in re.findall(r"^ctl_latency .*$", out, re.M):
        check(" failed=0 " in line, "every call answered", line)
finally:
    subprocess.run(["psql", "-XAtq", server + "/postgres", "-c", "DROP DATABASE IF EXISTS " + db],
                   capture_output=True, text=True)
print("ok")
