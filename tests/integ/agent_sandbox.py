"""The agent's side of sandboxed jobs, read from what it sends a small fake controller
(ctl/fakectl.py: Python's http.server on 127.0.0.1, a free port) that registers it, answers
heartbeats and long-polls with desired replicas, and records every registration and heartbeat.
Over the mock NVML (PCIe T4 node), with the real podman (storage of the test's own), a real
registry wanting credentials and images built here from busybox-static:

- registration: "runtime" {engine podman, version, oci_runtime, cgroups} as detected; with
  --runtime none, null;
- an image job with registry_auth: reported Running with "phase": "Pulling" and "pull" {image,
  done_bytes, total_bytes} while its image comes (through a slowed proxy), then Running without
  a phase; its output in stdout.log; the password in no file of the replica's directory and not
  in the agent's log; heartbeats list the image ("images": ref, id, size, last use);
- kill -9 of the agent: the container keeps running, the restarted agent reports the replica
  Running again; a replica no longer desired is stopped and its container removed;
- a pull that fails: Failed, exit_code 125, reason "ImagePullFailed: ..." (the registry's);
- kill -9 of a replica's supervisor: the agent reports it Failed and removes its container;
- the image cache past --image-cache-max: the least recently used image no replica uses is
  evicted, the image in use kept.
Arguments: gpupool-agent (gpupool-run beside it), libgpupool-nvml-mock.so, the inventories
directory.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "ctl"))
from fakectl import FakeController  # noqa: E402
from oci import Registry, Storage, Throttle, build_image  # noqa: E402
from pool import check, wait  # noqa: E402

agent_bin, mock, inventories = sys.argv[1:4]
inventory = os.path.join(inventories, "pcie-t4.yaml")
UUID0 = "GPU-c3a1f0e2-51b7-4d9a-8e26-0f4b7a1c9d11"
PASSWORD = "agent-pw-%d" % os.getpid()
tmp = tempfile.mkdtemp(prefix="gpupool-agent-sandbox.")
ctl = FakeController()
token_file = ctl.join_token_file(tmp)
agents = {}


def start_agent(st, node, *extra):
    d = os.path.join(tmp, node)
    os.makedirs(d, exist_ok=True)
    log = open(os.path.join(d, "agent.log"), "a")
    env = dict(st.env, GPUPOOL_NVML_MOCK_INVENTORY=inventory)
    env.pop("GPUPOOL_RUNTIME", None)
    p = subprocess.Popen([agent_bin, "--server", ctl.url, "--join-token-file", token_file,
                          "--state-dir", os.path.join(d, "state"), "--name", node,
                          "--nvml-library", mock, "--heartbeat", "200", "--memory-grace", "0",
                          "--grace", "3"] + list(extra),
                         stdout=log, stderr=log, env=env, start_new_session=True)
    agents[node] = p
    return p


def agent_log(node):
    with open(os.path.join(tmp, node, "agent.log"), errors="replace") as f:
        return f.read()


def replica(job, cmd, image=None, auth=None, epoch=1):
    r = {"job": job, "replica": 0, "epoch": epoch, "name": "j%d" % job, "world_size": 1,
         "restart_count": 0, "cpu_milli": 0, "memory_mib": 0, "tenant": "team-a",
         "gpus": [{"index": 0, "uuid": UUID0, "milli": 1000, "memory_mib": 15360,
                   "mig_start": -1}],
         "spec": {"name": "j%d" % job, "command": ["sh", "-c", cmd]}}
    if image:
        r["image"] = image
        r["image_pull_policy"] = "IfNotPresent"
    if auth:
        r["registry_auth"] = auth
    return r


def report(node, job, since=0):
    """The latest report of job in the heartbeats of node after the first since."""
    for b in reversed(ctl.heartbeats(node)[since:]):
        for r in b.get("replicas", []):
            if r["job"] == job:
                return r
    return None


def rdir(node, job, epoch=1):
    for sub in ("replicas", "finished"):
        p = os.path.join(tmp, node, "state", sub, "%d-0-%d" % (job, epoch))
        if os.path.isdir(p):
            return p
    return None


def container_of(node, job):
    try:
        with open(os.path.join(rdir(node, job), "status.json")) as f:
            return json.load(f)["container"]
    except (OSError, TypeError, ValueError, KeyError):
        return None


def stop_agent(node, sig=signal.SIGTERM):
    p = agents.pop(node)
    p.send_signal(sig)
    p.wait(timeout=30)


def registration(st):
    start_agent(st, "bare", "--runtime", "none")
    reg = wait("bare registered", lambda: ctl.registered("bare"))[-1]
    check("runtime" in reg and reg["runtime"] is None, "--runtime none: runtime null", reg)
    stop_agent("bare")


def image_job(st):
    with Registry(st, users={"alice": PASSWORD}) as reg:
        creds = ("alice", PASSWORD)
        ref = build_image(st, reg, "team/train:1", files={"/train.sh": b"echo training\n"},
                          extra_bytes=8 << 20, creds=creds)
        small = build_image(st, reg, "team/small:1", creds=creds)
        auth = {"registry": reg.host, "username": "alice", "password": PASSWORD}
        start_agent(st, "n1", "--image-cache-max", str(6 << 20))
        rt = wait("n1 registered", lambda: ctl.registered("n1"))[-1].get("runtime")
        check(rt and rt["engine"] == "podman" and rt["version"] and
              rt["oci_runtime"] in ("runc", "crun") and rt["cgroups"] in ("v1", "hybrid", "v2"),
              "registration: the runtime", rt)

        # Through a slowed proxy, so that the pull is seen under way.
        with Throttle(st, reg.host, rate=2 << 20) as slow:
            via = ref.replace(reg.host, slow.host)
            slow_auth = dict(auth, registry=slow.host)
            ctl.set("n1", [replica(1, "sh /train.sh; exec sleep 1000", via, slow_auth)])
            pulling = wait("a Pulling report", lambda: (lambda r: r if r and
                           r.get("phase") == "Pulling" and r["pull"]["total_bytes"] > 0 and
                           0 < r["pull"]["done_bytes"] < r["pull"]["total_bytes"] else None)(
                report("n1", 1)), timeout=60)
            check(pulling["state"] == "Running" and pulling["pull"]["image"] == via,
                  "Pulling: state Running, the image", pulling)
            r = wait("Running after the pull", lambda: (lambda r: r if r and "phase" not in r
                     and r["state"] == "Running" else None)(report("n1", 1)), timeout=120)
        d = rdir("n1", 1)
        wait("the job's output", lambda: open(os.path.join(d, "stdout.log")).read() ==
             "training\n")
        leaked = [f for f in os.listdir(d) if os.path.isfile(os.path.join(d, f)) and
                  PASSWORD.encode() in open(os.path.join(d, f), "rb").read()]
        check(not leaked and PASSWORD not in agent_log("n1"),
              "the password in no file of the replica's directory, nor in the agent's log",
              leaked)
        spec = json.load(open(os.path.join(d, "spec.json")))
        check("registry_auth" not in spec and spec["image"] == via, "spec.json", spec)
        images = wait("images in a heartbeat", lambda: (ctl.heartbeats("n1") or [{}])[-1]
                      .get("images"))
        mine = [i for i in images if i["ref"] == via]
        check(mine and mine[0]["id"].startswith("sha256:") and
              mine[0]["size_bytes"] >= 8 << 20, "the image in the heartbeat", images)

        # kill -9 of the agent: the job's container keeps running; the new agent reports it.
        name = container_of("n1", 1)
        stop_agent("n1", signal.SIGKILL)
        time.sleep(0.5)
        check(name in st.containers(), "the container outlives its agent", st.containers())
        since = len(ctl.heartbeats("n1"))
        start_agent(st, "n1", "--image-cache-max", str(6 << 20))
        r = wait("reported again", lambda: report("n1", 1, since))
        check(r["state"] == "Running", "the restarted agent reports the replica Running", r)

        # A second image job; the first is no longer desired: stopped, its container removed;
        # the cache (cap 6 MiB) evicts the big image, unused now, and keeps the small one.
        ctl.set("n1", [replica(2, "exec sleep 1000", small, auth)])
        wait("the first container removed", lambda: name not in st.containers(), timeout=60)
        wait("job 2 running", lambda: (report("n1", 2) or {}).get("state") == "Running" and
             "phase" not in report("n1", 2), timeout=60)
        wait("the unused image evicted", lambda: not st.exists(via), timeout=60)
        check(st.exists(small), "the image in use is kept")
        wait("the heartbeat's images follow", lambda: [i["ref"] for i in
             (ctl.heartbeats("n1") or [{}])[-1].get("images", [])] == [small], timeout=60)

        # A failed pull: Failed with 125 and the registry's reason.
        ctl.set("n1", [replica(2, "exec sleep 1000", small, auth),
                       replica(3, "true", reg.host + "/team/train:nope", auth)])
        r = wait("the failed pull reported", lambda: (lambda r: r if r and
                 r["state"] == "Failed" else None)(report("n1", 3)), timeout=60)
        check(r["exit_code"] == 125 and r["reason"].startswith("ImagePullFailed: ") and
              "manifest unknown" in r["reason"], "ImagePullFailed", r)

        # kill -9 of job 2's supervisor: lost; reported Failed; its container removed.
        name2 = container_of("n1", 2)
        with open(os.path.join(rdir("n1", 2), "supervisor.pid")) as f:
            os.kill(int(f.read().split()[0]), signal.SIGKILL)
        r = wait("the lost replica reported", lambda: (lambda r: r if r and
                 r["state"] == "Failed" else None)(report("n1", 2)), timeout=60)
        wait("the lost replica's container removed", lambda: name2 not in st.containers(),
             timeout=60)
        ctl.set("n1", [])
        stop_agent("n1")


st = Storage()
try:
    registration(st)
    image_job(st)
    print("ok")
finally:
    for p in agents.values():
        p.kill()
        p.wait()
    st.close()
    ctl.close()
    shutil.rmtree(tmp, ignore_errors=True)
