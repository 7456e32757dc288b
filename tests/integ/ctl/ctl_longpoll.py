"""The long-poll of a node's desired replicas (GET /v1/nodes/{node}/desired): a wait with the
current version returns when something is placed on the node (or it is cordoned, or a job there
is cancelled), an unchanged wait ends with the same version, bad parameters are 400, an agent
asks only for its own node, 100 waiters on a server with 2 HTTP threads leave it free to answer
others, and the controller stops cleanly with waiters pending.

Client timeouts are well below the waits asked for, so a wake-up that never comes fails the
test; nothing is asserted about how fast it comes."""
import sys
import threading
import time

from pool import Pool, check, node_doc, submit


def desired(client, node, version=None, wait=None, timeout=15):
    q = []
    if version is not None:
        q.append("version=%d" % version)
    if wait is not None:
        q.append("wait=%d" % wait)
    path = "/v1/nodes/%s/desired" % node + ("?" + "&".join(q) if q else "")
    try:
        return client.get(path, timeout=timeout)
    except OSError as e:  # a timeout: the wait was never answered
        return None, str(e)


class Waiter(threading.Thread):
    """One long-poll in the background; its answer in .answer."""

    def __init__(self, client, node, version, wait):
        super().__init__(daemon=True)
        self.args = (client, node, version, wait)
        self.answer = None
        self.start()

    def run(self):
        self.answer = desired(*self.args)

    def result(self, what):
        self.join(20)
        check(not self.is_alive() and self.answer is not None, what + ": the wait returned")
        s, d = self.answer
        check(s == 200, what + ": 200", s, d)
        return d


with Pool(sys.argv[1], extra_args=["--http-threads", "2"]) as p:
    agent = p.register(node_doc("n0"))
    other = p.register(node_doc("n1"))
    p.tenant("team-a")
    alice = p.user("alice", "team-a")
    s, d = p.admin.post("/v1/nodes/n1/cordon")
    check(s == 200, "cordon n1 (jobs go to n0)", s, d)

    # Without a version: at once; the heartbeat carries the same version.
    s, d = desired(agent, "n0")
    check(s == 200 and d["node"] == "n0" and d["desired"] == [] and d["cordoned"] is False and
          isinstance(d["version"], int), "the desired document at once", s, d)
    v0 = d["version"]
    s, hb = agent.post("/v1/nodes/n0/heartbeat", {})
    check(s == 200 and hb["version"] == v0, "the heartbeat carries the version", s, hb)

    # An unchanged wait ends with the same version; another version is answered at once.
    s, d = desired(agent, "n0", v0, 300)
    check(s == 200 and d["version"] == v0 and d["desired"] == [], "unchanged: same version", s, d)
    s, d = desired(agent, "n0", v0 - 1, 30000, timeout=10)
    check(s == 200 and d["version"] == v0, "an old version is answered at once", s, d)
    s, d = desired(agent, "n0", v0, 0)
    check(s == 200 and d["version"] == v0, "wait=0 is answered at once", s, d)

    # A job placed on n0 wakes a waiter holding the current version.
    w = Waiter(agent, "n0", v0, 30000)
    time.sleep(0.3)
    check(w.is_alive(), "the wait is pending while nothing changes", w.answer)
    s, job = submit(alice, "lp", gpus=1)
    check(s == 201, "submit", s, job)
    d = w.result("placement")
    check(d["version"] != v0 and [x["job"] for x in d["desired"]] == [job["id"]],
          "woken with the job in desired", d)
    v1 = d["version"]
    s, hb = agent.post("/v1/nodes/n0/heartbeat", {})
    check(hb["version"] == v1 and hb["desired"] == d["desired"], "the heartbeat agrees", hb, d)

    # Cordon and cancel wake waiters too.
    w = Waiter(agent, "n0", v1, 30000)
    time.sleep(0.1)
    s, _ = p.admin.post("/v1/nodes/n0/cordon")
    d = w.result("cordon")
    check(d["cordoned"] is True and d["version"] != v1, "woken by the cordon", d)
    w = Waiter(agent, "n0", d["version"], 30000)
    time.sleep(0.1)
    s, _ = alice.post("/v1/jobs/lp/cancel")
    d = w.result("cancel")
    check(d["desired"] == [], "woken by the cancel: nothing to run", d)
    s, _ = p.admin.post("/v1/nodes/n0/uncordon")
    s, d = desired(agent, "n0")
    v2 = d["version"]

    # Bad parameters are 400 naming the parameter.
    for query, name in (("version=abc", "version"), ("version=-1", "version"),
                        ("version=1&wait=x", "wait"), ("wait=-5", "wait"),
                        ("version=1&wait=1.5", "wait"), ("version=", "version")):
        s, d = agent.get("/v1/nodes/n0/desired?" + query)
        check(s == 400 and d["error"]["code"] == "GP_EINVAL" and
              d["error"]["message"].startswith(name + ":"), "bad " + query, s, d)

    # Roles: another node's agent gets 404, as for the heartbeat; users may not ask.
    s, d = desired(other, "n0")
    s2, d2 = other.post("/v1/nodes/n0/heartbeat", {})
    check(s == 404 and s2 == 404, "another node's agent: 404 like the heartbeat", s, d, s2, d2)
    s, d = desired(other, "n0", v2, 5000)
    check(s == 404, "another node's agent may not wait either", s, d)
    s, d = desired(alice, "n0")
    check(s == 403, "a user may not ask", s, d)
    s, d = desired(p.admin, "n0")
    check(s == 200 and d["version"] == v2, "an admin may ask for any node", s, d)
    s, d = desired(agent, "nope")
    check(s == 404, "an unknown node: 404", s, d)

    # 100 waiters on 2 HTTP threads: /healthz is still answered, and one change wakes them all.
    waiters = [Waiter(agent, "n0", v2, 30000) for _ in range(100)]
    time.sleep(0.5)
    s, d = p.admin.get("/healthz", timeout=5)
    check(s == 200, "/healthz answered while 100 waits are pending", s, d)
    check(sum(x.is_alive() for x in waiters) == 100, "the 100 waits are still pending")
    s, _ = p.admin.post("/v1/nodes/n0/cordon")
    for x in waiters:
        d = x.result("mass wake-up")
        check(d["cordoned"] is True and d["version"] != v2, "woken by the cordon", d)

    # Stopping the controller with waits pending is clean: they end, it exits 0.
    s, d = desired(agent, "n0")
    w = Waiter(agent, "n0", d["version"], 30000)
    time.sleep(0.2)
    check(p.stop() == 0, "gpupoold exits 0 with a wait pending", p.read_log()[-3000:])
    w.join(20)
    check(not w.is_alive(), "the pending wait ended with the controller")
    check(w.answer[0] in (None, 503), "it is answered 503 (or the connection closes)", w.answer)
print("ok")
