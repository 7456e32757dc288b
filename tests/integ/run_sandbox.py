"""gpupool-run's podman sandbox with the real podman (storage of the test's own), a real registry
on 127.0.0.1 and images built here from busybox-static:

- over the host root: the job's uid is not 0, it has no capabilities (CapEff and CapBnd 0), no
  new privileges and a seccomp filter, cannot write
  /usr, sees neither its replica's directory nor a masked path (--mask) even where both are
  readable by anyone, gets a /tmp of its own, writes its working directory (the replica's
  work/), cannot remount a read-only volume read-write nor write it, writes a read-write one; a
  variable with a line break reaches it; its /dev/shm has the spec's shm_size_mib;
- a stop (SIGTERM to gpupool-run) ends the job through its container, which is then gone with
  its cgroup directories;
- from an image: pulled, run as a non-root user in the image's working directory, its output in
  stdout.log, its id in the record; the pull's progress in pull.json while it goes (through a
  slowed proxy), removed after; a stop while it pulls ends the replica, leaving nothing;
- pull failures end the replica with exit 125 and "ImagePullFailed: " and the registry's
  message: an unknown tag, an unreachable registry, Never without the image, a registry that
  wants credentials and gets none or wrong ones; with the right ones (registry-auth.json, as the
  agent leaves them) it pulls, and the password is nowhere in the replica's directory after;
- a privileged job (the replica's privileged: true) reaches podman as --privileged: the node's
  devices, capabilities in the bounding set, no seccomp filter, new privileges allowed; it still
  runs as a non-root user; --runtime none runs it as a host process like any job;
- --runtime none refuses an image job (exit 125);
- a --state-dir relative to where gpupool-run starts works as an absolute one.
Argument: gpupool-run.
"""
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "ctl"))
from oci import Registry, Storage, Throttle, build_image, free_port  # noqa: E402
from pool import check, wait  # noqa: E402

run_bin = os.path.abspath(sys.argv[1])
# Outside /tmp (a sandbox has a /tmp of its own), readable by anyone: what hides the replica's
# files and the masked path from the job is the sandbox, not permissions.
base = tempfile.mkdtemp(prefix="gpupool-sandbox.",
                        dir=os.path.dirname(os.path.dirname(run_bin)))
os.chmod(base, 0o755)
PASSWORD = "pw-%d-s3cr3t" % os.getpid()


def spec_file(name, doc):
    doc = dict({"job": 40 + len(name), "replica": 0, "epoch": 1}, **doc)
    path = os.path.join(base, name + ".json")
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


def start(st, name, doc, *args):
    """gpupool-run on spec doc in base/NAME, in the background."""
    env = dict(st.env)
    env.pop("GPUPOOL_RUNTIME", None)
    log = open(os.path.join(base, name + ".log"), "wb")
    return subprocess.Popen([run_bin, "--state-dir", os.path.join(base, name), "--spec",
                             spec_file(name, doc), "--grace", "5"] + list(args),
                            stdout=log, stderr=log, env=env)


def run(st, name, doc, *args, timeout=120):
    p = start(st, name, doc, *args)
    check(p.wait(timeout=timeout) == 0, name + ": gpupool-run exit 0", p.returncode, log_of(name))
    return status(name)


