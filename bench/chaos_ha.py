#!/usr/bin/env python3
"""The high-availability chaos run behind `bench/chaos.sh --ha`: bench/chaos.py's run (the same
workload, samples and invariants; its header defines them) on a pool of several gpupoold
sharing one PostgreSQL, with leader kills and PostgreSQL restarts among the faults.

The pool: PostgreSQL 15 started by tests/pg/pg_fixture.sh (initdb and pg_ctl in a temp dir on a
free port of 127.0.0.1; as root the server runs as the postgres user through runuser; when it
cannot start, the run says why, writes {"ha": true, "skipped": WHY} as its results and exits 0).
`gpupool up` starts the first gpupoold with GPUPOOL_STORE_URL (the database) and
GPUPOOL_SECRETS_KEY_FILE (one key file for every controller) and the agents; --controllers - 1
more gpupoold are started with the first one's command line and environment, each with its
own data directory (POOL/ctl-N) and port (advertised as http://127.0.0.1:PORT, the default);
then every agent is stopped (SIGTERM: an agent never stops its jobs) and started again with
--server URL,URL,... naming every controller. The submitter uses the CLI with the same list
(`gpupool submit -f SPEC --server URL,... --idempotency-key KEY -o json`: the client that follows
the leader); a submit is acknowledged when the CLI exits 0 with the job, and retried with the
same key (backoff, up to 120 s) when it does not. The sampler's and the settle's calls follow
the leader the same way (a connection refused, a 307 or a 503 naming a leader: the leader when
it is in the list, else the next URL); the invariants are read from the final leader.

A supervisor (as systemd's Restart=always would) starts a controller that exited by itself
(status 3: deposed, e.g. after a PostgreSQL restart longer than its lease) again 1 s later;
every such exit is recorded with its status and the log's reason.

Faults, one at a time, every 4 to 12 s (uniform), of these kinds:
  leader_kill  kill -9 of the controller that answers GET /readyz with role leader; 0.5 to 3 s
               later it is started again with the command line and environment it had (it comes
               back as a follower, unless it wins the next election) and its role is recorded
  pg_restart   pg_ctl restart -m fast -w of the database
  agent_kill, xid48, xid13   as in bench/chaos.py (agents restarted keep their --server list)
Failover, measured for every leader_kill and pg_restart: from the kill (or the start of the
restart) until a controller answers GET /readyz with role leader and accepts a write sent to it
directly (POST /v1/tenants with a new name: 201, or 409 when an earlier try was stored but its
answer lost), polled every 50 ms; at most 60 s (then recorded as none). Every one is recorded.
"""
import glob
import http.client
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from chaos import Run, check_kinds, log, machine, now_ms, parser  # noqa: E402
from pool import Client, free_ports, kill9, pid_alive, proc_argv_env  # noqa: E402

HA_FAULT_KINDS = (("leader_kill", 0.25), ("pg_restart", 0.2), ("agent_kill", 0.2),
                  ("xid48", 0.2), ("xid13", 0.15))
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
FIXTURE = os.path.join(ROOT, "tests", "pg", "pg_fixture.sh")
PG_BIN = os.environ.get("GP_PG_BIN", "/usr/lib/postgresql/15/bin")
FAILOVER_BOUND = 60.0    # seconds a failover is awaited
RESTART_PAUSE = (0.5, 3.0)  # a killed leader is started again this long after
SUPERVISOR_DELAY = 1.0   # a controller that exited by itself is started again this long after


class Follow:
    """Calls (as pool.Client) to whichever of urls answers, with the CLI's rule: start at the
    one that answered last; a connection that fails, a 307, or a 503 whose JSON names a
    "leader" member moves to the leader named when it is in the list, else to the next URL.
    One round over the list per call; then the last error is raised, or a 503 answered."""

    def __init__(self, urls, token):
        self.urls, self.token, self.cur = list(urls), token, 0

    def call(self, method, path, body=None, headers=None, timeout=30):
        i, err, last = self.cur, None, None
        for _ in range(len(self.urls)):
            try:
                s, d = Client(self.urls[i], self.token).call(method, path, body, headers=headers,
                                                             timeout=timeout)
            except (OSError, http.client.HTTPException) as e:
                err, i = e, (i + 1) % len(self.urls)
                continue
            named = isinstance(d, dict) and "leader" in d
            if s == 307 or (s == 503 and named):
                last = (503, d)
                leader = d.get("leader") if named else None
                i = self.urls.index(leader) if leader in self.urls else (i + 1) % len(self.urls)
                continue
            self.cur = i
            return s, d
        if last:
            return last
        raise err


