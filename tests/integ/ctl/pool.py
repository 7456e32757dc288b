"""A real gpupoold for integration tests: started on 127.0.0.1 with a free port and its own
temporary data directory, stopped (and the directory removed) at the end.

Usage in a test script:

    from pool import Pool, check
    with Pool(gpupoold_path) as p:
        admin = p.client(p.admin_token)
        status, doc = admin.post("/v1/tenants", {"name": "team-a"})

Every test is a plain script that exits non-zero on the first broken expectation (check()),
printing what was expected and what came back.
"""

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request


def check(cond, what, *details):
    if not cond:
        print("FAIL:", what, file=sys.stderr)
        for d in details:
            print("  ", d if isinstance(d, str) else json.dumps(d)[:2000], file=sys.stderr)
        sys.exit(1)


class Client:
    """A tiny JSON client: methods return (status, parsed body or raw text)."""

    def __init__(self, base, token):
        self.base = base
        self.token = token

    def call(self, method, path, body=None, headers=None, raw=None, timeout=30):
        data = None
        hdrs = dict(headers or {})
        if self.token:
            hdrs["Authorization"] = "Bearer " + self.token
        if raw is not None:
            data = raw if isinstance(raw, bytes) else raw.encode()
        elif body is not None:
            data = json.dumps(body).encode()
            hdrs.setdefault("Content-Type", "application/json")
        req = urllib.request.Request(self.base + path, data=data, method=method, headers=hdrs)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                status, text = r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            status, text = e.code, e.read().decode()
        try:
            return status, json.loads(text) if text else None
        except ValueError:
            return status, text

    def get(self, path, **kw):
        return self.call("GET", path, **kw)

    def post(self, path, body=None, **kw):
        return self.call("POST", path, body if body is not None else {}, **kw)

    def put(self, path, body, **kw):
        return self.call("PUT", path, body, **kw)

    def delete(self, path, **kw):
        return self.call("DELETE", path, **kw)


def gpu(i, model="A100-80GB", mem=81920, numa=0, nvlink=()):
    return {"uuid": "GPU-%s-%d" % (model, i), "model": model, "memory_mib": mem, "numa": numa,
            "nvlink": list(nvlink)}


