"""The controller's proxy to a notebook, end to end: a real gpupoold, a real gpupool-agent (mock
NVML, jobs as host processes: --runtime none) and a notebook job running nb_server.py (an HTTP
server and a WebSocket echo) in a network namespace of its own.

- GET and POST pass through /v1/jobs/ID/proxy/... with the tenant's token, path and query
  unchanged; the job is told its base URL and port (GPUPOOL_BASE_URL, GPUPOOL_PORT); it never
  sees the Authorization header or the proxy's cookie, and gets X-Forwarded-*; a Set-Cookie for
  Path=/ comes back scoped to the job's prefix, one for the prefix passes as it is; a chunked answer is decoded; a streamed
  answer reaches the client before the job has finished it.
- The cookie flow: POST proxy-session answers a one-time URL; its GET answers 303 to the URL
  without the code, with an HttpOnly SameSite=Lax cookie for the job's prefix; the code works
  once; the cookie then opens the proxy.
- Request bodies: a 5 MiB PUT through the proxy reaches the job whole (proxy.max_body, set to
  8 MiB here); one past proxy.max_body is 413; an API path keeps http.max_body (2 MiB: 413).
- A WebSocket upgrade through the proxy echoes frames.
- Keep-alive: many sequential requests through the proxy reach the job over one or two
  connections (the tunnel is kept and reused), with the Content-Length or the chunked coding;
  once the job exits and restarts (a new epoch), the next request reaches the new process.
- Another tenant gets 404, an admin 403, no credentials 401; a batch job has nothing to proxy.
- The job's port cannot be reached on the node's own 127.0.0.1 (its own namespace), and the
  agent's tunnel refuses a port the job did not declare, and callers without the node's token.
- The CLI: gpupool submit --kind notebook --port N, and gpupool notebook open prints a one-time
  URL that opens the proxy.
- Idle: a notebook with neither GPU use nor proxy traffic for its idle_timeout is Suspended (its
  GPUs freed), kept Suspended across a restart; traffic keeps it up; a proxy request resumes it
  (503 with Retry-After meanwhile), as POST /v1/jobs/{job}/resume does; the files it wrote in
  its volume are still there.
Arguments: gpupoold, gpupool-agent, the mock NVML library, the inventories directory, gpupool.
"""
import base64
import hashlib
import http.client
import json
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mockagent import MockAgent  # noqa: E402
from pool import check, free_ports, kill_replica_leftovers, Pool, wait  # noqa: E402
from wsclient import raw, ws_frame, ws_recv  # noqa: E402

gpupoold, agent_bin, mock, inventories, gpupool = sys.argv[1:6]
tmp = tempfile.mkdtemp(prefix="gpupool-proxy.")
os.chmod(tmp, 0o755)
server_py = os.path.join(tmp, "nb_server.py")
shutil.copy(os.path.join(os.path.dirname(os.path.abspath(__file__)), "nb_server.py"), server_py)
agents = []