def spawn(argv, env, pool_dir, name):
    """argv started as `gpupool up` starts its processes (a session of its own, output appended
    to POOL/logs/NAME.log, pid in POOL/pids/NAME.pid); the Popen, reaped by a thread."""
    with open(os.path.join(pool_dir, "logs", name + ".log"), "ab") as out:
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=out, env=env,
                             start_new_session=True)
    threading.Thread(target=p.wait, daemon=True).start()
    with open(os.path.join(pool_dir, "pids", name + ".pid"), "w") as f:
        f.write("%d\n" % p.pid)
    return p


def with_flag(argv, flag, value):
    """argv with flag's value replaced (or the flag added)."""
    out = list(argv)
    if flag in out:
        out[out.index(flag) + 1] = value
    else:
        out += [flag, value]
    return out


class HaRun(Run):
    FAULT_KINDS = HA_FAULT_KINDS

    def __init__(self, a):
        super().__init__(a)
        self.ctls = []          # {name, url, argv, env, pid, proc, held, due}
        self.ctl_lock = threading.Lock()
        self.failovers = []
        self.ctl_exits = []
        self.stop_super = threading.Event()
        self.urlfile = os.path.join(self.tmp, "pg.url")
        self.pg = None
        self.probes = 0
        self.final_leader = None

    # ---- PostgreSQL ----

    def start_pg(self):
        """PostgreSQL through the fixture; None, or why it could not start."""
        if not os.access(os.path.join(PG_BIN, "initdb"), os.X_OK):
            return "%s/initdb missing (postgresql-15; scripts/deps.sh)" % PG_BIN
        if os.getuid() == 0 and not shutil.which("runuser"):
            return "running as root without runuser (initdb refuses root)"
        p = subprocess.run([FIXTURE, "start", self.urlfile], capture_output=True, text=True,
                           timeout=120)
        if p.returncode != 0:
            return "tests/pg/pg_fixture.sh start: %s" % (p.stderr or p.stdout).strip()[-300:]
        ver = subprocess.run([os.path.join(PG_BIN, "postgres"), "--version"],
                             capture_output=True, text=True)
        self.pg = {"url": open(self.urlfile).read().strip() + "/postgres",
                   "dir": open(self.urlfile + ".dir").read().strip(),
                   "version": ver.stdout.strip()}
        log("PostgreSQL up: %s (%s)" % (self.pg["url"], self.pg["version"]))
        return None

    def pg_ctl(self, *args):
        as_pg = ["runuser", "-u", "postgres", "--"] if os.getuid() == 0 else []
        return subprocess.run(as_pg + [os.path.join(PG_BIN, "pg_ctl"), "-D",
                                       os.path.join(self.pg["dir"], "data")] + list(args),
                              capture_output=True, text=True, timeout=120)

    # ---- the pool ----

    def up_env(self):
        return {"GPUPOOL_STORE_URL": self.pg["url"],
                "GPUPOOL_SECRETS_KEY_FILE": os.path.join(self.tmp, "secret.key")}

    def up(self):
        # `gpupool up` waits until its gpupoold leads (on PostgreSQL it is a follower first).
        if not super().up():
            for path in sorted(glob.glob(os.path.join(self.pool, "logs", "gpupoold*.log"))):
                with open(path, errors="replace") as f:
                    log("the end of %s:\n%s" % (path, "".join(f.readlines()[-15:])))
            return False
        pid = self.pid_of("gpupoold")
        argv, env = proc_argv_env(pid)
        self.ctls.append({"name": "gpupoold", "url": self.base, "argv": argv, "env": env,
                          "pid": pid, "proc": None, "held": False, "due": None})
        for i in range(1, self.a.controllers):
            port = free_ports(1)
            data = os.path.join(self.pool, "ctl-%d" % i)
            c = {"name": "gpupoold-%d" % i, "url": "http://127.0.0.1:%d" % port,
                 "argv": with_flag(with_flag(argv, "--data-dir", data), "--listen",
                                   "127.0.0.1:%d" % port),
                 "env": env, "held": False, "due": None}
            self.start_ctl(c)
            self.ctls.append(c)
            if self.wait_role(c, 30) != "follower":
                log("%s did not come up as a follower" % c["name"])
                return False
        self.CONTROLLER_LOGS = tuple(c["name"] for c in self.ctls)
        self.urls = [c["url"] for c in self.ctls]
        if not self.agents_follow():
            return False
        self.user_token = self.user.token
        self.admin = Follow(self.urls, self.admin.token)
        self.cli_env = {k: v for k, v in os.environ.items() if not k.startswith("GPUPOOL_")}
        self.cli_env.update(HOME=self.tmp, XDG_CONFIG_HOME=os.path.join(self.tmp, "config"),
                            GPUPOOL_TOKEN=self.user_token)
        os.makedirs(os.path.join(self.tmp, "specs"))
        threading.Thread(target=self.supervisor, daemon=True).start()
        log("%d controllers on PostgreSQL: %s; the agents follow the leader" %
            (len(self.ctls), ", ".join(self.urls)))
        return True

    def agents_follow(self):
        """Every agent started again with --server naming every controller; True once each
        has heartbeated since."""
        since = now_ms()
        for node in sorted(self.nodes):
            name = "agent-" + node
            pid = self.pid_of(name)
            argv, env = proc_argv_env(pid)
            os.kill(pid, signal.SIGTERM)
            deadline = time.time() + 20
            while pid_alive(pid) and time.time() < deadline:
                time.sleep(0.05)
            if pid_alive(pid):
                kill9(pid)
            spawn(with_flag(argv, "--server", ",".join(self.urls)), env, self.pool, name)
        deadline = time.time() + 60
        while time.time() < deadline:
            s, d = self.call(self.admin, "GET", "/v1/nodes")
            if s == 200 and all(n.get("heartbeat_ms", 0) > since for n in d["items"]):
                return True
            time.sleep(0.2)
        log("the agents did not heartbeat again after their restart with every controller")
        return False

    def start_ctl(self, c):
        c["proc"] = spawn(c["argv"], c["env"], self.pool, c["name"])
        c["pid"] = c["proc"].pid

    def role(self, c, timeout=1.0):
        try:
            s, d = Client(c["url"], None).call("GET", "/readyz", timeout=timeout)
        except (OSError, http.client.HTTPException):
            return None
        return d.get("role") if s == 200 and isinstance(d, dict) else None

    def wait_role(self, c, timeout):
        deadline = time.time() + timeout
        while time.time() < deadline:
            r = self.role(c)
            if r:
                return r
            time.sleep(0.1)
        return None

    def leader(self, timeout):
        deadline = time.time() + timeout
        while time.time() < deadline:
            for c in self.ctls:
                if self.role(c) == "leader":
                    return c
            time.sleep(0.1)
        return None

    def supervisor(self):
        """Starts again, SUPERVISOR_DELAY later, a controller that exited by itself."""
        while not self.stop_super.wait(0.2):
            with self.ctl_lock:
                for c in self.ctls:
                    if c["held"] or pid_alive(c["pid"]):
                        continue
                    if c["due"] is None:
                        c["due"] = time.time() + SUPERVISOR_DELAY
                        status = c["proc"].poll() if c["proc"] else None
                        e = {"t": self.t(), "name": c["name"], "status": status,
                             "why": self.exit_reason(c)}
                        self.ctl_exits.append(e)
                        log("controller exited: %s" % json.dumps(e))
                    elif time.time() >= c["due"]:
                        c["due"] = None
                        self.start_ctl(c)

    def exit_reason(self, c):
        try:
            with open(os.path.join(self.pool, "logs", c["name"] + ".log"),
                      errors="replace") as f:
                lines = f.readlines()[-50:]
        except OSError:
            return None
        why = [x.strip() for x in lines if "lost the leadership" in x]
        return (why or [x.strip() for x in lines] or [None])[-1][:300] if lines else None

    # ---- the workload: the CLI, following the leader ----

    def submit_once(self, spec, key):
        path = os.path.join(self.tmp, "specs", key + ".json")
        if not os.path.exists(path):
            with open(path, "w") as f:
                json.dump(spec, f)
        try:
            p = subprocess.run([os.path.join(self.bin, "gpupool"), "submit", "-f", path,
                                "--server", ",".join(self.urls), "--idempotency-key", key,
                                "-o", "json"], capture_output=True, text=True, timeout=60,
                               env=self.cli_env)
        except subprocess.TimeoutExpired:
            return None, "gpupool submit: no answer in 60 s"
        if p.returncode == 0:
            try:
                return 201, json.loads(p.stdout)
            except ValueError:
                return None, p.stdout[-300:]
        return None, "exit %d: %s" % (p.returncode, p.stderr.strip()[-300:])

    # ---- faults ----

    def handlers(self):
        h = super().handlers()
        del h["ctl_kill"]
        h.update(leader_kill=self.leader_kill, pg_restart=self.pg_restart)
        return h

    def probe_write(self, c):
        """A write sent to c itself; whether it was stored."""
        try:
            s, _ = Client(c["url"], self.admin.token).call(
                "POST", "/v1/tenants", {"name": "failover-probe-%d" % self.probes}, timeout=5)
        except (OSError, http.client.HTTPException):
            return False
        if s in (201, 409):
            self.probes += 1
            return True
        return False

    def measure(self, t0, f, actions=()):
        """Until a controller leads and takes a write (running actions, (when, fn), as they
        fall due); the failover recorded in f and in self.failovers."""
        actions = list(actions)
        deadline = t0 + FAILOVER_BOUND
        won = None
        while time.time() < deadline and won is None:
            for a in [a for a in actions if time.time() >= a[0]]:
                actions.remove(a)
                a[1]()
            for c in self.ctls:
                if self.role(c) == "leader" and self.probe_write(c):
                    won = c
                    break
            else:
                time.sleep(0.05)
        took = round(time.time() - t0, 3) if won else None
        for a in actions:
            a[1]()
        f.update(failover_s=took, leader=won["name"] if won else None)
        self.failovers.append({"t": f["t"], "kind": f["kind"], "seconds": took,
                               "before": f.get("leader_before"),
                               "after": won["name"] if won else None})
        log("failover after %s: %s s, leader %s" % (f["kind"], took, f["leader"]))

    def leader_kill(self, f):
        c = self.leader(30)
        if c is None:
            f["skipped"] = "no leader"
            return
        with self.ctl_lock:
            c["held"] = True
        try:
            f["leader_before"] = c["name"]
            f["down_s"] = round(self.rng.uniform(*RESTART_PAUSE), 2)
            t0 = time.time()
            kill9(c["pid"])
            self.measure(t0, f, [(t0 + f["down_s"], lambda: self.start_ctl(c))])
            f["came_back_as"] = self.wait_role(c, 30)
        finally:
            with self.ctl_lock:
                c["held"] = False

    def pg_restart(self, f):
        c = self.leader(30)
        f["leader_before"] = c["name"] if c else None
        t0 = time.time()
        p = self.pg_ctl("restart", "-m", "fast", "-w", "-t", "60", "-l",
                        os.path.join(self.pg["dir"], "server.log"))
        f["pg_ctl_s"] = round(time.time() - t0, 3)
        if p.returncode != 0:
            f["error"] = "pg_ctl restart: %s" % (p.stderr or p.stdout).strip()[-300:]
            return
        self.measure(t0, f)

    # ---- the end ----

    def before_collect(self):
        c = self.leader(60)
        if c:
            self.final_leader = c["name"]
            self.admin = Client(c["url"], self.admin.token)
            log("the invariants are read from the final leader, %s" % c["name"])

    def down(self):
        self.stop_super.set()
        super().down()
        for c in self.ctls:
            if pid_alive(c["pid"]):
                os.kill(c["pid"], signal.SIGTERM)
        for c in self.ctls:
            deadline = time.time() + 20
            while pid_alive(c["pid"]) and time.time() < deadline:
                time.sleep(0.05)
            if pid_alive(c["pid"]):
                kill9(c["pid"])
        subprocess.run([FIXTURE, "stop", self.urlfile], capture_output=True)

    def lease(self):
        out = subprocess.run([os.path.join(self.bin, "gpupoold"), "--data-dir", "/nonexistent",
                              "--dump-config"], capture_output=True, text=True).stdout
        vals, section = {}, None
        for line in out.splitlines():
            if not line.startswith(" "):
                section = line.split(":")[0]
            elif section == "ha" and ":" in line:
                k, v = line.strip().split(":", 1)
                vals[k] = v.strip()
        return {k: vals.get(k) for k in ("lease_ttl", "renew_interval")}

    def extra_results(self):
        return {"machine": self.source, "ha": True, "controllers": len(self.ctls),
                "postgresql": self.pg["version"], "lease": self.lease(), "failovers": self.failovers,
                "controller_exits": self.ctl_exits, "final_leader": self.final_leader,
                "probe_writes": self.probes}

    def run(self):
        self.source = machine()  # the source as the run started
        why = self.start_pg()
        if why:
            log("HA run skipped: %s" % why)
            os.makedirs(os.path.dirname(os.path.abspath(self.a.results)), exist_ok=True)
            with open(self.a.results, "w") as f:
                json.dump({"version": 1, "ha": True, "skipped": why}, f, indent=1)
            subprocess.run([FIXTURE, "stop", self.urlfile], capture_output=True)
            shutil.rmtree(self.tmp, ignore_errors=True)
            return 0
        return super().run()


def main():
    ap = parser(HA_FAULT_KINDS, __doc__)
    ap.add_argument("--controllers", type=int, default=3, choices=(2, 3, 4, 5),
                    help="gpupoold on the shared PostgreSQL")
    a = ap.parse_args()
    check_kinds(ap, a, HA_FAULT_KINDS)
    return HaRun(a).main()


if __name__ == "__main__":
    sys.exit(main())
