"""Faults end to end: `gpupool up` with two mock nodes, real agents, supervisors and processes.

- a fatal XID (48, injected through the mock's control file) on the GPU of a running job: the
  GPU is drained, the job's process is stopped and the job runs again on another GPU with
  GPUPOOL_RESTART_COUNT=1 and the same GPUPOOL_CHECKPOINT_DIR, where it finds what it saved;
- an agent killed with -9: after nodes.lost_timeout its job runs again on the other node
  (GPUPOOL_RESTART_COUNT=2, same checkpoint directory); when the agent comes back it stops the
  superseded replica's process, and only then does its node take work again;
- an XID seen while the controller is down is delivered (once) when it is back;
- operators return the drained GPU with `gpupool nodes gpu-undrain`, and take one out with
  `gpupool nodes gpu-drain`.
Arguments: the gpupool program (gpupoold, gpupool-agent, gpupool-run beside it).
"""
import glob
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

from pool import Client, check, free_ports, job_processes, mock_control, pool_down, wait

gpupool = sys.argv[1]
tmp = tempfile.mkdtemp(prefix="gpupool-faults.")
pool = os.path.join(tmp, "pool")
mark = os.path.basename(tmp).replace(".", "-")
nap = "sleep %d" % (400 + sum(map(ord, mark)) % 500)
nodes = ("pcie-t4-1", "pcie-t4-2")


def control(node, line):
    mock_control(pool, node, line)


def stdout_of(node, job, epoch):
    paths = glob.glob(os.path.join(pool, "agents", node, "*", "%d-0-%d" % (job, epoch),
                                   "stdout.log"))
    return open(paths[0]).read() if paths else ""


port = free_ports(3)
env = dict(os.environ, GPUPOOL_HEARTBEAT_MS="500", GPUPOOL_NODES_HEARTBEAT_TIMEOUT="2s",
           GPUPOOL_NODES_LOST_TIMEOUT="3s")
script = ('echo "restart=$GPUPOOL_RESTART_COUNT dir=$GPUPOOL_CHECKPOINT_DIR '
          'gpus=$CUDA_VISIBLE_DEVICES"; '
          'if [ -f "$GPUPOOL_CHECKPOINT_DIR/step" ]; then '
          'echo "resumed from $(cat "$GPUPOOL_CHECKPOINT_DIR/step")"; fi; '
          'echo $((41 + GPUPOOL_RESTART_COUNT)) > "$GPUPOOL_CHECKPOINT_DIR/step"; '
          '%s & wait # train-%s' % (nap, mark))
