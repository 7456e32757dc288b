"""A whole pool on this machine: `gpupool up` (gpupoold + agents over the mock NVML + real
gpupool-run supervisors and real processes), driven through the API.

- a 2-GPU job sees exactly its two GPU UUIDs, NVLink-connected on the DGX-like node;
- a 2-node gang gets consistent WORLD_SIZE, RANK (one process per GPU), MASTER_ADDR/PORT and a
  hostfile;
- MIG slices are shown to the job as MIG devices (the agent makes the instance the controller
  chose: reused, or created in place of idle ones);
- volumes appear at /data/NAME, read-only where asked;
- cancel kills the job's whole process tree;
- kill -9 of an agent with jobs running: the restarted agent re-attaches, no job restarts, and
  an exit that happened during the outage is recorded;
- logs stream through the controller (also -f, also after the job ended);
- GPU readings and XID events (injected through the mock's control file) reach the node;
- a controller restart: agents reconnect, nothing is lost, jobs keep running;
- `gpupool down` stops everything.
Arguments: the gpupool program (gpupoold, gpupool-agent, gpupool-run beside it).
"""
import glob
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

from pool import Client, alive_marked, check, free_ports, wait, pool_down

gpupool = sys.argv[1]
bindir = os.path.dirname(gpupool)
tmp = tempfile.mkdtemp(prefix="gpupool-e2e.")
pool = os.path.join(tmp, "pool")
mark = os.path.basename(tmp).replace(".", "-")  # tells this run's processes from any other
nap = "sleep %d" % (400 + sum(map(ord, mark)) % 500)  # likewise for a bare child process


def pid_of(name):
    with open(os.path.join(pool, "pids", name + ".pid")) as f:
        return int(f.read())


def stdout_of(job, replica=0):
    paths = glob.glob(os.path.join(pool, "agents", "*", "*", "%d-%d-*" % (job, replica),
                                   "stdout.log"))
    return open(sorted(paths)[-1]).read() if paths else ""


