"""Observability end to end, set up the way docs/metrics.md and docs/operations.md tell operators
to: `gpupool up` with two mock nodes (real agents, supervisors and processes), a real Prometheus
that scrapes gpupoold and discovers the agents through /v1/sd/prometheus, loads
deploy/prometheus/gpupool-rules.yaml and sends to a real Alertmanager, to which gpupoold sends
its own alerts too.

- both agents are discovered (labels from the service discovery) and up, gpupoold is up;
- a job's GPU carries its labels in Prometheus (DCGM_FI_DEV_GPU_UTIL{gpupool_job="train"}) and
  its readings follow the mock NVML (`util`, `temp`);
- gpupool_jobs counts the running jobs;
- a notebook with idle_timeout whose GPU the mock shows idle is stopped (Cancelled,
  IdleStopped), while the busy job keeps running; gpupoold's JobIdleStopped reaches Alertmanager;
- a fatal XID through the mock: gpupoold drains the GPU and restarts the job (GpuDrained and
  JobRestartedAfterFault reach Alertmanager from gpupoold), Prometheus scrapes
  gpupool_xid_errors_total and its rule GPUFatalXID fires and reaches Alertmanager as well;
- /v1/usage shows the GPU time of both jobs.
Arguments: the gpupool program (gpupoold, gpupool-agent, gpupool-run beside it).
"""
import os
import shutil
import subprocess
import sys
import tempfile

from observe import ALERTMANAGER, PROMETHEUS, Alertmanager, Prometheus, free_port, need
from pool import Client, check, free_ports, mock_control, pool_down, wait

need(PROMETHEUS)
need(ALERTMANAGER)

gpupool = sys.argv[1]
root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__)))))
rules = os.path.join(root, "deploy", "prometheus", "gpupool-rules.yaml")
tmp = tempfile.mkdtemp(prefix="gpupool-observe.")
pool = os.path.join(tmp, "pool")
mark = os.path.basename(tmp).replace(".", "-")

CONFIG = """global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files: ["%(rules)s"]
alerting:
  alertmanagers:
    - static_configs:
        - targets: ["127.0.0.1:%(am)d"]
scrape_configs:
  - job_name: gpupoold
    authorization:
      type: Bearer
      credentials_file: "%(scrape)s"
    static_configs:
      - targets: ["%(ctl)s"]
  - job_name: gpupool-agent
    honor_labels: true
    authorization:
      type: Bearer
      credentials_file: "%(scrape)s"
    http_sd_configs:
      - url: http://%(ctl)s/v1/sd/prometheus
        refresh_interval: 1s
        authorization:
          type: Bearer
          credentials_file: "%(scrape)s"
"""


def control(node, line):
    mock_control(pool, node, line)


def one(samples, what):
    check(samples is not None and len(samples) == 1, what, samples)
    return samples[0]


am = prom = None
port = free_ports(3)  # gpupoold, then one per agent
am_port = free_port()
while port <= am_port <= port + 2:
    am_port = free_port()
env = dict(os.environ, GPUPOOL_HEARTBEAT_MS="500",
           GPUPOOL_ALERTS_ALERTMANAGER="http://127.0.0.1:%d" % am_port)
