"""A small fake controller for agent tests: Python's http.server on 127.0.0.1 and a free port,
speaking the agent's side of the controller's API.

- POST /v1/nodes registers a node and answers its agent token, "agent-NODE"; the registration
  body is recorded;
- POST /v1/nodes/NODE/heartbeat records the heartbeat body and answers the node's desired
  document;
- GET /v1/nodes/NODE/desired?version=V&wait=MS long-polls: it answers once the document's version
  is not V, a long-poll check_seq is set, or MS (at most 60 s) have passed.

For the clients' side of high availability (gpupool and agents given several servers), it also
takes gpupool's submit and whoami (POST /v1/jobs, idempotent by Idempotency-Key; GET /v1/whoami,
with check_tokens needing user_token) and can play other roles: follow(url) makes it a follower
answering every request 307 with Location url+path and {"leader": url} (follow(None): 503 with
{"leader": null}, no leader yet), drop() one that reads each request and closes the connection
without an answer (a leader dying mid-request), lead() the leader again. Every request is recorded
(requests(): method, path, Authorization, Idempotency-Key).

A node's document is {"node", "version" (1 until set() gives it replicas), "cordoned": false,
"desired"}, with "check_seq" when one is set for that kind of answer (long-poll or heartbeat).
With check_tokens, registration needs the join token and a heartbeat its node's agent token (401
otherwise). An answer the agent no longer waits for (killed meanwhile) is dropped.

Usage:
    with FakeController() as ctl:
        agent --server ctl.url --join-token-file ctl.join_token_file(tmp) --name n1 ...
        ctl.set("n1", [replica, ...])
        wait("a heartbeat", lambda: ctl.heartbeats("n1"))
"""

import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse


