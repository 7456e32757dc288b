"""Tenant quotas are never exceeded, even with 50 concurrent submitters.

Two tenants share 4 nodes x 8 A100 (32 GPUs). team-a may hold 12 GPUs and at most 4 of them
H100 (there are none: the per-model rule must not block A100s); team-b 12 GPU and 8 x 80 GiB of
GPU memory. 50 threads submit 240 jobs of 1 or 2 GPUs at once. After the scheduler settles, each
tenant holds exactly its quota (the pool has room for both), pending jobs say why, and at no
sampled moment did a tenant hold more than its quota.
"""
import sys
import threading
import time

from pool import Pool, check, node_doc

with Pool(sys.argv[1]) as p:
    for i in range(4):
        p.register(node_doc("n%d" % i))
    p.tenant("team-a", gpus=12, models={"H100-80GB": 4})
    p.tenant("team-b", gpus=12, gpu_memory_mib=8 * 81920)
    users = {"team-a": p.user("alice", "team-a"), "team-b": p.user("bob", "team-b")}

    errors = []

    def submitter(k):
        for n in range(k * 5, k * 5 + 5):
            tenant = "team-a" if n % 2 == 0 else "team-b"
            spec = {"name": "j-%d" % n, "command": ["sleep", "60"],
                    "resources": {"gpus": 1 + n % 3 // 2}}
            s, d = users[tenant].post("/v1/jobs", spec)
            if s != 201:
                errors.append((s, d))

    over = []
    stop = False

    def watcher():
        while not stop:
            s, d = p.admin.get("/v1/tenants")
            for t in d["items"]:
                q = t["quota"].get("gpus")
                if q is not None and t["usage"]["gpus"] > q:
                    over.append(t)
                mem = t["quota"].get("gpu_memory_mib")
                if mem is not None and t["usage"]["gpu_memory_mib"] > mem:
                    over.append(t)
            time.sleep(0.01)

    w = threading.Thread(target=watcher)
    w.start()
    threads = [threading.Thread(target=submitter, args=(k,)) for k in range(50)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    check(not errors, "every submit accepted", errors[:3])
    deadline = time.time() + 15
    while time.time() < deadline:
        s, d = p.admin.get("/v1/tenants")
        usage = {t["name"]: t["usage"]["gpus"] for t in d["items"]}
        if usage == {"team-a": 12, "team-b": 8}:
            break
        time.sleep(0.1)
    stop = True
    w.join()
    check(not over, "no tenant ever above its quota", over[:2])
    check(usage == {"team-a": 12, "team-b": 8},
          "each tenant filled to its quota (team-b by GPU memory: 8 x 80 GiB)", usage)

    # Every job has been through a cycle: no reason is the one of a new job.
    deadline = time.time() + 10
    while time.time() < deadline:
        s, d = p.admin.get("/v1/jobs?limit=1000&state=Pending")
        if all(j["reason"].startswith("quota") for j in d["items"]):
            break
        time.sleep(0.1)
    # Held GPUs recomputed from the jobs themselves agree.
    held = {"team-a": 0, "team-b": 0}
    s, d = p.admin.get("/v1/jobs?limit=1000")
    for j in d["items"]:
        if j["state"] in ("Scheduled", "Running"):
            held[j["tenant"]] += sum(len(r["gpus"]) for r in j["placement"])
        else:
            check(j["state"] == "Pending" and j["reason"].startswith("quota"),
                  "a waiting job says quota", j)
    check(held == {"team-a": 12, "team-b": 8}, "placements match the quotas", held)
    s, d = p.admin.get("/v1/jobs?state=Pending&tenant=team-a&limit=1")
    check("team-a" in d["items"][0]["reason"], "reason names the tenant", d["items"][0])

    # A bigger quota lets more run, at once.
    s, d = p.admin.put("/v1/tenants/team-a", {"quota": {"gpus": 14}})
    check(s == 200, "raise team-a's quota", s, d)
    deadline = time.time() + 10
    while time.time() < deadline:
        s, d = p.admin.get("/v1/tenants/team-a")
        if d["usage"]["gpus"] == 14:
            break
        time.sleep(0.1)
    check(d["usage"]["gpus"] == 14, "team-a grows to its new quota", d)
print("ok")
