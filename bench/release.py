#!/usr/bin/env python3
"""Release -> running: how long a pool takes from the moment held-back work is let go until all
of it runs, as the API shows it. Called by bench/release.sh, which documents it.

A local pool started as `gpupool up` starts one (the production programs: gpupoold and one
gpupool-agent per node over the mock NVML, real gpupool-run supervisors and processes) of --nodes
DGX A100 nodes (8 GPUs each), with the agents' defaults (a heartbeat every second) except that
they run jobs as host processes (--runtime none; `gpupool up` would sandbox them in podman).
Each run submits --jobs one-GPU jobs (`sleep 3600`, no image) for a tenant whose GPU quota is 0,
so all wait (allow_unschedulable). Then one PUT of the tenant lifts
the quota, and the clock starts: the run records when every job had left Pending (placed by the
scheduler), when the first and the last were Running (the agent started the replica and
reported it), polling GET /v1/jobs every 20 ms, and how many heartbeats the controller answered
meanwhile. The jobs are cancelled and the quota set to 0 again; the next run starts once no GPU
is held any more.

Writes the raw results as JSON (--results); bench/release_report.py writes the report.
"""
import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchinfo  # noqa: E402

TENANT = "bench"


def call(base, token, method, path, body=None, timeout=30):
    data = json.dumps(body).encode() if body is not None else None
    hdrs = {"Authorization": "Bearer " + token}
    if data is not None:
        hdrs["Content-Type"] = "application/json"
    req = urllib.request.Request(base + path, data=data, method=method, headers=hdrs)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            status, text = r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        status, text = e.code, e.read().decode()
    try:
        return status, json.loads(text) if text else None
    except ValueError:
        return status, text


def must(what, status, doc, ok=(200, 201)):
    if status not in ok:
        sys.exit("release: %s: %s %s" % (what, status, json.dumps(doc)[:500]))
    return doc


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def jobs(base, token, prefix):
    """name -> state of this run's jobs."""
    out, after = {}, None
    while True:
        path = "/v1/jobs?limit=1000" + ("&after=%s" % after if after else "")
        doc = must("list jobs", *call(base, token, "GET", path))
        for j in doc["items"]:
            if j["name"].startswith(prefix):
                out[j["name"]] = j["state"]
        after = doc.get("next")
        if not after:
            return out


def heartbeats(base, admin):
    s, text = call(base, admin, "GET", "/metrics")
    n = 0
    for line in (text or "").splitlines():
        if (line.startswith("gpupool_http_request_duration_seconds_count{") and
                'route="/v1/nodes/{node}/heartbeat"' in line):
            n += int(float(line.rsplit(" ", 1)[1]))
    return n


def set_quota(base, admin, gpus):
    must("quota %d" % gpus, *call(base, admin, "PUT", "/v1/tenants/" + TENANT,
                                  {"quota": {"gpus": gpus}}))


def gpus_free(base, admin):
    """Whether no GPU of the pool is held (the previous run's replicas are all gone)."""
    doc = must("nodes", *call(base, admin, "GET", "/v1/nodes"))
    return all(g.get("allocated_milli", 0) == 0 for n in doc["items"] for g in n["gpus"])


def one_run(base, admin, user, run, njobs, timeout):
    prefix = "r%d-" % run
    deadline = time.monotonic() + 60
    while not gpus_free(base, admin) and time.monotonic() < deadline:
        time.sleep(0.2)
    for i in range(njobs):
        spec = {"name": "%s%d" % (prefix, i), "command": ["sleep", "3600"],
                "resources": {"gpus": 1}, "allow_unschedulable": True}
        must("submit", *call(base, user, "POST", "/v1/jobs", spec))
    time.sleep(1.0)  # cycles run: every job stays Pending
    states = jobs(base, user, prefix)
    if any(s != "Pending" for s in states.values()) or len(states) != njobs:
        sys.exit("release: the jobs are not all held back: %s" % states)
    beats0 = heartbeats(base, admin)
    t0 = time.monotonic()
    set_quota(base, admin, njobs)
    placed = first = last = None
    while time.monotonic() - t0 < timeout:
        states = jobs(base, user, prefix)
        now = time.monotonic() - t0
        running = sum(1 for s in states.values() if s == "Running")
        if placed is None and all(s != "Pending" for s in states.values()):
            placed = now
        if first is None and running > 0:
            first = now
        if running == njobs:
            last = now
            break
        time.sleep(0.02)
    beats = heartbeats(base, admin) - beats0
    counts = {}
    for st in states.values():
        counts[st] = counts.get(st, 0) + 1
    for name in states:
        call(base, user, "POST", "/v1/jobs/%s/cancel" % name)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        states = jobs(base, user, prefix)
        if all(s in ("Cancelled", "Succeeded", "Failed") for s in states.values()):
            break
        time.sleep(0.2)
    set_quota(base, admin, 0)
    return {"run": run, "placed_s": placed, "first_running_s": first, "all_running_s": last,
            "heartbeats": beats, "states_at_end": counts}


