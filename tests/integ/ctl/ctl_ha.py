"""High availability, end to end: gpupoold on one PostgreSQL (started here by
tests/pg/pg_fixture.sh), real agents over the mock NVML and the CLI, all given every controller.

- two gpupoold: the first leads, the second follows (GET /readyz names the role, reads are
  answered by both); jobs are submitted through the CLI with --server FOLLOWER,LEADER;
- kill -9 of the leader: the follower leads within a generous bound (the failover time is
  printed); every acknowledged job is there with the same placements and epochs (running
  replicas untouched), no GPU is allocated twice, the agents heartbeat to the new leader by
  themselves and the CLI submits through it with the same --server list;
- the old leader restarted comes back as a follower; a third gpupoold joins as another;
- a PostgreSQL restart under them: the leader keeps or regains the leadership, nothing is lost
  and submits work again;
- a deposed leader cannot commit: SIGSTOP past the lease, another takes over, SIGCONT: its
  write is refused, it exits with status 3 and logs why.
Arguments: gpupoold, gpupool, gpupool-agent, libgpupool-nvml-mock.so, the inventories
directory, pg_fixture.sh.
"""
import http.client
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mockagent import MockAgent  # noqa: E402
from pool import Client, check, free_ports, kill_replica_leftovers, terminate, wait  # noqa: E402

gpupoold, gpupool, agent_bin, mock, inventories, fixture = sys.argv[1:7]
inventory = os.path.join(inventories, "pcie-t4.yaml")  # 4 GPUs a node
tmp = tempfile.mkdtemp(prefix="gpupool-ha.")
urlfile = os.path.join(tmp, "pg.url")
BOUND_S = 10  # the bound on a failover; the goal is 5 s


