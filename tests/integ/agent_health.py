"""What a running gpupool-agent tells the controller about the node's health and its replicas'
activity, read from the heartbeats it sends to a small fake controller (ctl/fakectl.py: Python's
http.server on 127.0.0.1, a free port) that registers it (checking the join and agent tokens),
answers its heartbeats and long-polls with desired replicas and check_seq, and records every
heartbeat body. Over the mock NVML (PCIe T4 node) with real gpupool-run supervisors and
processes:

- --check-interval 0: no "health" until the controller asks; a check_seq in a long-poll answer
  (the version unchanged) runs the check at once: the next heartbeats carry health.seq 1, the
  finding of a fault injected before (a failed row remap on GPU 1), and its time; the same seq
  again runs nothing; a larger seq in a heartbeat answer runs it again (the fault cleared);
- --check-interval 1: the check runs at start (the first heartbeat has it, seq 0) and again every
  second without being asked (at_ms moves on, a new fault shows);
- idle_ms: a replica printing every 0.2 s stays near 0, a silent one on an idle GPU grows with
  time, a silent one whose GPU is busy (utilisation above 0) is 0, and grows once the GPU idles;
  a replica that has exited carries none.
Arguments: gpupool-agent (gpupool-run beside it), libgpupool-nvml-mock.so, the inventories
directory.
"""
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "ctl"))
from fakectl import FakeController  # noqa: E402
from mockagent import MockAgent  # noqa: E402
from pool import check, kill_replica_leftovers, wait  # noqa: E402

agent_bin, mock, inventories = sys.argv[1:4]
inventory = os.path.join(inventories, "pcie-t4.yaml")
UUIDS = ["GPU-c3a1f0e2-51b7-4d9a-8e26-0f4b7a1c9d11", "GPU-6e2d8b41-93a5-4f1c-b7d0-2a8c5e3f6b12",
         "GPU-a9f4c7d3-2e68-4b0a-9c15-7d3e1b6a8f13", "GPU-0d5b3e96-7c14-4a8f-a2e9-5b1f8c4d0e14"]
tmp = tempfile.mkdtemp(prefix="gpupool-health.")
mark = os.path.basename(tmp).replace(".", "-")  # tells this run's processes from any other
ctl = FakeController(check_tokens=True)
token_file = ctl.join_token_file(tmp)
agents = {}


def start_agent(node, interval):
    agents[node] = MockAgent(agent_bin, mock, tmp, node, inventory, ctl.url, token_file,
                             check_interval=interval, listen=False)


def agent_log(node):
    return agents[node].log()


def control(node, line):
    agents[node].control(line)


def beats_after(node, n):
    """The heartbeats after the first n (waiting for at least one)."""
    return wait(node + ": a heartbeat", lambda: ctl.heartbeats(node)[n:])


def health_when(node, cond, what):
    """The health of the first heartbeat from now on that satisfies cond."""
    def ok():
        for b in ctl.heartbeats(node)[start:]:
            if cond(b.get("health")):
                return b["health"]
        return None
    start = len(ctl.heartbeats(node))
    return wait(node + ": " + what, ok, timeout=30)



def replica(job, cmd, gpu):
    return {"job": job, "replica": 0, "epoch": 1, "name": "j%d" % job, "world_size": 1,
            "restart_count": 0, "cpu_milli": 0, "memory_mib": 0,
            "gpus": [{"index": gpu, "uuid": UUIDS[gpu], "milli": 1000, "memory_mib": 15360,
                      "mig_start": -1}],
            "spec": {"name": "j%d" % job, "command": ["sh", "-c", cmd]}}


def reports(beat):
    return {r["job"]: r for r in beat.get("replicas", [])}


def conditions(h):
    return sorted((c["check"], c["gpu"], c["severity"]) for c in h["conditions"])


