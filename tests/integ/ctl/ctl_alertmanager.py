"""gpupoold's alerts reach a real Alertmanager (/usr/bin/prometheus-alertmanager), with the
right labels, and retries carry them over an outage of the receiver:

- gpupoold starts pointed at a port where nothing listens yet; an XID 48 drains a GPU and
  restarts the job on it; the notifier logs the failed post; only then does Alertmanager start
  on that port, and GpuDrained and JobRestartedAfterFault arrive (the retry worked);
- a node that stops heartbeating: NodeLost (and its job's restart after node-lost); once the
  node reports again NodeLost is resolved (gone from the active alerts);
- an operator's drain: GpuDrained with the reason; the undrain resolves it;
- a tenant whose second job waits for its quota: TenantQuotaExhausted, resolved once no job of
  the tenant waits for quota any more.

Usage: ctl_alertmanager.py GPUPOOLD. Exits 77 (skipped) when Alertmanager is not installed.
Agents are played through the API by pool.Beater (heartbeats carrying XID events).
"""
import os
import sys

from observe import ALERTMANAGER, Alertmanager, free_port, need
from pool import Beater, Pool, check, node_doc, submit, wait

need(ALERTMANAGER)


def placed(p, client, name, restarts):
    j = p.job(client, name)
    if j["state"] == "Running" and j["restarts"] == restarts and j.get("placement"):
        return j
    return None


def where(job):
    (r,) = job["placement"]
    return r["node"], r["gpus"][0]["index"]


am_port = free_port()
am = None
args = ["--nodes-heartbeat-timeout", "1s", "--nodes-lost-timeout", "2s",
        "--alerts-alertmanager", "http://127.0.0.1:%d" % am_port,
        "--alerts-external-url", "http://gpupool.test:7070/",
        "--alerts-retry-max", "10m"]
