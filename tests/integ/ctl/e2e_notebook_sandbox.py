"""A notebook in its podman sandbox, reached through the controller's proxy: `gpupool up`
(gpupoold, one agent over the mock NVML, the real podman with storage of the test's own) and a
notebook over the host root running nb_server.py.

- the container's network is slirp4netns without the host's loopback (never the host network
  nor podman's bridge);
- GET and a WebSocket echo pass through the proxy: the agent's tunnel enters the container's
  network namespace (its process from podman);
- the notebook's port is not on the node's 127.0.0.1, and the notebook cannot reach the
  controller through the node's loopback (10.0.2.2, slirp4netns's name for the host).
Arguments: the gpupool program (gpupoold, gpupool-agent, gpupool-run beside it).
"""
import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile

from oci import Storage
from pool import Client, check, free_ports, open_to_all, pool_down, wait

gpupool = sys.argv[1]
build = os.path.dirname(os.path.dirname(os.path.abspath(gpupool)))
tmp = tempfile.mkdtemp(prefix="gpupool-e2e-notebook.", dir=build)
os.chmod(tmp, 0o755)
pool = os.path.join(tmp, "pool")
node = "pcie-t4-1"
port = free_ports(2)
st = Storage()
env = dict(st.env)
env.pop("GPUPOOL_RUNTIME", None)
# The server's source goes in the command itself: the sandbox has a /tmp of its own, and this
# directory (or the source tree) may be under the host's /tmp (a clean clone in CI).
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "nb_server.py")) as f:
    server_src = f.read()


def raw(method, target, headers=None):
    import http.client
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    c.request(method, target, headers=headers or {})
    r = c.getresponse()
    out = (r.status, r.read().decode(errors="replace"))
    c.close()
    return out


try:
    up = subprocess.run([gpupool, "up", "--data-dir", pool, "--port", str(port), "--nodes",
                         "pcie-t4:1"], capture_output=True, text=True, timeout=120, env=env)
    check(up.returncode == 0 and "is up" in up.stdout, "gpupool up", up.stdout, up.stderr)
    base = "http://127.0.0.1:%d" % port
    admin = Client(base, open(os.path.join(pool, "admin.token")).read().strip())
    check(admin.post("/v1/tenants", {"name": "nb"})[0] == 201, "tenant")
    s, d = admin.post("/v1/tokens", {"name": "ann", "role": "user", "tenant": "nb"})
    check(s == 201, "a user", s, d)
    ann = Client(base, d["token"])
    open_to_all(tmp)
    nb_port = free_ports(1)
    s, job = ann.post("/v1/jobs", {"name": "nb", "kind": "notebook", "port": nb_port,
                                   "command": ["python3", "-c", server_src], "resources": {"gpus": 1}})
    check(s == 201, "submit the notebook", s, job)
    prefix = "/v1/jobs/%d/proxy/" % job["id"]
    auth = {"Authorization": "Bearer " + ann.token}
    wait("the notebook answers through the proxy", lambda: raw("GET", prefix, auth)[0] == 200,
         90)

    # the container's network
    containers = st.containers()
    check(len(containers) == 1, "one container", containers)
    info = json.loads(st.podman("inspect", containers[0]).stdout)
    mode = info[0]["HostConfig"]["NetworkMode"]
    check(mode.startswith("slirp4netns"), "slirp4netns, not the host network or a bridge", mode)

    s, text = raw("GET", prefix + "x?y=1", auth)
    doc = json.loads(text)
    check(s == 200 and doc["target"] == prefix + "x?y=1" and doc["base_url"] == prefix,
          "GET through the proxy into the container", s, text)

    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall(("GET %sws HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
                  "Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"
                  "Sec-WebSocket-Key: %s\r\n\r\n" % (prefix, ann.token, key)).encode())
    head = b""
    while b"\r\n\r\n" not in head:
        c = sock.recv(1)
        check(c, "the upgrade answer", head)
        head += c
    check(head.startswith(b"HTTP/1.1 101"), "101 through the proxy", head)
    sock.sendall(bytes([0x81, 0x84]) + b"\0\0\0\0" + b"ping")
    check(sock.recv(6) == bytes([0x81, 4]) + b"ping", "a WebSocket frame echoed")
    sock.close()

    try:
        socket.create_connection(("127.0.0.1", nb_port), timeout=5).close()
        check(False, "the notebook's port is not on the node's 127.0.0.1")
    except OSError:
        pass
    s, text = raw("GET", prefix + "connect?to=10.0.2.2:%d" % port, auth)
    check(s == 200 and json.loads(text)["connect"] != "ok",
          "the notebook cannot reach the node's loopback", s, text)
    s, text = raw("GET", prefix + "connect?to=127.0.0.1:%d" % port, auth)
    check(s == 200 and json.loads(text)["connect"] != "ok",
          "nor the controller on 127.0.0.1 (its own loopback)", s, text)
finally:
    down, leftover = pool_down(gpupool, pool, tmp, tmp)
    st.close()
    shutil.rmtree(tmp, ignore_errors=True)
check(down.returncode == 0, "gpupool down", down.stdout, down.stderr)
check(not leftover, "down stopped every job", leftover)
print("ok")