try:
    # ---- checks on request only (--check-interval 0) ----
    start_agent("node-a", 0)
    control("node-a", "remap 1 0 1")
    beats = beats_after("node-a", 3)  # a few rounds: none carries health
    check(all("health" not in b for b in ctl.heartbeats("node-a")),
          "--check-interval 0: no health before the controller asks", beats[-1])
    # Asked in a long-poll answer, the document's version unchanged.
    t0 = int(time.time() * 1000)
    ctl.set("node-a", seq_poll=1)
    h = health_when("node-a", lambda h: h and h["seq"] == 1, "health for check_seq 1")
    check(conditions(h) == [("remapped_rows", 1, "fatal")] and h["at_ms"] >= t0 - 1000,
          "check_seq 1: the check ran and found the failed remap on GPU 1", h)
    check(set(h["conditions"][0]) == {"check", "gpu", "severity", "message"}
          and "row remapping failed" in h["conditions"][0]["message"], "a condition's fields", h)
    at1 = h["at_ms"]
    # The same seq again (also in heartbeat answers now): nothing runs again.
    control("node-a", "remap 1 0 0")
    ctl.set("node-a", seq_beat=1)
    n = len(ctl.heartbeats("node-a"))
    wait("five more heartbeats", lambda: len(ctl.heartbeats("node-a")) >= n + 5)
    later = [b["health"] for b in ctl.heartbeats("node-a")[n:]]
    check(all(x["seq"] == 1 and x["at_ms"] == at1 and conditions(x) == conditions(h)
              for x in later), "the same check_seq runs no new check", later)
    # A larger seq in a heartbeat answer: runs again, the fault is gone.
    ctl.set("node-a", seq_beat=2, seq_poll=0)
    h = health_when("node-a", lambda h: h and h["seq"] == 2, "health for check_seq 2")
    check(h["conditions"] == [] and h["at_ms"] > at1, "check_seq 2 from a heartbeat answer", h)
    check("health check requested seq=2" in agent_log("node-a"), "the agent logs the request")

    # ---- periodic checks (--check-interval 1) ----
    start_agent("node-b", 1)
    first = beats_after("node-b", 0)[0]
    check("health" in first and first["health"]["seq"] == 0
          and first["health"]["conditions"] == [],
          "the check ran at start: the first heartbeat carries it", first)
    control("node-b", "ecc 2 3")
    h = health_when("node-b", lambda h: h and h["conditions"], "a periodic check")
    check(h["seq"] == 0 and conditions(h) == [("ecc_errors", 2, "fatal")]
          and h["at_ms"] > first["health"]["at_ms"],
          "a periodic check found the ECC errors without being asked", h)

    # ---- idle_ms ----
    control("node-b", "util 0 0")
    control("node-b", "util 1 50")
    tick = "while :; do echo tick; sleep 0.2; done # " + mark
    ctl.set("node-b", desired=[replica(1, tick, 0), replica(2, "sleep 600 # " + mark, 0),
                               replica(3, "sleep 600 # " + mark, 1), replica(4, "true", 3)])

    def running(b, jobs):
        r = reports(b)
        return all(r.get(j, {}).get("state") == "Running" for j in jobs)

    def idle_enough():
        for b in reversed(ctl.heartbeats("node-b")):
            if running(b, (1, 2, 3)) and reports(b)[2].get("idle_ms", 0) >= 3000:
                return b
        return None
    b = wait("the silent replica idle for 3 s", idle_enough, timeout=60)
    r = reports(b)
    check(r[1]["idle_ms"] < 2000, "a replica writing output is not idle", r)
    check(r[3]["idle_ms"] < 1000, "a replica whose GPU is busy is not idle", r)
    check(all(isinstance(r[j]["idle_ms"], int) and r[j]["idle_ms"] >= 0 for j in (1, 2, 3)),
          "idle_ms: whole milliseconds", r)
    ended = wait("job 4 reported ended",
                 lambda: [x for x in ctl.heartbeats("node-b")
                          if reports(x).get(4, {}).get("state") == "Succeeded"])
    check("idle_ms" not in reports(ended[-1])[4], "an ended replica has no idle_ms",
          reports(ended[-1]))
    idle2 = r[2]["idle_ms"]
    later = beats_after("node-b", len(ctl.heartbeats("node-b")) + 2)[-1]
    check(reports(later)[2]["idle_ms"] > idle2, "idle_ms grows while nothing happens",
          reports(later))
    # Its GPU goes idle: replica 3's idle_ms grows too.
    control("node-b", "util 1 0")
    wait("replica 3 idle for 1.5 s",
         lambda: any(reports(x).get(3, {}).get("idle_ms", 0) >= 1500
                     for x in ctl.heartbeats("node-b")[-3:]), timeout=30)

    # Stop the replicas: an empty desired set.
    ctl.set("node-b", desired=[])
    wait("the replicas stopped",
         lambda: not any(reports(x).get(j, {}).get("state") == "Running"
                         for x in ctl.heartbeats("node-b")[-2:] for j in (1, 2, 3)), timeout=60)
finally:
    for a in agents.values():
        a.stop()
    # Whatever is left of the replicas (the agent never stops jobs when it stops).
    kill_replica_leftovers(tmp)
    ctl.close()
    shutil.rmtree(tmp, ignore_errors=True)
print("agent_health: ok")
