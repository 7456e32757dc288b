"""The controller's /metrics and /v1/sd/prometheus against a real gpupoold, with the agents
played by the test (registration and heartbeats through the API).

A pool of four nodes: n1 (4 A100, GPU 3 drained by an operator) and n2 (2 A100) heartbeat, n3
(2 L4) is silent (NotReady), n4 (1 A100) is cordoned. Two tenants (team-a with a quota of 2
GPUs), two queues; jobs Running, Pending (by quota, for want of capacity, bigger than any node)
and Cancelled, one of them fractional. The scrape must show exactly what that makes: jobs per
state, queue and tenant; waiting jobs per reason class and the age of the oldest; GPUs per model
and state, allocation and fragmentation ratios; the drained GPU; nodes; quota use (the same as
GET /v1/tenants says); the API latency histogram counts the test's own requests per route
(unknown paths as "unmatched"); promtool finds nothing to complain about. Then XIDs and a
restart after a fatal one are counted with their severity and cause. Service discovery lists
every node with an address and port, with its labels.

A second pool: a node that goes silent with a job on it becomes Lost, and the job's restart is
counted with cause node-lost.
"""
import re
import subprocess
import sys
import time

from pool import Beater, Pool, check, node_doc, submit, wait

PROMTOOL = "/usr/bin/promtool"
A100, L4 = "A100-80GB", "L4-24GB"

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?')


def parse(text):
    """The samples of an exposition: [(name, {label: value}, value)]."""
    out = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        check(m, "a sample line", line)
        labels = {}
        if m.group(2):
            pos = 0
            while pos < len(m.group(2)):
                lm = LABEL.match(m.group(2), pos)
                check(lm, "labels of", line)
                labels[lm.group(1)] = (lm.group(2).replace("\\n", "\n").replace('\\"', '"')
                                       .replace("\\\\", "\\"))
                pos = lm.end()
        out.append((m.group(1), labels, float(m.group(3))))
    return out


def scraper(p):
    """A client with the pool's metrics token (what Prometheus scrapes with), made once."""
    if getattr(p, "scraper", None) is None:
        s, d = p.admin.post("/v1/tokens", {"name": "prometheus", "role": "metrics"})
        check(s == 201, "a metrics token", s, d)
        p.scraper = p.client(d["token"])
    return p.scraper


def scrape(p):
    s, text = scraper(p).get("/metrics")
    check(s == 200 and isinstance(text, str), "GET /metrics", s, text)
    return text, parse(text)


def series(samples, name, **match):
    """{frozenset of the labels not in match: value} of name's samples matching match."""
    out = {}
    for n, labels, v in samples:
        if n == name and all(labels.get(k) == x for k, x in match.items()):
            out[tuple(sorted((k, x) for k, x in labels.items() if k not in match))] = v
    return out


def value(samples, name, **labels):
    found = [v for n, l, v in samples if n == name and l == labels]
    check(len(found) == 1, "one sample %s%s" % (name, labels), found)
    return found[0]


def expect(samples, name, want, key):
    """name's samples must be exactly want: {tuple of label values in key order: value}."""
    got = {}
    for n, labels, v in samples:
        if n == name:
            got[tuple(labels.get(k, "") for k in key)] = v
    check(got == want, "%s by %s" % (name, ",".join(key)), "got %r" % sorted(got.items()),
          "want %r" % sorted(want.items()))


def promtool_clean(text):
    r = subprocess.run([PROMTOOL, "check", "metrics"], input=text, capture_output=True,
                       text=True, timeout=60)
    check(r.returncode == 0 and not (r.stdout + r.stderr).strip(),
          "promtool check metrics passes", r.returncode, r.stdout, r.stderr)


def node_state(p, name):
    s, d = p.admin.get("/v1/nodes/" + name)
    check(s == 200, "get node " + name, s, d)
    return d


args = ["--nodes-heartbeat-timeout", "1s", "--nodes-lost-timeout", "1h", "--api-rate-limit",
        "0", "--api-token-rate-limit", "0"]