def node_doc(name, ngpus=8, model="A100-80GB", cpu_milli=128000, memory_mib=1048576,
             nvlink=True, mem=81920):
    gpus = []
    for i in range(ngpus):
        links = [j for j in range(ngpus) if j != i] if nvlink else []
        g = gpu(i, model, mem, i * 2 // max(ngpus, 1), links)
        g["uuid"] = "GPU-%s-%d" % (name, i)
        gpus.append(g)
    return {"name": name, "address": "127.0.0.1:0", "cpu_milli": cpu_milli,
            "memory_mib": memory_mib, "gpus": gpus}


class Pool:
    def __init__(self, binary, extra_args=(), data_dir=None, env=None):
        self.binary = binary
        self.extra = list(extra_args)
        self.own_dir = data_dir is None
        self.dir = data_dir or tempfile.mkdtemp(prefix="gpupool-ctl.")
        self.env = env
        self.proc = None
        self.log = None

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        if self.own_dir:
            shutil.rmtree(self.dir, ignore_errors=True)

    def start(self, args=()):
        self.log_path = os.path.join(self.dir, "gpupoold.log")
        self.log = open(self.log_path, "ab")
        self.log_from = self.log.tell()  # this run's lines start here
        env = dict(os.environ)
        env.update(self.env or {})
        cmd = [self.binary, "--data-dir", os.path.join(self.dir, "data"), "--listen",
               "127.0.0.1:0", "--scheduler-interval", "100ms"] + self.extra + list(args)
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=self.log, env=env)
        deadline = time.time() + 20
        port = None
        while time.time() < deadline and port is None:
            check(self.proc.poll() is None, "gpupoold exited at start", self.read_log())
            m = re.search(r"listening=127\.0\.0\.1:(\d+)", self.read_log()[self.log_from:])
            if m:
                port = int(m.group(1))
            else:
                time.sleep(0.05)
        check(port is not None, "gpupoold did not report its port", self.read_log())
        self.port = port
        self.base = "http://127.0.0.1:%d" % port
        # On a shared store (PostgreSQL) gpupoold answers as a follower until it has taken the
        # lease, and the first leader writes the tokens: wait until it leads.
        while time.time() < deadline:
            check(self.proc.poll() is None, "gpupoold exited at start", self.read_log())
            try:
                s, d = Client(self.base, None).get("/readyz", timeout=2)
            except OSError:
                s, d = 0, None
            if s == 200 and isinstance(d, dict) and d.get("role", "leader") == "leader":
                break
            time.sleep(0.05)
        # The tokens of the first start (later starts do not write them again).
        if not getattr(self, "admin_token", None):
            self.admin_token = open(os.path.join(self.dir, "data", "admin.token")).read().strip()
            self.join_token = open(os.path.join(self.dir, "data", "join.token")).read().strip()
        self.admin = self.client(self.admin_token)

    def read_log(self):
        try:
            with open(self.log_path, "rb") as f:
                return f.read().decode(errors="replace")
        except OSError:
            return ""

    def stop(self, sig=signal.SIGTERM):
        if self.proc:
            terminate(self.proc, sig)
        if self.log:
            self.log.close()
            self.log = None
        rc = self.proc.returncode if self.proc else 0
        self.proc = None
        return rc

    def restart(self, sig=signal.SIGTERM):
        self.stop(sig)
        self.start()

    def client(self, token):
        return Client(self.base, token)

    # ---- conveniences ----
    def tenant(self, name, **quota):
        s, d = self.admin.post("/v1/tenants", {"name": name, "quota": quota} if quota
                               else {"name": name})
        check(s == 201, "create tenant %s" % name, s, d)
        return d

    def grant(self, tenant, classes=None, queues=None):
        """Grants the tenant's users these priority classes and queues (lists; None keeps)."""
        s, d = self.admin.get("/v1/tenants/" + tenant)
        check(s == 200, "get tenant %s" % tenant, s, d)
        doc = {k: d[k] for k in ("quota", "priority_classes", "queues") if k in d}
        if classes is not None:
            doc["priority_classes"] = list(classes)
        if queues is not None:
            doc["queues"] = list(queues)
        s, d = self.admin.put("/v1/tenants/" + tenant, doc)
        check(s == 200, "grant to tenant %s" % tenant, s, d)
        return d

    def user(self, name, tenant):
        s, d = self.admin.post("/v1/tokens", {"name": name, "role": "user", "tenant": tenant})
        check(s == 201, "create token %s" % name, s, d)
        return self.client(d["token"])

    def queue(self, name, **doc):
        body = dict(doc)
        body["name"] = name
        s, d = self.admin.post("/v1/queues", body)
        check(s == 201, "create queue %s" % name, s, d)
        return d

    def register(self, doc):
        """Registers a node as its agent does: a new one with the join token, a known one with
        the node's own agent token (a join token takes only names not yet known)."""
        tokens = self.__dict__.setdefault("agent_tokens", {})
        cred = tokens.get(doc["name"], self.join_token)
        s, d = self.client(cred).post("/v1/nodes", doc)
        check(s in (200, 201), "register node %s" % doc["name"], s, d)
        tokens[doc["name"]] = d["token"]
        return self.client(d["token"])

    def agent(self, node):
        """A client with the node's newest agent token (from register)."""
        return self.client(self.agent_tokens[node])

    def job(self, client, ref):
        s, d = client.get("/v1/jobs/%s" % ref)
        check(s == 200, "get job %s" % ref, s, d)
        return d

    def wait_state(self, client, ref, states, timeout=10):
        if isinstance(states, str):
            states = (states,)
        deadline = time.time() + timeout
        while True:
            d = self.job(client, ref)
            if d["state"] in states:
                return d
            if time.time() > deadline:
                check(False, "job %s: state %s, expected %s" % (ref, d["state"], states), d)
            time.sleep(0.05)

    def settle(self, seconds=0.5):
        """Lets a few scheduling cycles run."""
        time.sleep(seconds)


def submit(client, name, gpus=1, tenant=None, **extra):
    spec = {"name": name, "command": ["sleep", "1000"], "resources": {"gpus": gpus}}
    if tenant:
        spec["tenant"] = tenant
    res = extra.pop("resources", None)
    if res is not None:
        spec["resources"] = res
    spec.update(extra)
    return client.post("/v1/jobs", spec)


# ---- whole pools (gpupool up): ports, polling, processes ----

