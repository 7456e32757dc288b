"""Jobs from images on the controller side, against a real gpupoold with the agents played by the
test.

- The job spec's image (normalised, refused naming the field when malformed), its pull policy
  and network; jobs.allow_host_rootfs false refuses a job without an image.
- Placement: jobs from images go only to nodes whose agent registered a container runtime; a
  pool with none refuses them at submit (allow_unschedulable waits, saying why); with the only
  runtime node cordoned the job waits with "capacity: no node can run images".
- Registry credentials per tenant: who may set, list and delete them (a user sees only its own
  tenant's, another's is 404), never a password in any answer or audit record; only the desired
  document of the node running the tenant's replica, answered to that node's agent, carries
  them; another tenant's job from the same registry does not get them; kept across kill -9.
- Pull progress from the agent's replica reports: Pulling and Pulled events, one per tenth of
  the total; ImagePullFailed fails the job with the registry's reason and no restart.
- The node's runtime and image cache in GET /v1/nodes/{n}: users see only the totals.
- The CLI: submit --image, tenant registry set|list|delete (password from stdin or a file),
  describe node, get nodes -o wide; get jobs -o wide shows each job's image (shortened; "-"
  without one) and describe job the whole reference, its pull policy and the network.
"""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile

from pool import Pool, check, node_doc

GPUPOOLD, GPUPOOL = sys.argv[1], sys.argv[2]
IMAGE = "127.0.0.1:5000/team/pytorch:2.1"
SECRET = "pw-Zq9-never-shown"
RUNTIME = {"engine": "podman", "version": "4.3.1", "oci_runtime": "runc", "cgroups": "hybrid"}


def err(d):
    return d.get("error", {}).get("message", "") if isinstance(d, dict) else str(d)


def submit(client, name, tenant=None, **extra):
    spec = {"name": name, "command": ["python", "train.py"], "resources": {"gpus": 1}}
    if tenant:
        spec["tenant"] = tenant
    spec.update(extra)
    return client.post("/v1/jobs", spec)


def cli(p, token, *args, stdin=None):
    env = dict(os.environ, GPUPOOL_SERVER=p.base, GPUPOOL_TOKEN=token, HOME=p.dir)
    r = subprocess.run([GPUPOOL] + list(args), input=stdin, capture_output=True, text=True,
                       env=env, timeout=30)
    return r.returncode, r.stdout, r.stderr


def desired_of(doc, name):
    return [x for x in doc["desired"] if x["name"] == name]