try:
    up = subprocess.run([gpupool, "up", "--data-dir", pool, "--port", str(port), "--nodes",
                         "pcie-t4:2"], capture_output=True, text=True, timeout=60, env=env)
    check(up.returncode == 0 and "is up" in up.stdout, "gpupool up", up.stdout, up.stderr)
    token = open(os.path.join(pool, "admin.token")).read().strip()
    admin = Client("http://127.0.0.1:%d" % port, token)
    cli_env = dict(os.environ, GPUPOOL_SERVER="http://127.0.0.1:%d" % port, GPUPOOL_TOKEN=token)
    s, d = admin.post("/v1/tenants", {"name": "ft"})
    check(s == 201, "tenant", s, d)
    s, d = admin.post("/v1/jobs", {"name": "train", "tenant": "ft",
                                   "command": ["sh", "-c", script], "resources": {"gpus": 1},
                                   "restart_policy": "on-failure"})
    check(s == 201, "submit", s, d)
    jid = d["id"]

    def job():
        s, d = admin.get("/v1/jobs/%d" % jid)
        check(s == 200, "get job", s, d)
        return d

    def running(restarts, timeout=30):
        return wait("the job running after %d restarts" % restarts,
                    lambda: (lambda j: j if j["state"] == "Running" and
                             j["restarts"] == restarts else None)(job()), timeout)

    j = running(0)
    n0, g0, e0 = j["placement"][0]["node"], j["placement"][0]["gpus"][0]["index"], \
        j["placement"][0]["epoch"]
    ckpt = os.path.join(pool, "checkpoints", "ft", str(jid))
    out = wait("the first run's output", lambda: stdout_of(n0, jid, e0))
    # The job's checkpoint directory (ckpt on the host) is at /gpupool/checkpoint in its sandbox.
    check("restart=0 dir=/gpupool/checkpoint " in out and "resumed" not in out, "the first run",
          out)
    wait("the first checkpoint", lambda: os.path.exists(os.path.join(ckpt, "step")))

    # ---- a fatal XID ----
    t_fault = time.time()
    control(n0, "xid %d 48" % g0)
    j = running(1)
    t_back = time.time()
    n1, g1, e1 = j["placement"][0]["node"], j["placement"][0]["gpus"][0]["index"], \
        j["placement"][0]["epoch"]
    check((n1, g1) != (n0, g0), "restarted on another GPU", j)
    out = wait("the second run's output", lambda: "resumed" in stdout_of(n1, jid, e1) and
               stdout_of(n1, jid, e1))
    check("restart=1 dir=/gpupool/checkpoint " in out and "resumed from 41" in out,
          "GPUPOOL_RESTART_COUNT=1, the same checkpoint directory, and its checkpoint", out)
    s, nd = admin.get("/v1/nodes/" + n0)
    check(nd["gpus"][g0]["drained"]["reason"].startswith("XID 48"), "the GPU is drained", nd)
    wait("the old placement's process gone", lambda: len(job_processes("train-" + mark)) == 1)
    print("fault to running again: %.1f s" % (t_back - t_fault))

    # ---- the agent of its node killed ----
    pidfile = os.path.join(pool, "pids", "agent-%s.pid" % n1)
    apid = int(open(pidfile).read())
    argv = open("/proc/%d/cmdline" % apid, "rb").read().split(b"\0")[:-1]
    aenv = dict(x.split(b"=", 1) for x in open("/proc/%d/environ" % apid, "rb").read()
                .split(b"\0") if b"=" in x)
    os.kill(apid, signal.SIGKILL)
    old = [str(p) for p in job_processes("train-" + mark)]
    j = running(2, 40)
    n2, e2 = j["placement"][0]["node"], j["placement"][0]["epoch"]
    check(n2 != n1, "restarted on the other node", j)
    out = wait("the third run's output", lambda: "resumed" in stdout_of(n2, jid, e2) and
               stdout_of(n2, jid, e2))
    check("restart=2 dir=/gpupool/checkpoint " in out and "resumed from 42" in out,
          "GPUPOOL_RESTART_COUNT=2 and the latest checkpoint", out)
    s, nd = admin.get("/v1/nodes/" + n1)
    check(nd["state"] == "NotReady" and nd["fenced"] and not nd["schedulable"],
          "the lost node is fenced", nd)
    check(all(os.path.exists("/proc/" + p) for p in old),
          "the superseded replica still runs on the lost node while its agent is away", old)
    log = open(os.path.join(pool, "logs", "agent-%s.log" % n1), "ab")
    back = subprocess.Popen(argv, env=aenv, stdout=log, stderr=log, start_new_session=True)
    with open(pidfile, "w") as f:  # so that gpupool down stops it
        f.write("%d\n" % back.pid)
    threading.Thread(target=back.wait, daemon=True).start()  # reaped: down sees it end
    wait("the superseded replica stopped", lambda: not any(
        os.path.exists("/proc/" + p) for p in old), 30)
    wait("the node back in service", lambda: admin.get("/v1/nodes/" + n1)[1]["schedulable"], 30)
    check(job()["state"] == "Running" and job()["restarts"] == 2, "the job kept running")

    # ---- an XID while the controller is down reaches it once it is back ----
    cpid = int(open(os.path.join(pool, "pids", "gpupoold.pid")).read())
    cargv = open("/proc/%d/cmdline" % cpid, "rb").read().split(b"\0")[:-1]
    cenv = dict(x.split(b"=", 1) for x in open("/proc/%d/environ" % cpid, "rb").read()
                .split(b"\0") if b"=" in x)
    os.kill(cpid, signal.SIGKILL)
    control(n0, "xid 2 48")
    time.sleep(1.5)  # heartbeats fail meanwhile
    clog = open(os.path.join(pool, "logs", "gpupoold.log"), "ab")
    ctl = subprocess.Popen(cargv, env=cenv, stdout=clog, stderr=clog, start_new_session=True)
    with open(os.path.join(pool, "pids", "gpupoold.pid"), "w") as f:
        f.write("%d\n" % ctl.pid)
    threading.Thread(target=ctl.wait, daemon=True).start()
    def drained_gpu2():
        try:
            s, nd = admin.get("/v1/nodes/" + n0)
        except OSError:  # not listening yet
            return None
        return nd if s == 200 and "drained" in nd["gpus"][2] else None

    nd = wait("the XID sent while the controller was down", drained_gpu2, 30)
    check(nd["gpus"][2]["drained"]["reason"].startswith("XID 48") and
          nd["gpus"][2]["xid_errors"] == 1, "delivered once, and acted on", nd["gpus"][2])

    # ---- operators ----
    r = subprocess.run([gpupool, "nodes", "gpu-undrain", n0, str(g0)], capture_output=True,
                       text=True, env=cli_env)
    check(r.returncode == 0 and "back in service" in r.stdout, "gpu-undrain", r.stdout, r.stderr)
    check("drained" not in admin.get("/v1/nodes/" + n0)[1]["gpus"][g0], "undrained")
    r = subprocess.run([gpupool, "nodes", "gpu-drain", n0, "1", "--reason", "fan noise"],
                       capture_output=True, text=True, env=cli_env)
    check(r.returncode == 0, "gpu-drain", r.stdout, r.stderr)
    check(admin.get("/v1/nodes/" + n0)[1]["gpus"][1]["drained"]["reason"] ==
          "drained by admin: fan noise", "drained with the reason")
    r = subprocess.run([gpupool, "nodes", "gpu-drain", n0, "99"], capture_output=True, text=True,
                       env=cli_env)
    check(r.returncode == 2 and "GPU 99" in r.stderr, "a bad GPU number", r.stderr)
    r = subprocess.run([gpupool, "nodes", "gpu-drain", "no-such-node", "0"], capture_output=True,
                       text=True, env=cli_env)
    check(r.returncode != 0 and "no-such-node" in r.stderr, "an unknown node", r.stderr)
finally:
    down, leftover = pool_down(gpupool, pool, tmp, mark)
check(down.returncode == 0, "gpupool down", down.stdout, down.stderr)
check(not leftover, "down stopped every job", leftover)
print("ok")