with Pool(sys.argv[1], args) as p:
    p.queue("batch")
    for name, doc in (("team-a", {"quota": {"gpus": 2}}), ("team-b", {})):
        s, d = p.admin.post("/v1/tenants", dict(doc, name=name, queues=["default", "batch"]))
        check(s == 201, "create tenant %s granted the batch queue" % name, s, d)
    alice, bob = p.user("alice", "team-a"), p.user("bob", "team-b")
    nodes = {"n1": node_doc("n1", ngpus=4), "n2": node_doc("n2", ngpus=2),
             "n3": node_doc("n3", ngpus=2, model=L4, mem=24576),
             "n4": node_doc("n4", ngpus=1)}
    nodes["n1"]["address"] = "127.0.0.1:17071"
    nodes["n2"]["address"] = "127.0.0.1:17072"
    nodes["n3"]["address"] = "10.0.0.3:7071"
    nodes["n4"]["address"] = "127.0.0.1:0"  # no port: not a scrape target
    for doc in nodes.values():
        p.register(doc)
    b = Beater(p)
    b.nodes |= {"n1", "n2", "n4"}
    s, d = p.admin.post("/v1/nodes/n1/gpus/3/drain", {"reason": "fan"})
    check(s == 200, "drain n1 GPU 3", s, d)
    s, d = p.admin.post("/v1/nodes/n4/cordon")
    check(s == 200, "cordon n4", s, d)
    wait("n3 to be NotReady", lambda: node_state(p, "n3")["state"] == "NotReady", 20)

    # What each job is expected to end up as: name -> (client, state, queue, tenant, reason).
    jobs = {}

    def run(client, name, tenant, queue, state, reason=None, **spec):
        s, d = submit(client, name, queue=queue, **spec)
        check(s == 201, "submit " + name, s, d)
        jobs[name] = (client, state, queue, tenant, reason)
        if state == "Running":
            p.wait_state(client, name, "Running")

    # The 2-GPU gang first, so the rest fits whatever the placement.
    run(bob, "b-run", "team-b", "batch", "Running", gpus=2)
    run(alice, "a-run1", "team-a", "default", "Running", gpus=1, restart_policy="on-failure")
    run(alice, "a-run2", "team-a", "batch", "Running", gpus=1)
    run(bob, "b-frac", "team-b", "default", "Running", resources={"gpu_milli": 500})
    t_submit0 = time.time()
    run(alice, "a-quota", "team-a", "default", "Pending", "quota", gpus=1)
    t_submit1 = time.time()
    # More GPUs than any node has: it may wait only when it asks to.
    run(bob, "b-big", "team-b", "default", "Pending", "no-fit", gpus=8,
        allow_unschedulable=True)
    run(bob, "b-cap", "team-b", "default", "Pending", "capacity", gpus=1)
    run(bob, "b-cancel", "team-b", "batch", "Cancelled", gpus=1)
    s, d = bob.post("/v1/jobs/b-cancel/cancel")
    check(s == 200, "cancel b-cancel", s, d)
    for name, (client, state, _, _, reason) in jobs.items():
        if state == "Pending":
            wait(name + " to have a scheduler's reason",
                 lambda: p.job(client, name)["reason"].split(":")[0] in
                 ("quota", "capacity", "unschedulable"), 10)
        check(p.job(client, name)["state"] == state, name + " is " + state, p.job(client, name))

    # The test's own requests, per route: K reads of one queue, one miss, two unknown paths.
    K = 7
    for _ in range(K):
        s, d = p.admin.get("/v1/queues/batch")
        check(s == 200, "get queue", s, d)
    s, d = p.admin.get("/v1/queues/nope")
    check(s == 404, "a missing queue", s, d)
    for _ in range(2):
        s, d = p.client(None).get("/no/such/path")
        check(s == 404, "an unknown path", s, d)

    t_scrape0 = time.time()
    text, m = scrape(p)
    t_scrape1 = time.time()
    promtool_clean(text)

    # Jobs: exactly the label sets the test made.
    want = {}
    for name, (_, state, queue, tenant, _) in jobs.items():
        want[(state, queue, tenant)] = want.get((state, queue, tenant), 0) + 1
    expect(m, "gpupool_jobs", want, ("state", "queue", "tenant"))
    want = {}
    for name, (client, state, queue, tenant, reason) in jobs.items():
        if state == "Pending":
            want[(reason, queue, tenant)] = want.get((reason, queue, tenant), 0) + 1
    expect(m, "gpupool_jobs_pending", want, ("reason", "queue", "tenant"))
    oldest = series(m, "gpupool_job_pending_oldest_seconds")
    check(sorted(oldest) == [(("queue", "default"), ("tenant", "team-a")),
                             (("queue", "default"), ("tenant", "team-b"))],
          "oldest waiting job per queue and tenant", oldest)
    age = value(m, "gpupool_job_pending_oldest_seconds", queue="default", tenant="team-a")
    check(t_scrape0 - t_submit1 - 0.002 <= age <= t_scrape1 - t_submit0 + 0.002,
          "the age of team-a's oldest waiting job is bracketed by the test's clock", age,
          t_scrape0 - t_submit1, t_scrape1 - t_submit0)

    # GPUs: A100: 4 whole + 1 half of 5 usable GPUs (n1's 3 in service, n2's 2), n1 GPU 3
    # drained, n4's GPU behind a cordon; L4: both on the silent node.
    expect(m, "gpupool_gpus",
           {(A100, "allocated"): 5, (A100, "free"): 0, (A100, "drained"): 1, (A100, "spare"): 0,
            (A100, "unavailable"): 1, (L4, "allocated"): 0, (L4, "free"): 0, (L4, "drained"): 0,
            (L4, "spare"): 0, (L4, "unavailable"): 2}, ("model", "state"))
    expect(m, "gpupool_gpu_allocation_ratio", {(A100,): 4500 / 5000, (L4,): 0}, ("model",))
    expect(m, "gpupool_gpu_fragmentation_ratio", {(A100,): 1, (L4,): 0}, ("model",))
    expect(m, "gpupool_gpu_drained", {("n1", "3", "GPU-n1-3", A100): 1},
           ("Hostname", "gpu", "UUID", "model"))
    expect(m, "gpupool_node_ready", {("n1",): 1, ("n2",): 1, ("n3",): 0, ("n4",): 1},
           ("Hostname",))
    expect(m, "gpupool_nodes", {("Ready",): 2, ("NotReady",): 1, ("Lost",): 0,
                                ("Cordoned",): 1, ("Draining",): 0}, ("state",))

    # Quota: as GET /v1/tenants counts it; team-a at its limit, team-b unlimited.
    s, d = p.admin.get("/v1/tenants")
    check(s == 200, "list tenants", s, d)
    used = {t["name"]: float(t["usage"]["gpus"]) for t in d["items"]}
    check(used["team-a"] == 2 and used["team-b"] == 2.5, "the API's usage", used)
    expect(m, "gpupool_quota_used_gpus", {(k,): v for k, v in used.items()}, ("tenant",))
    expect(m, "gpupool_quota_limit_gpus", {("team-a",): 2}, ("tenant",))
    expect(m, "gpupool_quota_used_ratio", {("team-a",): 1}, ("tenant",))

    # Counters and the build.
    check(value(m, "gpupool_placements_total") == 4, "4 placements",
          value(m, "gpupool_placements_total"))
    check(value(m, "gpupool_evictions_total") == 0, "no evictions")
    cycles = value(m, "gpupool_scheduler_cycles_total")
    check(cycles >= 1 and value(m, "gpupool_scheduler_cycle_seconds_count") >= 1,
          "cycles counted", cycles)
    check(value(m, "gpupool_alerts_sent_total") == 0 and
          value(m, "gpupool_alerts_failed_total") == 0, "no alerts sent")
    check(len(series(m, "gpupool_build_info")) == 1, "build info", series(m, "gpupool_build_info"))

    # The latency histogram counted the test's own requests.
    H = "gpupool_http_request_duration_seconds"
    check(value(m, H + "_count", route="/v1/queues/{queue}", method="GET", code="200") == K,
          "K reads of /v1/queues/{queue}")
    check(value(m, H + "_count", route="/v1/queues/{queue}", method="GET", code="404") == 1,
          "one miss")
    check(value(m, H + "_count", route="unmatched", method="GET", code="404") == 2,
          "unknown paths count as unmatched")
    buckets = series(m, H + "_bucket", route="/v1/queues/{queue}", method="GET", code="200")
    counts = [v for _, v in sorted(buckets.items(), key=lambda kv: float(dict(kv[0])["le"]))]
    check(counts == sorted(counts) and counts[-1] == K and
          dict(max(buckets, key=lambda k: float(dict(k)["le"])))["le"] == "+Inf",
          "cumulative buckets ending in +Inf", buckets)
    check(value(m, H + "_sum", route="/v1/queues/{queue}", method="GET", code="200") > 0,
          "a positive sum")
    check(not [l for n, l, _ in m if n == H + "_count" and "/v1/queues/batch" in l.get("route")],
          "routes are patterns, never paths")
    text2, m2 = scrape(p)
    check(value(m2, H + "_count", route="/metrics", method="GET", code="200") >= 1,
          "the scrape itself is counted")

    # Service discovery: every node with an address and port, with its labels.
    s, sd = scraper(p).get("/v1/sd/prometheus")
    check(s == 200 and isinstance(sd, list), "GET /v1/sd/prometheus", s, sd)
    got = {g["labels"]["Hostname"]: g for g in sd}
    check(sorted(got) == ["n1", "n2", "n3"], "n1, n2, n3 listed; n4 has no port", sd)
    for name, state, model in (("n1", "Ready", A100), ("n2", "Ready", A100),
                               ("n3", "NotReady", L4)):
        check(got[name] == {"targets": [nodes[name]["address"]],
                            "labels": {"Hostname": name, "__meta_gpupool_node": name,
                                       "__meta_gpupool_model": model,
                                       "__meta_gpupool_state": state}},
              "the target group of " + name, got[name])

    # XIDs by node, GPU, XID and severity; a fatal one restarts the job on the GPU.
    b.send("n2", events=[{"gpu": 1, "xid": 43}, {"gpu": 1, "xid": 43}, {"gpu": 1, "xid": 92}])
    b.flush("n2")
    j = p.job(alice, "a-run1")
    (node, gpus), = [(r["node"], [g["index"] for g in r["gpus"]]) for r in j["placement"]]
    b.send(node, events=[{"gpu": gpus[0], "xid": 48}])
    b.flush(node)
    wait("a-run1 restarted", lambda: p.job(alice, "a-run1")["restarts"] == 1, 10)
    text, m = scrape(p)
    promtool_clean(text)
    want = {("n2", "1", "43", "info"): 2, ("n2", "1", "92", "info"): 1}
    want[(node, str(gpus[0]), "48", "fatal")] = 1
    expect(m, "gpupool_xid_errors_total", want, ("Hostname", "gpu", "xid", "severity"))
    expect(m, "gpupool_job_restarts_total",
           {("xid",): 1, ("node-lost",): 0, ("maintenance",): 0, ("hung",): 0, ("health",): 0,
            ("other",): 0}, ("cause",))
    check(value(m, "gpupool_gpus", model=A100, state="drained") == 2, "two A100 drained")
    b.stop = True
    b.t.join()