with Pool(GPUPOOLD) as p:
    p.tenant("team-a")
    p.tenant("team-b")
    alice = p.user("alice", "team-a")
    bob = p.user("bob", "team-b")
    s, d = p.admin.post("/v1/tokens", {"name": "ops", "role": "operator"})
    check(s == 201, "operator token", s, d)
    ops = p.client(d["token"])
    plain = p.register(node_doc("plain", ngpus=2))

    # ---- the spec ----
    for body, needle in (({"image": "Team/img"}, "image: path component \"Team\""),
                         ({"image": "r.io:99999/x"}, "image: registry"),
                         ({"image": 7}, "image: must be a string"),
                         ({"image_pull_policy": "Always"}, "image_pull_policy: only with image"),
                         ({"image": "x", "image_pull_policy": "sometimes"},
                          "image_pull_policy: must be one of Always, IfNotPresent, Never"),
                         ({"network": "bridge"}, "network: must be one of host, private")):
        s, d = submit(alice, "bad", **body)
        check(s == 400 and needle in err(d), "refused: %s" % body, s, d)

    # No registered node has a runtime: an image job can never run.
    s, d = submit(alice, "early", image=IMAGE)
    check(s == 400 and err(d) == "image: no node can run images (no container runtime)",
          "image job refused in a pool without a runtime", s, d)
    s, d = alice.get("/v1/jobs")
    check(s == 200 and d["items"] == [], "nothing stored by the refusals", d)
    s, d = submit(alice, "waiter", image=IMAGE, allow_unschedulable=True)
    check(s == 201, "allow_unschedulable accepts it", s, d)
    p.settle()
    d = p.job(alice, "waiter")
    check(d["state"] == "Pending" and d["reason"] ==
          "unschedulable: no node can run images (no container runtime) (allowed to wait)",
          "it waits, saying why", d)

    # A runtime that is not one refuses the registration, naming the field.
    bad = node_doc("gpu", ngpus=2)
    bad["runtime"] = dict(RUNTIME, oci_runtime="kata")
    s, d = p.client(p.join_token).post("/v1/nodes", bad)
    check(s == 400 and "runtime.oci_runtime: must be one of runc, crun" in err(d),
          "bad runtime refused", s, d)
    bad["runtime"] = dict(RUNTIME, colour="red")
    s, d = p.client(p.join_token).post("/v1/nodes", bad)
    check(s == 400 and "runtime.colour: unknown field" in err(d), "unknown runtime field", s, d)
    s, d = p.admin.get("/v1/nodes/gpu")
    check(s == 404, "and the node was not stored", s, d)

    doc = node_doc("gpu", ngpus=2)
    doc["runtime"] = RUNTIME
    gpu = p.register(doc)
    d = p.wait_state(alice, "waiter", "Scheduled")
    check(d["placement"][0]["node"] == "gpu", "the waiting job goes to the runtime node", d)
    s, d = alice.post("/v1/jobs/waiter/cancel", {})
    check(s == 200, "cancel the waiter", s, d)

    s, d = submit(alice, "train", image=IMAGE,
                  network="private", restart_policy="always")
    check(s == 201 and d["spec"]["image"] == IMAGE and
          d["spec"]["image_pull_policy"] == "IfNotPresent", "the image as stored", s, d)
    s, d = submit(bob, "other", image="127.0.0.1:5000/team-b/x")
    check(s == 201 and d["spec"]["image"] == "127.0.0.1:5000/team-b/x:latest" and
          d["spec"]["image_pull_policy"] == "Always", "normal form and default policy", s, d)
    s, d = submit(alice, "host-job")
    check(s == 201 and "image" not in d["spec"], "a job without an image", s, d)
    for name in ("train", "other"):
        d = p.wait_state(alice if name == "train" else bob, name, "Scheduled")
        check(d["placement"][0]["node"] == "gpu", "%s placed on the runtime node" % name, d)
    d = p.wait_state(alice, "host-job", "Scheduled")
    check(d["placement"][0]["node"] == "plain", "the host job fills the other node", d)

    # The runtime node full: a third image job waits, though the other node has a free GPU.
    s, d = submit(alice, "third", image=IMAGE)
    check(s == 201, "submit a third", s, d)
    p.settle()
    d = p.job(alice, "third")
    check(d["state"] == "Pending" and "with a container runtime" in d["reason"],
          "it waits for room on a runtime node", d)
    s, d = p.admin.post("/v1/nodes/gpu/cordon", {})
    check(s == 200, "cordon the runtime node", s, d)
    p.settle()
    d = p.job(alice, "third")
    check(d["reason"].startswith("capacity: no node can run images (no container runtime)"),
          "with it cordoned: no node can run images", d)
    s, d = alice.post("/v1/jobs/third/cancel", {})
    s, d = p.admin.post("/v1/nodes/gpu/uncordon", {})
    check(s == 200, "uncordon", s, d)

    # ---- the desired document ----
    s, hb = gpu.post("/v1/nodes/gpu/heartbeat", {})
    check(s == 200, "heartbeat", s, hb)
    t = desired_of(hb, "train")
    check(len(t) == 1 and t[0]["image"] == IMAGE and t[0]["image_pull_policy"] ==
          "IfNotPresent" and t[0]["network"] == "private" and t[0]["tenant"] == "team-a" and
          "registry_auth" not in t[0], "desired replica carries the image fields", t)
    o = desired_of(hb, "other")
    check(len(o) == 1 and "network" not in o[0] and o[0]["tenant"] == "team-b",
          "network absent means host", o)
    s, hb_plain = plain.post("/v1/nodes/plain/heartbeat", {})
    h = desired_of(hb_plain, "host-job")
    check(len(h) == 1 and "image" not in h[0] and "image_pull_policy" not in h[0],
          "no image: the host's root filesystem", h)

    # ---- registry credentials ----
    reg = "/v1/tenants/team-a/registries/127.0.0.1:5000"
    body = {"username": "alice-bot", "password": SECRET}
    s, d = alice.put(reg, body)
    check(s == 403, "users cannot set credentials", s, d)
    for path, b, status, needle in (
            ("/v1/tenants/team-a/registries/r_x.io", body, 400, "registry:"),
            ("/v1/tenants/team-a/registries/r.io:0", body, 400, "registry:"),
            (reg, {"username": "u"}, 400, "password: required"),
            (reg, {"password": "p"}, 400, "username: required"),
            (reg, {"username": "u", "password": "p", "email": "x"}, 400, "email: unknown field"),
            (reg, {"username": "u", "password": 5}, 400, "password"),
            ("/v1/tenants/nobody/registries/r.io", body, 404, "tenant nobody: not found")):
        s, d = ops.put(path, b)
        check(s == status and needle in err(d), "refused: %s %s" % (path, b), s, d)
    s, d = p.admin.get("/v1/tenants/team-a/registries")
    check(s == 200 and d["items"] == [], "nothing half-stored", s, d)

    version = hb["version"]
    s, d = ops.put(reg, body)
    check(s == 201 and d == {"tenant": "team-a", "registry": "127.0.0.1:5000",
                             "username": "alice-bot", "updated_ms": d.get("updated_ms")},
          "operator sets credentials (no password in the answer)", s, d)
    # The waiting agent learns at once (its document now carries them).
    s, d = gpu.get("/v1/nodes/gpu/desired?version=%d&wait=20000" % version, timeout=10)
    check(s == 200 and d["version"] != version, "the node's document moved", s, d)
    s, d = p.admin.put("/v1/tenants/team-a/registries/Index.Docker.IO",
                       {"username": "hub", "password": SECRET + "-hub"})
    check(s == 201 and d["registry"] == "docker.io", "registry normalised", s, d)
    s, d = p.admin.put(reg, {"username": "alice-bot", "password": SECRET})
    check(s == 200, "a second set replaces", s, d)
    s, d = ops.put("/v1/tenants/team-b/registries/127.0.0.1:5001",
                   {"username": "bob-bot", "password": "bob-secret-1"})
    check(s == 201, "team-b's credentials for another registry", s, d)

    s, d = alice.get("/v1/tenants/team-a/registries")
    check(s == 200 and [(x["registry"], x["username"]) for x in d["items"]] ==
          [("127.0.0.1:5000", "alice-bot"), ("docker.io", "hub")],
          "a user lists its own tenant's", s, d)
    s, d = bob.get("/v1/tenants/team-a/registries")
    check(s == 404, "another tenant's are not found", s, d)
    s, d = bob.delete(reg)
    check(s == 403, "users cannot delete", s, d)

    s, hb = gpu.post("/v1/nodes/gpu/heartbeat", {})
    t, o = desired_of(hb, "train"), desired_of(hb, "other")
    check(t[0].get("registry_auth") == {"registry": "127.0.0.1:5000", "username": "alice-bot",
                                        "password": SECRET},
          "the agent of the node running the replica gets the credentials", t)
    check("registry_auth" not in o[0],
          "another tenant's job from the same registry does not get them", o)
    s, d = gpu.get("/v1/nodes/gpu/desired")
    check(desired_of(d, "train")[0].get("registry_auth", {}).get("password") == SECRET,
          "the long-poll answer to the agent carries them too", d)
    s, d = plain.get("/v1/nodes/gpu/desired")
    check(s == 404, "another node's agent cannot read the document", s, d)
    s, d = plain.post("/v1/nodes/plain/heartbeat", {})
    check(SECRET not in json.dumps(d), "nor does the other node get them", d)

    # No answer of the API to a person ever holds the password.
    reads = ["/v1/jobs", "/v1/jobs/train", "/v1/jobs/train/events", "/v1/nodes",
             "/v1/nodes/gpu", "/v1/nodes/gpu/desired", "/v1/tenants", "/v1/tenants/team-a",
             "/v1/tenants/team-a/registries", "/v1/audit", "/v1/tokens", "/v1/usage"]
    for who, c in (("admin", p.admin), ("operator", ops), ("alice", alice)):
        for path in reads:
            s, d = c.get(path)
            check(SECRET not in json.dumps(d), "%s %s shows no password" % (who, path), s, d)
    s, d = p.admin.post("/v1/nodes/gpu/heartbeat", {})
    check(s == 200 and SECRET not in json.dumps(d), "nor a heartbeat sent by an admin", d)
    s, d = p.admin.get("/v1/audit?action=registry.*")
    sets = [r for r in d["items"] if r["action"] == "registry.set"]
    check(len(sets) == 4 and sets[0]["object"] == "registry/team-a/127.0.0.1:5000" and
          sets[0]["tenant"] == "team-a" and
          sets[0]["detail"]["body"]["password"] == "(redacted)" and
          SECRET not in json.dumps(d), "audit records without the secret", d)
    check(SECRET not in p.read_log(), "the log never shows it")

    # ---- pulls ----
    def report(node_client, node, job, **rep):
        r = {"job": job["id"], "replica": 0, "epoch": job["placement"][0]["epoch"]}
        r.update(rep)
        return node_client.post("/v1/nodes/%s/heartbeat" % node, {"replicas": [r]})

    train = p.job(alice, "train")
    s, d = report(gpu, "gpu", train, state="Running", phase="Pulling", pull={"image": IMAGE})
    check(s == 400 and "replicas[0].pull.done_bytes: required" in err(d),
          "a malformed pull is refused, naming the member", s, d)
    steps = [(0, 3400000000), (120000000, 3400000000), (1200000000, 3400000000),
             (1250000000, 3400000000), (3400000000, 3400000000)]
    for done, total in steps:
        s, d = report(gpu, "gpu", train, state="Running", phase="Pulling",
                      pull={"image": IMAGE, "done_bytes": done, "total_bytes": total})
        check(s == 200, "pull progress", s, d)
    d = p.job(alice, "train")
    check(d["state"] == "Scheduled", "pulling: not started yet", d)
    s, ev = alice.get("/v1/jobs/train/events")
    pulls = [e["message"] for e in ev["items"] if e["type"] == "Pulling"]
    check(pulls == ["Pulling %s (0.0 of 3.4 GB)" % IMAGE, "Pulling %s (1.2 of 3.4 GB)" % IMAGE,
                    "Pulling %s (3.4 of 3.4 GB)" % IMAGE],
          "one event per tenth of the total", pulls)
    s, d = report(gpu, "gpu", train, state="Running")
    d = p.wait_state(alice, "train", "Running")
    s, ev = alice.get("/v1/jobs/train/events")
    pulled = [e["message"] for e in ev["items"] if e["type"] == "Pulled"]
    check(len(pulled) == 1 and pulled[0].startswith("Pulled %s in " % IMAGE) and
          pulled[0].endswith(" s"), "Pulled with its time", pulled)

    other = p.job(bob, "other")
    s, d = report(gpu, "gpu", other, state="Running", phase="Pulling",
                  pull={"image": "x", "done_bytes": 5000000, "total_bytes": 0})
    s, ev = bob.get("/v1/jobs/other/events")
    check([e["message"] for e in ev["items"] if e["type"] == "Pulling"] ==
          ["Pulling 127.0.0.1:5000/team-b/x:latest (5.0 MB so far)"], "unknown total", ev)

    # A pull that fails fails the job with the registry's reason, restart policy or not.
    s, d = report(gpu, "gpu", train, state="Failed", exit_code=125,
                  reason="ImagePullFailed: manifest unknown:\nno such tag")
    d = p.wait_state(alice, "train", ("Failed", "Pending"))
    check(d["state"] == "Failed" and d["restarts"] == 0 and d["exit_code"] == 125 and
          d["reason"] == "ImagePullFailed: manifest unknown: no such tag",
          "ImagePullFailed: Failed, not restarted (restart_policy always)", d)
    s, ev = alice.get("/v1/jobs/train/events")
    check(ev["items"][-1]["type"] == "Failed" and
          ev["items"][-1]["message"] == "ImagePullFailed: manifest unknown: no such tag",
          "the Failed event says why", ev["items"][-1])

    # ---- the node's runtime and image cache ----
    images = [{"ref": IMAGE, "id": "sha256:" + "a" * 64, "size_bytes": 3400000000,
               "last_used_ms": 1700000000000},
              {"ref": "127.0.0.1:5000/team-b/x:latest", "id": "sha256:" + "b" * 64,
               "size_bytes": 5000000, "last_used_ms": 1700000001000}]
    s, d = gpu.post("/v1/nodes/gpu/heartbeat", {"images": [{"ref": "x", "size_bytes": -1}]})
    check(s == 400 and "images[0].size_bytes" in err(d), "a bad cache is refused", s, d)
    s, d = gpu.post("/v1/nodes/gpu/heartbeat", {"images": [images[0], dict(images[1], extra=1)]})
    check(s == 400 and err(d) == "images[1].extra: unknown field", "an unknown member too", s, d)
    s, d = gpu.post("/v1/nodes/gpu/heartbeat", {"images": images})
    check(s == 200, "heartbeat with the cache", s, d)
    s, d = p.admin.get("/v1/nodes/gpu")
    check(d["runtime"] == RUNTIME and d["images"]["count"] == 2 and
          d["images"]["size_bytes"] == 3405000000 and
          [x["ref"] for x in d["images"]["items"]] == [IMAGE, "127.0.0.1:5000/team-b/x:latest"],
          "staff see the runtime and the cache", d)
    s, d = alice.get("/v1/nodes/gpu")
    check(d["images"] == {"count": 2, "size_bytes": 3405000000} and d["runtime"] == RUNTIME,
          "users see only the totals", d)
    s, d = alice.get("/v1/nodes")
    check(all("items" not in n["images"] for n in d["items"]) and
          "team-b" not in json.dumps(d), "nor in the list", d)
    s, d = p.admin.get("/v1/nodes/plain")
    check(d["runtime"] is None and d["images"] == {"count": 0, "size_bytes": 0, "items": []},
          "a node without a runtime", d)
    # Registering again (same inventory) without a runtime takes the capability away.
    s, d = p.agent("gpu").post("/v1/nodes", node_doc("gpu", ngpus=2))
    check(s == 200 and d["node"]["runtime"] is None, "runtime gone", s, d)
    p.agent_tokens["gpu"] = d["token"]
    s, d = submit(alice, "late", image=IMAGE)
    check(s == 400 and "no node can run images" in err(d), "no runtime left: refused", s, d)
    gpu = p.register(doc)  # and back

    # ---- the CLI ----
    rc, out, e = cli(p, alice.token, "submit", "--name", "cli-job", "--image", "ubuntu:22.04",
                     "--image-pull-policy", "Never", "--network", "private", "--gpus", "1",
                     "--", "python3", "x.py")
    check(rc == 0, "submit --image", rc, out, e)
    d = p.job(alice, "cli-job")
    check(d["spec"]["image"] == "docker.io/library/ubuntu:22.04" and
          d["spec"]["image_pull_policy"] == "Never" and d["spec"]["network"] == "private",
          "the flags reach the spec", d)
    rc, out, e = cli(p, alice.token, "submit", "--name", "cli-bad", "--image", "UPPER", "--",
                     "x")
    check(rc == 1 and "image: path component" in e, "a bad reference named", rc, out, e)

    rc, out, e = cli(p, p.admin_token, "tenant", "registry", "set", "team-b", "nvcr.io",
                     "--username", "$oauthtoken", stdin="nv-secret-7\n")
    check(rc == 0 and "registry nvcr.io of tenant team-b set" in out, "set from stdin",
          rc, out, e)
    pwfile = os.path.join(p.dir, "pw")
    with open(pwfile, "w") as f:
        f.write("file-secret-8\n")
    rc, out, e = cli(p, ops.token, "tenant", "registry", "set", "team-b", "ghcr.io", "-u",
                     "bob", "--password-file", pwfile)
    check(rc == 0, "set from a file", rc, out, e)
    rc, out, e = cli(p, ops.token, "tenant", "registry", "set", "team-b", "ghcr.io", "-u", "bob",
                     stdin="")
    check(rc == 2 and "no password given" in e, "an empty stdin is refused", rc, out, e)
    rc, out, e = cli(p, ops.token, "tenant", "registry", "set", "team-b", "ghcr.io", "-u", "bob",
                     "--password", "x")
    check(rc == 2, "no password flag", rc, out, e)
    rc, out, e = cli(p, bob.token, "tenant", "registry", "list", "team-b")
    check(rc == 0 and "nvcr.io" in out and "$oauthtoken" in out and "ghcr.io" in out and
          "secret" not in out and "127.0.0.1:5001" in out, "list", rc, out, e)
    rc, out, e = cli(p, bob.token, "tenant", "registry", "list", "team-a")
    check(rc == 1 and "not found" in e, "another tenant's list", rc, out, e)
    rc, out, e = cli(p, p.admin_token, "tenant", "registry", "list", "team-b", "-o", "json")
    check(rc == 0 and len(json.loads(out)["items"]) == 3 and "secret" not in out, "list json",
          rc, out, e)
    rc, out, e = cli(p, p.admin_token, "tenant", "registry", "delete", "team-b", "ghcr.io",
                     "nvcr.io")
    check(rc == 0 and "registry nvcr.io of tenant team-b deleted" in out, "delete", rc, out, e)
    rc, out, e = cli(p, p.admin_token, "tenant", "registry", "delete", "team-b", "ghcr.io")
    check(rc == 1 and "no credentials for registry ghcr.io" in e, "delete again", rc, out, e)
    rc, out, e = cli(p, p.admin_token, "tenant", "--help")
    check(rc == 0 and "tenant registry" in out, "tenant help names registry", rc, out, e)

    rc, out, e = cli(p, p.admin_token, "describe", "node", "gpu")
    check(rc == 0 and "podman 4.3.1 (runc, cgroups hybrid)" in out and IMAGE in out and
          "Images:" in out, "describe node: runtime and cache", rc, out, e)
    rc, out, e = cli(p, alice.token, "describe", "node", "gpu")
    check(rc == 0 and "Images:        2 (" in out and IMAGE not in out,
          "describe node as a user: totals only", rc, out, e)
    rc, out, e = cli(p, p.admin_token, "describe", "node", "plain")
    check(rc == 0 and "none: runs no job from an image" in out, "describe: no runtime",
          rc, out, e)
    rc, out, e = cli(p, p.admin_token, "get", "nodes", "-o", "wide")
    lines = out.splitlines()
    col = lines[0].split().index("RUNTIME") if lines else -1
    rows = {l.split()[0]: l.split()[col] for l in lines[1:]}
    check(rc == 0 and rows.get("gpu") == "podman/runc" and rows.get("plain") == "-",
          "get nodes -o wide: RUNTIME", rc, out, e)
    rc, out, e = cli(p, alice.token, "describe", "job", "cli-job")
    check(rc == 0 and "docker.io/library/ubuntu:22.04 (pull Never)" in out and
          "private" in out, "describe job: image and network", rc, out, e)
    rc, out, e = cli(p, alice.token, "describe", "job", "host-job")
    check(rc == 0 and "none: the host's root filesystem, read-only" in out and
          re.search(r"^Network: +host$", out, re.M), "describe job: no image, host network",
          rc, out, e)
    long_ref = "registry.example.com:5000/ml-platform/team-a/pytorch:2.1.0-cuda12.1-cudnn8-runtime"
    s, d = submit(alice, "long-ref", image=long_ref, image_pull_policy="Never")
    check(s == 201, "submit a long reference", s, d)
    rc, out, e = cli(p, alice.token, "get", "jobs", "--all-states", "-o", "wide")
    lines = out.splitlines()
    head = lines[0].split() if lines else []
    col = head.index("IMAGE") if "IMAGE" in head else -1
    rows = {l.split()[1]: l.split()[col] for l in lines[1:]}
    check(rc == 0 and col > 0 and rows.get("cli-job") == "ubuntu:22.04" and
          rows.get("host-job") == "-" and rows.get("train") == IMAGE and
          rows.get("long-ref") == ".../pytorch:2.1.0-cuda12.1-cudnn8-run...",
          "get jobs -o wide: IMAGE, shortened, - without one", rc, out, e)
    rc, out, e = cli(p, alice.token, "get", "jobs", "--all-states")
    check(rc == 0 and "IMAGE" not in out.splitlines()[0], "the narrow table leaves it out",
          rc, out, e)
    rc, out, e = cli(p, alice.token, "describe", "job", "long-ref")
    check(rc == 0 and "%s (pull Never)" % long_ref in out, "describe job: the whole reference",
          rc, out, e)
    s, d = alice.post("/v1/jobs/long-ref/cancel", {})
    check(s == 200, "cancel long-ref", s, d)

    # ---- kill -9: credentials survive, a deleted tenant takes its own ----
    p.restart(signal.SIGKILL)
    ops = p.client(ops.token)  # the new port
    s, d = p.admin.get("/v1/tenants/team-a/registries")
    check(s == 200 and len(d["items"]) == 2, "credentials survive kill -9", s, d)
    s, d = p.admin.delete("/v1/tenants/team-a/registries/docker.io")
    check(s == 200 and d["deleted"] is True, "delete one", s, d)
    s, d = p.admin.delete("/v1/tenants/team-a/registries/docker.io")
    check(s == 404, "gone", s, d)
    p.tenant("team-c")
    s, d = ops.put("/v1/tenants/team-c/registries/r.io", {"username": "c", "password": "cpw"})
    check(s == 201, "team-c credentials", s, d)
    s, d = p.admin.delete("/v1/tenants/team-c")
    check(s == 200, "delete team-c", s, d)
    p.tenant("team-c")
    s, d = p.admin.get("/v1/tenants/team-c/registries")
    check(s == 200 and d["items"] == [], "a deleted tenant's credentials went with it", s, d)
print("ctl_images: part 1 passed")

# ---- jobs.allow_host_rootfs: false ----
with Pool(GPUPOOLD, env={"GPUPOOL_JOBS_ALLOW_HOST_ROOTFS": "false"}) as p:
    p.tenant("team-a")
    alice = p.user("alice", "team-a")
    s, d = submit(alice, "host-job")
    check(s == 400 and err(d) == "image: required: this pool runs jobs only from images",
          "a job without an image is refused", s, d)
    s, d = submit(alice, "img-job", image=IMAGE)
    check(s == 201, "a job from an image is accepted (no node registered yet)", s, d)
print("ctl_images: all checks passed")
