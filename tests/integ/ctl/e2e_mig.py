"""MIG placement against the instances that exist, end to end: `gpupool up` with the H100 MIG node
of deploy/inventories/h100-mig.yaml (GPU 0: 2g.20gb, 1g.10gb, 1g.10gb, 3g.40gb; GPU 1: seven
1g.10gb; GPU 2: in MIG mode, empty), a real agent over the mock NVML, real supervisors.

- the agent reports each GPU's instances (registration and heartbeats), shown with the node;
- a 1g.10gb job and a 3g.40gb job get instances that exist: the mock's instance UUIDs from the
  inventory, nothing destroyed, and the Scheduled event says "reused instance";
- a 4g.40gb job gets a new instance where it destroys nothing (the empty GPU 2);
- a 7g.80gb job waits while a process outside gpupool runs on one of GPU 1's instances (the
  mock's mig-busy), then, once it ends, replaces GPU 1's seven idle 1g.10gb, and its event names
  what it destroyed.
Arguments: the gpupool program (gpupoold, gpupool-agent, gpupool-run beside it).
"""
import glob
import os
import subprocess
import sys
import tempfile

from pool import Client, check, events, free_ports, mock_control, pool_down, wait

gpupool = sys.argv[1]
tmp = tempfile.mkdtemp(prefix="gpupool-mig.")
pool = os.path.join(tmp, "pool")
mark = os.path.basename(tmp).replace(".", "-")
nap = "sleep %d" % (400 + sum(map(ord, mark)) % 500)


def inventory_uuids(path):
    """The UUIDs of an inventory's MIG instances, by (GPU, start)."""
    out, gpu = {}, -1
    for line in open(path):
        if line.strip().startswith("- uuid: GPU-"):
            gpu += 1
        if "{uuid: MIG-" in line:
            out["%d/%s" % (gpu, line.split("start: ")[1].split("}")[0].strip())] = \
                line.split("uuid: ")[1].split(",")[0]
    return out


def stdout_of(job):
    paths = glob.glob(os.path.join(pool, "agents", "*", "*", "%d-0-*" % job, "stdout.log"))
    return open(sorted(paths)[-1]).read() if paths else ""


