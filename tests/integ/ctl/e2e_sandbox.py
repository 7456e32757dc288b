"""Jobs in their sandboxes on a whole pool: `gpupool up` (gpupoold, one agent over the mock NVML,
gpupool-run supervisors, the real podman with storage of the test's own), jobs submitted to the
controller. The pool lives outside /tmp (a sandbox has a /tmp of its own) and is opened to
everyone (0755, tokens 0644), as a careless operator might leave it: what keeps it from the jobs
is the sandbox.

- a job over the host root: its uid is not 0, no capabilities, /usr read-only; it sees neither
  the agent's state directory (its token, other jobs' directories and logs) nor the join token,
  nor what the operator masked (GPUPOOL_MASK: the controller's data, its admin token, the logs);
  it cannot remount its read-only volume read-write;
- kill -9 of the agent: the job's container keeps running; the restarted agent reports it (the
  job stays Running); a cancel removes the container;
- where the controller takes images (job spec `image`), an image job from a local registry runs
  and its output is in its logs, and one whose image cannot be pulled fails with the reason.
Arguments: the gpupool program (gpupoold, gpupool-agent, gpupool-run beside it).
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading

from oci import Registry, Storage, build_image
from pool import (Client, check, free_ports, kill9, open_to_all, pool_down, proc_argv_env,
                  wait)

gpupool = sys.argv[1]
build = os.path.dirname(os.path.dirname(os.path.abspath(gpupool)))
tmp = tempfile.mkdtemp(prefix="gpupool-e2e-sandbox.", dir=build)
os.chmod(tmp, 0o755)
pool = os.path.join(tmp, "pool")
node = "pcie-t4-1"
agent_dir = os.path.join(pool, "agents", node)
port = free_ports(2)
st = Storage()
# the controller's database and admin token (its data directory is the pool's), the logs
masked = [os.path.join(pool, p) for p in ("gpupool.db", "admin.token", "logs")]
env = dict(st.env, GPUPOOL_MASK=":".join(masked))
env.pop("GPUPOOL_RUNTIME", None)


def rdir_of(job):
    d = job["placement"][0] if job.get("placement") else None
    for sub in ("replicas", "finished"):
        for name in os.listdir(os.path.join(agent_dir, sub)) if os.path.isdir(
                os.path.join(agent_dir, sub)) else []:
            if name.startswith("%d-0-" % job["id"]) and (not d or name.endswith("-%d" %
                                                                                 d["epoch"])):
                return os.path.join(agent_dir, sub, name)
    return None


def stdout_of(job):
    d = rdir_of(job)
    try:
        return open(os.path.join(d, "stdout.log")).read() if d else ""
    except OSError:
        return ""


def container_of(job):
    try:
        with open(os.path.join(rdir_of(job), "status.json")) as f:
            return json.load(f)["container"]
    except (OSError, TypeError, ValueError, KeyError):
        return None


try:
    up = subprocess.run([gpupool, "up", "--data-dir", pool, "--port", str(port), "--nodes",
                         "pcie-t4:1"], capture_output=True, text=True, timeout=120, env=env)
    check(up.returncode == 0 and "is up" in up.stdout, "gpupool up", up.stdout, up.stderr)
    token = open(os.path.join(pool, "admin.token")).read().strip()
    admin = Client("http://127.0.0.1:%d" % port, token)
    check(admin.post("/v1/tenants", {"name": "sb"})[0] == 201, "tenant")

    def submit(name, cmd, **extra):
        spec = dict({"name": name, "tenant": "sb", "command": ["sh", "-c", cmd],
                     "resources": {"gpus": 1}}, **extra)
        return admin.post("/v1/jobs", spec)

    def job(ref):
        s, d = admin.get("/v1/jobs/%s" % ref)
        check(s == 200, "get job", s, d)
        return d

    def ended(ref, timeout=60):
        return wait(ref + " ended", lambda: job(ref)["state"] in ("Succeeded", "Failed") and
                    job(ref), timeout)

    # A job that writes where another could look: its output is the agent's to keep.
    s, d = submit("other", "echo other-tenant-secret; exec sleep 1000")
    check(s == 201, "submit other", s, d)
    wait("other running", lambda: "other-tenant-secret" in stdout_of(job("other")))
    other_log = os.path.join(rdir_of(job("other")), "stdout.log")

    vol = os.path.join(tmp, "dataset")
    os.makedirs(vol)
    with open(os.path.join(vol, "labels"), "w") as f:
        f.write("cat\n")
    s, d = admin.post("/v1/volumes", {"name": "dataset", "path": vol, "read_only": True})
    check(s == 201, "volume", s, d)
    open_to_all(pool)
    looks = [("state", os.path.join(agent_dir, "agent.token")),
             ("other", other_log),
             ("join", os.path.join(pool, "join.token"))] + \
        [("mask%d" % i, p if not os.path.isdir(p) else os.path.join(p, os.listdir(p)[0]))
         for i, p in enumerate(masked)]
    check(all(os.access(p, os.R_OK) for _, p in looks), "the files are there to read", looks)
    script = "id -u; grep CapEff /proc/self/status; " + \
        "touch /usr/gpupool-x 2>/dev/null && echo usr-writable || echo usr-readonly; " + \
        "".join("grep -q . %s 2>/dev/null && echo %s-visible || echo %s-hidden; " %
                (p, n, n) for n, p in looks) + \
        "mount -o remount,rw $GPUPOOL_DATA_DIR/dataset 2>/dev/null && echo remounted || " \
        "echo remount-refused; cat $GPUPOOL_DATA_DIR/dataset/labels"
    s, d = submit("peek", script, volumes=["dataset"])
    check(s == 201, "submit peek", s, d)
    d = ended("peek")
    out = stdout_of(d).splitlines()
    check(d["state"] == "Succeeded" and len(out) >= 3, "peek ran", d, out)
    check(out[0] != "0" and out[1].split() == ["CapEff:", "0000000000000000"],
          "not root, no capabilities", out)
    want = ["usr-readonly"] + ["%s-hidden" % n for n, _ in looks] + ["remount-refused", "cat"]
    check(out[2:] == want, "what a job sees of the node", out, want)

    # kill -9 of the agent: the container stays; the restarted agent reports it; cancel.
    name = container_of(job("other"))
    pidfile = os.path.join(pool, "pids", "agent-%s.pid" % node)
    apid = int(open(pidfile).read())
    argv, aenv = proc_argv_env(apid)
    kill9(apid)
    check(name in st.containers(), "the container outlives its agent", st.containers())
    beat = admin.get("/v1/nodes/" + node)[1]["heartbeat_ms"]
    with open(os.path.join(pool, "logs", "agent-%s.log" % node), "ab") as log:
        back = subprocess.Popen(argv, env=aenv, stdout=log, stderr=log, start_new_session=True)
    with open(pidfile, "w") as f:
        f.write("%d\n" % back.pid)
    threading.Thread(target=back.wait, daemon=True).start()
    wait("the restarted agent's heartbeat",
         lambda: admin.get("/v1/nodes/" + node)[1]["heartbeat_ms"] > beat)
    check(job("other")["state"] == "Running" and name in st.containers(),
          "the job still runs in its container", job("other"))
    s, d = admin.post("/v1/jobs/other/cancel")
    check(s == 200, "cancel", s, d)
    wait("the container removed", lambda: name not in st.containers())

    # Images, where the controller takes them.
    with Registry(st) as reg:
        ref = build_image(st, reg, "team/hello:1", files={"/hello": b"hello from an image\n"})
        s, d = submit("img", "cat /hello; id -u", image=ref)
        if s == 400 and "image" in json.dumps(d):
            print("images: the controller takes no job image yet (%s): skipped" %
                  d["error"]["message"])
        else:
            check(s == 201, "submit an image job", s, d)
            d = ended("img", 120)
            out = stdout_of(d).splitlines()
            check(d["state"] == "Succeeded" and out[0] == "hello from an image" and
                  out[1] != "0", "the image job's output", d, out)
            s, d = submit("badimg", "true", image=reg.host + "/team/hello:nope")
            check(s == 201, "submit badimg", s, d)
            d = ended("badimg")
            check(d["state"] == "Failed" and "ImagePullFailed" in d["reason"] and
                  d["restarts"] == 0, "a failed pull fails the job, no retry", d)
finally:
    down, leftover = pool_down(gpupool, pool, tmp, tmp)
    st.close()
    shutil.rmtree(tmp, ignore_errors=True)
check(down.returncode == 0, "gpupool down", down.stdout, down.stderr)
check(not leftover, "down stopped every job", leftover)
print("ok")
