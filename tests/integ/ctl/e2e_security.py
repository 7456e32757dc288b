"""The attacks on a shared node replayed end to end: two tenants' jobs on one node of a real pool, and
each attack of tenant A's job on tenant B's must fail.

The pool: `gpupool up` (gpupoold, one agent over the mock NVML with two GPUs whose device nodes
are made with mknod, gpupool-run supervisors, the real podman with storage of the test's own),
started in a private mount namespace whose /etc/cdi the agent publishes its CDI spec to (the
host's /etc is not touched), so that each container gets exactly its GPU. The pool lives under
/var/lib/gpupool-tests, outside /tmp (a sandbox has a /tmp of its own: a pool there would be out
of a job's sight whatever the sandbox did), and is opened to everyone (directories 0755, files
0644: tokens included), as a careless operator might leave it, except the checkpoints, left as
gpupool-run makes them; the operator masks the controller's own files (GPUPOOL_MASK: its
database, admin token and logs), as docs/operations.md says. What keeps the rest from the jobs
is the sandbox.

Tenant B's victim job has a secret in its environment (DB_PASSWORD), writes a secret to its
stdout, its working directory and its checkpoint, reads a read-only volume and holds GPU 0.
Tenant A's job (host python3 over the host root: e2e_security_attack.py) then tries, on the same
node: B's stdout, spec, work directory and checkpoint at their host paths, every file of the
pool; the admin, join, agent and metrics tokens; /proc for B's environment; ptrace, kill 0 and
kill -9 of B's host pids; a heartbeat marking B Failed with exit code 99 with its own user token
and any token it found; B's job, logs and events, a cancel, and the node's desired replicas
(B's spec) with its token; the agent's /metrics and log endpoint; remounting the read-only
volume read-write and writing to it, in the sandbox and at its host path; a user namespace of
its own (`unshare -Urm`) to mount over it; every GPU node (CUDA_VISIBLE_DEVICES set to all, the
container's /dev and the host's nodes) and a node it makes itself; status.json and child.pid
saying "exited 0" wherever its replica directory could be.

Checked: every attempt failed (what each would have seen before is said where it is checked);
none of B's secrets, no token and no other tenant's job name is in A's output; B still runs
(the same processes), its volume and checkpoint are unchanged; after two more heartbeats both
jobs are Running, each with its GPU held, and B's events have no exit code 99; A's and B's
processes run under different host uids (per-tenant host ids), B's checkpoint belongs to B's.

The libgpushare bypasses in a sandbox (an `env -i` child, dlvsym, dlmopen, RTLD_DEEPBIND, the
region rewritten or broken), over the host root and inside an image, are integ_run_sandbox_share's;
the shim_* tests try them in-process.

Attacks that still succeed are listed in FINDINGS with why: they are reported, not failed
(XFAIL), until they are fixed; one that stops succeeding fails the test (XPASS) so the list is
kept true.

Skipped (77) without root, podman, runc or crun, unshare or /usr/bin/python3, except under CI.
Arguments: the gpupool program (gpupoold, gpupool-agent, gpupool-run beside it).
"""
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile

from oci import Storage, fake_gpu_nodes, free_char_majors, gpu_inventory, private_etc_cdi
from pool import Client, check, free_ports, open_to_all, pool_down, same_process, wait

gpupool = sys.argv[1]
HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON = "/usr/bin/python3"  # the host's, which a job over the host root runs
GPUS = ["GPU-5ec0a1b2-0000-4000-8000-00000000e500", "GPU-5ec0a1b2-0000-4000-8000-00000000e501"]

# Attacks that still succeed: name -> why (reported as XFAIL; fix, then remove the entry).
FINDINGS = {}


def skip(why):
    print("e2e_security: skipped:", why)
    sys.exit(1 if os.environ.get("CI") == "true" else 77)


if os.geteuid() != 0:
    skip("needs root (mknod, rootful podman, a mount namespace)")
