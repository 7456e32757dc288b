"""A Jupyter notebook on a whole pool, reached only through the controller.

`gpupool up` (gpupoold, one agent over the mock NVML, gpupool-run, the real podman with storage
of the test's own) with notebooks.image set to a Jupyter image this test builds from Debian's
jupyter-notebook and python3-ipykernel (the files of the installed packages, tests/integ/ctl/
oci.py) and pushes to a local registry:

- a tenant's notebook that names neither image nor command runs the pool's default notebook
  (Jupyter under its proxy path), its working directory in a volume;
- `gpupool notebook open` prints a one-time address; in headless Chromium the tenant's user logs
  in to the dashboard (its New notebook form refuses a bad port at the field), presses Open on
  the notebook's page, and in the new tab opens a notebook file, runs its cells over the
  kernel's WebSockets through the proxy and sees the output (tests/e2e/notebook_browser.mjs);
  one cell writes a file into the volume;
- another tenant's user gets 404 for the proxy and for an address; the notebook's port is not
  reachable on the node's network;
- left alone past its idle_timeout, the notebook is suspended (event IdleSuspended, its GPU share
  freed); `gpupool notebook open` resumes it, and the file its cell wrote is still there.
Arguments: the gpupool program (gpupoold, gpupool-agent, gpupool-run beside it).
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

from oci import Registry, Storage, build_debian_image
from pool import Client, check, free_ports, pool_down, wait

gpupool = sys.argv[1]
build = os.path.dirname(os.path.dirname(os.path.abspath(gpupool)))
src = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__)))))
browser_script = os.path.join(src, "tests", "e2e", "notebook_browser.mjs")
node = shutil.which("node")
if not shutil.which("jupyter-notebook") or not node:
    print("skipped: jupyter-notebook (Debian package) or node missing")
    sys.exit(1 if os.environ.get("CI") == "true" else 77)

tmp = tempfile.mkdtemp(prefix="gpupool-e2e-notebook.", dir=build)
os.chmod(tmp, 0o755)
pool = os.path.join(tmp, "pool")
home = os.path.join(tmp, "home")
os.makedirs(home)
os.chmod(home, 0o777)
PORT = 8888
NOTEBOOK = {"cells": [{"cell_type": "code", "execution_count": None, "metadata": {},
                       "outputs": [], "source": ["print(6 * 7)\n",
                                                 "open('written.txt', 'w').write('kept')"]}],
            "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                        "language": "python"}},
            "nbformat": 4, "nbformat_minor": 5}
with open(os.path.join(home, "hello.ipynb"), "w") as f:
    json.dump(NOTEBOOK, f)
os.chmod(os.path.join(home, "hello.ipynb"), 0o666)

st = Storage()
reg = Registry(st)
port = free_ports(2)  # the controller, then its agent


def job_state(c, jid):
    s, d = c.get("/v1/jobs/%d" % jid)
    return d.get("state") if s == 200 else None


def notebook_open(token):
    r = subprocess.run([gpupool, "notebook", "open", "lab", "--server",
                        "http://127.0.0.1:%d" % port], capture_output=True, text=True,
                       timeout=60, env=dict(os.environ, GPUPOOL_TOKEN=token))
    return r


try:
    t0 = time.time()
    ref = build_debian_image(st, reg, "team/jupyter:1",
                             ["jupyter-notebook", "python3-ipykernel", "dash"],
                             skip=("/usr/bin/gdb",))
    print("image %s built in %.0f s" % (ref, time.time() - t0))
    env = dict(st.env, GPUPOOL_NOTEBOOKS_IMAGE=ref)
    env.pop("GPUPOOL_RUNTIME", None)
    up = subprocess.run([gpupool, "up", "--data-dir", pool, "--port", str(port), "--nodes",
                         "pcie-t4:1"], capture_output=True, text=True, timeout=120, env=env)
    check(up.returncode == 0 and "is up" in up.stdout, "gpupool up", up.stdout, up.stderr)
    admin = Client("http://127.0.0.1:%d" % port,
                   open(os.path.join(pool, "admin.token")).read().strip())
    for t in ("ds", "other"):
        check(admin.post("/v1/tenants", {"name": t})[0] == 201, "tenant " + t)
    s, d = admin.post("/v1/volumes", {"name": "home-ds", "path": home})
    check(s == 201, "volume", s, d)
    tokens = {}
    for name, t in (("alice", "ds"), ("bob", "other")):
        s, d = admin.post("/v1/tokens", {"name": name, "role": "user", "tenant": t})
        check(s == 201, "token " + name, s, d)
        tokens[name] = d["token"]
    alice = Client(admin.base, tokens["alice"])
    bob = Client(admin.base, tokens["bob"])

    s, d = alice.post("/v1/jobs", {"name": "lab", "kind": "notebook", "port": PORT,
                                   "resources": {"gpu_milli": 100},
                                   "volumes": ["home-ds:rw"], "working_dir": "/data/home-ds",
                                   "idle_timeout": "20s"})
    check(s == 201, "submit the notebook", s, d)
    jid = d["id"]
    check(d["spec"]["image"] == ref and d["spec"]["command"][:2] == ["/bin/sh", "-c"],
          "the default image and command are stored in the spec", d["spec"])
    wait("the notebook runs", lambda: job_state(alice, jid) == "Running", 180)
    last = {}

    def answers():
        last["api"] = alice.get("/v1/jobs/%d/proxy/api" % jid)
        return last["api"][0] == 200

    try:
        wait("Jupyter answers through the proxy", answers, 120)
    except SystemExit:
        print("last answer:", last.get("api"), file=sys.stderr)
        for stream in ("stdout", "stderr"):
            print(stream, alice.get("/v1/jobs/%d/logs?stream=%s" % (jid, stream)),
                  file=sys.stderr)
        print(alice.get("/v1/jobs/%d" % jid), file=sys.stderr)
        raise

    # only the notebook's tenant
    check(bob.get("/v1/jobs/%d/proxy/api" % jid)[0] == 404, "another tenant: 404")
    check(bob.post("/v1/jobs/%d/proxy-session" % jid)[0] == 404,
          "another tenant gets no address: 404")
    r = notebook_open(tokens["bob"])
    check(r.returncode != 0, "another tenant's notebook open fails", r.stdout, r.stderr)
    with socket.socket() as sk:
        sk.settimeout(2)
        check(sk.connect_ex(("127.0.0.1", PORT)) != 0,
              "the notebook's port is not on the node's network")

    r = notebook_open(tokens["alice"])
    check(r.returncode == 0 and "/v1/jobs/%d/proxy/?gp_code=" % jid in r.stdout,
          "gpupool notebook open prints the address", r.stdout, r.stderr)
    # the dashboard's Open (the address printed above stays unused: it expires)
    shots = os.path.join(src, "docs", "screenshots")
    b = subprocess.run([node, browser_script, "--base", admin.base, "--token", tokens["alice"],
                        "--job", str(jid), "--notebook", "hello.ipynb", "--expect", "42",
                        "--screenshots", shots], capture_output=True, text=True, timeout=240)
    if b.returncode == 77:
        print(b.stdout)
        sys.exit(77)
    check(b.returncode == 0, "the notebook runs in Chromium through the proxy", b.stdout, b.stderr)
    check(open(os.path.join(home, "written.txt")).read() == "kept",
          "the cell wrote into the volume")

    # idle: suspended, its GPU share freed; resumed on open, its files kept
    wait("the idle notebook is suspended", lambda: job_state(alice, jid) == "Suspended", 120)
    s, ev = alice.get("/v1/jobs/%d/events" % jid)
    check(any(e.get("type") == "IdleSuspended" for e in ev.get("items", [])),
          "an IdleSuspended event", ev)
    s, d = alice.get("/v1/jobs/%d" % jid)
    check(not d.get("placement"), "a suspended notebook holds no GPU", d)
    r = notebook_open(tokens["alice"])
    check(r.returncode == 0, "notebook open resumes it", r.stdout, r.stderr)
    wait("the notebook runs again", lambda: job_state(alice, jid) == "Running", 180)
    wait("Jupyter answers again",
         lambda: alice.get("/v1/jobs/%d/proxy/api/contents/written.txt" % jid)[0] == 200, 120)
    s, d = alice.get("/v1/jobs/%d/proxy/api/contents/written.txt" % jid)
    check(s == 200 and d.get("content") == "kept", "the file is still there", s, d)
    print("ok")
finally:
    pool_down(gpupool, pool, tmp)
    reg.close()
    st.close()