def head_only(port, method, target, headers, length):
    """A request head announcing a body of length bytes, none sent: (status, answer text), as
    answered before the body is read."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    lines = ["%s %s HTTP/1.1" % (method, target), "Host: 127.0.0.1",
             "Content-Length: %d" % length] + ["%s: %s" % kv for kv in headers.items()]
    sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
    r = http.client.HTTPResponse(sock)
    r.begin()
    out = (r.status, r.read().decode(errors="replace"))
    sock.close()
    return out


def header(hs, name):
    return [v for k, v in hs if k.lower() == name.lower()]


def seen(doc, name):
    return [v for k, v in doc["headers"] if k.lower() == name.lower()]


def ws_read(sock):
    op, data = ws_recv(sock)
    return op, data.decode()


try:
    with Pool(gpupoold, ["--proxy-max-body", "8MiB"]) as p:
        admin = p.admin
        p.tenant("team-a")
        p.tenant("team-b")
        alice = p.user("alice", "team-a")
        bob = p.user("bob", "team-b")
        token_file = os.path.join(tmp, "join.token")
        with open(token_file, "w") as f:
            f.write(p.join_token + "\n")
        agent = MockAgent(agent_bin, mock, tmp, "t4", os.path.join(inventories, "pcie-t4.yaml"),
                          p.base, token_file, "--runtime", "none")
        agents.append(agent)
        wait("t4 registered", lambda: admin.get("/v1/nodes/t4")[0] == 200)

        nb_port = free_ports(1)
        s, job = alice.post("/v1/jobs", {
            "name": "nb", "kind": "notebook", "port": nb_port,
            "command": ["python3", server_py], "resources": {"gpus": 1}})
        check(s == 201, "submit the notebook", s, job)
        jid = job["id"]
        prefix = "/v1/jobs/%d/proxy/" % jid
        p.wait_state(alice, "nb", "Running", 60)
        auth = {"Authorization": "Bearer " + alice.token}
        wait("the notebook answers through the proxy",
             lambda: raw(p.port, "GET", prefix, auth)[0] == 200, 60)

        # ---- HTTP with the token ----
        s, hs, text = raw(p.port, "GET", prefix + "files/a%20b.txt?x=1&y=%2F",
                          dict(auth, Cookie="theirs=7"))
        check(s == 200, "GET through the proxy", s, text)
        doc = json.loads(text)
        check(doc["target"] == prefix + "files/a%20b.txt?x=1&y=%2F",
              "the path and query reach the job unchanged", doc["target"])
        check(doc["base_url"] == prefix and doc["port"] == nb_port,
              "GPUPOOL_BASE_URL and GPUPOOL_PORT", doc)
        check(not seen(doc, "Authorization"), "the job never sees the Authorization header", doc)
        check(seen(doc, "Cookie") == ["theirs=7"], "the job's own cookies pass", doc)
        check(seen(doc, "X-Forwarded-Prefix") == [prefix.rstrip("/")] and
              seen(doc, "X-Forwarded-Proto") == ["http"] and
              seen(doc, "X-Forwarded-For") == ["127.0.0.1"], "X-Forwarded-* set", doc)
        cookies = header(hs, "Set-Cookie")
        check([c for c in cookies if c.startswith("planted=")] == ["planted=1; Path=" + prefix],
              "a Set-Cookie for Path=/ is scoped to the job's prefix", cookies)
        check(any(c.startswith("mine=2") for c in cookies),
              "a Set-Cookie for the job's prefix passes", cookies)
        check(header(hs, "Content-Type") == ["application/json"], "the job's Content-Type", hs)

        s, hs, text = raw(p.port, "POST", prefix + "api/run", dict(auth, **{
            "Content-Type": "application/json"}), body=json.dumps({"cell": "1+1"}))
        check(s == 200 and json.loads(text)["body"] == '{"cell": "1+1"}', "POST with a body",
              s, text)
        # ---- request bodies past http.max_body: proxy.max_body ----
        upload = os.urandom(5 * 1024 * 1024)
        s, hs, text = raw(p.port, "PUT", prefix + "notebook.ipynb", auth, body=upload)
        check(s == 200 and json.loads(text)["len"] == len(upload) and
              json.loads(text)["sha256"] == hashlib.sha256(upload).hexdigest(),
              "a 5 MiB PUT reaches the job whole", s, text[:300])
        s, text = head_only(p.port, "PUT", prefix + "notebook.ipynb", auth, 8 * 1024 * 1024 + 1)
        check(s == 413 and "GP_ETOOBIG" in text and "8388608" in text, "past proxy.max_body: 413",
              s, text)
        s, text = head_only(p.port, "PUT", "/v1/services/nb/x", auth, 8 * 1024 * 1024 + 1)
        check(s == 413, "a service's address has proxy.max_body too", s, text)
        s, text = head_only(p.port, "POST", "/v1/jobs", auth, 2 * 1024 * 1024)
        check(s == 413 and "GP_ETOOBIG" in text, "an API path keeps http.max_body: 413", s, text)
        c = http.client.HTTPConnection("127.0.0.1", p.port, timeout=30)
        c.request("GET", prefix + "big", headers=auth)
        r = c.getresponse()
        big = r.read()
        c.close()
        check(r.status == 200 and big == bytes(i % 251 for i in range(300000)),
              "a large answer, whose head and body come in one read, passes whole", r.status,
              len(big))
        s, hs, text = raw(p.port, "GET", prefix + "early", auth)
        check(s == 200 and text == "after", "an interim answer is skipped, the final one passes",
              s, text)
        s, hs, text = raw(p.port, "GET", prefix + "chunked", auth)
        check(s == 200 and json.loads(text)["target"] == prefix + "chunked",
              "a chunked answer is decoded", s, text)

        # ---- a streamed answer: the first part arrives while the job still holds the rest ----
        flag = os.path.join(tmp, "stream.flag")
        c = http.client.HTTPConnection("127.0.0.1", p.port, timeout=30)
        c.request("GET", prefix + "stream?f=" + flag, headers=auth)
        r = c.getresponse()
        first = r.read(6)
        check(r.status == 200 and first == b"first;", "the first part streamed", r.status, first)
        open(flag, "w").close()
        rest = r.read()
        check(rest == b"last", "then the rest", rest)
        c.close()

        # ---- who may pass ----
        s, _, text = raw(p.port, "GET", prefix, {"Authorization": "Bearer " + bob.token})
        check(s == 404, "another tenant: 404", s, text)
        s, _, text = raw(p.port, "GET", prefix, {"Authorization": "Bearer " + admin.token})
        check(s == 403 and "tenant" in text, "an admin: 403 naming why", s, text)
        s, _, text = raw(p.port, "GET", prefix)
        check(s == 401 and "proxy-session" in text, "no credentials: 401", s, text)
        s, _, text = raw(p.port, "GET", prefix + "?gp_code=gpc_forged")
        check(s == 401 and "gp_code" in text, "a forged code: 401", s, text)

        # ---- the cookie flow ----
        s, d = bob.post("/v1/jobs/%d/proxy-session" % jid)
        check(s == 404, "proxy-session by another tenant: 404", s, d)
        s, d = admin.post("/v1/jobs/%d/proxy-session" % jid)
        check(s == 403, "proxy-session by an admin: 403", s, d)
        s, d = alice.post("/v1/jobs/nb/proxy-session")
        check(s == 200 and d["url"].startswith(prefix + "?gp_code="), "a one-time URL", s, d)
        check(alice.token not in d["url"], "the API token is never in the URL", d)
        s, hs, text = raw(p.port, "GET", d["url"].replace("/%d/" % jid, "/nb/") + "&gp=1&tab=1")
        check(s == 303 and header(hs, "Location") == [prefix + "?gp=1&tab=1"],
              "the code: 303 to the URL without it, under the job's id", s, hs, text)
        set_cookie = header(hs, "Set-Cookie")
        check(len(set_cookie) == 1 and set_cookie[0].startswith("gp_proxy=") and
              "HttpOnly" in set_cookie[0] and "SameSite=Lax" in set_cookie[0] and
              ("Path=%s;" % prefix) in set_cookie[0], "the session cookie", set_cookie)
        session = set_cookie[0].split(";")[0]
        s, _, text = raw(p.port, "GET", d["url"])
        check(s == 401, "a code works once", s, text)
        s, _, text = raw(p.port, "GET", prefix + "tree", {"Cookie": "x=1; " + session + "; y=2"})
        check(s == 200, "the cookie opens the proxy", s, text)
        doc = json.loads(text)
        check(seen(doc, "Cookie") == ["x=1; y=2"], "the job never sees the proxy's cookie", doc)
        s, _, text = raw(p.port, "GET", "/v1/jobs/%d/proxy/" % (jid + 1000),
                         {"Cookie": session})
        check(s == 404, "the cookie opens its own job only", s, text)

        # ---- the CLI ----
        env = dict(os.environ, GPUPOOL_SERVER=p.base, GPUPOOL_TOKEN=alice.token)
        r = subprocess.run([gpupool, "notebook", "open", "nb"], capture_output=True, text=True,
                           env=env, timeout=60)
        url = r.stdout.strip()
        check(r.returncode == 0 and url.startswith(p.base + prefix + "?gp_code="),
              "gpupool notebook open prints the URL", r.returncode, r.stdout, r.stderr)
        s, hs, _ = raw(p.port, "GET", url[len(p.base):])
        check(s == 303 and header(hs, "Set-Cookie"), "the URL opens the proxy", s, hs)
        r = subprocess.run([gpupool, "submit", "--kind", "notebook", "--port", "8888", "--gpus",
                            "1", "--name", "cli-nb", "--", "python3", server_py],
                           capture_output=True, text=True, env=env, timeout=60)
        check(r.returncode == 0, "gpupool submit --kind notebook --port", r.stdout, r.stderr)
        d = p.job(alice, "cli-nb")
        check(d["spec"]["kind"] == "notebook" and d["spec"]["port"] == 8888,
              "the CLI's notebook", d["spec"])
        check(alice.post("/v1/jobs/cli-nb/cancel")[0] == 200, "cancel it")

        # ---- a WebSocket through the proxy ----
        sock = socket.create_connection(("127.0.0.1", p.port), timeout=30)
        key = base64.b64encode(os.urandom(16)).decode()
        sock.sendall(("GET %sapi/kernels/1/channels HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
                      "Cookie: %s\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
                      "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: %s\r\n\r\n"
                      % (prefix, p.port, session, key)).encode() + ws_frame("early"))
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = sock.recv(1)
            check(chunk, "the upgrade answer", head)
            head += chunk
        check(head.startswith(b"HTTP/1.1 101"), "101 Switching Protocols", head)
        check(b"Sec-WebSocket-Accept" in head, "the job's accept key passes", head)
        check(ws_read(sock) == (1, "early"), "a frame sent with the head is echoed")
        for text in ("hello", "x" * 300):
            sock.sendall(ws_frame(text))
            check(ws_read(sock) == (1, text), "a frame echoed through the proxy", text[:20])
        sock.sendall(bytes([0x88, 0x80]) + b"\0\0\0\0")
        sock.close()

        # ---- its own network namespace, and the agent's tunnel ----
        try:
            socket.create_connection(("127.0.0.1", nb_port), timeout=5).close()
            check(False, "the job's port is not on the node's 127.0.0.1")
        except OSError:
            pass
        rep = p.job(alice, "nb")["placement"][0]
        tunnel = "/v1/replicas/%d-0-%d/tunnel?port=" % (jid, rep["epoch"])
        up = {"Connection": "Upgrade", "Upgrade": "gpupool-tunnel"}
        s, _, text = raw(agent.port, "GET", tunnel + str(nb_port), up)
        check(s == 401, "the tunnel needs the node's control token", s, text)
        db = sqlite3.connect(os.path.join(p.dir, "data", "gpupool.db"))
        node_doc = json.loads(db.execute("SELECT spec FROM nodes WHERE name = 't4'").fetchone()[0])
        db.close()
        up["Authorization"] = "Bearer " + node_doc["control_token"]
        s, _, text = raw(agent.port, "GET", tunnel + str(nb_port + 1), up)
        check(s == 403 and str(nb_port) in text, "the tunnel: the declared port only", s, text)
        s, _, text = raw(agent.port, "GET", tunnel + str(nb_port),
                         {"Authorization": up["Authorization"]})
        check(s == 400 and "Upgrade" in text, "the tunnel: an upgrade only", s, text)

        # ---- keep-alive: the tunnel to the job is reused; a new epoch gets a new one ----
        kp_port = free_ports(1)
        s, kp = alice.post("/v1/jobs", {
            "name": "kp", "kind": "notebook", "port": kp_port, "restart_policy": "on-failure",
            "max_restarts": 3, "command": ["python3", server_py], "resources": {"gpus": 1}})
        check(s == 201, "submit a notebook that restarts", s, kp)
        pre_k = "/v1/jobs/%d/proxy/" % kp["id"]
        p.wait_state(alice, "kp", "Running", 60)
        wait("kp answers", lambda: raw(p.port, "GET", pre_k + "keepalive", auth)[0] == 200, 60)

        def keepalive(query=""):
            s, _, text = raw(p.port, "GET", pre_k + "keepalive" + query, auth)
            check(s == 200, "keepalive through the proxy", s, text)
            return json.loads(text)

        first = keepalive()
        for i in range(40):
            last = keepalive("?chunked" if i % 2 else "")
        check(last["pid"] == first["pid"] and last["conns"] - first["conns"] <= 2,
              "41 sequential requests reach the job over a kept tunnel (a few connections)",
              first, last)
        epoch = p.job(alice, "kp")["placement"][0]["epoch"]
        s, _, text = raw(p.port, "GET", pre_k + "exit", auth)
        check(s == 200, "the job answers, then exits", s, text)
        wait("kp restarted with a new epoch",
             lambda: (p.job(alice, "kp").get("placement") or [{}])[0].get("epoch", epoch) !=
             epoch and p.job(alice, "kp")["state"] == "Running", 60)
        wait("kp answers again",
             lambda: raw(p.port, "GET", pre_k + "keepalive", auth)[0] == 200, 60)
        again = keepalive()
        check(again["pid"] != first["pid"], "the new epoch is reached, not the old tunnel",
              first, again)
        s, d = alice.post("/v1/jobs/kp/cancel")
        check(s == 200, "cancel kp", s, d)

        # ---- a batch job has nothing to proxy; a job not running is 503 ----
        s, d = alice.post("/v1/jobs", {"name": "batch", "command": ["sleep", "1000"],
                                       "resources": {"gpus": 1}})
        check(s == 201, "submit a batch job", s, d)
        s, _, text = raw(p.port, "GET", "/v1/jobs/batch/proxy/", auth)
        check(s == 400 and "batch" in text, "a batch job: 400", s, text)
        s, d = alice.post("/v1/jobs", {"name": "nb2", "kind": "notebook", "port": 9000,
                                       "command": ["python3", server_py],
                                       "resources": {"gpus": 1, "gpu_models": ["H100"]},
                                       "allow_unschedulable": True})
        if s == 201:
            s, _, text = raw(p.port, "GET", "/v1/jobs/nb2/proxy/", auth)
            check(s == 503 and "not running" in text, "a notebook not running: 503", s, text)
        # ---- idle: a notebook without traffic is Suspended, then resumed with its volume ----
        home = os.path.join(tmp, "home")
        os.makedirs(home)
        os.chmod(home, 0o777)
        s, d = admin.post("/v1/volumes", {"name": "home", "path": home})
        check(s == 201, "a volume", s, d)
        for gpu in range(4):
            agent.control("util %d 0" % gpu)  # idle GPUs
        nb3_port = free_ports(1)
        s, nb3 = alice.post("/v1/jobs", {
            "name": "nb3", "kind": "notebook", "port": nb3_port, "idle_timeout": "2s",
            "volumes": ["home:rw"], "command": ["python3", server_py],
            "resources": {"gpus": 1}})
        check(s == 201, "submit an idle notebook", s, nb3)
        pre3 = "/v1/jobs/%d/proxy/" % nb3["id"]
        p.wait_state(alice, "nb3", "Running", 60)
        wait("nb3 answers", lambda: raw(p.port, "GET", pre3, auth)[0] == 200, 60)
        s, _, text = raw(p.port, "POST", pre3 + "write", auth, body="kept across a suspension")
        check(s == 200, "the notebook writes into its volume", s, text)
        s, d = alice.post("/v1/jobs/nb3/resume")
        check(s == 409 and "Running" in d["error"]["message"], "resume of a Running job: 409",
              s, d)
        job3 = p.wait_state(alice, "nb3", "Suspended", 60)
        check("no traffic through its proxy" in job3["reason"], "the reason says why", job3)
        ev = [e["type"] for e in alice.get("/v1/jobs/nb3/events")[1]["items"]]
        check("IdleSuspended" in ev, "an IdleSuspended event", ev)
        check(not job3.get("placement"), "its GPUs are freed", job3)
        s, hs, text = raw(p.port, "GET", pre3 + "read", auth)
        check(s == 503 and "resuming" in text and header(hs, "Retry-After"),
              "the proxy resumes a suspended notebook: 503 and Retry-After", s, text)
        p.wait_state(alice, "nb3", ("Pending", "Running"), 10)
        ev = alice.get("/v1/jobs/nb3/events")[1]["items"]
        check(any(e["type"] == "Resumed" for e in ev), "a Resumed event", ev)
        p.wait_state(alice, "nb3", "Running", 60)
        wait("nb3 answers again", lambda: raw(p.port, "GET", pre3 + "read", auth)[0] == 200, 60)
        s, _, text = raw(p.port, "GET", pre3 + "read", auth)
        check(json.loads(text)["note"] == "kept across a suspension",
              "the files it wrote in its volume are still there", text)
        # traffic keeps it up: a request every half second for three idle timeouts
        for _ in range(12):
            check(p.job(alice, "nb3")["state"] == "Running", "not suspended while used")
            raw(p.port, "GET", pre3, auth)
            time.sleep(0.5)
        p.wait_state(alice, "nb3", "Suspended", 60)
        check(agent.stop() == 0, "the agent stops cleanly", agent.log()[-2000:])

        # ---- Suspended is kept across a restart; resume puts it back to Pending ----
        check(p.stop() == 0, "gpupoold exits cleanly", p.read_log()[-3000:])
        p.start()
        alice, bob = p.client(alice.token), p.client(bob.token)  # the new port
        check(p.job(alice, "nb3")["state"] == "Suspended", "a restart keeps Suspended")
        s, d = bob.post("/v1/jobs/%d/resume" % nb3["id"])
        check(s == 404, "another tenant cannot resume it", s, d)
        s, d = alice.post("/v1/jobs/nb3/resume")
        check(s == 200 and d["state"] == "Pending", "resume: Pending", s, d)
        check(p.stop() == 0, "gpupoold exits cleanly", p.read_log()[-3000:])
finally:
    for a in agents:
        if a.proc.poll() is None:
            a.stop()
    kill_replica_leftovers(tmp)
    shutil.rmtree(tmp, ignore_errors=True)
print("ok")