for tool in ("podman", "unshare", PYTHON):
    if not shutil.which(tool):
        skip(tool + " not found")
if not (shutil.which("runc") or shutil.which("crun")):
    skip("runc or crun not found")

os.makedirs("/var/lib/gpupool-tests", mode=0o755, exist_ok=True)
base = tempfile.mkdtemp(prefix="e2e-security.", dir="/var/lib/gpupool-tests")
os.chmod(base, 0o755)
pool = os.path.join(base, "pool")
node = "sec-1"  # from the inventory's file name
agent_dir = os.path.join(pool, "agents", node)
dev = os.path.join(base, "dev")
mark = secrets.token_hex(4)
SECRET = {"password": "pw-" + secrets.token_hex(12), "stdout": "out-" + secrets.token_hex(12),
          "work": "work-" + secrets.token_hex(12), "checkpoint": "ckpt-" + secrets.token_hex(12),
          "job_name": "victim-" + mark}


def replica_dir(job_id, epoch):
    return os.path.join(agent_dir, "replicas", "%d-0-%d" % (job_id, epoch))


def output_of(job_id, epoch, stream="stdout"):
    try:
        with open(os.path.join(replica_dir(job_id, epoch), stream + ".log"),
                  errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def pids_with(text):
    """(pid, start) of the host's processes whose environment holds text."""
    found = []
    for d in os.listdir("/proc"):
        try:
            with open("/proc/%s/environ" % d, "rb") as f:
                if text.encode() not in f.read():
                    continue
            with open("/proc/%s/stat" % d) as f:
                found.append((int(d), int(f.read().rsplit(")", 1)[1].split()[19])))
        except (OSError, ValueError):
            continue
    return found


def host_uids(pids):
    """The real host uids of these processes."""
    uids = set()
    for p in pids:
        try:
            with open("/proc/%d/status" % p) as f:
                uids.update(int(ln.split()[1]) for ln in f if ln.startswith("Uid:"))
        except OSError:
            pass
    return sorted(uids)


def holders(admin, index):
    s, n = admin.get("/v1/nodes/" + node)
    check(s == 200, "get node", s, n)
    return [h.get("job") for g in n["gpus"] if g["index"] == index for h in g.get("holders", [])]


failures = []  # attacks that succeeded, and findings that no longer do: all are reported


def verdicts(results, name, why_failed):
    """The attempts named name (at least one): each must have failed, unless FINDINGS lists it.
    why_failed says what the defence is."""
    tries = results.get(name, [])
    check(tries, "attack %s was tried" % name, sorted(results))
    got = [d for ok, d in tries if ok]
    if name in FINDINGS and got:
        print("XFAIL %s: %s (%s)" % (name, FINDINGS[name], got[0][:200]))
    elif name in FINDINGS:
        print("XPASS %s: it fails now: remove it from FINDINGS" % name)
        failures.append(name + ": fails now, but FINDINGS lists it")
    elif got:
        print("FAIL %s: succeeded despite %s: %s" % (name, why_failed, got[0][:300]))
        failures.append(name + ": succeeded")
    else:
        print("ok %s: %s" % (name, tries[0][1][:120]))


st = Storage()
try:
    major = free_char_majors(1)[0]
    fake_gpu_nodes(dev, major, len(GPUS))
    inventory = os.path.join(base, "sec.yaml")
    gpu_inventory(inventory, GPUS)
    vol = os.path.join(base, "dataset")  # root's, 0755, as an operator makes a dataset
    os.makedirs(vol)
    with open(os.path.join(vol, "labels"), "w") as f:
        f.write("cat\n")

    port = free_ports(2)
    env = dict(st.env, GPUPOOL_DEV_ROOT=dev, GPUPOOL_CDI_PUBLISH="/etc/cdi",
               GPUPOOL_MASK=":".join(os.path.join(pool, p) for p in ("gpupool.db", "admin.token",
                                                                      "logs")))
    env.pop("GPUPOOL_RUNTIME", None)
    up = subprocess.run(private_etc_cdi(base, "etc") +
                        [gpupool, "up", "--data-dir", pool, "--port", str(port), "--nodes",
                         inventory + ":1"], capture_output=True, text=True, timeout=120, env=env)
    check(up.returncode == 0 and "is up" in up.stdout, "gpupool up", up.stdout, up.stderr)
    url = "http://127.0.0.1:%d" % port
    tokens = {n: open(os.path.join(pool, f)).read().strip() for n, f in (
        ("admin_token", "admin.token"), ("join_token", "join.token"),
        ("metrics_token", "scrape.token"), ("agent_token", "agents/%s/agent.token" % node))}
    admin = Client(url, tokens["admin_token"])
    for t in ("a", "b"):
        check(admin.post("/v1/tenants", {"name": t})[0] == 201, "tenant " + t)
    users = {}
    for t in ("a", "b"):
        s, d = admin.post("/v1/tokens", {"name": "user-" + t, "role": "user", "tenant": t})
        check(s == 201, "user token of " + t, s, d)
        users[t] = Client(url, d["token"])
    s, d = admin.post("/v1/volumes", {"name": "dataset", "path": vol, "read_only": True})
    check(s == 201, "volume", s, d)

    # ---- B's victim ----
    victim = ("echo %(stdout)s; echo %(work)s > notes; echo %(checkpoint)s > "
              "$GPUPOOL_CHECKPOINT_DIR/ckpt; cat $GPUPOOL_DATA_DIR/dataset/labels; "
              "echo b-ready; exec sleep 1000" % SECRET)
    s, d = users["b"].post("/v1/jobs", {
        "name": SECRET["job_name"], "command": ["sh", "-c", victim],
        "env": {"DB_PASSWORD": SECRET["password"]}, "resources": {"gpus": 1},
        "volumes": ["dataset"]})
    check(s == 201, "submit B's job", s, d)
    b_id = d["id"]
    b = wait("B running", lambda: (lambda j: j["state"] == "Running" and j)(
        users["b"].get("/v1/jobs/%d" % b_id)[1]), 60)
    b_epoch, b_gpu = b["placement"][0]["epoch"], b["placement"][0]["gpus"][0]["index"]
    wait("B's output", lambda: "b-ready" in output_of(b_id, b_epoch), 60)
    check(SECRET["stdout"] in output_of(b_id, b_epoch) and
          "cat" in output_of(b_id, b_epoch).splitlines(), "B ran as it should",
          output_of(b_id, b_epoch), output_of(b_id, b_epoch, "stderr"))
    b_procs = pids_with(SECRET["password"])
    check(b_procs, "B's processes on the host (their environment holds the password)")
    ckpt = os.path.join(pool, "checkpoints", "b", str(b_id), "ckpt")
    check(open(ckpt).read().strip() == SECRET["checkpoint"], "B's checkpoint on the host")
    open_to_all(pool, keep=[os.path.join(pool, "checkpoints")])

    # ---- A's attacker ----
    attack = os.path.join(base, "attack.py")
    shutil.copy(os.path.join(HERE, "e2e_security_attack.py"), attack)
    config = os.path.join(base, "attack.json")
    with open(config, "w") as f:
        json.dump({"url": url, "token": users["a"].token, "node": node, "pool": pool,
                   "b_job": b_id, "b_epoch": b_epoch, "b_tenant": "b", "b_gpu": b_gpu,
                   "b_host_pids": [p for p, _ in b_procs], "dev": dev, "vol": vol,
                   "gpu_uuids": [g["uuid"] for g in admin.get("/v1/nodes/" + node)[1]["gpus"]]},
                  f)
    os.chmod(attack, 0o644)
    os.chmod(config, 0o644)
    s, d = users["a"].post("/v1/jobs", {
        "name": "attacker", "resources": {"gpus": 1}, "volumes": ["dataset"],
        "env": {"ATTACKER": "a-" + mark},
        "command": ["sh", "-c", "%s %s %s; exec sleep 1000" % (PYTHON, attack, config)]})
    check(s == 201, "submit A's job", s, d)
    a_id = d["id"]
    a = wait("A running", lambda: (lambda j: j["state"] == "Running" and j)(
        users["a"].get("/v1/jobs/%d" % a_id)[1]), 60)
    a_epoch, a_gpu = a["placement"][0]["epoch"], a["placement"][0]["gpus"][0]["index"]
    check(a_gpu != b_gpu, "A and B on different GPUs of the node", a, b)
    wait("A's attacks done", lambda: "ATTACKS-DONE" in output_of(a_id, a_epoch), 90)
    out, err = output_of(a_id, a_epoch), output_of(a_id, a_epoch, "stderr")
    results, gpu_reached = {}, None
    for line in out.splitlines():
        if line.startswith("{"):
            doc = json.loads(line)
            if "attack" in doc:
                results.setdefault(doc["attack"], []).append((doc["got"], doc["detail"]))
            elif "gpu_minors_reached" in doc:
                gpu_reached = doc["gpu_minors_reached"]
    check(results and not err.strip(), "the attacks ran without an error", out[-3000:], err)
    for line in out.splitlines():
        if line.startswith('{"walk"'):
            print("info walk: readable", json.loads(line)["walk"])
    for name in ("walk_pool", "processes_seen", "node_address", "open_gpu_node"):
        for _, detail in results.get(name, []):
            print("info %s: %s" % (name, detail[:200]))

    # Files at their host paths: hidden by the sandbox's masks (the agent's state directory,
    # the join token; the operator's GPUPOOL_MASK for the controller's files). Before: read.
    for name in ("b_stdout", "b_spec", "b_work", "admin_token", "join_token", "agent_token"):
        verdicts(results, "read_" + name, "masked from jobs over the host root")
    # Other tenants' checkpoints (ROOT/TENANT/JOB, shared storage in production): 0750, owned
    # by the tenant's host ids. Before: read (every job was root, later every job one user).
    for name in ("read_b_checkpoint", "list_other_checkpoints", "write_b_checkpoint"):
        verdicts(results, name, "another tenant's checkpoint directory")
    # The node's metrics token (the agent's --metrics-token-file), with which /metrics names
    # every tenant's jobs. Before: /metrics needed no token.
    verdicts(results, "read_metrics_token", "the agent's metrics token file")
    # Processes: A's own PID namespace; B's pids, as the host numbers them, name nothing there.
    # Before: B's environ read, ptrace attached, kill -9 killed B.
    for name in ("proc_environ", "proc_environ_by_pid", "ptrace_attach", "kill_0", "kill_9"):
        verdicts(results, name, "the job's own PID namespace")
    # The controller: a user token may not beat for a node, read its desired replicas, nor see
    # or cancel another tenant's job. Before: a heartbeat with the stolen agent token marked B
    # Failed with exit code 99 (a token A finds is tried too).
    for name in ("heartbeat_user_token", "desired_user_token", "api_job", "api_logs",
                 "api_events", "api_cancel"):
        verdicts(results, name, "the controller's roles and tenant scoping")
    if "heartbeat_found_token" in results:
        verdicts(results, "heartbeat_found_token", "no token within a job's reach")
    # The agent's endpoint: the metrics token or the control token only. Before: open.
    for name in ("agent_metrics", "agent_logs"):
        verdicts(results, name, "the agent's endpoint needs a token")
    # The read-only volume: a read-only bind mount, no CAP_SYS_ADMIN, the mount calls refused
    # by the seccomp profile; at its host path, root's. Before: remounted read-write, written.
    for name in ("remount_volume_rw", "mount_syscall_remount", "write_volume"):
        verdicts(results, name, "read-only volumes")
    # A user namespace of its own: unshare refused by the seccomp profile. Before: `unshare
    # -Urm` made one, in which the job was root and could mount over its limits.
    for name in ("unshare_Urm", "unshare_syscall"):
        verdicts(results, name, "no new namespaces")
    # GPUs: CDI gives the container exactly its GPU's node; the device cgroup refuses others,
    # the host's nodes and one the job would make. Before: every GPU opened.
    check(gpu_reached == [a_gpu], "A reached exactly its own GPU (minor %d), whatever "
          "CUDA_VISIBLE_DEVICES says" % a_gpu, gpu_reached, results.get("open_gpu_node"))
    verdicts(results, "mknod_gpu", "no CAP_MKNOD; the device cgroup")
    # The replica's records: in the state directory, which the job never sees. Before: a
    # status.json "exited 0" made the job Succeeded, its GPU freed, while it kept running.
    verdicts(results, "write_records", "records out of the job's reach")

    # Nothing of B's, no token and no other tenant's job name in A's output (the files A read
    # and the answers it had are there).
    leaks = dict(SECRET, **tokens)
    for name, value in leaks.items():
        leaked = value in out + err
        results["leak_" + name] = [(leaked, "A's output %s the %s" %
                                    ("holds" if leaked else "does not hold", name))]
        verdicts(results, "leak_" + name, "nothing of B's reaches A")

    # B is untouched: the same processes, its volume and checkpoint as they were.
    check(all(same_process(p, start) for p, start in b_procs), "B's processes still run",
          b_procs)
    check(open(os.path.join(vol, "labels")).read() == "cat\n" and
          os.listdir(vol) == ["labels"], "the volume is unchanged", os.listdir(vol))
    ckpt_files = sorted(os.listdir(os.path.dirname(ckpt)))
    check(open(ckpt).read().strip() == SECRET["checkpoint"] and
          (ckpt_files == ["ckpt"] or "write_b_checkpoint" in FINDINGS),
          "B's checkpoint is unchanged", ckpt_files)
    # Two more rounds of the agent (heartbeats): both jobs Running with their GPUs held; no
    # exit code 99 for B.
    for _ in range(2):
        beat = admin.get("/v1/nodes/" + node)[1]["heartbeat_ms"]
        wait("a heartbeat", lambda: admin.get("/v1/nodes/" + node)[1]["heartbeat_ms"] > beat)
    for who, jid, gpu in (("A", a_id, a_gpu), ("B", b_id, b_gpu)):
        j = admin.get("/v1/jobs/%d" % jid)[1]
        check(j["state"] == "Running" and jid in holders(admin, gpu),
              who + "'s job still Running, its GPU held", j, holders(admin, gpu))
    s, ev = admin.get("/v1/jobs/%d/events" % b_id)
    types = [e["type"] for e in ev["items"]] if s == 200 else []
    check(types == ["Submitted", "Scheduled", "Running"] and
          admin.get("/v1/jobs/%d" % b_id)[1]["restarts"] == 0,
          "B was never failed nor restarted (no forged exit code 99)", ev)
    check(not failures, "every attack fails", *failures)

    # Per-tenant host ids: A's and B's processes run under different host uids, and B's
    # checkpoint belongs to B's (what keeps it from A above). Before: all of them one user.
    a_uids = host_uids([p for p, _ in pids_with("a-" + mark)])
    b_uids = host_uids([p for p, _ in b_procs])
    ckpt_uid = os.stat(os.path.dirname(ckpt)).st_uid
    check(a_uids and b_uids and not set(a_uids) & set(b_uids) and ckpt_uid in b_uids and
          0 not in a_uids + b_uids, "A's and B's processes under different host uids, not root; "
          "B's checkpoint B's", a_uids, b_uids, ckpt_uid)
finally:
    down, leftover = pool_down(gpupool, pool, base, base)
    st.close()
    shutil.rmtree(base, ignore_errors=True)
check(down.returncode == 0, "gpupool down", down.stdout, down.stderr)
check(not leftover, "down stopped every job", leftover)
print("e2e_security: ok")
