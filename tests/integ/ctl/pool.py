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
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
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
        s, d = self.client(self.join_token).post("/v1/nodes", doc)
        check(s in (200, 201), "register node %s" % doc["name"], s, d)
        return self.client(d["token"])

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