class Ctl:
    """One gpupoold on the shared store, its own data directory and port."""

    def __init__(self, name, store):
        self.name, self.store = name, store
        self.dir = os.path.join(tmp, name)
        self.port = free_ports(1)
        self.url = "http://127.0.0.1:%d" % self.port
        self.proc = None
        self.log_path = os.path.join(self.dir, "gpupoold.log")
        self.key = os.path.join(tmp, "secret.key")  # one key file for every controller
        os.makedirs(self.dir)

    def start(self):
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            [gpupoold, "--data-dir", os.path.join(self.dir, "data"), "--store-url", self.store,
             "--listen", "127.0.0.1:%d" % self.port, "--advertise-url", self.url,
             "--secrets-key-file", self.key, "--scheduler-interval", "100ms"],
            stdout=log, stderr=log)
        log.close()
        wait("%s answers /readyz" % self.name, lambda: self.role() is not None, 30)

    def role(self):
        check(self.proc.poll() is None, "%s exited" % self.name, self.log())
        s, d = Client(self.url, None).get("/readyz", timeout=5) if self.up() else (0, None)
        return d.get("role") if s == 200 and isinstance(d, dict) else None

    def up(self):
        import socket
        with socket.socket() as s:
            return s.connect_ex(("127.0.0.1", self.port)) == 0

    def log(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()


def cli(*args):
    env = dict(os.environ, HOME=tmp, XDG_CONFIG_HOME=os.path.join(tmp, "config"))
    for k in ("GPUPOOL_SERVER", "GPUPOOL_TOKEN"):
        env.pop(k, None)
    p = subprocess.run([gpupool] + list(args), capture_output=True, text=True, env=env,
                       timeout=60)
    return p.returncode, p.stdout, p.stderr


def submit(servers, token, name):
    spec = os.path.join(tmp, name + ".json")
    with open(spec, "w") as f:
        json.dump({"name": name, "command": ["sleep", "1000"], "resources": {"gpus": 1}}, f)
    rc, out, err = cli("submit", "-f", spec, "--server", ",".join(servers), "--token", token)
    check(rc == 0, "submit %s through %s" % (name, servers), out, err)
    return out.strip().split()[-1]


def leader_of(ctls, timeout):
    """The one controller that says it leads, waiting up to timeout."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        leaders = [c for c in ctls if c.proc and c.proc.poll() is None and c.role() == "leader"]
        check(len(leaders) <= 1, "at most one leader", [c.name for c in leaders])
        if leaders:
            return leaders[0]
        time.sleep(0.05)
    check(False, "no leader within %d s" % timeout, *[c.log()[-3000:] for c in ctls if c.proc])


def placements(client, ids):
    """{job id: [(replica, node, epoch, gpus)]} of every job; each acknowledged job is there."""
    out = {}
    for i in ids:
        s, d = client.get("/v1/jobs/%s" % i)
        check(s == 200, "job %s is there" % i, s, d)
        out[i] = sorted((r["replica"], r["node"], r["epoch"], tuple(sorted(map(str, r["gpus"]))))
                        for r in d.get("placement") or [])
    return out


def no_double(pl):
    taken = {}
    for job, reps in pl.items():
        for _, node, _, gpus in reps:
            for g in gpus:
                check((node, g) not in taken, "GPU %s of %s allocated twice" % (g, node),
                      job, taken.get((node, g)))
                taken[(node, g)] = job


def all_placed(client, ids):
    pl = placements(client, ids)
    return all(pl[i] for i in ids)


def heartbeat_of(client, node):
    s, d = client.get("/v1/nodes/" + node)
    check(s == 200, "node %s" % node, s, d)
    return d.get("heartbeat_ms", 0), d.get("state") or d.get("status")


agents, ctls = [], []
try:
    rc = subprocess.run([fixture, "start", urlfile]).returncode
    check(rc == 0, "PostgreSQL started")
    store = open(urlfile).read().strip() + "/postgres"

    # ---- two controllers: the first leads, the second follows ----
    a, b = Ctl("a", store), Ctl("b", store)
    ctls += [a, b]
    a.start()
    check(leader_of([a], 15) is a, "the first controller leads")
    b.start()
    check(b.role() == "follower", "the second follows", b.role())
    admin_token = open(os.path.join(a.dir, "data", "admin.token")).read().strip()
    join_file = os.path.join(a.dir, "data", "join.token")
    admin_a, admin_b = Client(a.url, admin_token), Client(b.url, admin_token)
    s, d = admin_b.post("/v1/tenants", {"name": "team"}, headers={}, timeout=10)
    check(s == 307 and d.get("leader") == a.url, "a follower redirects a write", s, d)
    # a browser following a follower's redirect keeps the query: a proxy session's one-time code
    c = http.client.HTTPConnection("127.0.0.1", int(b.url.rsplit(":", 1)[1]), timeout=10)
    c.request("GET", "/v1/jobs/nb/proxy/?gp_code=gpc_x%2By&k=v")
    r = c.getresponse()
    r.read()
    check(r.status == 307 and r.getheader("Location") ==
          a.url + "/v1/jobs/nb/proxy/?gp_code=gpc_x%2By&k=v",
          "the redirect keeps the query", r.status, r.getheader("Location"))
    c.close()
    s, d = admin_a.post("/v1/tenants", {"name": "team"})
    check(s == 201, "create the tenant on the leader", s, d)
    s, d = admin_a.post("/v1/tokens", {"name": "u", "role": "user", "tenant": "team"})
    check(s == 201, "a user token", s, d)
    user = d["token"]
    wait("the follower reads the tenant",
         lambda: admin_b.get("/v1/tenants/team")[0] == 200, 15)

    servers = [a.url, b.url]
    for n in ("n1", "n2"):
        agents.append(MockAgent(agent_bin, mock, tmp, n, inventory, ",".join(servers), join_file,
                                "--runtime", "none"))
    wait("two nodes registered", lambda: len(admin_a.get("/v1/nodes")[1]["items"]) == 2, 30)

    ids = [submit([b.url, a.url], user, "j%d" % i) for i in range(4)]
    wait("four jobs placed", lambda: all_placed(admin_a, ids), 30)
    before = placements(admin_a, ids)
    no_double(before)
    time.sleep(1)  # a few heartbeats of the agents' replicas

    # ---- kill -9 of the leader ----
    t0 = time.time()
    a.proc.kill()
    a.proc.wait()
    check(leader_of([b], BOUND_S + 5) is b, "the follower leads")
    took = time.time() - t0
    print("failover (kill -9 of the leader, two controllers): %.2f s" % took)
    check(took < BOUND_S, "a new leader within %d s" % BOUND_S, took)
    after = placements(admin_b, ids)
    check(after == before, "placements and epochs untouched by the failover", before, after)
    hb0 = {n: heartbeat_of(admin_b, n)[0] for n in ("n1", "n2")}
    wait("the agents heartbeat to the new leader",
         lambda: all(heartbeat_of(admin_b, n)[0] > hb0[n] for n in ("n1", "n2")), 20)
    more = [submit(servers, user, "k%d" % i) for i in range(1)]
    ids += more
    wait("jobs submitted after the failover placed", lambda: all_placed(admin_b, ids), 30)
    now = placements(admin_b, ids)
    no_double(now)
    check(all(now[i] == before[i] for i in before), "old placements still untouched", now)

    # ---- the old leader comes back as a follower; a third joins ----
    a.start()
    check(a.role() == "follower", "the old leader restarted follows", a.log()[-2000:])
    c = Ctl("c", store)
    ctls.append(c)
    c.start()
    check(c.role() == "follower", "a third controller follows")
    check(leader_of(ctls, 5) is b, "one leader among three")

    # A controller without the pool's secrets key could never lead: it says so at start.
    stray = Ctl("stray", store)
    stray.key = os.path.join(stray.dir, "other.key")
    log = open(stray.log_path, "ab")
    p = subprocess.Popen(
        [gpupoold, "--data-dir", os.path.join(stray.dir, "data"), "--store-url", store,
         "--listen", "127.0.0.1:%d" % stray.port, "--advertise-url", stray.url,
         "--secrets-key-file", stray.key], stdout=log, stderr=log)
    log.close()
    rc = p.wait(30)
    check(rc != 0 and stray.key in stray.log() and "missing" in stray.log(),
          "a follower without the pool's key file refuses to start, naming it", rc,
          stray.log()[-2000:])

    # ---- a PostgreSQL restart under them ----
    pgdir = open(urlfile + ".dir").read().strip()
    as_pg = ["runuser", "-u", "postgres", "--"] if os.getuid() == 0 else []
    bin_dir = os.environ.get("GP_PG_BIN", "/usr/lib/postgresql/15/bin")
    rc = subprocess.run(as_pg + [bin_dir + "/pg_ctl", "-D", pgdir + "/data", "-m", "fast", "-w",
                                 "restart", "-l", pgdir + "/server.log"],
                        stdout=subprocess.DEVNULL).returncode
    check(rc == 0, "PostgreSQL restarted")
    lead = leader_of(ctls, BOUND_S + 5)
    print("after the PostgreSQL restart the leader is %s (was b)" % lead.name)
    admin = Client(lead.url, admin_token)
    more = [submit([x.url for x in ctls], user, "p%d" % i) for i in range(1)]
    ids += more
    wait("submits work after the PostgreSQL restart", lambda: all_placed(admin, ids), 30)
    pl = placements(admin, ids)
    no_double(pl)
    check(all(pl[i] == now[i] for i in now), "nothing lost or moved by the PostgreSQL restart",
          now, pl)

    # ---- a deposed leader cannot commit ----
    lead.proc.send_signal(signal.SIGSTOP)
    others = [x for x in ctls if x is not lead]
    t0 = time.time()
    new = leader_of(others, BOUND_S + 5)
    print("failover (SIGSTOP of the leader, three controllers): %.2f s" % (time.time() - t0))
    lead.proc.send_signal(signal.SIGCONT)
    # It may already be gone (it exits as soon as it sees the lease is another's): a connection
    # refused or reset counts as refused too.
    try:
        s, d = Client(lead.url, admin_token).post("/v1/tenants", {"name": "from-the-deposed"},
                                                  timeout=10)
    except (OSError, urllib.error.URLError) as e:
        s, d = 0, repr(e)
    check(s != 201, "the deposed leader's write is refused", s, d)
    try:
        status = lead.proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        status = None
    check(status == 3, "the deposed leader exits with status 3", status, lead.log()[-3000:])
    check("lost the leadership" in lead.log(), "it says why", lead.log()[-3000:])
    admin = Client(new.url, admin_token)
    s, d = admin.get("/v1/tenants/from-the-deposed")
    check(s == 404, "nothing of the deposed leader stored", s, d)
    pl2 = placements(admin, ids)
    no_double(pl2)
    check(pl2 == pl, "placements untouched by the second failover", pl, pl2)
    lead.start()
    check(lead.role() == "follower", "restarted, the deposed leader follows")
    print("ok")
finally:
    for ag in agents:
        ag.stop()
    kill_replica_leftovers(tmp)  # an agent never stops its jobs when it stops
    for x in ctls:
        if x.proc and x.proc.poll() is None:
            x.proc.send_signal(signal.SIGCONT)
            terminate(x.proc)
    subprocess.run([fixture, "stop", urlfile])
    if os.environ.get("GP_KEEP_TMP"):
        print("kept", tmp)
    else:
        shutil.rmtree(tmp, ignore_errors=True)