try:
    am = Alertmanager(am_port)
    up = subprocess.run([gpupool, "up", "--data-dir", pool, "--port", str(port), "--nodes",
                         "pcie-t4:2"], capture_output=True, text=True, timeout=60, env=env)
    check(up.returncode == 0 and "is up" in up.stdout, "gpupool up", up.stdout, up.stderr)
    token = open(os.path.join(pool, "admin.token")).read().strip()
    admin = Client("http://127.0.0.1:%d" % port, token)
    ctl = "127.0.0.1:%d" % port
    prom = Prometheus(CONFIG % {"rules": rules, "am": am_port, "ctl": ctl,
                               "scrape": os.path.join(pool, "scrape.token")})
    s, d = admin.post("/v1/tenants", {"name": "obs"})
    check(s == 201, "tenant", s, d)
    nap = ["sh", "-c", "sleep 900 # %s" % mark]
    s, d = admin.post("/v1/jobs", {"name": "train", "tenant": "obs", "command": nap,
                                   "resources": {"gpus": 1}, "restart_policy": "on-failure"})
    check(s == 201, "submit train", s, d)
    ids = {"train": d["id"]}
    s, d = admin.post("/v1/jobs", {"name": "notebook", "tenant": "obs", "command": nap,
                                   "resources": {"gpus": 1}, "idle_timeout": "3s",
                                   "idle_utilization": 10})
    check(s == 201, "submit notebook", s, d)
    ids["notebook"] = d["id"]

    def job(name):
        s, d = admin.get("/v1/jobs/%d" % ids[name])
        check(s == 200, "get " + name, s, d)
        return d

    def where(name):
        j = wait(name + " running", lambda: (lambda x: x if x["state"] == "Running" else None)(
            job(name)), 30)
        pl = j["placement"][0]
        return pl["node"], pl["gpus"][0]["index"]

    tn, tg = where("train")
    nn, ng = where("notebook")
    control(tn, "util %d 80" % tg)
    control(tn, "temp %d 77" % tg)

    # ---- Prometheus finds both agents and gpupoold, and the job's labels ----
    def agents_up():
        t = prom.targets("gpupool-agent")
        return t if t and len(t) == 2 and all(a["health"] == "up" for a in t) else None

    agents = wait("both agents discovered and up", agents_up, 60)
    check(sorted(a["labels"]["Hostname"] for a in agents) == ["pcie-t4-1", "pcie-t4-2"] and
          all(a["discoveredLabels"]["__meta_gpupool_model"] for a in agents),
          "the agents' targets carry the discovery's labels", agents)
    wait("gpupoold up", lambda: prom.query('up{job="gpupoold"} == 1'), 30)
    labels, util = one(wait("the job's GPU utilisation in Prometheus", lambda: prom.query(
        'DCGM_FI_DEV_GPU_UTIL{gpupool_job="train"} == 80'), 60), "train's GPU")
    check(labels["Hostname"] == tn and labels["gpu"] == str(tg) and labels["tenant"] == "obs" and
          labels["queue"] == "default" and labels["UUID"].startswith("GPU-"),
          "the GPU's labels name its node, index, job, tenant and queue", labels)
    wait("the temperature set through the mock",
         lambda: prom.query('DCGM_FI_DEV_GPU_TEMP{Hostname="%s",gpu="%d"} == 77' % (tn, tg)), 60)

    # ---- the notebook goes idle, the busy job stays ----
    control(nn, "util %d 2" % ng)
    stopped = wait("the notebook stopped for being idle",
                   lambda: (lambda x: x if x["state"] == "Cancelled" else None)(job("notebook")),
                   60)
    check(stopped["reason"] == "idle: GPU utilisation below 10% for 3s", "idle reason", stopped)
    s, ev = admin.get("/v1/jobs/%d/events" % ids["notebook"])
    check(any(e["type"] == "IdleStopped" for e in ev["items"]), "IdleStopped event", ev)
    check(job("train")["state"] == "Running", "the busy job keeps running", job("train"))
    a = am.wait_for("JobIdleStopped", gpupool_job="notebook")[0]
    check(a["labels"]["tenant"] == "obs" and a["labels"]["source"] == "gpupoold",
          "JobIdleStopped names the job's tenant", a)
    wait("gpupool_jobs counts the running job", lambda: prom.query(
        'gpupool_jobs{tenant="obs",state="Running"} == 1'), 60)

    # ---- a fatal XID: gpupoold's own alerts and Prometheus's rule ----
    control(tn, "xid %d 48" % tg)
    wait("train restarted after the fault", lambda: (
        lambda x: x if x["restarts"] == 1 and x["state"] == "Running" else None)(job("train")), 60)
    am.wait_for("GpuDrained", Hostname=tn, gpu=str(tg))
    am.wait_for("JobRestartedAfterFault", gpupool_job="train")
    fired = am.wait_for("GPUFatalXID", 90, Hostname=tn, gpu=str(tg))[0]
    check(fired["labels"].get("xid") == "48" and fired["labels"].get("severity") == "critical",
          "Prometheus's GPUFatalXID names the XID", fired)

    # ---- metering saw both ----
    s, u = admin.get("/v1/usage?by=job&period=none")
    check(s == 200, "usage", s, u)
    hours = {r["key"]: r["gpu_hours"] for r in u["rows"]}
    check(hours.get(str(ids["train"]), 0) > 0 and hours.get(str(ids["notebook"]), 0) > 0,
          "usage covers both jobs", u)
    print("observe: agents=%d alerts=%s" % (len(agents), sorted(
        {x["labels"]["alertname"] for x in am.alerts()})))
finally:
    if prom:
        prom.stop()
    pool_down(gpupool, pool, tmp, mark)
    if am:
        am.stop()
    shutil.rmtree(tmp, ignore_errors=True)
print("ok")