def free_port():
    """A free port of 127.0.0.1."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def free_ports(n):
    """A port p with p .. p+n-1 all free (a controller, then one per agent)."""
    for _ in range(100):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        base = s.getsockname()[1]
        s.close()
        if base + n > 65535:
            continue
        ok = True
        for p in range(base, base + n):
            t = socket.socket()
            try:
                t.bind(("127.0.0.1", p))
            except OSError:
                ok = False
            t.close()
        if ok:
            return base
    check(False, "no run of %d free ports" % n)


def wait(what, cond, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        v = cond()
        if v:
            return v
        time.sleep(0.1)
    check(False, "timed out waiting for " + what)


def alive_marked(marker):
    out = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout
    return [p for p in out.split() if int(p) != os.getpid()]


# Programs of the sandbox around a job: podman's client (whose arguments hold the job's command),
# its monitor and the container's init.
SANDBOX_PROGRAMS = ("podman", "conmon", "podman-init", "catatonit")


def job_processes(marker):
    """The pids of the job processes whose command line holds marker, without the programs of
    their sandbox (SANDBOX_PROGRAMS), as ints."""
    pids = []
    for p in alive_marked(marker):
        try:
            with open("/proc/%s/cmdline" % p, "rb") as f:
                argv0 = f.read().split(b"\0")[0].decode(errors="replace")
        except OSError:
            continue
        if os.path.basename(argv0) not in SANDBOX_PROGRAMS:
            pids.append(int(p))
    return pids


def sandbox_main(replica_dir):
    """The main process of a replica's job (inside its sandbox) from its directory: the process
    podman started in its container (status.json names the container), below the container's
    init when it has one; None when it does not run."""
    try:
        with open(os.path.join(replica_dir, "status.json")) as f:
            name = json.load(f).get("container", "")
    except (OSError, ValueError):
        return None
    out = subprocess.run(["podman", "inspect", "--format", "{{.State.Pid}}", name],
                         capture_output=True, text=True)
    try:
        pid = int(out.stdout.strip())
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            argv0 = f.read().split(b"\0")[0].decode(errors="replace")
    except (ValueError, OSError):
        return None
    if os.path.basename(argv0) not in SANDBOX_PROGRAMS:
        return pid
    kids = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout
    return int(kids.split()[0]) if kids.split() else None


def job_main(marker):
    """The job's main process (inside its sandbox) whose command line holds marker: the one of
    job_processes(marker) whose parent is not one of them; None when there is none."""
    pids = job_processes(marker)
    for p in pids:
        try:
            with open("/proc/%d/stat" % p) as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if ppid not in pids:
            return p
    return None


# ---- settings, processes and allocations of a running pool (crash and chaos tests) ----

def gpupoold_settings(binary):
    """The setting keys this gpupoold knows ("nodes.heartbeat_timeout", ...), read from its
    --dump-config (two levels: "key: value" and "section:" followed by indented keys)."""
    out = subprocess.run([binary, "--data-dir", "/nonexistent", "--dump-config"],
                         capture_output=True, text=True, timeout=30).stdout
    keys, section = set(), None
    for line in out.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        name = line.strip().split(":", 1)[0]
        if line.startswith(" "):
            keys.add("%s.%s" % (section, name))
        elif line.rstrip().endswith(":"):
            section = name
        else:
            keys.add(name)
    return keys


def settings_env(binary, wanted):
    """GPUPOOL_* environment variables for the settings of wanted (key -> value) that this
    gpupoold knows; the others are left out, so a test can name a setting that is still being
    added (gpupoold refuses no unknown variable, but a flag it does not know fails it)."""
    known = gpupoold_settings(binary)
    return {"GPUPOOL_" + k.replace(".", "_").upper(): v for k, v in wanted.items() if k in known}


def same_process(pid, start):
    """Whether pid is alive and started at start (field 22 of /proc/PID/stat), as recorded."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[19]) == start and fields[0] != "Z"
    except (OSError, IndexError, ValueError):
        return False


def kill_replica_leftovers(root):
    """Kills what is left of the replicas of agents whose state directories are ROOT/*/state
    (an agent never stops jobs when it stops), by the PIDs their directories record, when the
    recorded process is still the one that was recorded."""
    import glob
    for sub in ("*/state/replicas", "*/state/finished"):
        for rdir in glob.glob(os.path.join(root, sub, "*")):
            for name, group in (("child.pid", True), ("supervisor.pid", False)):
                try:
                    with open(os.path.join(rdir, name)) as f:
                        pid, start = (int(x) for x in f.read().split()[:2])
                    if not same_process(pid, start):
                        continue
                    if group:
                        os.killpg(pid, signal.SIGKILL)
                    else:
                        os.kill(pid, signal.SIGKILL)
                except (OSError, ValueError, IndexError):
                    pass


