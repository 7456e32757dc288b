"""A fraction of a GPU in gpupool-run's podman sandbox (the real podman, storage of the test's
own), with the fake driver of tests/shim (libcuda.so.1, libnvidia-ml.so.1) and libgpushare.so
preloaded by the sandbox's /etc/ld.so.preload, twice: over the host root (the programs copied
under /var/lib, which the sandbox shows read-only) and inside an image built here (busybox-static,
the programs and the host's C library, pushed to a local docker-registry). The job, as the
sandbox's user (nobody), runs shim_test's bodies and tries the ways around the library:

- region_tamper: an allocation within the limit (8 MiB) succeeds and one byte more is refused;
  the limits file cannot be opened for writing, chmod'ed or removed; zeroing the usage file
  (which the job can write) does not let the process past its limit;
- dlvsym, dlmopen, deepbind: libc's own dlsym reached through dlvsym, the driver loaded in a new
  link-map namespace, a library bound with RTLD_DEEPBIND: still the library's hooks, held to
  the limit;
- the region's files cannot be chmod'ed, removed or replaced by a symlink;
- over_limit_free started with `env -i` (no LD_PRELOAD, no GPUPOOL_SHARE_REGION): still held to
  the limit, by the region at /run/gpupool/share.region that the library finds by itself;
- the limits file is a read-only mount (appending to it fails), the usage file a read-write one;
- LD_AUDIT asked for in the spec does not reach the job; GPUPOOL_SHARE_REGION names the region.
On the host: the usage file is root's, mode 0660 with the job's group; the limits 0640.
Arguments: gpupool-run, libgpushare.so, shim_test.
"""
import json
import os
import pwd
import shutil
import stat
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "ctl"))
from oci import Registry, Storage, build_image, host_libraries  # noqa: E402
from pool import check  # noqa: E402

run_bin, library, shim_test = (os.path.abspath(a) for a in sys.argv[1:4])
REGION = "/run/gpupool/share.region"
LIMITS = REGION + ".limits"

if os.geteuid() != 0:
    print("skipped: the sandbox's files are root's (needs root)")
    sys.exit(77)

# The sandbox over the host's root has its own /tmp, /var/tmp and /run, where a build tree (a
# CI clone under /tmp) is not seen: the job's program and the fake driver are copied into a
# directory under /var/lib, which it shows read-only.
FAKE = os.path.join(os.path.dirname(os.path.dirname(shim_test)), "tests", "shim", "fake")
os.makedirs("/var/lib/gpupool-tests", mode=0o755, exist_ok=True)
base = tempfile.mkdtemp(prefix="share.", dir="/var/lib/gpupool-tests")
os.chmod(base, 0o755)
progs = os.path.join(base, "programs")
os.mkdir(progs, 0o755)
for f in (shim_test, os.path.join(FAKE, "libcuda.so.1"), os.path.join(FAKE, "libnvidia-ml.so.1"),
          os.path.join(FAKE, "libgpattack.so")):
    shutil.copy(f, progs)
IN_IMAGE = "/opt/shim"  # where the image has the programs

SCRIPT = """
T=%(t)s
LD_LIBRARY_PATH=%(lib)s $T --child region_tamper 2>&1 && echo tamper-ok
for c in dlvsym dlmopen deepbind; do LD_LIBRARY_PATH=%(lib)s $T --child $c 2>&1 && echo $c-ok; done
chmod 0666 %(region)s %(limits)s 2>/dev/null && echo region-chmod || echo region-chmod-refused
rm -f %(region)s %(limits)s 2>/dev/null
test -s %(region)s && test -s %(limits)s && echo region-kept
ln -sf /tmp/other %(region)s 2>/dev/null && echo region-linked || echo region-link-refused
env -i LD_LIBRARY_PATH=%(lib)s $T --child over_limit_free 2>&1 && echo bare-ok
test -r %(limits)s && { printf x >> %(limits)s && echo limits-written || echo limits-refused; }
grep -E ' %(region_re)s(\\.limits)? ' /proc/self/mountinfo | cut -d' ' -f5,6
echo audit=${LD_AUDIT-unset} region=$GPUPOOL_SHARE_REGION
"""


def script(where):
    return SCRIPT % {"t": os.path.join(where, os.path.basename(shim_test)), "lib": where,
                     "region": REGION, "limits": LIMITS,
                     "region_re": REGION.replace(".", "\\.")}


