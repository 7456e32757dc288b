"""The GPU instances of MIG GPUs as gpupoold takes them (agents played by the test):

- registration and heartbeats carry gpus[].mig_instances; a malformed or impossible list is
  refused with 400 naming the field, and nothing is stored;
- a MIG job goes into an idle instance of its profile, and the Scheduled event says which;
- an instance in use outside gpupool (neither idle nor held) is never reused or destroyed;
- the instances are stored with the node: after a restart the scheduler still knows them;
- registering again with other instances is no change of the node's inventory.
Arguments: the gpupoold program.
"""
import sys

from pool import Pool, check, events, submit

H100 = "NVIDIA H100 80GB HBM3"


def inst(profile, start, idle=True, held=False):
    return {"profile": profile, "start": start, "idle": idle, "held": held}


def mig_gpu(i, instances, mig=True):
    return {"uuid": "GPU-m-%d" % i, "model": H100, "memory_mib": 81559, "numa": 0, "nvlink": [],
            "mig": mig, "mig_instances": instances}


def node(name, gpus):
    return {"name": name, "address": "127.0.0.1:0", "cpu_milli": 64000, "memory_mib": 262144,
            "gpus": gpus}


SEVEN = [inst("1g.10gb", k) for k in range(7)]

with Pool(sys.argv[1]) as p:
    join = p.client(p.join_token)
    bad = [
        ([mig_gpu(0, [inst("1g.10gb", 0)], mig=False)],
         "gpus[0].mig_instances: the GPU is not in MIG mode"),
        ([mig_gpu(0, [inst("3g.40gb", 2)])],
         "gpus[0].mig_instances[0].start: 3g.40gb cannot start at memory slice 2 (legal: 0, 4)"),
        ([mig_gpu(0, []), mig_gpu(1, [inst("3g.40gb", 0), inst("1g.10gb", 3)])],
         "gpus[1].mig_instances[1]: 1g.10gb at memory slice 3 shares memory slices with another "
         "instance"),
        ([mig_gpu(0, [inst("9g.99gb", 0)])],
         'gpus[0].mig_instances[0].profile: H100-80GB has no MIG profile "9g.99gb"'),
        ([mig_gpu(0, [dict(inst("1g.10gb", 0), size=1)])],
         "gpus[0].mig_instances[0].size: unknown field"),
        ([mig_gpu(0, [inst("1g.10gb", 8)])],
         "gpus[0].mig_instances[0].start: must be an integer between 0 and 7"),
        ([mig_gpu(0, "1g.10gb")], "gpus[0].mig_instances: must be a list of at most 8 instances"),
    ]
    for gpus, want in bad:
        s, d = join.post("/v1/nodes", node("bad", gpus))
        check(s == 400 and d["error"]["message"] == want, "registration refused: " + want, s, d)
    s, d = p.admin.get("/v1/nodes/bad")
    check(s == 404, "nothing stored of the refused registrations", s, d)

    # GPU 0: an idle 3g.40gb; GPU 1: seven idle 1g.10gb (the node).
    agent = p.register(node("m1", [mig_gpu(0, [inst("3g.40gb", 4)]), mig_gpu(1, SEVEN)]))
    s, n = p.admin.get("/v1/nodes/m1")
    check(s == 200 and n["gpus"][1]["mig_instances"] == SEVEN and
          n["gpus"][0]["mig_instances"] == [inst("3g.40gb", 4)], "instances shown", n)
    p.tenant("t")
    s, d = submit(p.admin, "a", tenant="t", resources={"mig_profile": "1g.10gb"})
    check(s == 201, "submit a", s, d)
    p.wait_state(p.admin, "a", "Scheduled")
    ev = [e["message"] for e in events(p.admin, "a") if e["type"] == "Scheduled"]
    check(ev == ["m1 GPU 1 (MIG 1g.10gb: reused instance GPU 1 slice 6)"],
          "placed into an idle 1g.10gb, the 3g.40gb left alone", ev)

    # A heartbeat refused for a bad list changes nothing.
    beat = "/v1/nodes/m1/heartbeat"
    s, d = agent.post(beat, {"gpus": [{"index": 1, "mig_instances": [inst("1g.10gb", 7)]}]})
    check(s == 400 and d["error"]["message"] ==
          "gpus[0].mig_instances[0].start: 1g.10gb cannot start at memory slice 7 (legal: 0, 1, 2, "
          "3, 4, 5, 6)", "heartbeat refused", s, d)
    s, d = agent.post(beat, {"gpus": [{"index": 9, "mig_instances": []}]})
    check(s == 400 and d["error"]["message"] == "gpus[0].index: 9, the node has 2 GPUs",
          "heartbeat for a GPU the node lacks", s, d)
    s, n = p.admin.get("/v1/nodes/m1")
    check(n["gpus"][1]["mig_instances"] == SEVEN, "unchanged by refused heartbeats", n)

    # Slice 5 in use outside gpupool, slice 6 held by a's replica: the next one reuses slice 4.
    now = [inst("1g.10gb", k, idle=k < 5, held=k == 6) for k in range(7)]
    s, d = agent.post(beat, {"gpus": [{"index": 1, "utilization": 0, "mig_instances": now}]})
    check(s == 200, "heartbeat", s, d)
    s, n = p.admin.get("/v1/nodes/m1")
    check(n["gpus"][1]["mig_instances"] == now, "instances updated", n)
    check("mig_instances" not in n["gpus"][1]["readings"], "not repeated in the readings", n)
    s, d = submit(p.admin, "b", tenant="t", resources={"mig_profile": "1g.10gb"})
    p.wait_state(p.admin, "b", "Scheduled")
    ev = [e["message"] for e in events(p.admin, "b") if e["type"] == "Scheduled"]
    check(ev == ["m1 GPU 1 (MIG 1g.10gb: reused instance GPU 1 slice 4)"],
          "the instance in use outside gpupool skipped", ev)

    # After a restart the stored instances still guide placement.
    p.restart()
    s, n = p.admin.get("/v1/nodes/m1")
    check(n["gpus"][1]["mig_instances"] == now, "instances kept across a restart", n)
    s, d = submit(p.admin, "c", tenant="t", resources={"mig_profile": "1g.10gb"})
    p.wait_state(p.admin, "c", "Scheduled")
    ev = [e["message"] for e in events(p.admin, "c") if e["type"] == "Scheduled"]
    check(ev == ["m1 GPU 1 (MIG 1g.10gb: reused instance GPU 1 slice 3)"],
          "placed by the stored instances after the restart", ev)
    # A 7g.80gb cannot go to GPU 1 (taken, and slice 5 in use); on GPU 0 it replaces the idle
    # 3g.40gb.
    s, d = submit(p.admin, "d", tenant="t", resources={"mig_profile": "7g.80gb"})
    p.wait_state(p.admin, "d", "Scheduled")
    ev = [e["message"] for e in events(p.admin, "d") if e["type"] == "Scheduled"]
    check(ev == ["m1 GPU 0 (MIG 7g.80gb: created 7g.80gb at GPU 0 slice 0, destroyed idle "
                 "3g.40gb at slice 4)"], "reshaped where only idle instances are", ev)

    # Registering again with other instances is no change of inventory, even while jobs hold
    # GPUs there: the node stays, with the instances reported now.
    later = [inst("7g.80gb", 0, idle=False, held=True)]
    own = p.agent("m1")  # the node's own credential; the port changed with the restart
    s, d = own.post("/v1/nodes", node("m1", [mig_gpu(0, later), mig_gpu(1, SEVEN)]))
    check(s == 200, "registered again", s, d)
    s, n = p.admin.get("/v1/nodes/m1")
    check(n["gpus"][0]["mig_instances"] == later and n["gpus"][1]["mig_instances"] == SEVEN,
          "instances replaced by the registration", n)
    check(p.job(p.admin, "d")["state"] == "Scheduled", "the jobs keep their placements")
print("ctl_mig: ok")