try:
    with Pool(sys.argv[1], args) as p:
        p.tenant("team-a")
        alice = p.user("alice", "team-a")
        for n in ("n0", "n1"):
            p.register(node_doc(n, ngpus=4))
        b = Beater(p)
        b.nodes |= {"n0", "n1"}

        # ---- a fatal XID while no Alertmanager listens: the notifier retries ----
        s, d = submit(alice, "train", gpus=1, restart_policy="on-failure")
        check(s == 201, "submit", s, d)
        j = wait("train to run", lambda: placed(p, alice, "train", 0))
        node0, gpu0 = where(j)
        b.send(node0, events=[{"gpu": gpu0, "xid": 48}])
        j = wait("train to run again after the XID", lambda: placed(p, alice, "train", 1))
        wait("the notifier to log a failed post",
             lambda: "sub=notify" in p.read_log() and "failed alerts=" in p.read_log())
        am = Alertmanager(am_port)
        (drained,) = am.wait_for("GpuDrained", Hostname=node0, gpu=str(gpu0))
        lab = drained["labels"]
        check(lab == {"alertname": "GpuDrained", "severity": "warning", "source": "gpupoold",
                      "Hostname": node0, "gpu": str(gpu0), "UUID": "GPU-%s-%d" % (node0, gpu0),
                      "model": "A100-80GB"}, "GpuDrained's labels", drained)
        check("XID 48" in drained["annotations"]["summary"]
              and "XID 48" in drained["annotations"]["description"],
              "GpuDrained names the XID", drained)
        check(drained["generatorURL"] == "http://gpupool.test:7070/v1/nodes/%s" % node0,
              "GpuDrained links to the node", drained)
        (restarted,) = am.wait_for("JobRestartedAfterFault", gpupool_job="train")
        check(restarted["labels"] == {
            "alertname": "JobRestartedAfterFault", "severity": "warning", "source": "gpupoold",
            "gpupool_job": "train", "gpupool_job_id": str(j["id"]), "tenant": "team-a",
            "queue": "default"}, "JobRestartedAfterFault's labels", restarted)
        check("XID 48" in restarted["annotations"]["description"],
              "the restart names its cause", restarted)
        check(restarted["generatorURL"] == "http://gpupool.test:7070/v1/jobs/%d" % j["id"],
              "the restart links to the job", restarted)
        wait("the notifier to log the delivery after its retries",
             lambda: "delivered alerts=" in p.read_log() and "after tries=" in p.read_log())

        # ---- a lost node ----
        node1, _ = where(j)
        b.nodes.discard(node1)
        (lost,) = am.wait_for("NodeLost", Hostname=node1)
        check(lost["labels"] == {"alertname": "NodeLost", "severity": "critical",
                                 "source": "gpupoold", "Hostname": node1},
              "NodeLost's labels", lost)
        wait("train to run again after node-lost", lambda: placed(p, alice, "train", 2))
        # the same labels: Alertmanager keeps one alert and takes the newer annotations
        wait("the restart after node-lost to be told",
             lambda: [a for a in am.find(alertname="JobRestartedAfterFault", gpupool_job="train")
                      if "node-lost" in a["annotations"]["description"]])
        b.nodes.add(node1)
        am.wait_gone("NodeLost", Hostname=node1)

        # ---- an operator's drain, and the undrain that resolves it ----
        other = "n1" if node0 == "n0" else "n0"
        s, d = p.admin.post("/v1/nodes/%s/gpus/3/drain" % other, {"reason": "fan noise"})
        check(s == 200, "drain", s, d)
        (op,) = am.wait_for("GpuDrained", Hostname=other, gpu="3")
        check("fan noise" in op["annotations"]["description"], "the drain's reason is told", op)
        s, d = p.admin.post("/v1/nodes/%s/gpus/3/undrain" % other)
        check(s == 200, "undrain", s, d)
        am.wait_gone("GpuDrained", Hostname=other, gpu="3")
        check(am.find(alertname="GpuDrained", Hostname=node0, gpu=str(gpu0)),
              "the other drain stays told", am.alerts())

        # ---- a tenant blocked by its quota ----
        p.tenant("team-q", gpus=1)
        quinn = p.user("quinn", "team-q")
        s, d = submit(quinn, "q1", gpus=1)
        check(s == 201, "submit q1", s, d)
        wait("q1 to run", lambda: placed(p, quinn, "q1", 0))
        s, d = submit(quinn, "q2", gpus=1)
        check(s == 201, "submit q2", s, d)
        (quota,) = am.wait_for("TenantQuotaExhausted", tenant="team-q")
        check(quota["labels"] == {"alertname": "TenantQuotaExhausted", "severity": "warning",
                                  "source": "gpupoold", "tenant": "team-q"},
              "TenantQuotaExhausted's labels", quota)
        check("quota: tenant team-q" in quota["annotations"]["description"],
              "the alert quotes the scheduler's reason", quota)
        check(not am.find(alertname="TenantQuotaExhausted", tenant="team-a"),
              "a tenant within its quota is not told", am.alerts())
        s, d = quinn.post("/v1/jobs/q1/cancel")
        check(s == 200, "cancel q1", s, d)
        wait("q2 to run", lambda: placed(p, quinn, "q2", 0))
        am.wait_gone("TenantQuotaExhausted", tenant="team-q")

        # ---- the counters, where the controller serves /metrics ----
        s, text = p.admin.get("/metrics")
        if s == 200 and isinstance(text, str) and "gpupool_alerts_sent_total" in text:
            sent = [ln for ln in text.splitlines() if ln.startswith("gpupool_alerts_sent_total")]
            check(sent and float(sent[0].split()[-1]) >= 6, "alerts counted as sent", sent)

        b.stop = True
        b.t.join()
        # the sender stops with the controller: cleanly, and (sanitizer builds) without a report
        check(p.stop() == 0, "gpupoold exits 0 with the notifier running", p.read_log()[-3000:])
        check("Sanitizer" not in p.read_log() and "runtime error:" not in p.read_log(),
              "no sanitizer report", p.read_log()[-3000:])
finally:
    if am:
        am.stop()
print("ok")