def share_image(st, reg):
    """An image with busybox, shim_test, the fake driver and libgpattack in IN_IMAGE, and the
    host's libraries they and libgpushare.so load."""
    staged = [os.path.join(progs, f) for f in os.listdir(progs)]
    files = host_libraries(staged + [library], exclude=[progs, os.path.dirname(FAKE)])
    for f in staged:
        with open(f, "rb") as fh:
            files[os.path.join(IN_IMAGE, os.path.basename(f))] = fh.read()
    # Executable as on the host: the program, and the dynamic loader among the libraries.
    return build_image(st, reg, "team/share:1", files=files,
                       applets=("chmod", "rm", "ln", "test", "printf", "cut"),
                       executables=list(files))


def fraction(st, name, where, image=None):
    """A replica with 8 MiB of a GPU that runs the script with the programs in where (over the
    host root, or inside image); checks what it printed and the region's files on the host."""
    spec = {"job": 61, "replica": 0, "epoch": 1,
            "gpus": [{"uuid": "GPU-61616161-0000-1111-2222-333333333333"}],
            "gpu_share": {"memory_mib": 8},
            "spec": {"command": ["sh", "-c", script(where)],
                     "env": {"LD_AUDIT": "/nonexistent/audit.so"}}}
    if image:
        spec["image"] = image
    spec_path = os.path.join(base, name + ".json")
    with open(spec_path, "w") as f:
        json.dump(spec, f)
    state = os.path.join(base, name)
    env = dict(st.env)
    env.pop("GPUPOOL_RUNTIME", None)
    with open(os.path.join(base, name + ".log"), "wb") as log:
        p = subprocess.run([run_bin, "--state-dir", state, "--spec", spec_path, "--grace", "5",
                            "--share-library", library],
                           stdout=log, stderr=log, env=env, timeout=120)
    run_log = open(os.path.join(base, name + ".log"), errors="replace").read()[-3000:]
    check(p.returncode == 0, name + ": gpupool-run exit 0", p.returncode, run_log)
    with open(os.path.join(state, "status.json")) as f:
        s = json.load(f)
    out = open(os.path.join(state, "stdout.log"), errors="replace").read()
    err = open(os.path.join(state, "stderr.log"), errors="replace").read()
    check(s["state"] == "exited" and s["container"], name + ": the fraction ran in a container",
          s, out, err)
    lines = out.splitlines()
    check("tamper-ok" in lines, name + ": within the limit granted, over it refused, the limits "
          "file not writable, zeroed usage changes nothing", out, err)
    # Before the library's dlsym, dlvsym and dlmopen were closed, libc's own dlsym reached
    # through dlvsym, or the driver loaded in a new link-map namespace, gave 4x the limit.
    for c in ("dlvsym", "dlmopen", "deepbind"):
        check(c + "-ok" in lines, "%s: %s: libc's lookups give the library's hooks, a new "
              "namespace is refused, RTLD_DEEPBIND dropped: held to the limit" % (name, c),
              out, err)
    # A broken region failed open before (up to 5x the limit): the job cannot break it here.
    check("region-chmod-refused" in lines and "region-kept" in lines and
          "region-link-refused" in lines, name + ": the region cannot be chmod'ed, removed or "
          "replaced by a symlink", out)
    check("bare-ok" in lines, name + ": a process started with env -i is held to the limit "
          "(after the attempts on the region)", out, err)
    check("limits-refused" in lines, name + ": the limits file is there, readable, and "
          "appending to it fails", out, err)
    mounts = dict(ln.split(" ", 1) for ln in lines if ln.startswith(REGION))
    check(mounts.get(LIMITS, "").split(",")[0] == "ro",
          name + ": the limits file is a read-only mount", mounts)
    check(mounts.get(REGION, "").split(",")[0] == "rw",
          name + ": the usage file a read-write one", mounts)
    check("audit=unset region=%s" % REGION in lines, name + ": no LD_AUDIT for the job; "
          "GPUPOOL_SHARE_REGION names the sandbox's region", out)
    nobody = pwd.getpwnam("nobody")
    usage = os.stat(os.path.join(state, "share.region"))
    limits = os.stat(os.path.join(state, "share.region.limits"))
    check(usage.st_uid == 0 and usage.st_gid == nobody.pw_gid and
          stat.S_IMODE(usage.st_mode) == 0o660,
          name + ": the usage file: root's, writable by the job's group only", usage)
    check(limits.st_uid == 0 and limits.st_gid == nobody.pw_gid and
          stat.S_IMODE(limits.st_mode) == 0o640,
          name + ": the limits file: root's, readable by the job's group", limits)
    check(st.containers() == [], name + ": the container is gone", st.containers())


st = Storage()
try:
    t0 = time.time()
    fraction(st, "host-root", progs)
    with Registry(st) as reg:
        fraction(st, "image", IN_IMAGE, share_image(st, reg))
    print("ok (%.1f s)" % (time.time() - t0))
finally:
    st.close()
    shutil.rmtree(base, ignore_errors=True)
