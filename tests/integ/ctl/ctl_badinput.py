"""Bad input gets a 4xx naming what is wrong, and nothing is stored.

Malformed JSON and YAML (line and column), unknown fields, bad values (the field named),
bodies over http.max_body (413), bad node registrations and objects. At the end no job, tenant,
queue or node exists that a refused request tried to create, and what existed is unchanged.
"""
import sys

from pool import Pool, check, node_doc

with Pool(sys.argv[1], ["--http-max-body", "64KiB"]) as p:
    admin = p.admin
    p.tenant("team-a", gpus=8)
    alice = p.user("alice", "team-a")

    def refused(status, doc, code, *texts):
        check(status == code, "status %d, expected %d" % (status, code), doc)
        msg = doc["error"]["message"] if isinstance(doc, dict) and "error" in doc else str(doc)
        for t in texts:
            check(t in msg, "message names %r" % t, msg)

    ok = {"name": "j", "command": ["true"], "resources": {"gpus": 1}}
    cases = [
        (b'{"name": "j", "command": [', 400, ["line 1"]),
        (b'{"name": "j",, }', 400, ["line 1", "column"]),
        (b'[1, 2]', 400, ["body: must be an object"]),
        (b'{"name": "j", "name": "k", "command": ["x"], "resources": {"gpus": 1}}', 400,
         ["duplicate"]),
    ]
    for raw, code, texts in cases:
        s, d = alice.post("/v1/jobs", raw=raw, headers={"Content-Type": "application/json"})
        refused(s, d, code, *texts)

    bad_specs = [
        (dict(ok, replicas=0), ["replicas: must be between 1 and 4096"]),
        (dict(ok, replicas=5000), ["replicas: must be between 1 and 4096"]),
        (dict(ok, resources={"gpu_mili": 500}), ["resources.gpu_mili: unknown field"]),
        (dict(ok, colour="blue"), ["colour: unknown field"]),
        (dict(ok, resources={"gpus": 1, "gpu_milli": 500}), ["resources"]),
        (dict(ok, name="Bad_Name"), ["name"]),
        (dict(ok, command=[]), ["command"]),
        (dict(ok, env={"CUDA_VISIBLE_DEVICES": "0"}), ["env"]),
        (dict(ok, queue="nope"), ["queue: nope does not exist"]),
        (dict(ok, priority_class="nope"), ["priority_class: nope does not exist"]),
        (dict(ok, resources={"gpus": 16}), ["resources.gpus", "more than tenant team-a's quota"]),
        (dict(ok, max_runtime="soon"), ["max_runtime"]),
        # notebooks and services
        (dict(ok, kind="service", port=0), ["port: must be between 1 and 65535"]),
        (dict(ok, kind="notebook", port=70000), ["port: must be between 1 and 65535"]),
        (dict(ok, kind="service"), ["port: required for kind service"]),
        (dict(ok, port=8080), ["port: only for kind notebook or service"]),
        (dict(ok, readiness_probe={"tcp_socket": {"port": 80}}),
         ["readiness_probe: only for kind notebook or service"]),
        (dict(ok, liveness_probe={"exec": {"command": ["true"]}}),
         ["liveness_probe: only for kind service"]),
        (dict(ok, kind="service", port=80,
              autoscale={"min_replicas": 5, "max_replicas": 2, "target": 50}),
         ["autoscale.min_replicas: 5 is above max_replicas (2)"]),
        (dict(ok, kind="service", port=80, readiness_probe={"http_get": {"path": "x"}}),
         ["readiness_probe.http_get.path: must be an absolute path"]),
        (dict(ok, kind="notebook", port=80, network="host"), ["network: a notebook runs"]),
        (dict(ok, kind="notebook", port=80, command=None, image=None),
         ["image: required for a notebook", "notebooks.image"]),
    ]
    for spec, texts in bad_specs:
        s, d = alice.post("/v1/jobs", spec)
        check(400 <= s < 500, "bad spec refused with 4xx: %s" % spec, s, d)
        refused(s, d, s, *texts)

    s, d = alice.post("/v1/jobs", raw="name: j\ncommand: [run\n",
                      headers={"Content-Type": "application/yaml"})
    refused(s, d, 400, "line")
    s, d = alice.post("/v1/jobs", raw="name: j\ncommand: [run]\nresources: {gpus: 0}\n",
                      headers={"Content-Type": "application/yaml"})
    refused(s, d, 400, "resources.gpus")

    big = dict(ok, args=["x" * 70000])
    s, d = alice.post("/v1/jobs", big)
    refused(s, d, 413)

    s, d = alice.post("/v1/jobs", ok, headers={"Idempotency-Key": "k" * 200})
    refused(s, d, 400, "Idempotency-Key")

    # Objects and nodes.
    for path, body, texts in (
        ("/v1/tenants", {"name": "t2", "quota": {"gpu": 4}}, ["quota.gpu: unknown field"]),
        ("/v1/tenants", {"name": "t2", "quota": {"gpus": -1}}, ["quota.gpus"]),
        ("/v1/tenants", {"name": "T 2"}, ["name"]),
        ("/v1/tenants", {"name": "team-a"}, ["already exists"]),
        ("/v1/queues", {"name": "q", "weight": 0}, ["weight"]),
        ("/v1/queues", {"name": "q", "capability": {"gpus": "many"}}, ["capability.gpus"]),
        ("/v1/priorityclasses", {"name": "p", "value": 1, "preemption_policy": "Sometimes"},
         ["preemption_policy"]),
        ("/v1/tokens", {"name": "t", "role": "god"}, ["role"]),
        ("/v1/tokens", {"name": "t", "role": "user"}, ["tenant"]),
    ):
        s, d = admin.post(path, body)
        check(400 <= s < 500, "%s %s refused" % (path, body), s, d)
        refused(s, d, s, *texts)

    joiner = p.client(p.join_token)
    bad_node = node_doc("n1", ngpus=2)
    bad_node["gpus"][1]["nvlink"] = [5]
    s, d = joiner.post("/v1/nodes", bad_node)
    refused(s, d, 400, "gpus[1].nvlink")
    bad_node = node_doc("n1", ngpus=2)
    del bad_node["gpus"][0]["model"]
    s, d = joiner.post("/v1/nodes", bad_node)
    refused(s, d, 400, "gpus[0]")
    s, d = joiner.post("/v1/nodes", dict(node_doc("n1"), cpu_milli=-5))
    refused(s, d, 400, "cpu_milli")

    # Nothing was stored, and nothing that existed changed.
    s, d = admin.get("/v1/jobs")
    check(s == 200 and d["items"] == [], "no job stored", d)
    s, d = admin.get("/v1/tenants")
    check([t["name"] for t in d["items"]] == ["team-a"], "only team-a", d)
    check(d["items"][0]["quota"]["gpus"] == 8, "team-a's quota unchanged", d)
    s, d = admin.get("/v1/queues")
    check([q["name"] for q in d["items"]] == ["default"], "only the default queue", d)
    s, d = admin.get("/v1/nodes")
    check(d["items"] == [], "no node registered", d)
    # Unknown endpoint and method.
    s, d = admin.get("/v1/nothing")
    check(s == 404, "unknown endpoint 404", s, d)
    s, d = admin.call("PATCH", "/v1/jobs", body={})
    check(s == 405, "unknown method 405", s, d)
print("ok")
