#!/usr/bin/env python3
"""The chaos run behind bench/chaos.sh: a local pool (`gpupool up`, mock-NVML nodes, real agents,
supervisors and processes), a steady stream of jobs, and for --duration seconds random faults;
then a bounded settle and the invariants (bench/chaos_ha.py runs it on several gpupoold sharing
one PostgreSQL, with leader kills and PostgreSQL restarts: `bench/chaos.sh --ha`). Raw results go
to --results (JSON) for bench/chaos_report.py; the last line printed is

    chaos: jobs=N faults=M restarts=R lost=L double_alloc=D

and the exit status is 0 when L == 0 and D == 0, else 1 (2 when the pool could not be set up).

The workload (tenant "chaos", one user token, every submit with an Idempotency-Key of its own,
retried with the same key, with backoff, while the controller does not answer or answers 5xx or
429): whole-GPU jobs (gpus: 1), fractional ones (gpu_milli 250 or 500 with 2 GiB of GPU memory)
and 2-replica gangs of one GPU each, submitted while fewer than --active jobs are unfinished.
Each replica counts one-second steps (6 to 15; 30 to 60 for one job in five), saving the count in
a checkpoint file in $GPUPOOL_CHECKPOINT_DIR (else in a directory of the run's, passed in the
job's env) and resuming from it when it starts again; restart_policy on-failure, max_restarts
100.

Faults, one at a time, every 4 to 12 s (uniform), of these kinds:
  ctl_kill    kill -9 of gpupoold; 0.5 to 3 s later it is started again with the command line and
              environment it had (read from /proc/PID: `gpupool up` starts it as gpupoold
              --data-dir DIR --listen 127.0.0.1:PORT [...]), its pid in DIR/pids/gpupoold.pid
  agent_kill  kill -9 of a node's agent; restarted likewise 1 to 5 s later, or, one time in four
              when the controller has nodes.lost_timeout (set to 20 s) and the outage ends within
              --duration, 5 to 10 s past the node's lost timeout (its jobs are then moved).
              Before the restart the node's mock control file is replaced by an empty one: a new
              agent's mock reads the file from its start and would otherwise run every earlier
              command again
  xid48       `xid GPU 48` (double-bit ECC: restart its jobs elsewhere, drain the GPU) appended to
              the control file of a GPU's node, a GPU that holds a replica when one does
  xid13       `xid GPU 13` (application fault: its jobs fail through their restart policy)
Drained GPUs (gpus[].drained in GET /v1/nodes) are returned with
POST /v1/nodes/{node}/gpus/{index}/undrain 15 to 30 s after they are first seen drained (a 404
of that route is recorded and tolerated), and all of them before the settle.

Invariants:
  lost          an acknowledged job (2xx) that does not exist at the end, or that is not
                Succeeded once the pool settled (every unfinished job is awaited for up to
                --settle seconds after the last fault; one still Pending, Scheduled or Running
                then is stuck; Failed and Cancelled are lost work, since the jobs always succeed
                when run to their end and nothing cancels them)
  double_alloc  sampled every second: (a) the controller: a GPU in GET /v1/nodes whose holders
                take more than 1000 milli or more than its memory; (b) the agents: a GPU UUID
                with a live replica of a whole-GPU job (milli 1000) and another live replica, or
                with live replicas of more than 1000 milli in all, where a replica is live when
                its child.pid (replica_dir.h) names a live process with that start time and its
                spec.json names its GPUs. Each distinct overlap (GPU, replicas) counts once; an
                agent-side overlap counts when seen in two samples in a row (it lasted about a
                second or more), one seen in a single sample is reported as transient only
  restarts      the sum of the jobs' `restarts`. Accounting: for every job, restarts must equal
                the number of its "Restarting" events plus the number of its "Requeued" events
                caused by faults (message starting "restarting after", or naming an XID, a lost
                node or maintenance); requeues by people ("requeued by", drains) do not count.
                Jobs where they differ are listed (unaccounted); they do not change the exit
                status
Also checked and reported, without changing the exit status: every job of the tenant was made by
an acknowledged submit or by one given up on (listed), and no name (one per key) appears twice.
Also recorded, not counted: a job replica alive twice (two live replica directories of the same
job and replica index, e.g. on a lost node whose agent is down while the job runs elsewhere).
Recovery times: for every "Restarting" event (and fault-caused "Requeued" event), the time until
the job's next "Running" event, grouped by cause (the XID named in the message, a lost node, an
exit code); a job that resumed at its last checkpointed step may end before its agent reports it
Running, and then the time until its "Succeeded" event is taken (recorded as via Succeeded).
"""
import argparse
import glob
import http.client
import json
import os
import platform
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "integ", "ctl"))
from pool import (Client, all_jobs, free_ports, kill9, proc_argv_env,  # noqa: E402
                  respawn, settings_env)

