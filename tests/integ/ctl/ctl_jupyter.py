"""A real Jupyter notebook server (Debian's jupyter-notebook) through the controller's proxy: a
real gpupoold, a real gpupool-agent (mock NVML, jobs as host processes in their own network
namespace), a notebook job started with the base URL and port it is given.

- its pages and API answer under /v1/jobs/ID/proxy/;
- a kernel is started through the API and runs code sent over its WebSocket channel: the
  answer comes back through the proxy;
- the kernel's WebSocket traffic counts as use: the notebook is not suspended while it flows;
- in headless Chromium (when installed) the one-time URL opens the notebook: the browser keeps
  the session cookie and Jupyter's page lists its files through the API.
Arguments: gpupoold, gpupool-agent, the mock NVML library, the inventories directory.
"""
import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mockagent import MockAgent  # noqa: E402
from pool import check, free_ports, kill_replica_leftovers, Pool, wait  # noqa: E402
from wsclient import raw, recv_exact, ws_frame, ws_recv  # noqa: E402

gpupoold, agent_bin, mock, inventories = sys.argv[1:5]
JUPYTER = "/usr/bin/jupyter-notebook"
CHROMIUM = os.environ.get("GPUPOOL_CHROMIUM", "/usr/bin/chromium")
tmp = tempfile.mkdtemp(prefix="gpupool-jupyter.")
os.chmod(tmp, 0o755)
agents = []


def ws_send(sock, text):
    sock.sendall(ws_frame(text))


if not os.access(JUPYTER, os.X_OK):
    print("%s missing (scripts/deps.sh installs jupyter-notebook): skipped" % JUPYTER)
    sys.exit(0)
try:
    with Pool(gpupoold) as p:
        p.tenant("lab")
        user = p.user("sam", "lab")
        token_file = os.path.join(tmp, "join.token")
        with open(token_file, "w") as f:
            f.write(p.join_token + "\n")
        agent = MockAgent(agent_bin, mock, tmp, "t4", os.path.join(inventories, "pcie-t4.yaml"),
                          p.base, token_file, "--runtime", "none")
        agents.append(agent)
        wait("t4 registered", lambda: p.admin.get("/v1/nodes/t4")[0] == 200)
        for gpu in range(4):
            agent.control("util %d 0" % gpu)  # idle GPUs: only the proxy's traffic keeps it up
        workdir = os.path.join(tmp, "work")
        os.makedirs(workdir)
        open(os.path.join(workdir, "listed-by-jupyter.txt"), "w").close()
        cmd = ('exec %s --no-browser --allow-root --ip=127.0.0.1 --port="$GPUPOOL_PORT" '
               '--NotebookApp.base_url="$GPUPOOL_BASE_URL" --NotebookApp.token= '
               '--NotebookApp.password= --notebook-dir=%s' % (JUPYTER, workdir))
        s, job = user.post("/v1/jobs", {
            "name": "lab", "kind": "notebook", "port": free_ports(1), "idle_timeout": "3s",
            "command": ["sh", "-c", cmd], "env": {"HOME": workdir, "JUPYTER_RUNTIME_DIR": tmp},
            "resources": {"gpus": 1}})
        check(s == 201, "submit the notebook", s, job)
        prefix = "/v1/jobs/%d/proxy/" % job["id"]
        auth = {"Authorization": "Bearer " + user.token}
        p.wait_state(user, "lab", "Running", 60)
        wait("Jupyter answers through the proxy",
             lambda: raw(p.port, "GET", prefix + "api", auth)[0] == 200, 90)

        s, hs, page = raw(p.port, "GET", prefix + "tree", auth)
        check(s == 200 and prefix in page, "its page, with its base URL", s, page[:500])
        hdr = dict(auth, **{"Content-Type": "application/json"})
        xsrf = [v.split(";")[0] for k, v in hs if k.lower() == "set-cookie" and
                v.startswith("_xsrf=")]
        if xsrf:  # set when Jupyter asks for it: then it must pass, and be sent back
            hdr.update({"Cookie": xsrf[0], "X-XSRFToken": xsrf[0].split("=", 1)[1]})
        s, _, text = raw(p.port, "POST", prefix + "api/kernels", hdr,
                         body=json.dumps({"name": "python3"}))
        check(s == 201, "a kernel started through the proxy", s, text)
        kernel = json.loads(text)["id"]

        sock = socket.create_connection(("127.0.0.1", p.port), timeout=60)
        key = base64.b64encode(os.urandom(16)).decode()
        sock.sendall(("GET %sapi/kernels/%s/channels HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
                      "Authorization: Bearer %s\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
                      "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: %s\r\n\r\n"
                      % (prefix, kernel, p.port, user.token, key)).encode())
        head = b""
        while b"\r\n\r\n" not in head:
            head += recv_exact(sock, 1)
        check(head.startswith(b"HTTP/1.1 101"), "the kernel's channel upgraded", head)

        def run(code):
            msg_id = uuid.uuid4().hex
            ws_send(sock, json.dumps({
                "header": {"msg_id": msg_id, "username": "sam", "session": uuid.uuid4().hex,
                           "msg_type": "execute_request", "version": "5.3"},
                "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
                "content": {"code": code, "silent": False, "store_history": False,
                            "user_expressions": {}, "allow_stdin": False}}))
            # The reply (shell channel) and the output (iopub) may come in either order: the
            # output is complete once iopub says the kernel is idle again, and the reply is in.
            out, replied, idle = "", False, False
            deadline = time.time() + 60
            while time.time() < deadline:
                op, data = ws_recv(sock)
                if op != 1:
                    continue
                m = json.loads(data)
                if m.get("parent_header", {}).get("msg_id") != msg_id:
                    continue
                if m["msg_type"] == "stream":
                    out += m["content"]["text"]
                replied |= m["msg_type"] == "execute_reply"
                idle |= m["msg_type"] == "status" and \
                    m["content"].get("execution_state") == "idle"
                if replied and idle:
                    return out
            check(False, "no answer to %r" % code)

        check(run("print(6 * 7)") == "42\n", "code runs in the kernel over its WebSocket")
        # the kernel's traffic alone keeps the notebook up past its idle timeout
        for i in range(8):
            check(run("import time; time.sleep(0.5); print(%d)" % i) == "%d\n" % i,
                  "the kernel answers", i)
            check(p.job(user, "lab")["state"] == "Running", "not suspended while in use")
        sock.close()

        # a browser: the one-time URL, its cookie, and Jupyter's page rendering the files its
        # script lists through the API (with the cookie only)
        if os.access(CHROMIUM, os.X_OK):
            s, d = user.post("/v1/jobs/lab/proxy-session")
            check(s == 200, "a proxy session", s, d)
            profile = os.path.join(tmp, "chromium")
            r = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                                "--user-data-dir=" + profile, "--virtual-time-budget=15000",
                                "--dump-dom", p.base + d["url"]],
                               capture_output=True, text=True, timeout=120)
            check("listed-by-jupyter.txt" in r.stdout,
                  "Jupyter's page lists its files in a browser through the cookie session",
                  r.stdout[-3000:], r.stderr[-2000:])
        else:
            print("%s missing: the browser check skipped" % CHROMIUM)
        p.wait_state(user, "lab", "Suspended", 60)
        check(agent.stop() == 0, "the agent stops cleanly", agent.log()[-2000:])
        check(p.stop() == 0, "gpupoold exits cleanly", p.read_log()[-3000:])
finally:
    for a in agents:
        if a.proc.poll() is None:
            a.stop()
    kill_replica_leftovers(tmp)
    shutil.rmtree(tmp, ignore_errors=True)
print("ok")
