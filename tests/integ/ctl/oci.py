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

BUSYBOX = "/bin/busybox"  # busybox-static
APPLETS = ("sh", "cat", "echo", "grep", "id", "ls", "mount", "sleep", "touch", "env", "head",
           "wc", "pwd", "true", "false", "kill", "dd")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


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


def build_image(storage, registry, name, files=None, extra_bytes=0, creds=None):
    """Builds NAME (e.g. "team/bb:1") from busybox-static with /bin/APPLETS, the files given
    ({path in the image: bytes}) and extra_bytes of random data (/blob, to make it bigger), imports
    it and pushes it to registry. Returns the reference pulled from there."""
    root = tempfile.mkdtemp(prefix="rootfs.", dir=storage.dir)
    for d in ("bin", "etc", "tmp", "workspace"):
        os.makedirs(os.path.join(root, d))
    os.chmod(os.path.join(root, "tmp"), 0o1777)
    shutil.copy(BUSYBOX, os.path.join(root, "bin", "busybox"))
    for a in APPLETS:
        os.symlink("busybox", os.path.join(root, "bin", a))
    for path, data in (files or {}).items():
        full = os.path.join(root, path.lstrip("/"))
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as f:
            f.write(data)
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
