"""GPUs through CDI in real podman containers, without GPUs: fake device nodes made with mknod, a
mock NVML inventory pointing at them, a fake driver installed in a temporary directory, the
agent's generator (`gpupool-agent cdi`) writing the spec, and podman (runc, cgroupfs, explicit
ulimits: what works on hybrid-cgroup hosts without CAP_SYS_RESOURCE) running a busybox image the
test builds from the host's busybox-static with `podman import`.

The fake nodes use character-device majors no driver has registered on this host (read from
/proc/devices): opening one the container's device cgroup allows fails with ENXIO ("No such
device or address"); opening one it does not allow fails with EPERM ("Operation not permitted").

- `--device nvidia.com/gpu=<GPU 1>`: the container has /dev/nvidia1 (GPU 1's node, its numbers),
  nvidiactl, nvidia-uvm, nvidia-uvm-tools, and no /dev/nvidia0 nor /dev/nvidia2, whatever its
  CUDA_VISIBLE_DEVICES says; a node it makes itself (mknod, CAP_MKNOD added for the attempt) with
  GPU 0's numbers cannot be opened, one with GPU 1's can (the device cgroup); the fake driver's
  libcuda.so.1 and nvidia-smi are there read-only, an older driver's libcuda is not mounted;
- `--device nvidia.com/gpu=<a MIG device of GPU 2>`: its parent's node and exactly its two MIG
  capability nodes, not the other instance's;
- with a user namespace (--uidmap, as the sandbox gives each tenant) and the spec of a real node
  (--dev-root /dev): runc bind-mounts the nodes from their /dev paths, so the fake nodes are made
  there inside a private mount namespace (an overlay over /dev); GPU 1's container again sees
  and opens only its node.

podman 4.3 (Debian 12) reads CDI specs only from /etc/cdi and /var/run/cdi: the containers run in
a private mount namespace where /etc is an overlay with the spec in /etc/cdi (the host's /etc is
not touched); a podman that takes --cdi-spec-dir gets the spec's directory instead. Per-test
podman storage (--root, --runroot, --tmpdir in the temporary directory). Skipped (77) without
podman, runc or crun, unshare, busybox or root, except under CI=true.
Arguments: gpupool-agent, libgpupool-nvml-mock.so.
"""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "ctl"))
from oci import free_char_majors  # noqa: E402
from pool import check  # noqa: E402

agent_bin, mock = sys.argv[1:3]
VERSION = "550.54.15"  # the mock inventory's driver version
GPUS = ["GPU-c0d1e2f3-0000-4000-8000-00000000cd00", "GPU-c0d1e2f3-0000-4000-8000-00000000cd01",
        "GPU-c0d1e2f3-0000-4000-8000-00000000cd02"]
MIGS = ["MIG-c0d1e2f3-0000-5000-8000-00000000cd21", "MIG-c0d1e2f3-0000-5000-8000-00000000cd22"]


def skip(why):
    print("cdi_podman: skipped:", why)
    sys.exit(1 if os.environ.get("CI") == "true" else 77)


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, **kw)


runtime = shutil.which("runc") or shutil.which("crun")
busybox = shutil.which("busybox") or "/bin/busybox"
for tool, path in (("podman", shutil.which("podman")), ("runc or crun", runtime),
                   ("unshare", shutil.which("unshare")), ("busybox", shutil.which("busybox")),
                   ("cc", shutil.which("cc")), ("ldconfig", shutil.which("ldconfig") or
                                                shutil.which("/sbin/ldconfig"))):
    if not path:
        skip(tool + " not found")
if os.geteuid() != 0:
    skip("needs root (mknod, rootful podman)")