def node_inventory(src, dst, node):
    """The inventory with its GPU UUIDs made the node's own (as gpupool up does)."""
    with open(src) as f:
        text = f.read()
    with open(dst, "w") as f:
        f.write(text.replace("uuid: GPU-", "uuid: GPU-%s-" % node))


def start_pool(a, tmp, port):
    """gpupoold and one agent per node, as gpupool up starts them, with the agents running jobs
    as host processes (--runtime none). Returns the processes and the admin token."""
    data = os.path.join(tmp, "data")
    procs = []
    log = open(os.path.join(tmp, "gpupoold.log"), "w")
    procs.append(subprocess.Popen([os.path.join(a.bin, "gpupoold"), "--data-dir", data,
                                   "--listen", "127.0.0.1:%d" % port, "--api-rate-limit", "0"],
                                  stdout=log, stderr=log))
    deadline = time.time() + 30
    while not os.path.exists(os.path.join(data, "join.token")) and time.time() < deadline:
        time.sleep(0.1)
    time.sleep(0.5)
    inventories = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "deploy",
                               "inventories")
    mock = os.path.join(a.bin, "..", "lib", "libgpupool-nvml-mock.so")
    for i in range(a.nodes):
        node = "dgx-%02d" % i
        ndir = os.path.join(tmp, node)
        os.makedirs(ndir)
        inv = os.path.join(ndir, "inventory.yaml")
        node_inventory(os.path.join(inventories, "dgx-a100.yaml"), inv, node)
        env = dict(os.environ, GPUPOOL_NVML_MOCK_INVENTORY=inv,
                   GPUPOOL_NVML_MOCK_CONTROL=os.path.join(ndir, "nvml-control"))
        alog = open(os.path.join(ndir, "agent.log"), "w")
        procs.append(subprocess.Popen(
            [os.path.join(a.bin, "gpupool-agent"), "--server", "http://127.0.0.1:%d" % port,
             "--join-token-file", os.path.join(data, "join.token"), "--state-dir",
             os.path.join(ndir, "state"), "--name", node, "--address", "127.0.0.1:0",
             "--nvml-library", mock, "--runtime", "none"], stdout=alog, stderr=alog, env=env))
    return procs, open(os.path.join(data, "admin.token")).read().strip()


def stop_pool(procs, tmp):
    """Stops the agents and gpupoold, then any process still running in the pool's directory
    (a replica whose cancel did not get through)."""
    for p in procs[1:] + procs[:1]:
        p.terminate()
        try:
            p.wait(20)
        except subprocess.TimeoutExpired:
            p.kill()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            if os.readlink("/proc/%s/cwd" % pid).startswith(tmp):
                os.kill(int(pid), 9)
        except OSError:
            pass


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--results", required=True)
    ap.add_argument("--nodes", type=int, default=16)
    ap.add_argument("--jobs", type=int, default=128)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--timeout", type=float, default=60)
    a = ap.parse_args()
    machine = benchinfo.machine()
    tmp = os.path.realpath(tempfile.mkdtemp(prefix="gpupool-release."))
    port = free_port()
    base = "http://127.0.0.1:%d" % port
    t_start = time.time()
    runs = []
    procs = []
    try:
        procs, admin = start_pool(a, tmp, port)
        deadline = time.time() + 60
        while time.time() < deadline:
            s, d = call(base, admin, "GET", "/v1/nodes")
            ready = [n for n in (d or {}).get("items", []) if n.get("state") == "Ready"]
            if s == 200 and len(ready) == a.nodes:
                break
            time.sleep(0.2)
        else:
            sys.exit("release: the %d nodes are not all Ready" % a.nodes)
        must("tenant", *call(base, admin, "POST", "/v1/tenants",
                             {"name": TENANT, "quota": {"gpus": 0}}))
        user = must("token", *call(base, admin, "POST", "/v1/tokens",
                                   {"name": "bench", "role": "user", "tenant": TENANT}))["token"]
        for r in range(1, a.runs + 1):
            res = one_run(base, admin, user, r, a.jobs, a.timeout)
            print("release run=%d placed=%s first=%s all=%s heartbeats=%d states=%s" %
                  (r, res["placed_s"], res["first_running_s"], res["all_running_s"],
                   res["heartbeats"], res["states_at_end"]), file=sys.stderr)
            runs.append(res)
    finally:
        stop_pool(procs, tmp)
        shutil.rmtree(tmp, ignore_errors=True)
    machine["load_end"] = os.getloadavg()
    out = {"machine": machine, "args": vars(a), "seconds": time.time() - t_start,
           "command": "bench/release.sh --nodes %d --jobs %d --runs %d" % (a.nodes, a.jobs,
                                                                           a.runs),
           "runs": runs}
    with open(a.results, "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
