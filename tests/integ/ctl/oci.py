"""Containers for integration tests, built here and never pulled from the internet.

- Storage: podman storage of the test's own (a storage.conf and a registries.conf in a temporary
  directory, given to podman, skopeo and the programs under test through the environment), so
  parallel tests never share images or containers;
- Registry: a real OCI registry (Debian's docker-registry, the distribution registry) on
  127.0.0.1 and a free port, plain HTTP (registries.conf marks it insecure), optionally with
  htpasswd authentication (bcrypt through Python's crypt module);
- Throttle: a TCP proxy in front of a registry that slows what it sends, so that a pull lasts
  long enough to be watched;
- build_image: a small image from this machine's busybox-static (and optional files of the test's
  own), `podman import`ed and pushed to a registry.

Usage:
    with Storage() as st, Registry(st) as reg:
        ref = build_image(st, reg, "team/bb:1")
        subprocess.run([...], env=st.env)
"""

import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
import warnings

from pool import free_port

BUSYBOX = "/bin/busybox"  # busybox-static
APPLETS = ("sh", "cat", "echo", "grep", "id", "ls", "mount", "sleep", "touch", "env", "head",
           "wc", "pwd", "true", "false", "kill", "dd")


def host_libraries(programs, exclude=()):
    """{path: bytes} of the shared libraries programs (host paths) load, as ldd lists them (the
    dynamic loader included), at their host paths, less those under the directories of exclude:
    what an image needs to run dynamically linked programs built here."""
    paths = set()
    for prog in programs:
        out = subprocess.run(["ldd", prog], capture_output=True, text=True).stdout
        for line in out.splitlines():
            words = line.split()
            lib = words[2] if len(words) > 2 and words[1] == "=>" else words[0] if words else ""
            if lib.startswith("/") and not any(lib.startswith(d.rstrip("/") + "/")
                                               for d in exclude):
                paths.add(lib)
    files = {}
    for p in sorted(paths):
        with open(p, "rb") as f:
            files[p] = f.read()
    return files


