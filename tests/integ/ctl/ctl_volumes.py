"""Volumes: operators register named host directories; jobs list the ones they need.

Registration validates and normalises the path, names the field that is wrong, refuses
duplicates; users may read volumes but not change them. A submission naming a volume that does
not exist, or asking read-write of a read-only one, is refused with the field named. The node
running a replica gets each volume's path and mode in its desired document. A volume in use
cannot be deleted; volumes survive a restart.
"""
import signal
import sys

from pool import Pool, check, node_doc


def err(d):
    return d.get("error", {}).get("message", "") if isinstance(d, dict) else ""


with Pool(sys.argv[1]) as p:
    agent = p.register(node_doc("n0"))
    p.tenant("team-a")
    alice = p.user("alice", "team-a")

    s, d = p.admin.post("/v1/volumes", {"name": "ds", "path": "//srv//datasets/imagenet/",
                                        "read_only": True, "description": "ImageNet 2012"})
    check(s == 201 and d["path"] == "/srv/datasets/imagenet" and d["read_only"] is True,
          "create a read-only volume, path normalised", s, d)
    s, d = p.admin.post("/v1/volumes", {"name": "ckpt", "path": "/srv/ckpt"})
    check(s == 201 and d["read_only"] is False, "create a read-write volume", s, d)

    for body, status, needle in (
            ({"name": "v1", "path": "srv/x"}, 400, "path: must be an absolute path"),
            ({"name": "v1", "path": "/"}, 400, "path: must not be / itself"),
            ({"name": "v1", "path": "/srv/../etc"}, 400, "path: must not contain . or .."),
            ({"name": "v1"}, 400, "path: required"),
            ({"name": "v1", "path": "/x", "colour": "red"}, 400, "colour: unknown field"),
            ({"name": "v1", "path": "/x", "read_only": "yes"}, 400, "read_only"),
            ({"name": "V_1", "path": "/x"}, 400, "name"),
            ({"name": "ds", "path": "/x"}, 409, "volume ds: already exists")):
        s, d = p.admin.post("/v1/volumes", body)
        check(s == status and needle in err(d), "refused: %s" % body, s, d)
    s, d = p.admin.get("/v1/volumes")
    check(s == 200 and [v["name"] for v in d["items"]] == ["ds", "ckpt"],
          "nothing half-stored by the refusals", d)

    s, d = alice.get("/v1/volumes")
    check(s == 200 and len(d["items"]) == 2, "users see the volumes", s, d)
    s, d = alice.post("/v1/volumes", {"name": "mine", "path": "/home/alice"})
    check(s == 403, "users cannot register volumes", s, d)
    s, d = alice.delete("/v1/volumes/ds")
    check(s == 403, "users cannot delete volumes", s, d)

    def job(name, volumes):
        return alice.post("/v1/jobs", {"name": name, "command": ["sleep", "1000"],
                                       "resources": {"gpus": 1}, "volumes": volumes})

    s, d = job("bad1", ["nope"])
    check(s == 400 and "volumes[0]: no volume named nope" in err(d), "unknown volume", s, d)
    s, d = job("bad2", ["ckpt", "ds:rw"])
    check(s == 400 and "volumes[1]: volume ds is read-only" in err(d), "rw of a ro volume", s, d)
    s, d = job("bad3", [{"name": "ds", "read_only": False}])
    check(s == 400 and "read-only" in err(d), "rw of a ro volume (object form)", s, d)

    s, d = job("train", ["ds", "ckpt"])
    check(s == 201, "submit with volumes", s, d)
    s, d = job("eval", [{"name": "ckpt", "read_only": True}])
    check(s == 201, "submit mounting a rw volume read-only", s, d)
    p.wait_state(alice, "train", "Scheduled")
    p.wait_state(alice, "eval", "Scheduled")
    s, hb = agent.post("/v1/nodes/n0/heartbeat", {})
    want = {x["name"]: x.get("volumes") for x in hb["desired"]}
    check(want.get("train") == [
        {"name": "ds", "path": "/srv/datasets/imagenet", "read_only": True},
        {"name": "ckpt", "path": "/srv/ckpt", "read_only": False}],
        "the desired document carries paths and modes", want)
    check(want.get("eval") == [{"name": "ckpt", "path": "/srv/ckpt", "read_only": True}],
          "a job's read-only use of a rw volume", want)

    s, d = p.admin.get("/v1/volumes/ckpt")
    check(s == 200 and d["active_jobs"] == 2, "active jobs counted", s, d)
    s, d = p.admin.delete("/v1/volumes/ckpt")
    check(s == 409 and "2 active jobs use it" in err(d), "a volume in use is not deleted", s, d)

    version = hb["version"]
    s, d = p.admin.put("/v1/volumes/ckpt", {"path": "/srv/checkpoints"})
    check(s == 200 and d["path"] == "/srv/checkpoints", "change a volume's path", s, d)
    # The node's waiting agent learns it at once (the wait would last 20 s; the client gives up
    # after 10).
    s, d = agent.get("/v1/nodes/n0/desired?version=%d&wait=20000" % version, timeout=10)
    paths = {x["name"]: [v["path"] for v in x.get("volumes", [])] for x in d["desired"]}
    check(s == 200 and d["version"] != version and paths.get("eval") == ["/srv/checkpoints"],
          "a changed volume reaches the nodes of the jobs that mount it", s, d)
    version = d["version"]
    s, d = p.admin.put("/v1/tenants/team-a", {"quota": {"gpus": 64}})
    check(s == 200, "change a tenant", s, d)
    s, d = agent.get("/v1/nodes/n0/desired?version=%d&wait=300" % version, timeout=10)
    check(s == 200 and d["version"] == version, "other objects changing moves no node", s, d)
    s, d = p.admin.put("/v1/volumes/ckpt", {"path": "relative"})
    check(s == 400, "a bad update is refused", s, d)
    s, d = p.admin.get("/v1/volumes/ckpt")
    check(d["path"] == "/srv/checkpoints", "and changes nothing", d)

    p.restart(signal.SIGKILL)
    alice = p.client(alice.token)  # the token survives the restart
    s, d = p.admin.get("/v1/volumes")
    check(s == 200 and [(v["name"], v["path"], v["read_only"]) for v in d["items"]] ==
          [("ds", "/srv/datasets/imagenet", True), ("ckpt", "/srv/checkpoints", False)],
          "volumes survive kill -9", d)

    for name in ("train", "eval"):
        s, d = alice.post("/v1/jobs/%s/cancel" % name, {})
        check(s == 200, "cancel %s" % name, s, d)
    s, d = p.admin.delete("/v1/volumes/ckpt")
    check(s == 200, "an unused volume is deleted", s, d)
    s, d = p.admin.get("/v1/volumes/ckpt")
    check(s == 404, "and gone", s, d)
print("ctl_volumes: all checks passed")
