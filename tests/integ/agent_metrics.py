"""The agent's GET /metrics, end to end: a real gpupoold, a real gpupool-agent over the mock NVML
(PCIe T4 node, 4 GPUs) with real gpupool-run supervisors, a whole-GPU job and a fractional job
running. The agent talks to gpupoold through a small recording proxy, so the test sees the
heartbeats it sends.

- the page is the Prometheus text format (its content type); `promtool check metrics` finds no
  error in it and no complaint about gpupool's own names (its only complaints, exit 3, are about
  dcgm-exporter's names and labels, which dashboards and alert rules need as they are);
- readings follow the mock's control commands: `temp G 91` shows as
  DCGM_FI_DEV_GPU_TEMP{gpu="G",...} 91; `throttle`, `pcie-replay` move their counters;
- the whole job's GPU carries the job's labels (gpupool_job, gpupool_job_id, tenant, queue) on
  its device metrics, the fractional job's GPU none; a T4 has no NVLink: no NVLink samples;
- the fractional job's slice: its memory limit, the memory its process uses (`proc`), its
  utilisation (`proc-util`); the whole job's slice;
- the heartbeats carry each running replica's "util": the GPU's for the whole job (`util`), the
  process's for the fraction (`proc-util`); and gpupool_agent_heartbeat_failures_total counts
  heartbeats the controller did not answer;
- a second node (H100s in MIG mode) and a MIG job: the MIG slice with its profile, instance and
  the MIG device's memory, the MIG devices' framebuffer with GPU_I_PROFILE and GPU_I_ID (the
  job's labels on its own), no utilisation for GPUs in MIG mode nor for the MIG replica.
Arguments: gpupoold, gpupool-agent (gpupool-run beside it), libgpupool-nvml-mock.so, the
inventories directory.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "ctl"))
from fakectl import serve  # noqa: E402
from mockagent import MockAgent  # noqa: E402
from pool import Pool, check, kill_replica_leftovers, wait  # noqa: E402

gpupoold, agent_bin, mock, inventories = sys.argv[1:5]
inventory = os.path.join(inventories, "pcie-t4.yaml")
tmp = tempfile.mkdtemp(prefix="gpupool-metrics.")
scrape_token_file = os.path.join(tmp, "scrape.token")
mark = os.path.basename(tmp).replace(".", "-")  # tells this run's processes from any other
NODE = "metrics-node"
PROMTOOL = shutil.which("promtool") or "/usr/bin/promtool"


class Proxy:
    """Forwards the agent's calls to gpupoold; records heartbeat bodies; can refuse them."""

    def __init__(self):
        self.lock = threading.Lock()
        self.beats = []
        self.refuse = False
        self.upstream = None


proxy = Proxy()


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def forward(self, method):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0) or 0))
        if method == "POST" and self.path.endswith("/heartbeat"):
            with proxy.lock:
                refuse = proxy.refuse
                if not refuse:
                    proxy.beats.append(json.loads(body or b"{}"))
            if refuse:
                return self.answer(503, b'{"error": {"message": "controller away"}}', None)
        headers = {k: v for k, v in self.headers.items()
                   if k.lower() in ("authorization", "content-type")}
        req = urllib.request.Request(proxy.upstream + self.path, data=body if body else None,
                                     method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                self.answer(r.status, r.read(), r.headers.get("Content-Type"))
        except urllib.error.HTTPError as e:
            self.answer(e.code, e.read(), e.headers.get("Content-Type"))

    def answer(self, status, data, ctype):
        self.send_response(status)
        self.send_header("Content-Type", ctype or "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.forward("GET")

    def do_POST(self):
        self.forward("POST")


def heartbeats():
    with proxy.lock:
        return list(proxy.beats)


SCRAPE_TOKEN = "gpm_metrics-token-of-this-test"


def scrape(port, token=SCRAPE_TOKEN):
    """(content type, text) of the agent's /metrics read with token; (status, body) on a refusal."""
    req = urllib.request.Request("http://127.0.0.1:%d/metrics" % port)
    if token:
        req.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.headers.get("Content-Type"), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def samples(text, name):
    """[(labels dict, value)] of the samples of name."""
    out = []
    for line in text.splitlines():
        m = re.match(r'^%s(?:\{(.*)\})? (\S+)$' % re.escape(name), line)
        if m:
            labels = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(1) or ""))
            out.append((labels, float(m.group(2))))
    return out


