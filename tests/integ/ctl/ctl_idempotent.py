"""A retried submit with the same Idempotency-Key returns the same job, never a second one —
also when the retries race each other, and across a restart of gpupoold."""
import sys
import threading

from pool import Pool, check

with Pool(sys.argv[1]) as p:
    p.tenant("team-a")
    alice = p.user("alice", "team-a")
    spec = {"name": "once", "command": ["true"], "resources": {"gpus": 1}}
    s1, d1 = alice.post("/v1/jobs", spec, headers={"Idempotency-Key": "key-1"})
    check(s1 == 201, "first submit creates", s1, d1)
    s2, d2 = alice.post("/v1/jobs", spec, headers={"Idempotency-Key": "key-1"})
    check(s2 == 200 and d2["id"] == d1["id"], "retry returns the same job", s2, d2)

    # 20 concurrent retries of one new key: one job.
    results = []
    spec2 = dict(spec, name="race")

    def go():
        results.append(alice.post("/v1/jobs", spec2, headers={"Idempotency-Key": "key-2"}))

    threads = [threading.Thread(target=go) for _ in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ids = {d["id"] for s, d in results}
    check(len(ids) == 1, "one job for 20 racing retries", results[:3])
    check(sorted(s for s, d in results).count(201) == 1, "exactly one 201",
          [s for s, d in results])

    # Without a key, the same name while active is a conflict, not a second job.
    s, d = alice.post("/v1/jobs", spec)
    check(s == 409 and "already active" in d["error"]["message"], "duplicate name 409", s, d)

    p.restart()
    alice = p.client(alice.token)
    s3, d3 = alice.post("/v1/jobs", spec, headers={"Idempotency-Key": "key-1"})
    check(s3 == 200 and d3["id"] == d1["id"], "retry after restart returns the same job", s3, d3)
    s, d = alice.get("/v1/jobs")
    check(len(d["items"]) == 2, "two jobs in all", d)
print("ok")
