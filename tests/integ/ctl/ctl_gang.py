"""Gangs are all or nothing: a job whose replicas cannot all be placed holds nothing and says
why; once they all fit, they are placed together."""
import sys

from pool import Pool, check, node_doc, submit

with Pool(sys.argv[1]) as p:
    agents = [p.register(node_doc("n%d" % i)) for i in range(2)]
    p.tenant("team-a")
    alice = p.user("alice", "team-a")

    # 3 x 8 GPUs on two nodes of 8 can never run: refused, unless it may wait for more nodes.
    s, big = submit(alice, "gang-3x8", gpus=8, replicas=3)
    check(s == 400 and "replicas: 3 replicas placed together, but the pool has room for at most "
          "2" in big["error"]["message"], "3 x 8 refused", s, big)
    s, big = submit(alice, "gang-3x8", gpus=8, replicas=3, allow_unschedulable=True)
    check(s == 201, "submit 3 x 8", s, big)
    p.settle()
    d = p.job(alice, "gang-3x8")
    check(d["state"] == "Pending" and d["placement"] == [], "3 x 8 GPUs on 2 nodes: none placed",
          d)
    check(d["reason"].startswith("unschedulable: 3 replicas placed together"),
          "the reason names the gang", d["reason"])
    s, nodes = p.admin.get("/v1/nodes")
    check(all(n["allocated"]["gpus"] == 0 for n in nodes["items"]), "no GPU held", nodes)

    s, two = submit(alice, "gang-2x8", gpus=8, replicas=2)
    d = p.wait_state(alice, "gang-2x8", "Scheduled")
    check(sorted(r["node"] for r in d["placement"]) == ["n0", "n1"], "one replica per node", d)
    check(all(len(r["gpus"]) == 8 for r in d["placement"]), "8 GPUs each", d)
    uuids = [g["uuid"] for r in d["placement"] for g in r["gpus"]]
    check(len(set(uuids)) == 16, "16 distinct GPUs pinned by UUID", uuids)
    check(all(r["epoch"] > 0 and r["epoch"] == d["placement"][0]["epoch"]
              for r in d["placement"]), "one allocation epoch for the gang", d)

    # A replica of a gang can only see its own node's desired set.
    s, hb = agents[0].post("/v1/nodes/n0/heartbeat", {})
    check(s == 200 and [(x["job"], x["replica"]) for x in hb["desired"]] ==
          [(two["id"], [r["replica"] for r in d["placement"] if r["node"] == "n0"][0])],
          "n0's agent is told to run its replica", hb)
    want = hb["desired"][0]
    check(want["world_size"] == 2, "world size in the desired replica", hb)
    node_of = {r["replica"]: r["node"] for r in d["placement"]}
    check(want["master_addr"] == node_of[0] and want["rank"] == want["replica"] and
          want["nproc_per_node"] == 8 and
          want["hostfile"] == ["%s slots=8" % node_of[0], "%s slots=8" % node_of[1]],
          "gang variables: rank, processes per replica, master, hostfile in rank order", want)
    d = p.job(alice, "gang-3x8")
    check(d["state"] == "Pending", "the 3 x 8 gang still waits", d)

    # Drain n0: every job holding GPUs there is requeued as a whole (the gang's replica on n1
    # too), and n0 gets no new work until it is uncordoned.
    s, d = alice.post("/v1/jobs/gang-3x8/cancel")
    epoch = p.job(alice, "gang-2x8")["placement"][0]["epoch"]
    s, d = p.admin.post("/v1/nodes/n0/drain")
    check(s == 200 and d["cordoned"] and d["draining"], "drain n0", s, d)
    d = p.job(alice, "gang-2x8")
    check(d["state"] in ("Pending", "Scheduled") and
          all(r["node"] != "n0" for r in d["placement"]), "the gang left n0", d)
    s, ev = alice.get("/v1/jobs/gang-2x8/events")
    check("Requeued" in [e["type"] for e in ev["items"]], "a Requeued event", ev)
    s, n0 = p.admin.get("/v1/nodes/n0")
    check(n0["allocated"]["gpus"] == 0, "n0 holds nothing", n0)
    s, hb = agents[0].post("/v1/nodes/n0/heartbeat", {})
    check(hb["desired"] == [], "n0's agent is told to run nothing", hb)
    s, d = p.admin.post("/v1/nodes/n0/uncordon")
    d = p.wait_state(alice, "gang-2x8", "Scheduled")
    check(d["placement"][0]["epoch"] > epoch, "placed again with a new epoch", d)
print("ok")
