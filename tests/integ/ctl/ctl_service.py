"""Services through the API, with agents simulated by a beater thread that reports each replica's
readiness, metric and failures in heartbeats (the controller's side; ctl_service_agent.py runs
real agents and probes).

- bad input: min_replicas above max_replicas, probes on a batch job, a service name too long:
  400 naming the field;
- a service of 3 replicas owns 3 replica jobs of one replica each; the endpoints list the ready
  ones only; one whose readiness fails leaves the list;
- a replica reported failing its liveness is restarted (ReplicaUnhealthy, restarts 1); one
  cancelled by hand is replaced;
- a rolling update (PUT /v1/services/NAME) never has fewer ready replicas than the count
  (sampled through the endpoints all along), events say each step, the old revision is gone at
  the end; the same spec again changes nothing;
- a new revision that never becomes ready stalls (RolloutStalled) and the old replicas keep
  serving; another update recovers;
- autoscaling on a Prometheus metric: a load scales out (ScaledUp with the value), a quiet
  spell scales in after the scale-down window (ScaledDown); likewise on GPU memory utilisation
  from the jobs' history;
- `gpupool submit --update -f FILE` rolls a service from the command line;
- the service survives a controller restart; cancelling it cancels its replica jobs.

Arguments: gpupoold, gpupool.
"""
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

from pool import Beater, Pool, check, events, node_doc, wait


def service_spec(name, replicas=3, **extra):
    spec = {"name": name, "kind": "service", "port": 8080, "replicas": replicas,
            "command": ["python3", "-m", "http.server", "8080"], "resources": {"gpus": 1},
            "readiness_probe": {"http_get": {"path": "/"}, "period": "1s"},
            "update": {"max_surge": 1, "max_unavailable": 0}}
    spec.update(extra)
    return spec


def replica_jobs(client, name):
    s, d = client.get("/v1/services/%s" % name)
    check(s == 200, "get service %s" % name, s, d)
    return d["replica_jobs"]


def endpoints(client, name):
    """The service's ready endpoints (GET /v1/services/NAME: endpoints), and their count."""
    s, d = client.get("/v1/services/%s" % name)
    check(s == 200, "service %s" % name, s, d)
    check(all(e["ready"] for e in d["endpoints"]), "endpoints are ready ones", d["endpoints"])
    return {"ready": len(d["endpoints"]), "endpoints": d["endpoints"]}


def event_types(client, ref):
    return [e["type"] for e in events(client, ref)]