def wait_http(url, timeout=20):
    """Waits until url answers (any HTTP status)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            urllib.request.urlopen(url, timeout=2)
            return
        except urllib.error.HTTPError:
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("no answer from " + url)


class Storage:
    """Podman storage and registries configuration of one test; env carries them."""

    def __init__(self, parent=None):
        self.dir = tempfile.mkdtemp(prefix="gpupool-oci.", dir=parent)
        self.conf = os.path.join(self.dir, "storage.conf")
        self.registries = os.path.join(self.dir, "registries.conf")
        with open(self.conf, "w") as f:
            f.write('[storage]\ndriver = "overlay"\ngraphroot = "%s/graph"\nrunroot = "%s/run"\n'
                    % (self.dir, self.dir))
        self.insecure = []
        self.write_registries()
        self.env = dict(os.environ, CONTAINERS_STORAGE_CONF=self.conf,
                        CONTAINERS_REGISTRIES_CONF=self.registries)

    def write_registries(self):
        with open(self.registries, "w") as f:
            f.write('unqualified-search-registries = []\n')
            for loc in self.insecure:
                f.write('[[registry]]\nlocation = "%s"\ninsecure = true\n' % loc)

    def allow(self, location):
        """Plain HTTP to location (HOST:PORT)."""
        self.insecure.append(location)
        self.write_registries()

    def podman(self, *args, check=True, timeout=120):
        out = subprocess.run(["podman"] + list(args), capture_output=True, text=True,
                             env=self.env, timeout=timeout)
        if check and out.returncode != 0:
            raise RuntimeError("podman %s: %s" % (" ".join(args), out.stderr.strip()))
        return out

    def containers(self, label=None):
        """The names of the containers (all states), optionally only those with label K=V."""
        args = ["ps", "-a", "--format", "{{.Names}}"]
        if label:
            args += ["--filter", "label=" + label]
        return self.podman(*args).stdout.split()

    def exists(self, image):
        return self.podman("image", "exists", image, check=False).returncode == 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        self.podman("rm", "--all", "--force", "--time", "0", check=False)
        self.podman("rmi", "--all", "--force", check=False)
        subprocess.run(["umount", "-R", os.path.join(self.dir, "graph", "overlay")],
                       capture_output=True)
        shutil.rmtree(self.dir, ignore_errors=True)


def htpasswd_line(user, password):
    """A bcrypt htpasswd line (the registry's htpasswd auth takes bcrypt only)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import crypt  # noqa: E402 (deprecated, still in 3.11; bcrypt through libcrypt)
        return "%s:%s\n" % (user, crypt.crypt(password, crypt.mksalt(crypt.METHOD_BLOWFISH,
                                                                     rounds=16)))


class Registry:
    """docker-registry on 127.0.0.1 and a free port, allowed in storage's registries.conf;
    with users ({name: password}) it wants htpasswd authentication."""

    def __init__(self, storage, users=None):
        self.storage = storage
        self.dir = tempfile.mkdtemp(prefix="registry.", dir=storage.dir)
        self.port = free_port()
        self.host = "127.0.0.1:%d" % self.port
        conf = ["version: 0.1", "log:", "  level: warn", "storage:", "  filesystem:",
                "    rootdirectory: %s/data" % self.dir, "http:",
                "  addr: %s" % self.host]
        self.users = users or {}
        if users:
            path = os.path.join(self.dir, "htpasswd")
            with open(path, "w") as f:
                for u, p in users.items():
                    f.write(htpasswd_line(u, p))
            conf += ["auth:", "  htpasswd:", "    realm: gpupool-test", "    path: " + path]
        self.config = os.path.join(self.dir, "config.yml")
        with open(self.config, "w") as f:
            f.write("\n".join(conf) + "\n")
        self.log = open(os.path.join(self.dir, "registry.log"), "wb")
        self.proc = subprocess.Popen(["docker-registry", "serve", self.config],
                                     stdout=self.log, stderr=self.log)
        wait_http("http://%s/v2/" % self.host)
        storage.allow(self.host)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


class Throttle:
    """A TCP proxy on 127.0.0.1 and a free port to target (HOST:PORT) that sends the answers on
    at about rate bytes per second: a pull through it lasts size / rate seconds."""

    def __init__(self, storage, target, rate=4 << 20):
        self.target = target
        self.rate = rate
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.host = "127.0.0.1:%d" % self.sock.getsockname()[1]
        self.stop = False
        threading.Thread(target=self.serve, daemon=True).start()
        storage.allow(self.host)

    def serve(self):
        while not self.stop:
            try:
                client, _ = self.sock.accept()
            except OSError:
                return
            host, port = self.target.split(":")
            try:
                upstream = socket.create_connection((host, int(port)))
            except OSError:
                client.close()
                continue
            threading.Thread(target=self.pipe, args=(client, upstream, 0), daemon=True).start()
            threading.Thread(target=self.pipe, args=(upstream, client, self.rate),
                             daemon=True).start()

    @staticmethod
    def pipe(src, dst, rate):
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
                if rate:
                    time.sleep(len(data) / rate)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def close(self):
        self.stop = True
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def build_image(storage, registry, name, files=None, extra_bytes=0, creds=None, applets=(),
                executables=()):
    """Builds NAME (e.g. "team/bb:1") from busybox-static with /bin/APPLETS and the applets
    given, the files given ({path in the image: bytes}; those named in executables mode 0755)
    and extra_bytes of random data (/blob, to make it bigger), imports it and pushes it to
    registry. Returns the reference pulled from there."""
    root = tempfile.mkdtemp(prefix="rootfs.", dir=storage.dir)
    for d in ("bin", "etc", "tmp", "workspace"):
        os.makedirs(os.path.join(root, d))
    os.chmod(os.path.join(root, "tmp"), 0o1777)
    shutil.copy(BUSYBOX, os.path.join(root, "bin", "busybox"))
    for a in sorted(set(APPLETS) | set(applets)):
        os.symlink("busybox", os.path.join(root, "bin", a))
    for path, data in (files or {}).items():
        full = os.path.join(root, path.lstrip("/"))
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as f:
            f.write(data)
        os.chmod(full, 0o755 if path in executables else 0o644)
    if extra_bytes:
        with open(os.path.join(root, "blob"), "wb") as f:
            f.write(os.urandom(extra_bytes))
    tar = root + ".tar"
    subprocess.run(["tar", "-C", root, "-cf", tar, "."], check=True)
    local = "localhost/" + name
    storage.podman("import", "--change", "ENV=PATH=/bin", "--change", "WORKDIR=/workspace", tar,
                   local)
    ref = "%s/%s" % (registry.host, name)
    args = ["push", "--tls-verify=false"]
    if creds:
        args += ["--creds", "%s:%s" % creds]
    storage.podman(*(args + [local, ref]))
    storage.podman("rmi", local)  # pulled again by the test
    shutil.rmtree(root, ignore_errors=True)
    os.unlink(tar)
    return ref


# Parts of installed packages an image never needs.
DEBIAN_SKIP = ("/usr/share/doc/", "/usr/share/man/", "/usr/share/locale/", "/usr/share/info/",
               "/usr/share/lintian/", "/usr/share/bug/")


def debian_files(packages):
    """The files and symbolic links the installed Debian packages and everything they depend on
    (not recommends) put on this machine, less DEBIAN_SKIP: sorted paths."""
    out = subprocess.run(["apt-cache", "depends", "--recurse", "--no-recommends", "--no-suggests",
                          "--no-conflicts", "--no-breaks", "--no-replaces", "--no-enhances",
                          "--installed"] + list(packages),
                         capture_output=True, text=True, check=True).stdout
    names = sorted({line.strip("<> ") for line in out.splitlines() if not line.startswith(" ")})
    listed = subprocess.run(["dpkg", "-L"] + names, capture_output=True, text=True).stdout
    paths = set()
    for p in listed.splitlines():
        if p.startswith("/") and not p.startswith(DEBIAN_SKIP) and \
                (os.path.islink(p) or os.path.isfile(p)):
            paths.add(p)
    return sorted(paths)


def build_debian_image(storage, registry, name, packages, files=None, skip=(), env=(),
                       workdir="/workspace"):
    """Builds NAME from the files of installed Debian packages (debian_files, less the path
    prefixes in skip), with /tmp and workdir (mode 1777) and the files given ({path: bytes});
    imports it with ENV entries env ("K=V") and pushes it to registry. Returns the reference to
    pull."""
    root = tempfile.mkdtemp(prefix="rootfs.", dir=storage.dir)
    merged = []  # /bin, /lib, ... as links into /usr, as on this machine
    for top in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        if os.path.islink("/" + top):
            os.makedirs(os.path.join(root, os.readlink("/" + top).lstrip("/")), exist_ok=True)
            os.symlink(os.readlink("/" + top), os.path.join(root, top))
            merged.append("/" + top)
    listing = root + ".list"
    with open(listing, "w") as f:
        for p in debian_files(packages):
            if not p.startswith(tuple(skip)) and p not in merged:
                f.write(p.lstrip("/") + "\n")
    subprocess.run(["tar", "-C", "/", "--no-recursion", "-cf", root + ".base.tar",
                    "--files-from", listing], check=True)
    subprocess.run(["tar", "-C", root, "-xf", root + ".base.tar"], check=True)
    for d in ("tmp", workdir.lstrip("/")):
        os.makedirs(os.path.join(root, d), exist_ok=True)
        os.chmod(os.path.join(root, d), 0o1777)
    for path, data in (files or {}).items():
        full = os.path.join(root, path.lstrip("/"))
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as f:
            f.write(data)
    tar = root + ".tar"
    subprocess.run(["tar", "-C", root, "-cf", tar, "."], check=True)
    local = "localhost/" + name
    changes = ["--change", "ENV=PATH=/usr/local/bin:/usr/bin:/bin", "--change",
               "WORKDIR=" + workdir]
    for e in env:
        changes += ["--change", "ENV=" + e]
    storage.podman("import", *changes, tar, local, timeout=600)
    ref = "%s/%s" % (registry.host, name)
    storage.podman("push", "--tls-verify=false", local, ref, timeout=600)
    storage.podman("rmi", local)
    shutil.rmtree(root, ignore_errors=True)
    for f in (tar, root + ".base.tar", listing):
        os.unlink(f)
    return ref


# ---- GPUs for containers without GPUs: fake device nodes, a mock inventory naming them, and a
# place podman reads CDI specs from that does not touch the host's /etc ----

def free_char_majors(n):
    """n character-device majors no driver has registered here (local/experimental ranges
    first): opening a node of one that a container's device cgroup allows fails with ENXIO (no
    driver), one it does not allow with EPERM."""
    used = set()
    with open("/proc/devices") as f:
        for line in f:
            if line.startswith("Block"):
                break
            parts = line.split()
            if parts and parts[0].isdigit():
                used.add(int(parts[0]))
    return [m for m in list(range(60, 64)) + list(range(120, 128)) + list(range(240, 255))
            if m not in used][:n]


def fake_gpu_nodes(dev, major, ngpus):
    """Makes DEV/nvidia0..N-1 (minor = index), nvidiactl, nvidia-uvm and nvidia-uvm-tools as
    character devices of major (mode 0666), as the NVIDIA driver would. Needs root."""
    os.makedirs(dev, exist_ok=True)
    nodes = [("nvidia%d" % i, i) for i in range(ngpus)] + \
        [("nvidiactl", 255), ("nvidia-uvm", 250), ("nvidia-uvm-tools", 251)]
    for name, minor in nodes:
        path = os.path.join(dev, name)
        os.mknod(path, 0o666 | 0o020000, os.makedev(major, minor))
        os.chmod(path, 0o666)


def gpu_inventory(path, uuids):
    """A mock NVML inventory (src/nvml-mock) of H100s with these UUIDs, GPU i with minor i (its
    node DEV/nvidiaI for the agent's --dev-root)."""
    with open(path, "w") as f:
        f.write('driver_version: "550.54.15"\ncuda_version: "12.4"\n')
        f.write("defaults: {name: NVIDIA H100 80GB HBM3, memory_mib: 81559}\ngpus:\n")
        for i, uuid in enumerate(uuids):
            f.write('  - uuid: %s\n    pci_bus_id: "00000000:%02X:00.0"\n    minor: %d\n'
                    % (uuid, 0x18 + i, i))


def private_etc_cdi(base, name):
    """Words that start a program (append its argv) in a private mount namespace whose /etc is
    an overlay with an empty /etc/cdi: podman 4.3 reads CDI specs only from /etc/cdi and
    /var/run/cdi, and the host's /etc is not touched. The overlay's directories are BASE/NAME-up
    and BASE/NAME-work."""
    up, work = os.path.join(base, name + "-up"), os.path.join(base, name + "-work")
    os.makedirs(up)
    os.makedirs(work)
    setup = ("mount -t overlay overlay -o lowerdir=/etc,upperdir=%s,workdir=%s /etc && "
             "rm -rf /etc/cdi && mkdir /etc/cdi && exec \"$@\"" % (up, work))
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", setup, "sh"]
