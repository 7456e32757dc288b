"""A replica is reported Running as soon as it starts, not at the agent's next heartbeat: a real
gpupoold and a real gpupool-agent over the mock NVML (--runtime none: host processes) that
heartbeats only every 30 s. After its first heartbeat, jobs are placed on its node; the agent
learns of them through its long-poll of the desired replicas and starts them, and each must be
Running at the controller within 10 s, long before the next heartbeat is due (a functional
check, not a timing: without the start report they would wait 30 s).

Four jobs placed by one scheduling cycle (a tenant quota lifted at once) go out together: the
agent reports them in a few heartbeats, not one each (counted by the controller's metrics). A job whose
process ends at once is reported the same way: Succeeded when it had already exited when the
agent looked, else Running at once and Succeeded with the next heartbeat.

Arguments: gpupoold, gpupool-agent, the mock NVML library, the inventories directory.
"""
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mockagent import MockAgent  # noqa: E402
from pool import Pool, check, kill_replica_leftovers, wait  # noqa: E402

gpupoold, agent_bin, mock, inventories = sys.argv[1:5]
tmp = tempfile.mkdtemp(prefix="gpupool-startrep.")
BEAT_MS = 30000


def job(name, command=("sleep", "1000"), **extra):
    d = {"name": name, "command": list(command), "resources": {"gpus": 1}}
    d.update(extra)
    return d


def heartbeats(p):
    """Heartbeats the controller has answered (its request metrics)."""
    s, text = p.admin.call("GET", "/metrics")
    check(s == 200, "metrics", s)
    n = 0
    for line in text.splitlines():
        if (line.startswith("gpupool_http_request_duration_seconds_count{") and
                'route="/v1/nodes/{node}/heartbeat"' in line):
            n += int(float(line.rsplit(" ", 1)[1]))
    return n


def running_within(p, client, ref, state="Running", limit=10):
    """Waits until job ref is in state (a name, or a tuple of names)."""
    states = (state,) if isinstance(state, str) else state
    t0 = time.time()
    deadline = t0 + limit
    while time.time() < deadline:
        d = p.job(client, ref)
        if d["state"] in states:
            return time.time() - t0
        time.sleep(0.05)
    check(False, "job %s not %s within %d s (the next heartbeat is %d s away)" %
          (ref, state, limit, BEAT_MS // 1000), p.job(client, ref))


agent = None
try:
    with Pool(gpupoold, extra_args=["--nodes-heartbeat-timeout", "5m",
                                    "--nodes-lost-timeout", "10m"]) as p:
        p.tenant("team-a")
        alice = p.user("alice", "team-a")
        token_file = os.path.join(tmp, "join.token")
        with open(token_file, "w") as f:
            f.write(p.join_token + "\n")
        agent = MockAgent(agent_bin, mock, tmp, "n1", os.path.join(inventories, "dgx-a100.yaml"),
                          p.base, token_file, "--runtime", "none", "--heartbeat", str(BEAT_MS))
        wait("n1 registered and ready",
             lambda: p.admin.get("/v1/nodes/n1")[1].get("state") == "Ready", 30)
        wait("the agent's first heartbeat", lambda: heartbeats(p) >= 1, 10)
        time.sleep(0.5)  # the next heartbeat is 30 s away

        # ---- one job ----
        s, d = alice.post("/v1/jobs", job("one"))
        check(s == 201, "submit one", s, d)
        running_within(p, alice, "one")

        # ---- four at once: placed by one cycle, reported together ----
        s, d = p.admin.put("/v1/tenants/team-a", {"quota": {"gpus": 1}})
        check(s == 200, "quota 1 GPU (one is in use)", s, d)
        for i in range(4):
            s, d = alice.post("/v1/jobs", job("four-%d" % i, allow_unschedulable=True))
            check(s == 201, "submit four-%d" % i, s, d)
        time.sleep(0.3)
        check(all(p.job(alice, "four-%d" % i)["state"] == "Pending" for i in range(4)),
              "held back by the quota")
        beats_before = heartbeats(p)
        s, d = p.admin.put("/v1/tenants/team-a", {"quota": {"gpus": 8}})
        check(s == 200, "quota lifted", s, d)
        for i in range(4):
            running_within(p, alice, "four-%d" % i)
        beats = heartbeats(p) - beats_before
        check(beats <= 4, "four starts reported in at most four heartbeats", beats,
              agent.log()[-3000:])

        # ---- a job that ends at once: reported as soon, Running or already Succeeded (the
        # agent may catch its process before it exits: its end then goes out with the next
        # regular heartbeat) ----
        s, d = alice.post("/v1/jobs", job("quick", command=("true",)))
        check(s == 201, "submit quick", s, d)
        running_within(p, alice, "quick", state=("Running", "Succeeded"))
        running_within(p, alice, "quick", state="Succeeded", limit=BEAT_MS // 1000 + 15)

        log = p.read_log()
        check(p.stop() == 0, "gpupoold exits cleanly", log[-3000:])
    check(agent.stop() == 0, "the agent stops cleanly", agent.log()[-3000:])
    agent = None
    print("ok")
finally:
    if agent:
        agent.stop()
    kill_replica_leftovers(tmp)
    shutil.rmtree(tmp, ignore_errors=True)