def terminate(proc, sig=signal.SIGTERM, timeout=20):
    """Sends sig to proc (a Popen) while it runs and waits for it to exit, killing it after
    timeout seconds; its exit status."""
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return proc.returncode


def pid_alive(pid):
    """Whether pid is a live process (a zombie is not)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def proc_argv_env(pid):
    """The command line and the environment of a live process, from /proc."""
    with open("/proc/%d/cmdline" % pid, "rb") as f:
        argv = [a.decode() for a in f.read().split(b"\0") if a]
    with open("/proc/%d/environ" % pid, "rb") as f:
        env = dict(e.decode(errors="replace").split("=", 1) for e in f.read().split(b"\0")
                   if b"=" in e)
    return argv, env


def kill9(pid, timeout=10):
    """SIGKILL to pid, then waits until it is gone (or a zombie)."""
    os.kill(pid, signal.SIGKILL)
    deadline = time.time() + timeout
    while pid_alive(pid) and time.time() < deadline:
        time.sleep(0.01)
    check(not pid_alive(pid), "process %d did not die of SIGKILL" % pid)


def respawn(argv, env, pool_dir, name):
    """Starts argv again the way `gpupool up` starts its processes: detached in a session of its
    own, output appended to POOL/logs/NAME.log, its pid written to POOL/pids/NAME.pid (so that
    `gpupool down` stops it). Returns the pid."""
    with open(os.path.join(pool_dir, "logs", name + ".log"), "ab") as log:
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env,
                             start_new_session=True)
    # Reaped as soon as it exits: `gpupool down` waits while the pid names a process, and an
    # unreaped child of this script would stay a zombie until the test ends.
    threading.Thread(target=p.wait, daemon=True).start()
    with open(os.path.join(pool_dir, "pids", name + ".pid"), "w") as f:
        f.write("%d\n" % p.pid)
    return p.pid


def allocation_problems(nodes, jobs):
    """What is inconsistent between GET /v1/nodes (items) and the Scheduled and Running jobs of
    GET /v1/jobs: a GPU whose holders take more than 1000 milli or more than its memory, a GPU
    whose allocated_milli is not its holders' sum, and a job's GPU share that is not among its
    GPU's holders or the other way round. A list of lines, empty when all is well."""
    problems, held, placed = [], set(), set()
    for n in nodes:
        for g in n["gpus"]:
            hs = g.get("holders", [])
            milli = sum(h["milli"] for h in hs)
            mem = sum(h["memory_mib"] for h in hs)
            where = "%s GPU %d" % (n["name"], g["index"])
            if milli > 1000 or mem > g["memory_mib"]:
                problems.append("%s: holders take %d milli, %d MiB of %d MiB: %s" %
                                (where, milli, mem, g["memory_mib"], json.dumps(hs)))
            if not g.get("mig_mode") and g.get("allocated_milli", milli) != milli:
                problems.append("%s: allocated_milli %d but holders sum to %d" %
                                (where, g["allocated_milli"], milli))
            for h in hs:
                held.add((n["name"], g["index"], h.get("job"), h.get("replica"), h["milli"],
                          h["memory_mib"]))
    for j in jobs:
        if j["state"] not in ("Scheduled", "Running"):
            continue
        for r in j["placement"]:
            for g in r["gpus"]:
                placed.add((r["node"], g["index"], j["id"], r["replica"], g["milli"],
                            g["memory_mib"]))
    for x in sorted(placed - held, key=str):
        problems.append("job %s replica %s on %s GPU %s: not among the GPU's holders" %
                        (x[2], x[3], x[0], x[1]))
    for x in sorted(held - placed, key=str):
        problems.append("holder job %s replica %s on %s GPU %s: no such placement" %
                        (x[2], x[3], x[0], x[1]))
    return problems


def all_jobs(client, query=""):
    """Every job of GET /v1/jobs (following the cursor); query like "tenant=a&"."""
    items, after = [], None
    while True:
        path = "/v1/jobs?%slimit=1000" % query + ("&after=%s" % after if after else "")
        s, d = client.get(path)
        check(s == 200, "list jobs", s, d)
        items += d["items"]
        after = d.get("next")
        if not after:
            return items