def value(text, name, **want):
    """The value of the one sample of name whose labels include want; None when none."""
    got = [v for labels, v in samples(text, name)
           if all(labels.get(k) == str(x) for k, x in want.items())]
    check(len(got) <= 1, "one sample of %s %s" % (name, want), got)
    return got[0] if got else None


def promtool(text):
    p = subprocess.run([PROMTOOL, "check", "metrics"], input=text, capture_output=True,
                       text=True, timeout=60)
    return p.returncode, (p.stdout + p.stderr).strip()



class Agent(MockAgent):
    """A gpupool-agent over the mock NVML (mockagent.py) whose /metrics Prometheus reads with the
    scrape token."""

    def __init__(self, node, inventory_file, server_port, token_file):
        super().__init__(agent_bin, mock, tmp, node, inventory_file,
                         "http://127.0.0.1:%d" % server_port, token_file,
                         "--metrics-token-file", scrape_token_file)

    def metrics(self):
        ctype, text = scrape(self.port)
        check(ctype == "text/plain; version=0.0.4; charset=utf-8",
              "the exposition format's content type", ctype)
        return text


agents = []
server = None
try:
    with Pool(gpupoold) as pool:
        proxy.upstream = pool.base
        server = serve(Handler)
        token_file = os.path.join(tmp, "join.token")
        with open(token_file, "w") as f:
            f.write(pool.join_token + "\n")
        with open(scrape_token_file, "w") as f:
            f.write(SCRAPE_TOKEN + "\n")
        agent = Agent(NODE, inventory, server.server_address[1], token_file)
        agents.append(agent)
        control, metrics = agent.control, agent.metrics
        wait("the agent's first heartbeat", heartbeats)
        check(agent.proc.poll() is None, "the agent runs", agent.log()[-3000:])
        # The page names the node's jobs and tenants, and jobs share the node's network: only
        # the metrics token (Prometheus's) or the controller's control token reads it.
        for token, why in ((None, "no token"), ("gpm_not-the-token", "a wrong token"),
                           (pool.join_token, "the join token")):
            status, body = scrape(agent.port, token)
            check(status == 401 and "DCGM" not in body, "/metrics refused with " + why,
                  status, body[:300])
        pool.tenant("team-m")
        admin = pool.admin

        def submit(name, cmd, **resources):
            spec = {"name": name, "tenant": "team-m", "command": ["sh", "-c", cmd],
                    "resources": resources}
            s, d = admin.post("/v1/jobs", spec)
            check(s == 201, "submit " + name, s, d)
            return d["id"]

        def running(ref, state_dir):
            d = wait(ref + " running",
                     lambda: (lambda j: j if j["state"] == "Running" else None)(
                         pool.job(admin, ref)), timeout=60)
            place = d["placement"][0]
            gpu = place["gpus"][0]["index"]
            path = os.path.join(state_dir, "replicas",
                                "%d-0-%d" % (d["id"], place["epoch"]), "child.pid")
            leader = wait(ref + "'s child.pid", lambda: os.path.exists(path) and
                          int(open(path).read().split()[0]))
            return d, gpu, leader

        whole_id = submit("whole-job", "sleep 600 # whole-%s" % mark, gpus=1)
        frac_id = submit("frac-job", "sleep 600 # frac-%s" % mark, gpu_milli=500,
                         gpu_memory_mib=2048)

        whole, wgpu, wleader = running("whole-job", agent.state)
        frac, fgpu, fleader = running("frac-job", agent.state)
        check(wgpu != fgpu, "the whole job and the fraction are on different GPUs", wgpu, fgpu)
        queue = whole.get("queue", "default")

        # ---- the page passes promtool; gpupool's own names cleanly ----
        text = metrics()
        rc, out = promtool(text)
        check(rc in (0, 3), "promtool check metrics: no error in the page", rc, out)
        complaints = [line for line in out.splitlines() if line.strip()]
        check(all(line.startswith("DCGM_FI_") for line in complaints),
              "promtool complains only about dcgm-exporter's names", complaints)
        own = []
        keep = False
        for line in text.splitlines():
            if line.startswith("# HELP "):
                keep = line.split()[2].startswith("gpupool_")
            if keep:
                own.append(line)
        rc, out = promtool("\n".join(own) + "\n")
        check(rc == 0 and out == "", "promtool: gpupool's own families are clean", rc, out)
        check(any(line.startswith("gpupool_slice_memory_limit_bytes{") for line in own),
              "the slice families were checked too", own)

        # ---- readings follow the mock's control commands ----
        control("temp %d 91" % wgpu)
        control("throttle %d 250000" % wgpu)
        control("pcie-replay %d 3" % wgpu)
        text = wait("GPU %d at 91 C" % wgpu, lambda: (lambda t: t if value(
            t, "DCGM_FI_DEV_GPU_TEMP", gpu=wgpu) == 91 else None)(metrics()))
        check(value(text, "DCGM_FI_DEV_THERMAL_VIOLATION", gpu=wgpu) == 250000,
              "the thermal violation time (us)", samples(text, "DCGM_FI_DEV_THERMAL_VIOLATION"))
        check(value(text, "DCGM_FI_DEV_PCIE_REPLAY_COUNTER", gpu=wgpu) == 3,
              "the PCIe replays", samples(text, "DCGM_FI_DEV_PCIE_REPLAY_COUNTER"))
        check(value(text, "DCGM_FI_DEV_PCIE_REPLAY_COUNTER", gpu=fgpu) == 0,
              "another GPU's replays stay", samples(text, "DCGM_FI_DEV_PCIE_REPLAY_COUNTER"))
        check(value(text, "DCGM_FI_DEV_FB_USED", gpu=wgpu) == 1024 and
              value(text, "DCGM_FI_DEV_FB_RESERVED", gpu=wgpu) == 120 and
              value(text, "DCGM_FI_DEV_FB_FREE", gpu=wgpu) == 15360 - 1024 - 120,
              "framebuffer used, reserved and free (MiB)", samples(text, "DCGM_FI_DEV_FB_FREE"))
        check("DCGM_FI_DEV_NVLINK" not in text, "a T4 has no NVLink: no NVLink samples")
        check(len(samples(text, "DCGM_FI_DEV_GPU_UTIL")) == 4, "every GPU's utilisation",
              samples(text, "DCGM_FI_DEV_GPU_UTIL"))

        # ---- labels: the whole job's GPU, not the shared one ----
        labels = [lab for lab, v in samples(text, "DCGM_FI_DEV_GPU_TEMP")
                  if lab["gpu"] == str(wgpu)][0]
        keys = list(re.findall(r'(\w+)="', [line for line in text.splitlines()
                                             if line.startswith("DCGM_FI_DEV_GPU_TEMP{gpu=\"%d\""
                                                                % wgpu)][0]))
        check(keys == ["gpu", "UUID", "pci_bus_id", "device", "modelName", "Hostname", "hostname",
                       "gpupool_job", "gpupool_job_id", "tenant", "queue"],
              "the labels of a GPU held whole, in order", keys)
        check(labels["gpupool_job"] == "whole-job" and labels["gpupool_job_id"] == str(whole_id)
              and labels["tenant"] == "team-m" and labels["queue"] == queue
              and labels["device"] == "nvidia%d" % wgpu and labels["Hostname"] == NODE
              and labels["hostname"] == NODE and labels["UUID"].startswith("GPU-")
              and labels["modelName"] == "Tesla T4", "the whole job's labels", labels)
        shared = [lab for lab, v in samples(text, "DCGM_FI_DEV_GPU_TEMP")
                  if lab["gpu"] == str(fgpu)][0]
        check("gpupool_job" not in shared and "tenant" not in shared,
              "a GPU shared by fractions carries no job labels", shared)

        # ---- the fraction's slice ----
        control("proc %d %d 700" % (fgpu, fleader))
        control("proc-util %d %d 37" % (fgpu, fleader))
        sel = dict(gpupool_job="frac-job", kind="fraction")

        def frac_slice():
            t = metrics()
            used = value(t, "gpupool_slice_memory_used_bytes", **sel)
            util = value(t, "gpupool_slice_utilization_ratio", **sel)
            return t if used == 700 << 20 and util == 0.37 else None
        text = wait("the fraction's memory and utilisation", frac_slice)
        lab = [lab for lab, v in samples(text, "gpupool_slice_memory_limit_bytes")
               if lab.get("gpupool_job") == "frac-job"][0]
        check(lab == {"gpu": str(fgpu), "UUID": shared["UUID"], "Hostname": NODE,
                      "gpupool_job": "frac-job", "gpupool_job_id": str(frac_id), "replica": "0",
                      "tenant": "team-m", "queue": queue, "kind": "fraction", "milli": "500"},
              "the slice's labels", lab)
        check(value(text, "gpupool_slice_memory_limit_bytes", **sel) == 2048 << 20,
              "the fraction's limit: its share's memory", lab)
        check(value(text, "gpupool_slice_memory_limit_bytes", gpupool_job="whole-job",
                    kind="gpu") == 15360 << 20, "the whole job's limit: the GPU's memory",
              samples(text, "gpupool_slice_memory_limit_bytes"))
        check(value(text, "gpupool_agent_replicas", state="running") == 2,
              "two replicas running", samples(text, "gpupool_agent_replicas"))
        info = samples(text, "gpupool_agent_info")
        check(len(info) == 1 and info[0][0]["Hostname"] == NODE and
              info[0][0]["driver_version"] == "550.54.15" and info[0][1] == 1,
              "the agent's info", info)

        # ---- heartbeats carry util ----
        control("util %d 55" % wgpu)

        def utils():
            for b in reversed(heartbeats()[-5:]):
                reps = {r["job"]: r for r in b.get("replicas", [])}
                if (reps.get(whole_id, {}).get("util") == 55 and
                        reps.get(frac_id, {}).get("util") == 37):
                    return reps
            return None
        reps = wait("heartbeats with each replica's util", utils)
        check(all(isinstance(reps[j]["util"], int) for j in (whole_id, frac_id)),
              "util: whole percent", reps)
        # the fraction's process stops using the GPU: its util is 0, whatever the GPU does
        control("proc-util %d %d 0" % (fgpu, fleader))
        control("util %d 80" % fgpu)
        wait("the fraction idle", lambda: any(
            r.get("job") == frac_id and r.get("util") == 0
            for b in heartbeats()[-3:] for r in b.get("replicas", [])))

        # ---- MIG: a second node, an H100 in MIG mode, and a MIG job ----
        magent = Agent("mig-node", os.path.join(inventories, "h100-mig.yaml"),
                       server.server_address[1], token_file)
        agents.append(magent)
        # Submitted once the node has registered: before, no GPU of the pool offers MIG.
        wait("mig-node registered", lambda: admin.get("/v1/nodes/mig-node")[0] == 200)
        mig_id = submit("mig-job", "sleep 600 # mig-%s" % mark, mig_profile="1g.10gb")
        mig, mgpu, _ = running("mig-job", magent.state)
        msel = dict(gpupool_job="mig-job", kind="mig")

        def mig_slice():
            t = magent.metrics()
            return t if value(t, "gpupool_slice_memory_limit_bytes", **msel) else None
        text = wait("the MIG slice", mig_slice)
        lab = [lab for lab, v in samples(text, "gpupool_slice_memory_limit_bytes")
               if lab.get("gpupool_job") == "mig-job"][0]
        check(lab["gpu"] == str(mgpu) and lab["GPU_I_PROFILE"] == "1g.10gb" and
              lab["GPU_I_ID"].isdigit() and "milli" not in lab and lab["tenant"] == "team-m",
              "the MIG slice's labels", lab)
        check(value(text, "gpupool_slice_memory_limit_bytes", **msel) in (9856 << 20, 10240 << 20),
              "the MIG slice's limit: its MIG device's memory", lab)
        check(value(text, "gpupool_slice_memory_used_bytes", **msel) == 0,
              "the MIG device's used memory", samples(text, "gpupool_slice_memory_used_bytes"))
        check(value(text, "gpupool_slice_utilization_ratio", **msel) is None,
              "no utilisation for a MIG slice (NVML gives none)", lab)
        held = [m for m, v in samples(text, "DCGM_FI_DEV_FB_USED") if "gpupool_job" in m]
        check(len(held) == 1 and held[0]["GPU_I_ID"] == lab["GPU_I_ID"] and
              held[0]["GPU_I_PROFILE"] == "1g.10gb" and held[0]["gpu"] == str(mgpu),
              "the MIG device's framebuffer carries the job's labels", held)
        migs = [lab for lab, v in samples(text, "DCGM_FI_DEV_FB_FREE") if "GPU_I_ID" in lab]
        check(len(migs) >= 11, "every MIG device's free framebuffer (4 + 7 + the new one)", migs)
        util_gpus = sorted(lab["gpu"] for lab, v in samples(text, "DCGM_FI_DEV_GPU_UTIL"))
        check(util_gpus == ["3"], "GPUs in MIG mode have no utilisation; GPU 3 (MIG off) has",
              util_gpus)
        beat = wait("a heartbeat with the MIG replica running", lambda: [
            r for b in heartbeats()[-6:] for r in b.get("replicas", [])
            if r["job"] == mig_id and r["state"] == "Running"])
        check("util" not in beat[-1], "a MIG replica's report carries no util", beat[-1])
        s, d = admin.post("/v1/jobs/mig-job/cancel")
        check(s in (200, 202), "cancel mig-job", s, d)
        wait("the MIG replica stopped",
             lambda: value(magent.metrics(), "gpupool_agent_replicas", state="running") == 0,
             timeout=60)
        check(magent.stop() == 0, "the MIG node's agent stops cleanly on SIGTERM",
              magent.log()[-3000:])

        # ---- heartbeat failures ----
        before = value(metrics(), "gpupool_agent_heartbeat_failures_total")
        check(before == 0, "no failed heartbeat yet", before)
        with proxy.lock:
            proxy.refuse = True
        wait("failed heartbeats counted",
             lambda: value(metrics(), "gpupool_agent_heartbeat_failures_total") >= 2)
        with proxy.lock:
            proxy.refuse = False
        n = len(heartbeats())
        wait("heartbeats again", lambda: len(heartbeats()) > n + 2)
        failures = value(metrics(), "gpupool_agent_heartbeat_failures_total")
        text = metrics()
        check(value(text, "gpupool_agent_heartbeat_failures_total") == failures,
              "the counter stays once heartbeats get through", failures)

        for ref in ("whole-job", "frac-job"):
            s, d = admin.post("/v1/jobs/%s/cancel" % ref)
            check(s in (200, 202), "cancel " + ref, s, d)
        wait("the replicas stopped",
             lambda: value(metrics(), "gpupool_agent_replicas", state="running") == 0,
             timeout=60)
        check(agent.stop() == 0, "the agent stops cleanly on SIGTERM", agent.log()[-3000:])
finally:
    for a in agents:
        a.stop()
    if server:
        server.shutdown()
        server.server_close()
    kill_replica_leftovers(tmp)
    shutil.rmtree(tmp, ignore_errors=True)
print("agent_metrics: ok")