port = free_ports(2)
env = dict(os.environ, GPUPOOL_HEARTBEAT_MS="300")
try:
    up = subprocess.run([gpupool, "up", "--data-dir", pool, "--port", str(port), "--nodes",
                         "h100-mig:1"], capture_output=True, text=True, timeout=60, env=env)
    check(up.returncode == 0 and "is up" in up.stdout, "gpupool up", up.stdout, up.stderr)
    token = open(os.path.join(pool, "admin.token")).read().strip()
    admin = Client("http://127.0.0.1:%d" % port, token)
    s, d = admin.get("/v1/nodes")
    check(s == 200 and len(d["items"]) == 1, "one node", s, d)
    node = d["items"][0]["name"]
    # The node's copy of the inventory (gpupool up makes its UUIDs unique to the node).
    uuids = inventory_uuids(os.path.join(pool, "agents", node, "inventory.yaml"))
    check(len(uuids) == 11, "the inventory's eleven instances", uuids)

    def instances(index):
        s, n = admin.get("/v1/nodes/" + node)
        check(s == 200, "get node", s, n)
        return [(m["profile"], m["start"], m["idle"], m["held"])
                for m in n["gpus"][index].get("mig_instances", [])]

    # Reported at registration: the inventory's instances, all idle.
    gpu0 = [("2g.20gb", 0, True, False), ("1g.10gb", 2, True, False),
            ("1g.10gb", 3, True, False), ("3g.40gb", 4, True, False)]
    check(instances(0) == gpu0, "GPU 0's instances", instances(0))
    check(instances(1) == [("1g.10gb", k, True, False) for k in range(7)], "GPU 1's instances",
          instances(1))
    check(instances(2) == [], "GPU 2: in MIG mode, no instances", instances(2))
    s, n = admin.get("/v1/nodes/" + node)
    check("mig_instances" not in n["gpus"][3], "GPU 3: MIG off, no instances", n["gpus"][3])

    # A process outside gpupool on GPU 1's instance at slice 6: reported busy (not idle, not held).
    mock_control(pool, node, "mig-busy 1 6 999")
    wait("GPU 1 slice 6 reported in use", lambda: ("1g.10gb", 6, False, False) in instances(1))

    s, d = admin.post("/v1/tenants", {"name": "mig"})
    check(s == 201, "tenant", s, d)

    def submit(name, profile):
        s, d = admin.post("/v1/jobs", {"name": name, "tenant": "mig",
                                       "command": ["sh", "-c", 'echo "mig=$CUDA_VISIBLE_DEVICES"; '
                                                   '%s # %s' % (nap, mark)],
                                       "resources": {"mig_profile": profile}})
        check(s == 201, "submit " + name, s, d)
        return d["id"]

    def running(name, jid):
        wait(name + " running", lambda: admin.get("/v1/jobs/" + name)[1]["state"] == "Running")
        wait(name + " printed", lambda: "mig=" in stdout_of(jid))
        scheduled = [e["message"] for e in events(admin, name) if e["type"] == "Scheduled"]
        return stdout_of(jid).split("mig=")[1].split()[0], scheduled

    # 1g.10gb: an idle instance of the profile is reused (GPU 0 before GPU 1 on a tie).
    j1 = submit("small", "1g.10gb")
    uuid, ev = running("small", j1)
    check(uuid == uuids["0/3"], "the 1g.10gb job runs in the inventory's instance", uuid, uuids)
    check(len(ev) == 1 and ev[0].endswith("GPU 0 (MIG 1g.10gb: reused instance GPU 0 slice 3)"),
          "its event says which instance was reused", ev)
    wait("GPU 0 slice 3 reported held", lambda: ("1g.10gb", 3, False, True) in instances(0))

    # 3g.40gb: the idle one at GPU 0 slice 4 (today's rule would have taken it for the 1g.10gb).
    j2 = submit("medium", "3g.40gb")
    uuid, ev = running("medium", j2)
    check(uuid == uuids["0/4"], "the 3g.40gb job runs in the inventory's instance", uuid)
    check(len(ev) == 1 and "MIG 3g.40gb: reused instance GPU 0 slice 4" in ev[0], "reused", ev)

    # 4g.40gb: no idle one; GPU 2 is empty, so nothing is destroyed.
    j3 = submit("large", "4g.40gb")
    uuid, ev = running("large", j3)
    check(uuid.startswith("MIG-") and uuid not in uuids.values(), "a new instance", uuid)
    check(len(ev) == 1 and ev[0].endswith("(MIG 4g.40gb: created 4g.40gb at GPU 2 slice 0)"),
          "created, nothing destroyed", ev)

    # 7g.80gb: only GPU 1 could hold it, but its instance at slice 6 is in use outside gpupool.
    j4 = submit("whole", "7g.80gb")
    wait("whole waits", lambda: admin.get("/v1/jobs/whole")[1].get("reason", "").startswith(
        "capacity"), timeout=15)
    check(admin.get("/v1/jobs/whole")[1]["state"] == "Pending", "whole pending while GPU 1 is busy")
    check(instances(1) == [("1g.10gb", k, k != 6, False) for k in range(7)],
          "nothing destroyed on GPU 1 meanwhile", instances(1))
    mock_control(pool, node, "mig-idle 1 6")
    uuid, ev = running("whole", j4)
    check(uuid.startswith("MIG-") and uuid not in uuids.values(), "a new 7g.80gb instance", uuid)
    destroyed = ", ".join("1g.10gb at slice %d" % k for k in range(7))
    check(len(ev) == 1 and ev[0].endswith(
        "(MIG 7g.80gb: created 7g.80gb at GPU 1 slice 0, destroyed idle %s)" % destroyed),
        "its event names the instances destroyed", ev)
    wait("GPU 1 reported reshaped", lambda: instances(1) == [("7g.80gb", 0, False, True)])
    check([i[:2] for i in instances(0)] == [i[:2] for i in gpu0], "GPU 0's instances all stayed",
          instances(0))
    for name in ("small", "medium", "large", "whole"):
        admin.post("/v1/jobs/%s/cancel" % name)
finally:
    down, leftover = pool_down(gpupool, pool, tmp, mark)
    check(down.returncode == 0 and not leftover, "gpupool down", down.stdout, down.stderr,
          leftover)
print("e2e_mig: ok")