STEPS = (6, 15)          # most jobs
LONG_STEPS = (30, 60)    # one job in five
FAULT_GAP = (4.0, 12.0)
FAULT_KINDS = (("ctl_kill", 0.2), ("agent_kill", 0.25), ("xid48", 0.3), ("xid13", 0.25))
UNDRAIN_AFTER = (15.0, 30.0)

# A replica's work: STEPS steps of a second, the count checkpointed after each; every start is
# logged in the checkpoint directory: its time (ms), GPUPOOL_RESTART_COUNT, the step it resumed
# at and the job's id.
JOB_SCRIPT = r'''
ck="${GPUPOOL_CHECKPOINT_DIR:-$CHAOS_CKPT}/r${GPUPOOL_REPLICA:-0}"
mkdir -p "$ck" || exit 3
n=0
[ -s "$ck/step" ] && n=$(cat "$ck/step")
echo "$(date +%s%3N) ${GPUPOOL_RESTART_COUNT:-0} $n $GPUPOOL_JOB_ID" >> "$ck/starts"
while [ "$n" -lt "$CHAOS_STEPS" ]; do
    sleep 1
    n=$((n + 1))
    echo "$n" > "$ck/step.tmp" && mv "$ck/step.tmp" "$ck/step"
done
'''


def log(msg):
    print("chaos: " + msg, flush=True)


def now_ms():
    return int(time.time() * 1000)