def status(name):
    try:
        with open(os.path.join(base, name, "status.json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def out_of(name, which="stdout"):
    try:
        with open(os.path.join(base, name, which + ".log"), errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def log_of(name):
    try:
        return open(os.path.join(base, name + ".log"), errors="replace").read()[-3000:]
    except OSError:
        return ""


def cgroups_of(name):
    st = status(name) or {}
    return [d for d in st.get("cgroup", "").split(",") if d and os.path.exists(d)]


def pull_failed(name, words):
    st = status(name)
    check(st and st["state"] == "exited" and st["exit_code"] == 125 and
          st["reason"].startswith("ImagePullFailed: ") and words in st["reason"],
          name + ": exit 125, ImagePullFailed: ..." + words, st, out_of(name, "stderr"))


def host_root(st):
    secret = os.path.join(base, "secret")
    os.makedirs(secret)
    with open(os.path.join(secret, "token"), "w") as f:
        f.write("TOPSECRET\n")
    os.chmod(os.path.join(secret, "token"), 0o644)
    state = os.path.join(base, "hostroot")
    os.makedirs(state)
    with open(os.path.join(state, "planted"), "w") as f:
        f.write("agent files\n")
    ro, rw = os.path.join(base, "vol-ro"), os.path.join(base, "vol-rw")
    os.makedirs(ro)
    os.makedirs(rw)
    os.chmod(rw, 0o777)
    with open(os.path.join(ro, "labels"), "w") as f:
        f.write("cat\n")
    script = (
        "id -u; grep -E '^(CapEff|CapBnd|NoNewPrivs|Seccomp):' /proc/self/status; "
        "touch /usr/gpupool-test 2>/dev/null && echo usr-writable || echo usr-readonly; "
        "cat %s/planted 2>/dev/null && echo state-visible || echo state-hidden; "
        "cat %s/token 2>/dev/null && echo secret-visible || echo secret-hidden; "
        "echo tmp=$(ls -A /tmp | wc -l); echo hello > out.txt; "
        "mount -o remount,rw $GPUPOOL_DATA_DIR/ro 2>/dev/null && echo remounted "
        "|| echo remount-refused; "
        "touch $GPUPOOL_DATA_DIR/ro/x 2>/dev/null && echo ro-writable || echo ro-readonly; "
        "cat $GPUPOOL_DATA_DIR/ro/labels; touch $GPUPOOL_DATA_DIR/rw/y && echo rw-ok; "
        "printf 'ML=[%%s]\\n' \"$ML\"; "
        # No namespaces of its own: "root" in a new user namespace could mount over the files
        # that hold its limits. Threads and processes still work (clone without those flags).
        "unshare -Urm true 2>/dev/null && echo userns-made || echo userns-refused; "
        "unshare -m true 2>/dev/null && echo mountns-made || echo mountns-refused; "
        "python3 -c 'import threading; t = threading.Thread(target=print, args=(\"thread-ok\",)); "
        "t.start(); t.join()'; (echo fork-ok); "
        "echo shm=$(grep ' /dev/shm ' /proc/mounts | grep -o 'size=[0-9]*k') $GPUPOOL_SHM_SIZE_MIB"
        % (state, secret))
    s = run(st, "hostroot", {"spec": {"command": ["sh", "-c", script], "env": {"ML": "a\nb"}},
                             "volumes": [{"name": "ro", "path": ro, "read_only": True},
                                         {"name": "rw", "path": rw}],
                             "shm_size_mib": 64},
            "--mask", secret)
    out = out_of("hostroot").splitlines()
    check(s["state"] == "exited" and s["exit_code"] == 0 and s["container"], "hostroot ran", s,
          out, out_of("hostroot", "stderr"))
    check(out[0] != "0" and out[0].isdigit(), "the job's uid is not 0", out)
    status_lines = [l.split() for l in out[1:5]]
    check(["CapEff:", "0000000000000000"] in status_lines and
          ["CapBnd:", "0000000000000000"] in status_lines and ["NoNewPrivs:", "1"] in status_lines
          and ["Seccomp:", "2"] in status_lines,
          "no capabilities (not even in the bounding set), no new privileges, seccomp", out)
    view = out[5:]
    want = ["usr-readonly", "state-hidden", "secret-hidden", "tmp=0", "remount-refused",
            "ro-readonly", "cat", "rw-ok", "ML=[a", "b]", "userns-refused", "mountns-refused",
            "thread-ok", "fork-ok", "shm=size=65536k 64"]
    check(view == want, "the job's view of the host", view, want)
    check(open(os.path.join(state, "work", "out.txt")).read() == "hello\n",
          "its working directory is the replica's work/")
    check(os.path.exists(os.path.join(rw, "y")) and not os.path.exists(os.path.join(ro, "x")),
          "the volumes on the host")
    check(not os.path.exists("/usr/gpupool-test"), "nothing written to the host's /usr")
    check(st.containers() == [] and cgroups_of("hostroot") == [],
          "the container and its cgroups are gone", st.containers(), cgroups_of("hostroot"))


def stop(st):
    p = start(st, "stop", {"spec": {"command": ["sleep", "1000"]}})
    wait("stop running", lambda: (status("stop") or {}).get("state") == "running")
    name = status("stop")["container"]
    wait("its container", lambda: name in st.containers())
    p.send_signal(signal.SIGTERM)
    check(p.wait(timeout=60) == 0, "stop: gpupool-run exit 0", log_of("stop"))
    s = status("stop")
    check(s["state"] == "killed" and "stopped: SIGTERM" in s["reason"], "stopped", s)
    check(name not in st.containers() and cgroups_of("stop") == [],
          "the container and its cgroups are gone after a stop", st.containers())


def image(st, reg):
    ref = build_image(st, reg, "team/hello:1", files={"/hello.txt": b"hello from the image\n"})
    s = run(st, "image", {"image": ref, "spec": {"command": ["sh", "-c",
                                                             "cat /hello.txt; id -u; pwd"]}})
    out = out_of("image").splitlines()
    check(s["exit_code"] == 0 and out[0] == "hello from the image" and out[1] != "0" and
          out[2] == "/workspace", "an image job's output, user and working directory", s, out,
          out_of("image", "stderr"))
    check(s["image"] == ref and s["image_id"].startswith("sha256:"), "the record names the image",
          s)
    check(st.exists(ref) and not os.path.exists(os.path.join(base, "image", "pull.json")),
          "pulled; no pull record left")


def progress(st, reg):
    ref = build_image(st, reg, "team/big:1", extra_bytes=12 << 20)
    with Throttle(st, reg.host, rate=3 << 20) as slow:
        ref = ref.replace(reg.host, slow.host)
        p = start(st, "progress", {"image": ref, "spec": {"command": ["true"]}})
        seen = []

        def midway():
            try:
                with open(os.path.join(base, "progress", "pull.json")) as f:
                    r = json.load(f)
            except (OSError, ValueError):
                return None
            seen.append(r)
            return r if 0 < r["done_bytes"] < r["total_bytes"] else None

        r = wait("the pull's progress", midway, timeout=60)
        check(r["image"] == ref and r["total_bytes"] >= 12 << 20, "pull.json", r)
        check(p.wait(timeout=120) == 0 and status("progress")["exit_code"] == 0,
              "the slow pull ends and the job runs", status("progress"), log_of("progress"))
    check(not os.path.exists(os.path.join(base, "progress", "pull.json")) and
          not os.path.exists(os.path.join(base, "progress", "pull-tmp")),
          "the pull's record and blobs are gone")

    # A stop while the image comes: the pull ends, the replica is killed, nothing is left.
    ref = build_image(st, reg, "team/big2:1", extra_bytes=12 << 20)
    with Throttle(st, reg.host, rate=1 << 20) as slow:
        ref = ref.replace(reg.host, slow.host)
        p = start(st, "pullstop", {"image": ref, "spec": {"command": ["true"]},
                                   "registry_auth": {"registry": slow.host, "username": "u",
                                                     "password": PASSWORD}})
        wait("pullstop pulling", lambda: os.path.exists(os.path.join(base, "pullstop",
                                                                     "pull.json")), timeout=60)
        p.send_signal(signal.SIGTERM)
        check(p.wait(timeout=60) == 0, "pullstop: gpupool-run exit 0", log_of("pullstop"))
    s = status("pullstop")
    check(s["state"] == "killed" and s["reason"].startswith("stopped while pulling"),
          "stopped while pulling", s)
    left = sorted(os.listdir(os.path.join(base, "pullstop")))
    check(not [f for f in left if f.startswith("pull-") or f == "pull.json"] and
          st.containers() == [], "no pull record, blobs, credentials or container left", left)


def failures(st, reg):
    run(st, "notag", {"image": reg.host + "/team/hello:nope", "spec": {"command": ["true"]}})
    pull_failed("notag", "manifest unknown")
    gone = "127.0.0.1:%d" % free_port()
    st.allow(gone)
    run(st, "unreachable", {"image": gone + "/team/hello:1", "spec": {"command": ["true"]}})
    pull_failed("unreachable", "connection refused")
    run(st, "never", {"image": reg.host + "/team/absent:1", "image_pull_policy": "Never",
                      "spec": {"command": ["true"]}})
    pull_failed("never", "image_pull_policy is Never")
    check(st.containers() == [], "no container for a replica that never ran", st.containers())


def credentials(st):
    with Registry(st, users={"alice": PASSWORD}) as reg:
        ref = build_image(st, reg, "team/private:1", files={"/p": b"private\n"},
                          creds=("alice", PASSWORD))
        run(st, "noauth", {"image": ref, "spec": {"command": ["cat", "/p"]}})
        pull_failed("noauth", "authentication required")
        run(st, "badauth", {"image": ref, "registry_auth": {"registry": reg.host,
                                                             "username": "alice",
                                                             "password": "wrong"},
                            "spec": {"command": ["cat", "/p"]}})
        pull_failed("badauth", "authentication required")
        # As the agent leaves them: beside the spec, read and removed by gpupool-run.
        d = os.path.join(base, "auth")
        os.makedirs(d)
        with open(os.path.join(d, "registry-auth.json"), "w") as f:
            json.dump({"registry": reg.host, "username": "alice", "password": PASSWORD}, f)
        os.chmod(os.path.join(d, "registry-auth.json"), 0o600)
        s = run(st, "auth", {"image": ref, "spec": {"command": ["cat", "/p"]}})
        check(s["exit_code"] == 0 and out_of("auth") == "private\n", "pulled with credentials",
              s, out_of("auth", "stderr"))
        left = [p for p in glob.glob(os.path.join(d, "**"), recursive=True)
                if os.path.isfile(p) and PASSWORD.encode() in open(p, "rb").read()]
        check(not left and not os.path.exists(os.path.join(d, "registry-auth.json")),
              "the password is nowhere in the replica's directory", left)
        check(PASSWORD not in log_of("auth"), "nor in gpupool-run's log")


def relative(st):
    """--state-dir relative to where gpupool-run starts: podman (which runs from /) still finds
    the job's files there."""
    env = dict(st.env)
    env.pop("GPUPOOL_RUNTIME", None)
    p = subprocess.run([run_bin, "--state-dir", "relative", "--spec",
                        spec_file("relative", {"spec": {"command": ["sh", "-c", "echo here"]}})],
                       cwd=base, capture_output=True, text=True, env=env, timeout=120)
    s = status("relative")
    check(p.returncode == 0 and s["exit_code"] == 0 and out_of("relative") == "here\n",
          "a relative --state-dir", p.stderr, s)


def privileged(st):
    script = ("id -u; grep -E '^(CapBnd|NoNewPrivs|Seccomp):' /proc/self/status; "
              "ls /dev | wc -l")
    s = run(st, "plain", {"spec": {"command": ["sh", "-c", script]}})
    plain = out_of("plain").split()
    check(s["exit_code"] == 0, "an unprivileged job ran", s, plain)
    s = run(st, "priv", {"privileged": True, "spec": {"command": ["sh", "-c", script]}})
    out = out_of("priv").split()
    check(s["exit_code"] == 0 and len(out) == 8, "a privileged job ran", s, out,
          out_of("priv", "stderr"))
    check(out[0] != "0" and out[0] == plain[0], "as the same non-root user", out, plain)
    check(out[2] != "0000000000000000" and out[4] == "0" and out[6] == "0",
          "capabilities in its bounding set, new privileges allowed, no seccomp filter", out)
    check(int(out[7]) > int(plain[7]), "the node's devices (more than a sandbox's /dev)", out,
          plain)
    s = run(st, "priv-none", {"privileged": True, "spec": {"command": ["sh", "-c", "id -u"]}},
            "--runtime", "none")
    check(s["exit_code"] == 0 and out_of("priv-none").strip() == str(os.getuid()),
          "--runtime none: a host process as the caller, privileged or not", s,
          out_of("priv-none"))


def no_runtime(st, reg):
    s = run(st, "none", {"image": reg.host + "/team/hello:1", "spec": {"command": ["true"]}},
            "--runtime", "none")
    check(s["exit_code"] == 125 and s["reason"].startswith("ImagePullFailed: ") and
          "no containers" in s["reason"], "no image without containers", s)


st = Storage()
try:
    t0 = time.time()
    host_root(st)
    privileged(st)
    stop(st)
    relative(st)
    with Registry(st) as reg:
        image(st, reg)
        progress(st, reg)
        failures(st, reg)
        no_runtime(st, reg)
    credentials(st)
    print("ok (%.1f s)" % (time.time() - t0))
finally:
    st.close()
    shutil.rmtree(base, ignore_errors=True)