port = free_ports(5)
try:
    # Bad usage: clear errors, exit 2.
    bad = subprocess.run([gpupool, "up", "--data-dir", pool, "--nodes", "no-such-node:2"],
                         capture_output=True, text=True, timeout=30)
    check(bad.returncode == 2 and "inventory" in bad.stderr and "no-such-node" in bad.stderr,
          "gpupool up with an unknown inventory", bad.stderr)
    bad = subprocess.run([os.path.join(bindir, "gpupool-agent"), "--frobnicate"],
                         capture_output=True, text=True, timeout=30)
    check(bad.returncode == 2 and "--frobnicate: unknown flag" in bad.stderr,
          "gpupool-agent with a bad flag", bad.stderr)

    # gpupool-agent discover: what NVML reports, as JSON; a clear error when NVML does not load.
    agent = os.path.join(bindir, "gpupool-agent")
    mock = os.path.join(bindir, "..", "lib", "libgpupool-nvml-mock.so")
    inv = os.path.join(os.path.dirname(__file__), "..", "..", "..", "deploy", "inventories",
                       "pcie-t4.yaml")
    out = subprocess.run([agent, "discover", "--nvml-library", mock], capture_output=True,
                         text=True, timeout=30,
                         env=dict(os.environ, GPUPOOL_NVML_MOCK_INVENTORY=inv))
    doc = json.loads(out.stdout) if out.returncode == 0 else {}
    check([g.get("name") for g in doc.get("gpus", [])] == ["Tesla T4"] * 4,
          "gpupool-agent discover on the T4 inventory", out.stdout, out.stderr)
    bad = subprocess.run([agent, "discover", "--nvml-library", "/nonexistent/libnvidia-ml.so.1"],
                         capture_output=True, text=True, timeout=30)
    check(bad.returncode == 1 and "/nonexistent/libnvidia-ml.so.1" in bad.stderr
          and not bad.stdout, "gpupool-agent discover without NVML", bad.stdout, bad.stderr)
    bad = subprocess.run([agent, "discover", "--all"], capture_output=True, text=True, timeout=30)
    check(bad.returncode == 2 and "--all" in bad.stderr, "gpupool-agent discover --all",
          bad.stderr)

    up = subprocess.run([gpupool, "up", "--data-dir", pool, "--port", str(port), "--nodes",
                         "dgx-a100:2,pcie-t4:1,h100-mig:1"], capture_output=True, text=True,
                        timeout=60)
    check(up.returncode == 0 and "is up" in up.stdout, "gpupool up", up.stdout, up.stderr)
    token = open(os.path.join(pool, "admin.token")).read().strip()
    admin = Client("http://127.0.0.1:%d" % port, token)
    s, nodes = admin.get("/v1/nodes")
    check(s == 200 and len(nodes["items"]) == 4, "four nodes registered", nodes)
    s, d = admin.post("/v1/tenants", {"name": "e2e"})
    check(s == 201, "tenant", s, d)

    def submit(name, cmd, **extra):
        spec = {"name": name, "tenant": "e2e", "command": ["sh", "-c", cmd]}
        spec.update(extra)
        s, d = admin.post("/v1/jobs", spec)
        check(s == 201, "submit " + name, s, d)
        return d["id"]

    def job(ref):
        s, d = admin.get("/v1/jobs/%s" % ref)
        check(s == 200, "get job", s, d)
        return d

    def state_is(ref, states):
        return lambda: job(ref)["state"] in states and job(ref)

    # A gang over both DGX nodes, then a 2-GPU job (the T4 node is left for it).
    gang = submit("gang", 'echo "ws=$WORLD_SIZE rank=$RANK master=$MASTER_ADDR:$MASTER_PORT"; '
                  'cat "$GPUPOOL_HOSTFILE"; sleep 300', resources={"gpus": 8}, replicas=2)
    two = submit("two", 'echo "gpus=$CUDA_VISIBLE_DEVICES"; sleep 300 # two-' + mark,
                 resources={"gpus": 2, "gpu_models": ["Tesla T4"]})
    d = wait("the gang running", state_is("gang", ("Running",)))
    wait("both replicas printed", lambda: "ws=" in stdout_of(gang, 0) and "ws=" in stdout_of(gang, 1))
    lines = [stdout_of(gang, r).splitlines()[0] for r in (0, 1)]
    check(lines[0].startswith("ws=16 rank=0 master=127.0.0.1:") and
          lines[1].startswith("ws=16 rank=8 master=127.0.0.1:") and
          lines[0].split("master=")[1] == lines[1].split("master=")[1],
          "consistent WORLD_SIZE, RANK and MASTER_ADDR (one process per GPU)", lines)
    hosts = stdout_of(gang, 0).splitlines()[1:]
    check(hosts == ["127.0.0.1 slots=16"], "one hostfile line per host (both nodes on 127.0.0.1)",
          hosts)

    d = wait("two running", state_is("two", ("Running",)))
    wait("two printed", lambda: "gpus=" in stdout_of(two))
    seen = stdout_of(two).split("gpus=")[1].split()[0].split(",")
    want = [g["uuid"] for r in d["placement"] for g in r["gpus"]]
    check(sorted(seen) == sorted(want) and len(seen) == 2, "exactly its two GPUs", seen, want)

    # On the DGX node a 2-GPU job gets an NVLink-connected pair (every pair is, there).
    s, n = admin.get("/v1/nodes/dgx-a100-1")
    links = {g["index"]: set(g["nvlink"]) for g in n["gpus"]}
    check(all(links[i] == set(range(8)) - {i} for i in range(8)), "DGX GPUs all NVLinked", links)

    # Logs through the controller from the node's agent; -f follows until the job ends.
    env = dict(os.environ, GPUPOOL_SERVER="http://127.0.0.1:%d" % port, GPUPOOL_TOKEN=token)
    out = subprocess.run([gpupool, "logs", "two"], capture_output=True, text=True, env=env)
    check(out.returncode == 0 and out.stdout.startswith("gpus=GPU-"), "gpupool logs", out.stdout,
          out.stderr)
    submit("talk", "for i in 1 2 3; do echo line$i; sleep 0.4; done; echo oops >&2",
           resources={"gpu_milli": 100, "gpu_memory_mib": 1024})
    wait("talk placed", state_is("talk", ("Scheduled", "Running", "Succeeded")))
    out = subprocess.run([gpupool, "logs", "-f", "talk"], capture_output=True, text=True,
                         env=env, timeout=30)
    check(out.returncode == 0 and out.stdout == "line1\nline2\nline3\n", "logs -f follows to the end",
          out.stdout, out.stderr)
    out = subprocess.run([gpupool, "logs", "--stderr", "talk"], capture_output=True, text=True,
                         env=env)
    check(out.stdout == "oops\n", "stderr of a finished job", out.stdout, out.stderr)
    out = subprocess.run([gpupool, "logs", "--replica", "5", "talk"], capture_output=True,
                         text=True, env=env)
    check(out.returncode == 1 and "replica" in out.stderr, "a replica that does not exist",
          out.stderr)

    # MIG: each slice is a MIG device of its own, made at the placement the controller chose.
    migs = [submit("mig-%d" % k, 'echo "mig=$CUDA_VISIBLE_DEVICES"; sleep 300',
                   resources={"mig_profile": prof})
            for k, prof in enumerate(("1g.10gb", "3g.40gb", "1g.10gb"))]
    seen = []
    for k, jid in enumerate(migs):
        d = wait("mig-%d running" % k, state_is("mig-%d" % k, ("Running",)))
        wait("mig-%d printed" % k, lambda: "mig=" in stdout_of(jid))
        seen.append(stdout_of(jid).split("mig=")[1].split()[0])
        check(d["placement"][0]["node"] == "h100-mig-4", "MIG jobs on the MIG node", d)
    check(all(u.startswith("MIG-") for u in seen) and len(set(seen)) == 3,
          "each MIG job sees one MIG device of its own", seen)
    for k in range(3):
        admin.post("/v1/jobs/mig-%d/cancel" % k)

    # Volumes: registered with the CLI, mounted by the agent at /data/NAME (read-only enforced
    # where the agent runs as root, else links under the job's working directory).
    vol_ro, vol_rw = os.path.join(pool, "vol-ro"), os.path.join(pool, "vol-rw")
    os.makedirs(vol_ro)
    os.makedirs(vol_rw)
    # Jobs run as an unprivileged user in their sandbox: a read-write volume must be writable
    # by it, as on a real node (the operator gives the directory to that user).
    os.chmod(vol_rw, 0o777)
    with open(os.path.join(vol_ro, "labels.txt"), "w") as f:
        f.write("cat\ndog\n")
    for args in (["volume", "create", "imagenet", "--path", vol_ro, "--read-only"],
                 ["volume", "create", "ckpt", "--path", vol_rw]):
        out = subprocess.run([gpupool] + args, capture_output=True, text=True, env=env)
        check(out.returncode == 0, "gpupool " + " ".join(args), out.stdout, out.stderr)
    out = subprocess.run([gpupool, "get", "volumes"], capture_output=True, text=True, env=env)
    check(out.returncode == 0 and "imagenet" in out.stdout and " ro " in out.stdout,
          "gpupool get volumes", out.stdout, out.stderr)
    out = subprocess.run([gpupool, "submit", "--tenant", "e2e", "--name", "vols", "--gpu-milli",
                          "100", "--volume", "imagenet", "--volume", "ckpt", "--", "sh", "-c",
                          'wc -l < $GPUPOOL_DATA_DIR/imagenet/labels.txt; '
                          'echo saved > $GPUPOOL_DATA_DIR/ckpt/step-1 && echo rw-ok; '
                          'touch $GPUPOOL_DATA_DIR/imagenet/x 2>/dev/null && echo ro-broken'],
                         capture_output=True, text=True, env=env)
    check(out.returncode == 0, "submit --volume", out.stdout, out.stderr)
    wait("vols done", state_is("vols", ("Succeeded", "Failed")), timeout=30)
    out = subprocess.run([gpupool, "logs", "vols"], capture_output=True, text=True, env=env)
    check(out.stdout == "2\nrw-ok\n" and open(os.path.join(vol_rw, "step-1")).read() == "saved\n"
          and not os.path.exists(os.path.join(vol_ro, "x")),
          "the job reads the read-only volume, writes the read-write one", out.stdout, out.stderr)
    out = subprocess.run([gpupool, "submit", "--tenant", "e2e", "--name", "vols2", "--volume",
                          "imagenet:rw", "--", "true"], capture_output=True, text=True, env=env)
    check(out.returncode == 1 and "volumes[0]: volume imagenet is read-only" in out.stderr,
          "read-write use of a read-only volume refused", out.stdout, out.stderr)

    # The agent's log endpoint answers the controller only (the node's control token).
    gang_node = job("gang")["placement"][0]["node"]
    agent_addr = admin.get("/v1/nodes/%s" % gang_node)[1]["address"]
    for hdrs in ({}, {"Authorization": "Bearer " + token}):
        req = urllib.request.Request("http://%s/v1/replicas/%d-0-1/logs" % (agent_addr, gang),
                                     headers=hdrs)
        try:
            urllib.request.urlopen(req, timeout=10)
            code = 200
        except urllib.error.HTTPError as e:
            code = e.code
        check(code == 401, "the agent refuses a caller without the control token", hdrs, code)

    # Readings and XIDs reach the controller: an XID injected through the mock's control file.
    with open(os.path.join(pool, "agents", "dgx-a100-1", "nvml-control"), "a") as f:
        f.write("xid 2 31\n")
    g2 = wait("the XID reported", lambda: [g for g in admin.get("/v1/nodes/dgx-a100-1")[1]["gpus"]
                                          if g["index"] == 2 and g["last_xid"] == 31])
    check(g2[0]["xid_errors"] == 1 and "temperature_c" in g2[0]["readings"] and
          "power_w" in g2[0]["readings"], "GPU readings and the XID on the node", g2)

    # Cancel kills the whole process tree (the job's shell and its background child).
    tree = submit("tree", "%s & %s # tree-%s" % (nap, nap, mark), resources={"gpus": 1})
    wait("tree running", state_is("tree", ("Running",)))
    wait("tree's processes", lambda: len(alive_marked("tree-" + mark)) >= 1)
    s, d = admin.post("/v1/jobs/tree/cancel")
    check(s == 200, "cancel", s, d)
    wait("every process of the tree gone", lambda: not alive_marked("^" + nap) and
         not alive_marked("tree-" + mark))

    # kill -9 of an agent: jobs keep running, an exit during the outage is recorded.
    brief = submit("brief", "sleep 3; exit 7", resources={"gpus": 1, "gpu_models": ["Tesla T4"]})
    wait("brief running", state_is("brief", ("Running",)))
    before = job("two")
    agent_pid = pid_of("agent-pcie-t4-3")
    os.kill(agent_pid, signal.SIGKILL)
    time.sleep(4.5)
    check(alive_marked("two-" + mark), "the job outlives its agent")
    env = dict(os.environ, GPUPOOL_NVML_MOCK_INVENTORY=os.path.join(
        pool, "agents", "pcie-t4-3", "inventory.yaml"))
    log = open(os.path.join(pool, "logs", "agent-pcie-t4-3.log"), "ab")
    agent = subprocess.Popen([os.path.join(bindir, "gpupool-agent"), "--server",
                              "http://127.0.0.1:%d" % port, "--join-token-file",
                              os.path.join(pool, "join.token"), "--state-dir",
                              os.path.join(pool, "agents", "pcie-t4-3"), "--name", "pcie-t4-3",
                              "--address", "127.0.0.1:0",
                              "--nvml-library", os.path.join(bindir, "..", "lib",
                                                             "libgpupool-nvml-mock.so")],
                             stdout=log, stderr=log, env=env, start_new_session=True)
    with open(os.path.join(pool, "pids", "agent-pcie-t4-3.pid"), "w") as f:
        f.write("%d\n" % agent.pid)
    deadline = time.time() + 30
    while job("brief")["state"] != "Failed" and time.time() < deadline:
        time.sleep(0.1)
    d = job("brief")
    alog = open(os.path.join(pool, "logs", "agent-pcie-t4-3.log"), errors="replace").read()
    check(d["state"] == "Failed", "brief's exit recorded", d, alog[-4000:])
    check(d["exit_code"] == 7, "the exit code from the outage", d)
    after = job("two")
    check(after["state"] == "Running" and after["restarts"] == 0 and
          after["placement"][0]["epoch"] == before["placement"][0]["epoch"],
          "the running job was re-attached, not restarted", before, after)

    # Controller restart: nothing lost, agents reconnect, jobs keep running.
    snapshot = admin.get("/v1/jobs")[1]["items"]
    ctl = pid_of("gpupoold")
    os.kill(ctl, signal.SIGKILL)
    time.sleep(1)
    clog = open(os.path.join(pool, "logs", "gpupoold.log"), "ab")
    ctl2 = subprocess.Popen([os.path.join(bindir, "gpupoold"), "--data-dir", pool, "--listen",
                             "127.0.0.1:%d" % port], stdout=clog, stderr=clog,
                            start_new_session=True)
    with open(os.path.join(pool, "pids", "gpupoold.pid"), "w") as f:
        f.write("%d\n" % ctl2.pid)
    deadline = time.time() + 15
    while time.time() < deadline:
        try:
            if admin.get("/readyz")[0] == 200:
                break
        except OSError:
            pass
        time.sleep(0.1)
    keep = ("id", "name", "state", "placement")
    now = admin.get("/v1/jobs")[1]["items"]
    check([{k: j[k] for k in keep} for j in now] == [{k: j[k] for k in keep} for j in snapshot],
          "every job as it was", snapshot, now)
    wait("agents heartbeat again", lambda: all(
        n["state"] == "Ready" and n["heartbeat_ms"] > 0 for n in admin.get("/v1/nodes")[1]["items"]))
    check(job("two")["state"] == "Running" and alive_marked("two-" + mark), "still running")
finally:
    down, leftover = pool_down(gpupool, pool, tmp, "two-" + mark)
check(down.returncode == 0, "gpupool down", down.stdout, down.stderr)
check(not leftover, "down stopped every job", leftover)
print("ok")
