"""A scheduling cycle with more placements than one transaction holds commits them all, in
several transactions, and answers readers between them; changes queued meanwhile stop it after
the transaction in progress, and the next cycle places the rest.

80 nodes x 8 A100. A tenant whose quota of one GPU holds back 2,400 quarter-GPU jobs; the quota
is lifted and the next cycle places the 2,396 waiting ones: more than the 2,000 writes a
transaction of a cycle holds.
  - Reads only: a reader asks for the tenant's usage over and over; it is answered with a usage
    between the quota and the end, so it was answered between two of the cycle's transactions,
    and one cycle placed them all (its log line says so).
  - With heartbeats: a node's heartbeats come one after another while the backlog is placed, so
    one waits for the committer when the cycle's first transaction ends: that cycle places the
    first 2,000 only and the next ones place the rest.
Either way every job ends Scheduled, each on a node with room for it.
"""
import re
import sys
import threading

from pool import Pool, all_jobs, check, node_doc, wait

NODES, JOBS = 80, 2400
SPEC = {"command": ["sleep", "1000"],
        "resources": {"gpu_milli": 250, "gpu_memory_mib": 10240, "cpu_milli": 1000,
                      "memory_mib": 4096}}


def submit_all(user):
    errors = []

    def submitter(k):
        for n in range(k, JOBS, 8):
            s, d = user.post("/v1/jobs", dict(SPEC, name="j-%d" % n))
            if s != 201:
                errors.append((s, d))

    threads = [threading.Thread(target=submitter, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    check(not errors, "every submit accepted", errors[:3])


def backlog(beats):
    """The scenario; beats: a node heartbeats without pause while the backlog is placed."""
    # The nodes need no heartbeat to stay ready however long the test runs on a loaded machine;
    # the submits come as fast as the controller takes them.
    with Pool(sys.argv[1], ["--nodes-heartbeat-timeout", "1h", "--nodes-lost-timeout", "1h",
                            "--api-rate-limit", "0"]) as p:
        for i in range(NODES):
            p.register(node_doc("n%02d" % i))
        p.tenant("t", gpus=1)
        user = p.user("u", "t")
        submit_all(user)

        def usage():
            s, d = p.admin.get("/v1/tenants/t")
            check(s == 200, "get tenant", s, d)
            return float(d["usage"]["gpus"])

        def pending():
            return sum(1 for j in all_jobs(p.admin, "state=Pending&") if j.get("reason"))

        wait("all but 4 jobs pending with a reason", lambda: pending() == JOBS - 4, 60)
        check(usage() == 1, "the quota holds the rest back", usage())
        log_from = len(p.read_log())

        seen, answered, stop = [], [], threading.Event()

        def reader():
            while not stop.is_set():
                seen.append(usage())

        def beater():
            node = p.agent("n79")
            while not stop.is_set():
                s, d = node.post("/v1/nodes/n79/heartbeat", {"replicas": []})
                check(s == 200, "heartbeat", s, d)
                answered.append(s)

        threads = [threading.Thread(target=reader)]
        if beats:
            threads.append(threading.Thread(target=beater))
        for t in threads:
            t.start()
        try:
            if beats:
                wait("heartbeats under way", lambda: len(answered) >= 3, 30)
            s, d = p.admin.put("/v1/tenants/t", {"name": "t"})
            check(s == 200, "lift the quota", s, d)
            wait("every job placed", lambda: usage() == JOBS / 4, 120)
        finally:
            stop.set()
            for t in threads:
                t.join()
        cycles = [int(m) for m in re.findall(r"cycle placed=(\d+)", p.read_log()[log_from:])]
        if beats:
            check(len(cycles) >= 2 and cycles[0] == 2000 and sum(cycles) == JOBS - 4,
                  "the first cycle stopped after its first transaction, the next placed the rest",
                  cycles)
        else:
            between = [u for u in seen if 1 < u < JOBS / 4]
            check(between, "a reader answered between the cycle's transactions",
                  sorted(set(seen))[:10])
            check(cycles and cycles[0] == JOBS - 4, "one cycle placed every waiting job", cycles)
        jobs = all_jobs(p.admin)
        states = {j["state"] for j in jobs}
        check(len(jobs) == JOBS and states == {"Scheduled"}, "every job Scheduled", len(jobs),
              states)
        s, d = p.admin.get("/v1/nodes")
        check(s == 200, "list nodes", s, d)
        over = [n["name"] for n in d["items"]
                if any(g["allocated_milli"] > 1000 for g in n["gpus"])]
        check(not over, "no GPU holds more than itself", over)


backlog(beats=False)
backlog(beats=True)
print("ok")