tmp = tempfile.mkdtemp(prefix="gpupool-cdi-podman.")
try:
    gpu_major, caps_major = free_char_majors(2)
    dev = os.path.join(tmp, "dev")
    os.makedirs(os.path.join(dev, "nvidia-caps"))

    fake_nodes = []  # (path under /dev, major, minor)

    def mknod(rel, major, minor):
        os.mknod(os.path.join(dev, rel), 0o666 | 0o020000, os.makedev(major, minor))
        fake_nodes.append((rel, major, minor))

    for i in range(3):
        mknod("nvidia%d" % i, gpu_major, i)
    mknod("nvidiactl", gpu_major, 255)
    mknod("nvidia-uvm", gpu_major, 250)
    mknod("nvidia-uvm-tools", gpu_major, 251)

    # The driver's MIG capability table, and the nodes of GPU 2's instances 1 and 2.
    lines = ["config 1", "monitor 2"]
    for g in range(3):
        for gi in range(15):
            base = 3 + g * 135 + gi * 9
            lines.append("gpu%d/gi%d/access %d" % (g, gi, base))
            lines += ["gpu%d/gi%d/ci%d/access %d" % (g, gi, ci, base + 1 + ci) for ci in range(8)]
    with open(os.path.join(tmp, "mig-minors"), "w") as f:
        f.write("\n".join(lines) + "\n")
    caps = {gi: (3 + 2 * 135 + gi * 9, 3 + 2 * 135 + gi * 9 + 1) for gi in (1, 2)}
    for gi, (a, b) in caps.items():
        mknod("nvidia-caps/nvidia-cap%d" % a, caps_major, a)
        mknod("nvidia-caps/nvidia-cap%d" % b, caps_major, b)

    inventory = os.path.join(tmp, "inventory.yaml")
    with open(inventory, "w") as f:
        f.write('driver_version: "%s"\ncuda_version: "12.4"\n' % VERSION)
        f.write("defaults: {name: NVIDIA H100 80GB HBM3, memory_mib: 81559}\ngpus:\n")
        for i, uuid in enumerate(GPUS):
            f.write('  - uuid: %s\n    pci_bus_id: "00000000:%02X:00.0"\n    minor: %d\n'
                    % (uuid, 0x18 + i, i))
        f.write("    mig:\n      enabled: true\n      instances:\n")
        for k, uuid in enumerate(MIGS):
            f.write("        - {uuid: %s, profile: 1g.10gb, start: %d}\n" % (uuid, k))

    # A fake driver: the mock as libnvidia-ml.so.VERSION, libraries built with their sonames, an
    # older driver's libcuda left beside them, an ld cache of that directory, a program.
    drv = os.path.join(tmp, "driver")
    lib, bindir = os.path.join(drv, "lib"), os.path.join(drv, "bin")
    os.makedirs(lib)
    os.makedirs(bindir)
    shutil.copy(mock, os.path.join(lib, "libnvidia-ml.so." + VERSION))
    os.symlink("libnvidia-ml.so." + VERSION, os.path.join(lib, "libnvidia-ml.so.1"))
    for name, soname, version in (("libcuda", "libcuda.so.1", VERSION),
                                  ("libnvidia-ptxjitcompiler", "libnvidia-ptxjitcompiler.so.1",
                                   VERSION),
                                  ("libcuda", "libcuda.so.1", "535.104.05")):
        p = run(["cc", "-shared", "-fPIC", "-x", "c", "-", "-Wl,-soname," + soname, "-o",
                 os.path.join(lib, "%s.so.%s" % (name, version))], input="int gpupool_fake;\n")
        check(p.returncode == 0, "build a fake " + name, p.stderr)
    with open(os.path.join(drv, "ld.so.conf"), "w") as f:
        f.write(lib + "\n")
    ldconfig = shutil.which("ldconfig") or "/sbin/ldconfig"
    p = run([ldconfig, "-C", os.path.join(drv, "ld.so.cache"), "-f",
             os.path.join(drv, "ld.so.conf")])
    check(p.returncode == 0, "ldconfig of the fake driver", p.stderr)
    check(os.path.realpath(os.path.join(lib, "libcuda.so.1")).endswith(VERSION),
          "libcuda.so.1 is the running driver's", os.path.realpath(os.path.join(lib,
                                                                              "libcuda.so.1")))
    shutil.copy(busybox, os.path.join(bindir, "nvidia-smi"))

    # The agent's generator writes the spec.
    spec_dir = os.path.join(tmp, "cdi")
    env = dict(os.environ, GPUPOOL_NVML_MOCK_INVENTORY=inventory,
               PATH=bindir + ":" + os.environ.get("PATH", "/usr/bin:/bin"))
    p = run([agent_bin, "cdi", "--nvml-library", os.path.join(lib, "libnvidia-ml.so.1"),
             "--dev-root", dev, "--mig-minors", os.path.join(tmp, "mig-minors"), "--ld-cache",
             os.path.join(drv, "ld.so.cache"), "--output-dir", spec_dir], env=env)
    check(p.returncode == 0 and os.path.exists(os.path.join(spec_dir, "gpupool.json")),
          "gpupool-agent cdi writes the spec", p.stdout, p.stderr)

    # The image: busybox-static and its applets.
    rootfs = os.path.join(tmp, "rootfs")
    for d in ("bin", "tmp", "proc", "sys", "dev", "etc"):
        os.makedirs(os.path.join(rootfs, d))
    shutil.copy(busybox, os.path.join(rootfs, "bin", "busybox"))
    for applet in ("sh", "ls", "stat", "cat", "echo", "mknod", "grep", "head", "sed", "sort"):
        os.symlink("busybox", os.path.join(rootfs, "bin", applet))
    podman = ["podman", "--root", os.path.join(tmp, "storage"), "--runroot",
              os.path.join(tmp, "run"), "--tmpdir", os.path.join(tmp, "ptmp"),
              "--storage-driver", "vfs", "--runtime", runtime, "--cgroup-manager", "cgroupfs",
              "--events-backend", "file"]
    image = "localhost/gpupool-cdi-test:1"
    tar = subprocess.Popen(["tar", "-C", rootfs, "-c", "."], stdout=subprocess.PIPE)
    p = subprocess.run(podman + ["import", "-", image], stdin=tar.stdout, capture_output=True,
                       text=True, timeout=120)
    tar.wait()
    check(p.returncode == 0, "podman import", p.stderr)

    helptext = run(["podman", "--help"]).stdout
    takes_dir = "--cdi-spec-dir" in helptext

    def overlay(target, name):
        """Shell words mounting a fresh overlay over target (in the private namespace)."""
        up, work = os.path.join(tmp, name + "-up"), os.path.join(tmp, name + "-work")
        for d in (up, work):
            shutil.rmtree(d, ignore_errors=True)
            os.makedirs(d)
        return "mount -t overlay overlay -o lowerdir=%s,upperdir=%s,workdir=%s %s" % (
            target, up, work, target)

    def container(device, script, spec=spec_dir, userns=False):
        """Runs script in a container given the CDI device; its output. With userns the
        container has a user namespace (root inside is uid 200000 outside): runc then
        bind-mounts device nodes from their container path on the host, so the fake nodes are
        made at /dev/... in a private mount namespace (an overlay over /dev)."""
        args = ["run", "--rm", "--network", "none", "--ulimit", "nofile=1024:1024", "--ulimit",
                "nproc=1024:1024", "-e", "CUDA_VISIBLE_DEVICES=" + ",".join(GPUS), "-e",
                "NVIDIA_VISIBLE_DEVICES=all", "--device", "nvidia.com/gpu=" + device]
        args += (["--uidmap", "0:200000:65536", "--gidmap", "0:200000:65536"] if userns
                 else ["--cap-add", "MKNOD"])
        args += [image, "sh", "-c", script]
        steps = []
        if takes_dir:
            podman_cmd = podman + ["--cdi-spec-dir", spec] + args
        else:
            podman_cmd = podman + args
            steps += [overlay("/etc", "etc"), "mkdir -p /etc/cdi",
                      "cp %s/gpupool.json /etc/cdi/" % spec]
        if userns:
            steps += [overlay("/dev", "dev"), "mkdir -p /dev/nvidia-caps"]
            steps += ["mknod -m 666 /dev/%s c %d %d" % n for n in fake_nodes]
        if steps:
            p = run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                     " && ".join(steps) + ' && exec "$@"', "sh"] + podman_cmd)
        else:
            p = run(podman_cmd)
        check(p.returncode == 0, "the container with " + device, p.stdout, p.stderr)
        return p.stdout

    libcuda = os.path.join(lib, "libcuda.so.1")
    smi = os.path.join(bindir, "nvidia-smi")
    out = container(GPUS[1], """
ls /dev | grep nvidia | sort | sed 's/^/node /'
stat -c 'numbers %%t:%%T' /dev/nvidia1
echo "visible $CUDA_VISIBLE_DEVICES"
cat /dev/nvidia1 2>&1 | head -1 | sed 's/^/own /'
mknod /tmp/gpu0 c %d 0 && cat /tmp/gpu0 2>&1 | head -1 | sed 's/^/other /'
mknod /tmp/gpu1 c %d 1 && cat /tmp/gpu1 2>&1 | head -1 | sed 's/^/same /'
ls %s %s >/dev/null && echo driver-files-present
(echo x > %s) 2>&1 | sed 's/^/write /'
ls %s 2>&1 | head -1 | sed 's/^/old /'
""" % (gpu_major, gpu_major, libcuda, smi, libcuda, os.path.join(lib, "libcuda.so.535.104.05")))
    got = out.splitlines()
    nodes = sorted(ln.split()[-1] for ln in got if ln.startswith("node "))
    check(nodes == ["nvidia-uvm", "nvidia-uvm-tools", "nvidia1", "nvidiactl"],
          "GPU 1's container: exactly its node and the shared ones", out)
    check("numbers %x:1" % gpu_major in got, "/dev/nvidia1 is GPU 1's node", out)
    check("visible " + ",".join(GPUS) in got, "whatever CUDA_VISIBLE_DEVICES says", out)
    check(any(ln.startswith("own ") and "No such device or address" in ln for ln in got),
          "its own GPU: the device cgroup lets it open the node (no driver here: ENXIO)", out)
    check(any(ln.startswith("other ") and "Operation not permitted" in ln for ln in got),
          "GPU 0's numbers: refused by the device cgroup even from a node it made", out)
    check(any(ln.startswith("same ") and "No such device or address" in ln for ln in got),
          "GPU 1's numbers through a node it made: allowed, as its own", out)
    check("driver-files-present" in got, "the driver's libcuda.so.1 and nvidia-smi", out)
    check(any(ln.startswith("write ") and "Read-only file system" in ln for ln in got),
          "the driver's files are read-only", out)
    check(any(ln.startswith("old ") and "No such file" in ln for ln in got),
          "an older driver's libcuda is not mounted", out)

    out = container(MIGS[1], """
ls /dev | grep nvidia | sort
ls /dev/nvidia-caps | sort | sed 's/^/cap /'
""")
    got = out.splitlines()
    a, b = caps[2]
    check(sorted(ln for ln in got if ln.startswith("nvidia")) ==
          ["nvidia-caps", "nvidia-uvm", "nvidia-uvm-tools", "nvidia2", "nvidiactl"],
          "the MIG container: its parent's node, the shared ones", out)
    check(sorted(ln for ln in got if ln.startswith("cap ")) ==
          sorted(["cap nvidia-cap%d" % a, "cap nvidia-cap%d" % b]),
          "exactly its GPU instance's and compute instance's capability nodes", out, caps)

    # A user namespace, as the sandbox gives each tenant: with the node's real paths (--dev-root
    # /dev, the default), GPU 1's container sees and opens its node, and no other GPU's.
    real_dev = os.path.join(tmp, "cdi-dev")
    p = run([agent_bin, "cdi", "--nvml-library", os.path.join(lib, "libnvidia-ml.so.1"),
             "--mig-minors", os.path.join(tmp, "mig-minors"), "--ld-cache",
             os.path.join(drv, "ld.so.cache"), "--output-dir", real_dev], env=env)
    check(p.returncode == 0, "gpupool-agent cdi with /dev", p.stdout, p.stderr)
    out = container(GPUS[1], """
ls /dev | grep nvidia | sort | sed 's/^/node /'
stat -c 'numbers %t:%T' /dev/nvidia1
cat /dev/nvidia1 2>&1 | head -1 | sed 's/^/own /'
head -1 /proc/self/uid_map | sed 's/^/uidmap /'
""", spec=real_dev, userns=True)
    got = out.splitlines()
    check(sorted(ln.split()[-1] for ln in got if ln.startswith("node ")) ==
          ["nvidia-uvm", "nvidia-uvm-tools", "nvidia1", "nvidiactl"],
          "with a user namespace: exactly its node and the shared ones", out)
    check("numbers %x:1" % gpu_major in got, "with a user namespace: GPU 1's node", out)
    check(any(ln.startswith("own ") and "No such device or address" in ln for ln in got),
          "with a user namespace: its own GPU opens (ENXIO: no driver)", out)
    check(any(ln.split()[1:3] == ["0", "200000"] for ln in got if ln.startswith("uidmap ")),
          "the container had its user namespace", out)
finally:
    shutil.rmtree(tmp, ignore_errors=True)
print("cdi_podman: ok")