with Pool(sys.argv[1], extra_args=["--services-progress-deadline", "2s"]) as p:
    p.tenant("team-a")
    alice = p.user("alice", "team-a")
    p.tenant("team-b")
    bob = p.user("bob", "team-b")
    p.register(node_doc("n0", ngpus=8))
    b = Beater(p)
    b.nodes.add("n0")

    # ---- bad input ----
    bad = [
        (service_spec("bad", autoscale={"min_replicas": 5, "max_replicas": 2, "metric":
                                        "gpu_utilization", "target": 50}),
         "autoscale.min_replicas"),
        ({"name": "bad", "command": ["true"], "resources": {"gpus": 1},
          "readiness_probe": {"tcp_socket": {"port": 80}}}, "readiness_probe"),
        ({"name": "bad", "command": ["true"], "resources": {"gpus": 1},
          "liveness_probe": {"tcp_socket": {"port": 80}}}, "liveness_probe"),
        (service_spec("s" * 50), "name"),
    ]
    for spec, field in bad:
        s, d = alice.post("/v1/jobs", spec)
        check(s == 400 and field in d.get("error", {}).get("message", ""),
              "refused naming %s" % field, s, d)
    s, d = alice.put("/v1/services/web", service_spec("web"))
    check(s == 404, "PUT of a service that does not exist", s, d)

    # ---- a service and its replica jobs ----
    s, d = alice.post("/v1/jobs", service_spec("web"))
    check(s == 201 and d["state"] == "Running" and d["service"]["revision"] == 1,
          "service created", s, d)
    s, d = alice.put("/v1/services/web", service_spec("other"))
    check(s == 400 and "name" in d["error"]["message"], "PUT naming another service", s, d)
    reps = wait("3 replica jobs", lambda: (lambda r: r if len(r) == 3 else None)(
        replica_jobs(alice, "web")), 10)
    check(sorted(r["name"] for r in reps) == ["web-1", "web-2", "web-3"], "named NAME-N", reps)
    for r in reps:
        p.wait_state(alice, r["job"], "Running", 10)
    j = p.job(alice, reps[0]["job"])
    check(j["replicas"] == 1 and j["service"]["name"] == "web", "a replica job is marked", j)
    check(endpoints(alice, "web")["ready"] == 0, "not ready before the probes say so")
    for r in reps:
        b.ready[r["job"]] = True
    wait("3 ready endpoints", lambda: endpoints(alice, "web")["ready"] == 3, 10)
    s, d = bob.get("/v1/services/web")
    check(s == 404, "another tenant's service is not found", s, d)
    s, d = bob.get("/v1/services/web/")
    check(s == 404, "another tenant cannot reach its address", s, d)

    # a replica whose readiness fails leaves the endpoints
    b.ready[reps[1]["job"]] = False
    ep = wait("2 ready endpoints", lambda: (lambda e: e if e["ready"] == 2 else None)(
        endpoints(alice, "web")), 10)
    check(reps[1]["job"] not in [e["job"] for e in ep["endpoints"]], "the unready one left", ep)
    b.ready[reps[1]["job"]] = True
    wait("3 ready again", lambda: endpoints(alice, "web")["ready"] == 3, 10)

    # liveness: the agent stops a replica failing it; it is restarted
    b.failed[reps[2]["job"]] = "LivenessFailed: HTTP GET /healthz: status 500"
    wait("the replica restarted",
         lambda: p.job(alice, reps[2]["job"])["restarts"] == 1 and
         p.job(alice, reps[2]["job"])["state"] == "Running", 10)
    check("ReplicaUnhealthy" in event_types(alice, reps[2]["job"]), "ReplicaUnhealthy event")
    check("ReplicaUnhealthy" in event_types(alice, "web"), "ReplicaUnhealthy on the service")

    # a replica job cancelled by hand is replaced
    s, d = alice.post("/v1/jobs/%s/cancel" % reps[0]["job"])
    check(s == 200, "cancel a replica job", s, d)
    reps = wait("a replacement", lambda: (lambda r: r if len(r) == 3 and "web-4" in
                                          [x["name"] for x in r] else None)(
        replica_jobs(alice, "web")), 10)
    for r in reps:
        b.ready[r["job"]] = True
    wait("3 ready", lambda: endpoints(alice, "web")["ready"] == 3, 10)

    # ---- a rolling update never drops below the count ready ----
    samples, stop = [], threading.Event()

    def sample():
        while not stop.is_set():
            samples.append(endpoints(alice, "web")["ready"])
            time.sleep(0.05)

    def ready_new(revision):
        """Reports the replicas of revision ready as they appear."""
        for r in replica_jobs(alice, "web"):
            if r["revision"] == revision:
                b.ready[r["job"]] = True

    t = threading.Thread(target=sample, daemon=True)
    t.start()
    v2 = service_spec("web", env={"VERSION": "2"})
    s, d = alice.put("/v1/services/web", v2)
    check(s == 200 and d["service"]["revision"] == 2, "update: revision 2", s, d)
    deadline = time.time() + 30
    while time.time() < deadline:
        ready_new(2)
        r = replica_jobs(alice, "web")
        if len(r) == 3 and all(x["revision"] == 2 and x["ready"] for x in r):
            break
        time.sleep(0.2)
    stop.set()
    t.join()
    r = replica_jobs(alice, "web")
    check(len(r) == 3 and all(x["revision"] == 2 for x in r), "all replicas at revision 2", r)
    check(samples and min(samples) >= 3, "never fewer than 3 ready during the update",
          min(samples) if samples else None, len(samples))
    ev = event_types(alice, "web")
    check("RollingUpdate" in ev and "RolloutComplete" in ev, "rollout events", ev)
    s, d = alice.put("/v1/services/web", v2)
    check(s == 200 and d["service"]["revision"] == 2, "the same spec: no new revision", s, d)

    # ---- a revision that never becomes ready stalls; the old replicas keep serving ----
    s, d = alice.post("/v1/jobs?update=true", service_spec("web", env={"VERSION": "3"}))
    check(s == 200 and d["service"]["revision"] == 3, "update through POST ?update=true", s, d)
    wait("RolloutStalled", lambda: "RolloutStalled" in event_types(alice, "web"), 15)
    r = replica_jobs(alice, "web")
    check(sum(1 for x in r if x["revision"] == 2 and x["ready"]) == 3, "the old ones serve", r)
    check(sum(1 for x in r if x["revision"] == 3) == 1, "no more than max_surge new", r)
    s, d = alice.put("/v1/services/web", service_spec("web", env={"VERSION": "4"}))
    check(s == 200 and d["service"]["revision"] == 4, "a fixed revision", s, d)
    deadline = time.time() + 30
    while time.time() < deadline:
        ready_new(4)
        r = replica_jobs(alice, "web")
        if len(r) == 3 and all(x["revision"] == 4 and x["ready"] for x in r):
            break
        time.sleep(0.2)
    check(all(x["revision"] == 4 for x in replica_jobs(alice, "web")), "revision 4 everywhere")

    # ---- the command line: gpupool submit --update ----
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(service_spec("web", env={"VERSION": "5"}), f)
    env = dict(os.environ, GPUPOOL_SERVER=p.base, GPUPOOL_TOKEN=alice.token)
    r = subprocess.run([sys.argv[2], "submit", "--update", "-f", f.name, "-o", "json"],
                       capture_output=True, text=True, timeout=60, env=env)
    os.unlink(f.name)
    check(r.returncode == 0 and json.loads(r.stdout)["service"]["revision"] == 5,
          "gpupool submit --update: revision 5", r.stdout, r.stderr)
    deadline = time.time() + 30
    while time.time() < deadline:
        ready_new(5)
        r = replica_jobs(alice, "web")
        if len(r) == 3 and all(x["revision"] == 5 and x["ready"] for x in r):
            break
        time.sleep(0.2)
    check(all(x["revision"] == 5 for x in replica_jobs(alice, "web")), "revision 5 everywhere")

    # ---- autoscaling on the service's Prometheus gauge ----
    auto = service_spec("auto", replicas=1, autoscale={
        "min_replicas": 1, "max_replicas": 4, "metric": "prometheus", "target": 10,
        "prometheus": {"name": "inflight"}, "scale_up_window": "0s",
        "scale_down_window": "3s"})
    s, d = alice.post("/v1/jobs", auto)
    check(s == 201 and d["service"]["replicas"] == 1, "autoscaled service", s, d)

    def load(value):
        for r in replica_jobs(alice, "auto"):
            b.ready[r["job"]] = True
            b.metric[r["job"]] = value

    def count():
        s, d = alice.get("/v1/services/auto")
        return d["service"]["replicas"]

    deadline = time.time() + 20
    while time.time() < deadline and count() < 3:
        load(30.0)  # 3x the target per replica
        time.sleep(0.2)
    check(count() >= 3, "a load scales out", count())
    ev = events(alice, "auto")
    up = [e for e in ev if e["type"] == "ScaledUp"]
    check(up and "inflight" in up[0]["message"] and "value 30.00" in up[0]["message"],
          "ScaledUp names the metric and its value", ev)
    deadline = time.time() + 30
    while time.time() < deadline and count() > 1:
        load(0.5)
        time.sleep(0.2)
    check(count() == 1, "a quiet spell scales in", count())
    down = [e for e in events(alice, "auto") if e["type"] == "ScaledDown"]
    check(down, "ScaledDown event")
    wait("one replica job", lambda: len(replica_jobs(alice, "auto")) == 1, 10)

    # ---- autoscaling on GPU memory utilisation (the jobs' history) ----
    mem = service_spec("mem", replicas=1, autoscale={
        "min_replicas": 1, "max_replicas": 3, "metric": "gpu_memory_utilization", "target": 50,
        "scale_up_window": "0s", "scale_down_window": "2s"})
    s, d = alice.post("/v1/jobs", mem)
    check(s == 201, "a service scaled on GPU memory", s, d)

    def mem_count():
        return alice.get("/v1/services/mem")[1]["service"]["replicas"]

    def mem_load(mib):
        for r in replica_jobs(alice, "mem"):
            b.ready[r["job"]] = True
            b.mem[r["job"]] = mib

    deadline = time.time() + 30
    while time.time() < deadline and mem_count() < 2:
        mem_load(73728)  # 90% of an 80 GiB GPU
        time.sleep(0.2)
    check(mem_count() >= 2, "GPU memory above the target scales out", mem_count())
    up = [e for e in events(alice, "mem") if e["type"] == "ScaledUp"]
    check(up and "gpu_memory_utilization" in up[0]["message"], "ScaledUp names the metric", up)
    deadline = time.time() + 60
    while time.time() < deadline and mem_count() > 1:
        mem_load(4096)  # 5%
        time.sleep(0.2)
    check(mem_count() == 1, "GPU memory well below the target scales in", mem_count())
    s, d = alice.post("/v1/jobs/mem/cancel")
    check(s == 200, "cancel mem", s, d)

    # ---- replicas are judged one by one: 3 x 4 GPUs on an 8-GPU node is accepted ----
    s, d = alice.post("/v1/jobs", service_spec("big", replicas=3, resources={"gpus": 4}))
    check(s == 201, "a service larger than the pool at once is accepted", s, d)
    s, d = alice.post("/v1/jobs", service_spec("huge", replicas=1, resources={"gpus": 16}))
    check(s == 400 and "resources.gpus" in d["error"]["message"],
          "a replica no node could run is refused", s, d)
    s, d = alice.post("/v1/jobs/big/cancel")
    check(s == 200, "cancel big", s, d)

    # ---- durable across a restart; cancel takes the replica jobs along ----
    before = replica_jobs(alice, "web")
    b.stop = True  # its heartbeats would meet a controller that is away
    b.t.join()
    p.restart()
    alice = p.client(alice.token)
    s, d = alice.get("/v1/services/web")
    check(s == 200 and d["service"]["revision"] == 5 and d["state"] == "Running",
          "the service after a restart", s, d)
    check(sorted(x["job"] for x in d["replica_jobs"]) == sorted(x["job"] for x in before),
          "the same replica jobs", d["replica_jobs"], before)
    s, d = alice.post("/v1/jobs/web/cancel")
    check(s == 200 and d["state"] == "Cancelled", "cancel the service", s, d)
    for r in before:
        check(p.job(alice, r["job"])["state"] == "Cancelled", "replica job cancelled", r)
    s, d = alice.post("/v1/jobs/auto/requeue")
    check(s == 409, "a service cannot be requeued", s, d)
    check(p.stop() == 0, "gpupoold stops cleanly (no sanitizer report)", p.read_log()[-3000:])
print("ok")