def pool_down(gpupool, pool, tmp, *markers):
    """`gpupool down` of a local pool, then the processes still alive whose command line holds
    the pool's directory or one of markers (reaping may take a moment); removes tmp. Returns
    (the finished `gpupool down`, the leftover pids)."""
    down = subprocess.run([gpupool, "down", "--data-dir", pool], capture_output=True, text=True,
                          timeout=120)
    leftover = []
    for _ in range(50):
        leftover = sum((alive_marked(m) for m in markers), alive_marked(pool))
        if not leftover:
            break
        time.sleep(0.1)
    shutil.rmtree(tmp, ignore_errors=True)
    return down, leftover


def open_to_all(path, keep=()):
    """Makes the directories under path 0755 and the files 0644, as a careless operator might
    leave a pool (then only the sandbox keeps them from jobs); the trees in keep are left as
    they are."""
    for root, dirs, files in os.walk(path):
        if any(root == k or root.startswith(k.rstrip("/") + "/") for k in keep):
            dirs[:] = []
            continue
        os.chmod(root, 0o755)
        for f in files:
            os.chmod(os.path.join(root, f), 0o644)


def events(client, ref):
    """A job's event history (GET /v1/jobs/REF/events)."""
    s, d = client.get("/v1/jobs/%s/events" % ref)
    check(s == 200, "events of job %s" % ref, s, d)
    return d["items"]


def mock_control(pool, node, line):
    """Appends a command to the mock NVML control file of node in a `gpupool up` pool."""
    with open(os.path.join(pool, "agents", node, "nvml-control"), "a") as f:
        f.write(line + "\n")


# ---- agents played by the test ----

class Beater:
    """Heartbeats for nodes like their agents would, every 0.2 s."""

    def __init__(self, p):
        self.p = p
        self.nodes = set()
        self.extra = {}  # node -> list of dicts merged into its next heartbeat
        self.idle = {}   # job id -> idle_ms reported for its replicas
        self.util = {}   # job id -> GPU utilisation (percent) reported for its replicas
        self.stale = {}  # node -> replica reports of superseded placements still running
        self.ready = {}   # job id -> readiness reported for its replicas (services)
        self.metric = {}  # job id -> the service's scraped metric reported for its replicas
        self.mem = {}     # job id -> GPU memory used (MiB) reported for its replicas
        self.failed = {}  # job id -> reason: its replicas are reported Failed with it, once
        self.lock = threading.Lock()
        self.stop = False
        self.t = threading.Thread(target=self.run, daemon=True)
        self.t.start()

    def send(self, node, **fields):
        with self.lock:
            self.extra.setdefault(node, []).append(fields)

    def beat(self, node):
        s, doc = self.p.admin.get("/v1/nodes/%s/desired" % node)
        if s != 200:
            return
        reps = []
        for r in doc["desired"]:
            rep = {"job": r["job"], "replica": r["replica"], "epoch": r["epoch"],
                   "state": "Running"}
            if r["job"] in self.idle:
                rep["idle_ms"] = self.idle[r["job"]]
            if r["job"] in self.util:
                rep["util"] = self.util[r["job"]]
            if r["job"] in self.ready:
                rep["ready"] = self.ready[r["job"]]
            if r["job"] in self.metric:
                rep["metric"] = self.metric[r["job"]]
            if r["job"] in self.mem:
                rep["gpu_mem_mib"] = self.mem[r["job"]]
            with self.lock:
                why = self.failed.pop(r["job"], None)
            if why is not None:
                rep.update(state="Failed", exit_code=137, reason=why)
            reps.append(rep)
        with self.lock:
            extras = self.extra.pop(node, [])
            reps += self.stale.get(node, [])
        body = {"replicas": reps}
        for e in extras:
            body.update(e)
        s, d = self.p.admin.post("/v1/nodes/%s/heartbeat" % node, body)
        check(s == 200, "heartbeat of %s" % node, s, d)

    def run(self):
        while not self.stop:
            for n in list(self.nodes):
                self.beat(n)
            time.sleep(0.2)

    def flush(self, node):
        """Sends what is queued for node now (and waits for the beat)."""
        with self.lock:
            pending = bool(self.extra.get(node))
        if pending:
            wait("the heartbeat of %s" % node, lambda: not self.extra.get(node), 10)
        time.sleep(0.3)