class Run:
    FAULT_KINDS = FAULT_KINDS
    CONTROLLER_LOGS = ("gpupoold",)

    def __init__(self, a):
        self.a = a
        # One generator per thread, so that a seed gives the same jobs and the same faults.
        self.rng = random.Random(a.seed)             # the faults (the main thread)
        self.rng_jobs = random.Random(a.seed + 1)    # the submitter
        self.rng_drain = random.Random(a.seed + 2)   # the sampler's undrains
        self.bin = os.path.abspath(a.bin)
        self.tmp = os.path.realpath(tempfile.mkdtemp(prefix="gpupool-chaos."))
        self.pool = os.path.join(self.tmp, "pool")
        self.ckpt = os.path.join(self.tmp, "ckpt")
        os.makedirs(self.ckpt)
        self.lock = threading.Lock()
        self.stop_submit = threading.Event()
        self.stop_sample = threading.Event()
        self.t0 = time.time()
        self.acked = {}       # job id -> {key, name, kind, submit_ms, status}
        self.unacked = []     # keys given up on
        self.faults = []      # {t_ms, kind, node, gpu, ...}
        self.undrains = []    # {t, node, gpu, status}
        self.drained_seen = {}  # (node, gpu) -> (first seen, undrain at)
        self.ctl_bad = {}     # controller-side violations: key -> sample
        self.agent_seen = {}  # agent-side overlaps: key -> {first, last, samples, counted}
        self.agent_prev = set()
        self.dup_seen = {}    # a job replica alive twice: key -> {first, last, samples}
        self.samples = 0
        self.active = 0
        self.live = 0
        self.max_drained = 0
        self.notes = []
        self.agents_down = set()

    # ---- the API, tolerating a controller that is down ----

    def call(self, client, method, path, body=None, **kw):
        try:
            return client.call(method, path, body, timeout=kw.pop("timeout", 15), **kw)
        except (OSError, http.client.HTTPException) as e:
            return None, str(e)

    def up(self):
        n = self.a.nodes
        count = sum(int(s.split(":")[1]) if ":" in s else 1 for s in n.split(","))
        self.port = free_ports(1 + count)
        self.base = "http://127.0.0.1:%d" % self.port
        self.env = dict(os.environ)
        self.settings = {
            "api.rate_limit": "0", "api.token_rate_limit": "0",
            "nodes.heartbeat_timeout": "10s", "nodes.lost_timeout": "20s",
        }
        extra = settings_env(os.path.join(self.bin, "gpupoold"), self.settings)
        self.env.update(extra)
        self.env.update(self.up_env())
        self.lost_timeout = 20 if "GPUPOOL_NODES_LOST_TIMEOUT" in extra else None
        self.applied = sorted(extra)
        up = subprocess.run([os.path.join(self.bin, "gpupool"), "up", "--data-dir", self.pool,
                             "--port", str(self.port), "--nodes", n], capture_output=True,
                            text=True, timeout=120, env=self.env)
        if up.returncode != 0:
            log("gpupool up failed: " + up.stdout + up.stderr)
            return False
        self.admin = Client(self.base, open(os.path.join(self.pool, "admin.token")).read().strip())
        s, d = self.call(self.admin, "POST", "/v1/tenants", {"name": "chaos"})
        s2, d2 = self.call(self.admin, "POST", "/v1/tokens",
                           {"name": "chaos-user", "role": "user", "tenant": "chaos"})
        if s != 201 or s2 != 201:
            log("setup failed: %s %s / %s %s" % (s, d, s2, d2))
            return False
        self.user = Client(self.base, d2["token"])
        s, d = self.call(self.admin, "GET", "/v1/nodes")
        self.nodes = {x["name"]: len(x["gpus"]) for x in d["items"]}
        log("pool up: %d nodes, %d GPUs (%s); settings from the environment: %s" %
            (len(self.nodes), sum(self.nodes.values()), n, ", ".join(self.applied) or "none"))
        return True

    def up_env(self):
        """More environment for `gpupool up` (and so for gpupoold and the agents)."""
        return {}

    def down(self):
        subprocess.run([os.path.join(self.bin, "gpupool"), "down", "--data-dir", self.pool],
                       capture_output=True, text=True, timeout=180)

    def pid_of(self, name):
        with open(os.path.join(self.pool, "pids", name + ".pid")) as f:
            return int(f.read())

    def t(self):
        return round(time.time() - self.t0, 1)

    # ---- the workload ----

    def spec(self, i):
        rng = self.rng_jobs
        r = rng.random()
        kind = "whole" if r < 0.4 else "fraction" if r < 0.8 else "gang"
        steps = rng.randint(*(LONG_STEPS if rng.random() < 0.2 else STEPS))
        name = "c-%d" % i
        spec = {"name": name, "command": ["sh", "-c", JOB_SCRIPT],
                "env": {"CHAOS_CKPT": os.path.join(self.ckpt, "own", name),
                        "CHAOS_STEPS": str(steps)},
                "restart_policy": "on-failure", "max_restarts": 100}
        if kind == "whole":
            spec["resources"] = {"gpus": 1}
        elif kind == "fraction":
            spec["resources"] = {"gpu_milli": rng.choice((250, 500)),
                                 "gpu_memory_mib": 2048}
        else:
            spec["resources"] = {"gpus": 1}
            spec["replicas"] = 2
        return kind, spec

    def submit_once(self, spec, key):
        """One try of a submit: (HTTP status or None, the answer)."""
        return self.call(self.user, "POST", "/v1/jobs", spec, headers={"Idempotency-Key": key})

    def submitter(self):
        i = 0
        while not self.stop_submit.is_set():
            if self.active >= self.a.active:
                self.stop_submit.wait(0.5)
                continue
            kind, spec = self.spec(i)
            key = "chaos-%d-%d" % (self.a.seed, i)
            i += 1
            delay, deadline = 0.1, time.time() + 120
            while True:
                s, d = self.submit_once(spec, key)
                if s in (200, 201):
                    with self.lock:
                        self.acked[d["id"]] = {"key": key, "name": spec["name"], "kind": kind,
                                               "submit_ms": now_ms(), "status": s}
                        self.active += 1
                    break
                if (s is None or s >= 500 or s == 429) and time.time() < deadline:
                    time.sleep(delay)
                    delay = min(delay * 2, 2.0)
                    continue
                with self.lock:
                    self.unacked.append({"key": key, "status": s, "answer": str(d)[:300]})
                log("submit %s not acknowledged: %s %s" % (key, s, str(d)[:200]))
                break
            self.stop_submit.wait(self.rng_jobs.uniform(0.2, 0.8))

    # ---- sampling: allocations, drained GPUs, progress ----

    def sample_controller(self):
        s, d = self.call(self.admin, "GET", "/v1/nodes")
        if s != 200:
            return
        drained = 0
        for n in d["items"]:
            for g in n["gpus"]:
                hs = g.get("holders", [])
                milli = sum(h["milli"] for h in hs)
                mem = sum(h["memory_mib"] for h in hs)
                if milli > 1000 or mem > g["memory_mib"]:
                    key = "%s/%d %s" % (n["name"], g["index"],
                                        sorted((h.get("job"), h.get("replica")) for h in hs))
                    if key not in self.ctl_bad:
                        self.ctl_bad[key] = {"t": self.t(), "node": n["name"],
                                             "gpu": g["index"], "milli": milli,
                                             "memory_mib": mem, "holders": hs}
                        log("DOUBLE ALLOCATION (controller) %s: %d milli, %d MiB" %
                            (key, milli, mem))
                if g.get("drained"):
                    drained += 1
                    self.maybe_undrain(n["name"], g["index"], g["drained"])
                else:
                    self.drained_seen.pop((n["name"], g["index"]), None)
        self.max_drained = max(self.max_drained, drained)
        s, d = self.call(self.admin, "GET",
                         "/v1/jobs?tenant=chaos&state=Pending,Scheduled,Running&limit=1000")
        if s == 200:
            with self.lock:
                self.active = len(d["items"])

    def maybe_undrain(self, node, gpu, why, force=False):
        k = (node, gpu)
        if k not in self.drained_seen:
            self.drained_seen[k] = (time.time(),
                                    time.time() + self.rng_drain.uniform(*UNDRAIN_AFTER))
            log("GPU %s/%d drained: %s" % (node, gpu, json.dumps(why)[:160]))
        if not force and time.time() < self.drained_seen[k][1]:
            return
        s, d = self.call(self.admin, "POST", "/v1/nodes/%s/gpus/%d/undrain" % (node, gpu))
        self.undrains.append({"t": self.t(), "node": node, "gpu": gpu, "status": s})
        log("undrain %s/%d: %s" % (node, gpu, s))
        if s == 404 and "undrain 404" not in self.notes:
            self.notes.append("undrain 404")
            log("undrain route answered 404 (tolerated): %s" % str(d)[:200])
        if s is not None and s < 500:
            self.drained_seen[k] = (self.drained_seen[k][0], time.time() + 30)

    def live_replicas(self):
        """Replicas whose job process lives, from the agents' replica directories."""
        out = []
        for rdir in glob.glob(os.path.join(self.pool, "agents", "*", "replicas", "*")):
            try:
                pid, start = (int(x) for x in open(os.path.join(rdir, "child.pid")).read().split())
                with open("/proc/%d/stat" % pid) as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                if fields[0] == "Z" or int(fields[19]) != start:
                    continue
                spec = json.load(open(os.path.join(rdir, "spec.json")))
            except (OSError, ValueError, IndexError):
                continue
            gpus = [(g.get("uuid"), g.get("milli", 1000)) for g in spec.get("gpus", [])]
            out.append({"node": rdir.split(os.sep)[-3], "dir": os.path.basename(rdir),
                        "job": spec.get("job"), "replica": spec.get("replica"),
                        "epoch": spec.get("epoch"), "gpus": gpus})
        return out

    def sample_agents(self):
        reps = self.live_replicas()
        self.live = len(reps)
        per_gpu, per_replica = {}, {}
        for r in reps:
            per_replica.setdefault((r["job"], r["replica"]), []).append(r)
            for uuid, milli in r["gpus"]:
                per_gpu.setdefault(uuid, []).append((milli, r))
        now = set()
        for uuid, held in per_gpu.items():
            whole = [m for m, _ in held if m >= 1000]
            if (whole and len(held) > 1) or sum(m for m, _ in held) > 1000:
                key = "%s %s" % (uuid, sorted((r["node"], r["dir"]) for _, r in held))
                now.add(key)
                e = self.agent_seen.setdefault(key, {"first": self.t(), "samples": 0,
                                                     "counted": False, "uuid": uuid,
                                                     "replicas": [(r["node"], r["dir"], m)
                                                                  for m, r in held]})
                e["last"] = self.t()
                e["samples"] = e["samples"] + 1 if key in self.agent_prev else 1
                if e["samples"] >= 2 and not e["counted"]:
                    e["counted"] = True
                    log("DOUBLE ALLOCATION (agents) %s" % key)
        self.agent_prev = now
        for k, rs in per_replica.items():
            if len(rs) > 1:
                key = "%s/%s %s" % (k[0], k[1], sorted((r["node"], r["dir"]) for r in rs))
                e = self.dup_seen.setdefault(key, {"first": self.t(), "samples": 0})
                e["last"] = self.t()
                e["samples"] += 1

    def sampler(self):
        last_line = 0
        while not self.stop_sample.is_set():
            t = time.time()
            self.samples += 1
            try:
                self.sample_controller()
                self.sample_agents()
            except Exception as e:  # a sample must never end the run
                log("sample failed: %r" % e)
            if t - last_line >= 10:
                last_line = t
                log("t=%ds jobs=%d active=%d live_replicas=%d faults=%d drained_max=%d "
                    "double_alloc=%d" % (self.t(), len(self.acked), self.active, self.live,
                                         len(self.faults), self.max_drained,
                                         self.double_alloc()))
            self.stop_sample.wait(max(0.0, 1.0 - (time.time() - t)))

    def double_alloc(self):
        return len(self.ctl_bad) + sum(1 for e in self.agent_seen.values() if e["counted"])

    # ---- faults ----

    def wait_ready(self, timeout=60):
        deadline = time.time() + timeout
        while time.time() < deadline:
            s, _ = self.call(Client(self.base, None), "GET", "/readyz", timeout=2)
            if s == 200:
                return True
            time.sleep(0.1)
        return False

    def ctl_kill(self, f):
        pid = self.pid_of("gpupoold")
        argv, env = proc_argv_env(pid)
        kill9(pid)
        f["down_s"] = round(self.rng.uniform(0.5, 3.0), 2)
        time.sleep(f["down_s"])
        respawn(argv, env, self.pool, "gpupoold")
        f["ready"] = self.wait_ready()
        f["ready_after_s"] = round(time.time() - f["t_ms"] / 1000, 2)

    def agent_kill(self, f):
        node = self.rng.choice(sorted(self.nodes))
        f["node"] = node
        name = "agent-" + node
        pid = self.pid_of(name)
        argv, env = proc_argv_env(pid)
        self.agents_down.add(node)
        kill9(pid)
        long = (self.lost_timeout and self.rng.random() < 0.25 and
                time.time() + self.lost_timeout + 10 < self.t0 + self.a.duration)
        f["down_s"] = round(self.lost_timeout + self.rng.uniform(5, 10) if long
                            else self.rng.uniform(1, 5), 2)
        f["past_lost_timeout"] = bool(long)
        time.sleep(f["down_s"])
        ctl = env.get("GPUPOOL_NVML_MOCK_CONTROL") or os.path.join(self.pool, "agents", node,
                                                                  "nvml-control")
        if os.path.exists(ctl):  # a new mock would run the old commands again
            os.rename(ctl, "%s.%d" % (ctl, f["t_ms"]))
        open(ctl, "a").close()
        respawn(argv, env, self.pool, name)
        self.agents_down.discard(node)

    def xid(self, f, code):
        s, d = self.call(self.admin, "GET", "/v1/nodes")
        if s != 200:
            f["skipped"] = "controller did not answer"
            return
        busy, idle = [], []
        for n in d["items"]:
            if n["name"] in self.agents_down or n["name"] not in self.nodes:
                continue
            for g in n["gpus"]:
                if g.get("drained"):
                    continue
                (busy if g.get("holders") else idle).append((n["name"], g["index"], g))
        if not busy and not idle:
            f["skipped"] = "no GPU in service"
            return
        node, gpu, g = self.rng.choice(busy or idle)
        f.update(node=node, gpu=gpu, jobs=sorted({h.get("job") for h in g.get("holders", [])}))
        with open(os.path.join(self.pool, "agents", node, "nvml-control"), "a") as c:
            c.write("xid %d %d\n" % (gpu, code))

    def inject(self, kind):
        f = {"t_ms": now_ms(), "t": self.t(), "kind": kind}
        try:
            self.handlers()[kind](f)
        except Exception as e:  # recorded; the run goes on
            f["error"] = repr(e)
        self.faults.append(f)
        log("fault %s %s" % (kind, json.dumps({k: v for k, v in f.items()
                                                 if k not in ("t_ms", "kind")})))

    def handlers(self):
        """The faults this run injects: kind -> function(fault record)."""
        return {"ctl_kill": self.ctl_kill, "agent_kill": self.agent_kill,
                "xid48": lambda f: self.xid(f, 48), "xid13": lambda f: self.xid(f, 13)}

    def injector(self):
        chosen = [(k, w) for k, w in self.FAULT_KINDS if k in self.a.kinds.split(",")]
        kinds, weights = zip(*chosen)
        end = self.t0 + self.a.duration
        while True:
            gap = self.rng.uniform(*FAULT_GAP)
            if time.time() + gap >= end:
                time.sleep(max(0.0, end - time.time()))
                return
            time.sleep(gap)
            self.inject(self.rng.choices(kinds, weights)[0])

    # ---- the end ----

    def settle(self):
        self.stop_submit.set()
        for (node, gpu) in list(self.drained_seen):
            self.maybe_undrain(node, gpu, "settle", force=True)
        deadline = time.time() + self.a.settle
        t = time.time()
        while time.time() < deadline:
            s, d = self.call(self.admin, "GET",
                             "/v1/jobs?tenant=chaos&state=Pending,Scheduled,Running&limit=1000")
            if s == 200 and not d["items"]:
                break
            time.sleep(1)
        log("settled in %.0f s (bound %d s)" % (time.time() - t, self.a.settle))
        time.sleep(2)  # a last sample or two after the end

    def starts(self):
        """Every replica start the jobs logged, by job id: [(ms, restart count, step)]."""
        out = {}
        # Under the run's directory: the pool's checkpoint root may be set by gpupool up.
        for path in glob.glob(os.path.join(self.tmp, "**", "starts"), recursive=True):
            for line in open(path, errors="replace"):
                x = line.split()
                if len(x) == 4 and all(v.isdigit() for v in x):
                    out.setdefault(int(x[3]), []).append((int(x[0]), int(x[1]), int(x[2])))
        return out

    def before_collect(self):
        """Called once the pool settled, before the jobs are read for the invariants."""

    def extra_results(self):
        """More members of the results (the HA run's failovers)."""
        return {}

    def collect(self):
        jobs, lost, unaccounted, recovery = [], [], [], []
        all_starts = self.starts()
        for jid, info in sorted(self.acked.items()):
            s, j = self.call(self.admin, "GET", "/v1/jobs/%d" % jid)
            if s != 200:
                lost.append({"id": jid, "name": info["name"], "why": "missing (%s)" % s})
                continue
            s, ev = self.call(self.admin, "GET", "/v1/jobs/%d/events" % jid)
            events = ev["items"] if s == 200 else []
            restarting = [e for e in events if e["type"] == "Restarting"]
            times = {e["time_ms"] for e in restarting}
            fault_rq = [e for e in events if e["type"] == "Requeued" and e["time_ms"] not in times
                        and re.search(r"^restarting after|xid|lost|maintenance", e["message"],
                                      re.I)]
            accounted = len(restarting) + len(fault_rq)
            if accounted != j["restarts"]:
                unaccounted.append({"id": jid, "restarts": j["restarts"],
                                    "restarting_events": len(restarting),
                                    "fault_requeues": len(fault_rq)})
            for e in restarting + fault_rq:
                # The next Running event; a restarted job that resumed at its last step may end
                # before its agent reports it Running: then the end event.
                nxt = [x for x in events if x["id"] > e["id"] and x["type"] in
                       ("Running", "Succeeded", "Failed", "Restarting", "Cancelled")]
                back = nxt[0] if nxt and nxt[0]["type"] in ("Running", "Succeeded") else None
                recovery.append({"job": jid, "cause": cause_of(e["message"]),
                                 "event": e["type"], "message": e["message"][:200],
                                 "via": back["type"] if back else None,
                                 "seconds": round((back["time_ms"] - e["time_ms"]) / 1000, 3)
                                 if back else None})
            starts = all_starts.get(jid, [])
            rec = {"id": jid, "name": info["name"], "kind": info["kind"], "state": j["state"],
                   "restarts": j["restarts"], "reason": j["reason"][:200],
                   "starts": len(starts),
                   "resumed": sum(1 for x in starts if x[2] > 0),
                   "event_types": [e["type"] for e in events]}
            jobs.append(rec)
            if j["state"] != "Succeeded":
                lost.append({"id": jid, "name": info["name"], "state": j["state"],
                             "why": "stuck" if j["state"] in ("Pending", "Scheduled", "Running")
                             else j["state"], "reason": j["reason"][:200]})
        return jobs, lost, unaccounted, recovery

    def main(self):
        try:
            return self.run()
        except BaseException:
            self.stop_submit.set()
            self.stop_sample.set()
            self.down()
            log("interrupted; the pool is down (its directory: %s)" % self.tmp)
            raise

    def run(self):
        if not self.up():
            self.down()
            shutil.rmtree(self.tmp, ignore_errors=True)
            return 2
        subm = threading.Thread(target=self.submitter, daemon=True)
        samp = threading.Thread(target=self.sampler, daemon=True)
        subm.start()
        samp.start()
        log("injecting faults for %d s (seed %d)" % (self.a.duration, self.a.seed))
        self.injector()
        log("faults over at t=%ds: %d faults; settling" % (self.t(), len(self.faults)))
        self.settle()
        self.stop_sample.set()
        samp.join(timeout=30)
        subm.join(timeout=150)
        self.before_collect()
        jobs, lost, unaccounted, recovery = self.collect()
        # Every job of the tenant: one per submitted key (a name is used by one key only).
        listed = all_jobs(self.admin, "tenant=chaos&")
        names = [j["name"] for j in listed]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        acked_ids = set(self.acked)
        orphans = [{"id": j["id"], "name": j["name"], "state": j["state"]} for j in listed
                   if j["id"] not in acked_ids]
        for n in duplicates:
            log("DUPLICATE job name %s (one key made two jobs)" % n)
        # Drained GPUs left at the end (all were undrained before the settle).
        s, d = self.call(self.admin, "GET", "/v1/nodes")
        drained_end = [(n["name"], g["index"]) for n in d["items"] for g in n["gpus"]
                       if g.get("drained")] if s == 200 else None
        logs = {}
        for name in self.CONTROLLER_LOGS:
            path = os.path.join(self.pool, "logs", name + ".log")
            logs[name + "_errors"] = [line.strip()[:300] for line in open(path, errors="replace")
                                      if " level=error" in line or "ERROR" in line][-20:]
        self.down()
        restarts = sum(j["restarts"] for j in jobs)
        kinds = {}
        for f in self.faults:
            if "skipped" not in f and "error" not in f:
                kinds[f["kind"]] = kinds.get(f["kind"], 0) + 1
        da = self.double_alloc()
        res = {
            "version": 1, "seed": self.a.seed, "duration_s": self.a.duration,
            "settle_bound_s": self.a.settle, "nodes_spec": self.a.nodes,
            "nodes": self.nodes, "gpus": sum(self.nodes.values()),
            "settings_applied": self.applied, "started_ms": int(self.t0 * 1000),
            "wall_s": self.t(), "samples": self.samples, "machine": machine(),
            "jobs": jobs, "unacknowledged": self.unacked,
            "faults": self.faults, "faults_by_kind": kinds,
            "undrains": self.undrains, "drained_at_end": drained_end,
            "max_drained": self.max_drained,
            "restarts": restarts, "unaccounted_restarts": unaccounted,
            "recovery": recovery, "lost": lost,
            "double_alloc": da,
            "double_alloc_controller": list(self.ctl_bad.values()),
            "double_alloc_agents": [e for e in self.agent_seen.values() if e["counted"]],
            "agent_overlaps_transient": [e for e in self.agent_seen.values()
                                         if not e["counted"]],
            "replica_alive_twice": [dict(v, key=k) for k, v in self.dup_seen.items()],
            "duplicate_jobs": duplicates, "unacknowledged_jobs": orphans,
            "notes": self.notes, **logs, **self.extra_results(),
        }
        os.makedirs(os.path.dirname(os.path.abspath(self.a.results)), exist_ok=True)
        with open(self.a.results, "w") as f:
            json.dump(res, f, indent=1)
        if not self.a.keep:
            shutil.rmtree(self.tmp, ignore_errors=True)
        else:
            log("kept %s" % self.tmp)
        states = {}
        for j in jobs:
            states[j["state"]] = states.get(j["state"], 0) + 1
        log("jobs by state: %s; unacknowledged submits: %d (jobs made by them: %d); "
            "duplicated jobs: %d" % (json.dumps(states), len(self.unacked), len(orphans),
                                     len(duplicates)))
        log("faults by kind: %s" % json.dumps(kinds))
        log("restart accounting: %s" % ("every restart accounted for" if not unaccounted else
                                        "%d jobs unaccounted: %s" % (len(unaccounted),
                                                                     json.dumps(unaccounted[:5]))))
        for x in lost[:10]:
            log("LOST %s" % json.dumps(x))
        log("results in %s" % self.a.results)
        print("chaos: jobs=%d faults=%d restarts=%d lost=%d double_alloc=%d" %
              (len(self.acked), sum(kinds.values()), restarts, len(lost), da), flush=True)
        return 0 if not lost and da == 0 else 1