def serve(handler):
    """A ThreadingHTTPServer of handler on 127.0.0.1 and a free port, served by a daemon thread;
    shutdown() and server_close() stop it."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


class FakeController:
    """What the fake controller answers, per node, and what it was sent."""

    def __init__(self, check_tokens=False, join_token="join-secret", user_token="user-secret"):
        self.check_tokens = check_tokens
        self.join_token = join_token
        self.user_token = user_token
        self.role = "leader"     # or "follower", "drop"
        self.leader = None       # a follower's leader URL (None: no leader)
        self.seen = []           # (method, path, Authorization, Idempotency-Key) of each request
        self.jobs = []           # submitted job specs, with "id" and "key"
        self.lock = threading.Condition()
        self.registrations = []  # registration bodies, in order
        self.beats = {}          # node -> [heartbeat bodies]
        self.desired = {}        # node -> [desired replicas]
        self.version = {}        # node -> version of the document
        self.seq_poll = {}       # node -> check_seq in long-poll answers
        self.seq_beat = {}       # node -> check_seq in heartbeat answers
        self.gen = 0             # moves when a long-poll answer's check_seq is set
        self.server = serve(_Handler)
        self.server.ctl = self
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        self.server.shutdown()
        self.server.server_close()

    def join_token_file(self, directory):
        """DIR/join.token holding the join token; its path."""
        path = os.path.join(directory, "join.token")
        with open(path, "w") as f:
            f.write(self.join_token + "\n")
        return path

    def doc(self, node, seq=0):
        d = {"node": node, "version": self.version.get(node, 1), "cordoned": False,
             "desired": self.desired.get(node, [])}
        if seq:
            d["check_seq"] = seq
        return d

    def set(self, node, desired=None, seq_poll=None, seq_beat=None):
        """A new desired set for node (a new version), and/or the check_seq of its long-poll or
        heartbeat answers; waiting long-polls answer at once."""
        with self.lock:
            if desired is not None:
                self.desired[node] = desired
                self.version[node] = self.version.get(node, 1) + 1
            if seq_poll is not None:
                self.seq_poll[node] = seq_poll
                self.gen += 1
            if seq_beat is not None:
                self.seq_beat[node] = seq_beat
            self.lock.notify_all()

    def follow(self, leader_url):
        """Answers every request as a follower of leader_url (None: no leader yet)."""
        with self.lock:
            self.role, self.leader = "follower", leader_url

    def drop(self):
        """Reads every request and closes its connection without an answer."""
        with self.lock:
            self.role = "drop"

    def lead(self):
        with self.lock:
            self.role, self.leader = "leader", None

    def requests(self):
        with self.lock:
            return list(self.seen)

    def heartbeats(self, node):
        with self.lock:
            return list(self.beats.get(node, []))

    def registered(self, node):
        """The registration bodies of node, in order."""
        with self.lock:
            return [r for r in self.registrations if r.get("name") == node]


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, status, doc):
        body = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            self.wfile.write(body)
        except OSError:
            pass  # an agent killed while it waited

    def other_role(self):
        """Records the request; answers it as a follower or drops it (True), or leaves it to the
        leader's handling (False)."""
        ctl = self.server.ctl
        with ctl.lock:
            ctl.seen.append((self.command, self.path, self.headers.get("Authorization", ""),
                             self.headers.get("Idempotency-Key")))
            role, leader = ctl.role, ctl.leader
        if role == "leader":
            return False
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if role == "drop":
            self.close_connection = True
            return True
        if leader is None:
            self.answer(503, {"error": {"code": "GP_EUNAVAIL", "message": "no leader yet"},
                              "leader": None})
            return True
        body = json.dumps({"error": {"code": "GP_EUNAVAIL", "message": "not the leader"},
                           "leader": leader}).encode()
        self.send_response(307)
        self.send_header("Location", leader + self.path)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        return True

    def submit(self, body):
        ctl = self.server.ctl
        if ctl.check_tokens and self.headers.get("Authorization") != "Bearer " + ctl.user_token:
            return self.answer(401, {"error": {"message": "bad token"}})
        key = self.headers.get("Idempotency-Key")
        with ctl.lock:
            for job in ctl.jobs:
                if key and job["key"] == key:
                    return self.answer(200, job)
            job = dict(body, id=len(ctl.jobs) + 1, key=key, state="pending")
            ctl.jobs.append(job)
        self.answer(201, job)

    def do_POST(self):
        if self.other_role():
            return
        ctl = self.server.ctl
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        parts = urlparse(self.path).path.strip("/").split("/")
        auth = self.headers.get("Authorization", "")
        if parts == ["v1", "jobs"]:
            return self.submit(body)
        if parts == ["v1", "nodes"]:
            if ctl.check_tokens and auth != "Bearer " + ctl.join_token:
                return self.answer(401, {"error": {"message": "bad join token"}})
            with ctl.lock:
                ctl.registrations.append(body)
            return self.answer(201, {"token": "agent-" + body["name"]})
        if len(parts) == 4 and parts[:2] == ["v1", "nodes"] and parts[3] == "heartbeat":
            node = parts[2]
            if ctl.check_tokens and auth != "Bearer agent-" + node:
                return self.answer(401, {"error": {"message": "bad agent token"}})
            with ctl.lock:
                ctl.beats.setdefault(node, []).append(body)
                doc = ctl.doc(node, ctl.seq_beat.get(node, 0))
            return self.answer(200, doc)
        self.answer(404, {"error": {"message": "no such endpoint"}})

    def do_GET(self):
        if self.other_role():
            return
        ctl = self.server.ctl
        url = urlparse(self.path)
        parts = url.path.strip("/").split("/")
        if parts == ["v1", "whoami"]:
            if ctl.check_tokens and self.headers.get("Authorization") != "Bearer " + ctl.user_token:
                return self.answer(401, {"error": {"message": "bad token"}})
            return self.answer(200, {"role": "admin", "token": "t1", "tenant": None,
                                     "node": None, "served_by": ctl.url})
        if len(parts) != 4 or parts[:2] != ["v1", "nodes"] or parts[3] != "desired":
            return self.answer(404, {"error": {"message": "no such endpoint"}})
        node, q = parts[2], parse_qs(url.query)
        version = int(q.get("version", ["0"])[0])
        deadline = time.time() + min(int(q.get("wait", ["0"])[0]), 60000) / 1000.0
        with ctl.lock:
            gen = ctl.gen  # a check_seq set meanwhile answers at once, like a new version
            while (ctl.version.get(node, 1) == version and ctl.gen == gen and
                   time.time() < deadline):
                ctl.lock.wait(max(0.0, deadline - time.time()))
            doc = ctl.doc(node, ctl.seq_poll.get(node, 0))
        self.answer(200, doc)
