"""Many concurrent submits, answered by the committer after their group commit: every one is
answered 2xx with its own job (its name, its tenant: answers are never mixed up between
requests, nor between tenants), and every answered job is in the store after a kill -9 of
gpupoold right after the last answer (no answer comes before its COMMIT).

First, feasibility at submit on a pool of 22 nodes where only the last two can hold an 8-GPU
job: it is accepted, and a 9-GPU one refused naming the 8 GPUs the pool's best node has.

Two tenants' users submit at once from 48 threads (each with a connection of its own, kept
alive), with few server threads (--http-threads 2), so that many submits wait for their commit
at once on each thread. Then gpupoold is killed with SIGKILL and started again on the same data
directory, and each tenant's list of jobs must hold exactly the jobs it was answered.

Arguments: the gpupoold program.
"""
import http.client
import json
import signal
import sys
import threading

from pool import Pool, all_jobs, check, node_doc

THREADS, EACH = 48, 8

with Pool(sys.argv[1], extra_args=["--http-threads", "2", "--api-rate-limit", "0"]) as p:
    # Feasibility at submit stops at the first nodes that can hold the job, and judges the whole
    # pool when they fall short:
    # 20 one-T4 nodes, then two A100 nodes of 8 GPUs.
    for i in range(20):
        p.register(node_doc("t%02d" % i, ngpus=1, model="Tesla T4", mem=15360, nvlink=False))
    for i in range(2):
        p.register(node_doc("n%d" % i))
    p.tenant("green")
    s, d = p.admin.post("/v1/jobs", {"name": "big", "tenant": "green", "command": ["true"],
                                     "resources": {"gpus": 8}})
    check(s == 201, "a job only the 21st node can hold is accepted", s, d)
    s, d = p.admin.post("/v1/jobs", {"name": "huge", "tenant": "green", "command": ["true"],
                                     "resources": {"gpus": 9}})
    check(s == 400 and d["error"]["message"].startswith("resources.gpus:") and
          "8 GPUs" in d["error"]["message"],
          "one no node can hold: refused naming the most the pool has", s, d)
    p.tenant("red")
    p.tenant("blue")
    users = {"red": p.user("alice", "red"), "blue": p.user("bob", "blue")}
    answers = []  # (tenant, name, status, document)
    lock = threading.Lock()
    go = threading.Event()

    def submitter(k):
        tenant = "red" if k % 2 else "blue"
        conn = http.client.HTTPConnection("127.0.0.1", p.port, timeout=60)
        hdrs = {"Authorization": "Bearer " + users[tenant].token,
                "Content-Type": "application/json"}
        go.wait()
        for j in range(EACH):
            name = "%s-%d-%d" % (tenant, k, j)
            spec = {"name": name, "command": ["sleep", "1000"],
                    "resources": {"gpu_milli": 100, "gpu_memory_mib": 1024}}
            conn.request("POST", "/v1/jobs", json.dumps(spec), hdrs)
            r = conn.getresponse()
            body = r.read().decode()
            with lock:
                answers.append((tenant, name, r.status, json.loads(body) if body else None))
        conn.close()

    threads = [threading.Thread(target=submitter, args=(k,)) for k in range(THREADS)]
    for t in threads:
        t.start()
    go.set()
    for t in threads:
        t.join()
    p.stop(signal.SIGKILL)  # right after the last answer

    check(len(answers) == THREADS * EACH, "every submit answered", len(answers))
    bad = [a for a in answers if a[2] != 201]
    check(not bad, "every submit 201", bad[:3])
    mixed = [a for a in answers if a[3]["name"] != a[1] or a[3]["tenant"] != a[0]]
    check(not mixed, "each answer is its own request's job", mixed[:3])

    p.start()
    for tenant, user in users.items():
        client = p.client(user.token)
        stored = {j["id"]: j["name"] for j in all_jobs(client)}
        sent = {a[3]["id"]: a[1] for a in answers if a[0] == tenant}
        check(stored == sent, "tenant %s: the stored jobs are exactly those answered" % tenant,
              len(stored), len(sent),
              sorted(set(sent.items()) ^ set(stored.items()))[:5])
    log = p.read_log()
    check(p.stop() == 0, "gpupoold exits cleanly (a sanitizer's report would fail it)",
          log[-3000:])
print("ok")