# A node lost with a job on it: Lost, and a restart with cause node-lost.
with Pool(sys.argv[1], ["--nodes-heartbeat-timeout", "1s", "--nodes-lost-timeout", "2s"]) as p:
    p.tenant("team-a")
    alice = p.user("alice", "team-a")
    p.register(node_doc("m1", ngpus=1))
    b = Beater(p)
    b.nodes.add("m1")
    s, d = submit(alice, "keep", gpus=1, restart_policy="on-failure")
    check(s == 201, "submit", s, d)
    p.wait_state(alice, "keep", "Running")
    b.nodes.discard("m1")

    def lost():
        m = scrape(p)[1]
        return m if value(m, "gpupool_job_restarts_total", cause="node-lost") == 1 else None
    m = wait("the restart after node-lost to be counted", lost, 60)
    expect(m, "gpupool_nodes", {("Ready",): 0, ("NotReady",): 0, ("Lost",): 1,
                                ("Cordoned",): 0, ("Draining",): 0}, ("state",))
    expect(m, "gpupool_node_ready", {("m1",): 0}, ("Hostname",))
    check(value(m, "gpupool_jobs", state="Pending", queue="default", tenant="team-a") == 1,
          "the job waits again")
    b.stop = True
    b.t.join()
# metrics.auth (the default): only metrics tokens, admins and operators read /metrics and the
# service discovery.
with Pool(sys.argv[1]) as p:
    p.tenant("team-a")
    alice = p.user("alice", "team-a")
    s, d = p.admin.post("/v1/tokens", {"name": "prom", "role": "operator"})
    check(s == 201, "operator token", s, d)
    prom = p.client(d["token"])
    for path in ("/metrics", "/v1/sd/prometheus"):
        s, d = p.client(None).get(path)
        check(s == 401, "%s without a token: 401" % path, s, d)
        s, d = alice.get(path)
        check(s == 403, "%s for a user: 403" % path, s, d)
        s, d = prom.get(path)
        check(s == 200, "%s for an operator: 200" % path, s, d)
print("ok")