def machine():
    """What the run ran on and from which source."""
    here = os.path.dirname(os.path.abspath(__file__))
    git = subprocess.run(["git", "-C", here, "describe", "--always", "--dirty"],
                         capture_output=True, text=True)
    return {"cpus": os.cpu_count(), "platform": platform.platform(),
            "python": platform.python_version(), "source": git.stdout.strip() or None}


def cause_of(msg):
    m = re.search(r"XID\s*(\d+)", msg, re.I)
    if m:
        return "xid%s" % m.group(1)
    if re.search(r"node-lost|lost", msg, re.I):
        return "node-lost"
    if re.search(r"maintenance", msg, re.I):
        return "maintenance"
    if re.search(r"exit", msg, re.I):
        return "exit"
    return "other"


def parser(kinds, doc):
    """The command line of a chaos run injecting kinds ((name, weight), ...)."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--bin", required=True, help="the build's bin directory")
    ap.add_argument("--duration", type=int, default=600, help="seconds of fault injection")
    ap.add_argument("--settle", type=int, default=180, help="bound of the settle, seconds")
    ap.add_argument("--nodes", default="pcie-t4:2,dgx-a100:2", help="gpupool up --nodes")
    ap.add_argument("--active", type=int, default=20, help="unfinished jobs kept submitted")
    ap.add_argument("--seed", type=int, default=random.randrange(1 << 30))
    ap.add_argument("--kinds", default=",".join(k for k, _ in kinds),
                    help="the faults to inject, comma-separated")
    ap.add_argument("--results", required=True, help="the JSON results file")
    ap.add_argument("--keep", action="store_true", help="keep the pool's directory")
    return ap


def check_kinds(ap, a, kinds):
    bad = set(a.kinds.split(",")) - {k for k, _ in kinds}
    if bad or not a.kinds:
        ap.error("--kinds: %s: not among %s" % (",".join(sorted(bad)) or "none",
                                               ",".join(k for k, _ in kinds)))


def main():
    ap = parser(FAULT_KINDS, __doc__)
    a = ap.parse_args()
    check_kinds(ap, a, FAULT_KINDS)
    return Run(a).main()


if __name__ == "__main__":
    sys.exit(main())
