"""Jobs that can never run are refused at submit, unless they ask to wait; GPU models go by
their short names everywhere.

A real gpupoold with three nodes registered under the names NVML reports: a DGX-like node of 8
NVLinked "NVIDIA A100-SXM4-80GB", a node of 4 "Tesla T4" (no NVLink), and a node of 2 "Tesla
V100-SXM2-32GB" that never sends a heartbeat (so it is down). The test plays the agents of the
first two.

- Each impossible job (an unknown model, an unknown MIG profile, more GPUs per replica than any
  node has, require-nvlink where no node has NVLinked GPUs of the model, a gang the pool cannot
  hold at once, more than a tenant's per-model or total quota) gets 400 naming the field and
  what exists; nothing is stored.
- The same jobs with allow_unschedulable are accepted and stay Pending with the reason
  "unschedulable: ... (allowed to wait)"; `gpupool submit --allow-unschedulable` does the same,
  and without the flag the CLI fails with the server's message.
- The node that is down still counts: a V100 job is accepted and waits for capacity.
- Short names work in submit (A100-80GB, T4, V100-32GB), in per-model quotas (a quota on "T4"
  holds the Tesla T4 jobs), in scheduler.model_cost (a job allowing both models goes to the
  cheaper T4 node) and in the price table (usage of the A100s is priced, none unpriced).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from pool import Beater, Pool, check, node_doc, submit, wait

GPUPOOLD, GPUPOOL = sys.argv[1], sys.argv[2]
tmp = tempfile.mkdtemp(prefix="gpupool-unsched.")

A100, T4, V100 = "NVIDIA A100-SXM4-80GB", "Tesla T4", "Tesla V100-SXM2-32GB"
MODELS = "models in the pool: %s, %s, %s" % (A100, T4, V100)
PROFILES = "profiles in the pool: 7g.80gb, 4g.40gb, 3g.40gb, 2g.20gb, 1g.20gb, 1g.10gb"

prices = os.path.join(tmp, "prices.yaml")
with open(prices, "w") as f:
    f.write("currency: USD\nprices:\n"
            "  - model: A100-80GB\n    from: 2020-01-01\n    hourly: 3600\n"
            "  - model: T4\n    from: 2020-01-01\n    hourly: 360\n")

# Each impossible job: (name, spec fields, tenant, the 400's message).
IMPOSSIBLE = [
    ("unknown-model", {"resources": {"gpus": 1, "gpu_models": ["A100-40GB"]}}, "team-a",
     'resources.gpu_models[0]: no node has model "A100-40GB"; ' + MODELS),
    ("unknown-mig", {"resources": {"mig_profile": "9g.99gb"}}, "team-a",
     'resources.mig_profile: no GPU in the pool has MIG profile "9g.99gb"; ' + PROFILES),
    ("too-many-gpus", {"resources": {"gpus": 16}}, "team-a",
     "resources.gpus: the job asks for 16 GPUs per replica, but no node has more than 8 GPUs"),
    ("no-nvlink", {"resources": {"gpus": 2, "gpu_models": ["T4"]}, "topology": "require-nvlink"},
     "team-a",
     "topology: require-nvlink needs 2 GPUs of the allowed models pairwise NVLink-connected on "
     "one node, but no node has more than 1"),
    ("big-gang", {"replicas": 2, "resources": {"gpus": 8}}, "team-a",
     "replicas: 2 replicas placed together, but the pool has room for at most 1 of them at once"),
    ("model-quota", {"resources": {"gpus": 2, "gpu_models": ["T4"]}}, "team-q",
     "resources.gpus: the job needs 2 %s GPUs in all, more than tenant team-q's quota of 1 for "
     "that model" % T4),
    ("total-quota", {"replicas": 2, "resources": {"gpus": 4}}, "team-q",
     "resources.gpus: the job needs 8 GPUs in all, more than tenant team-q's quota of 6 GPUs"),
]


def spec(name, fields, **extra):
    s = {"name": name, "command": ["sleep", "1000"]}
    s.update(fields)
    s.update(extra)
    return s


def cli(token, *args):
    env = dict(os.environ, GPUPOOL_SERVER=p.base)
    return subprocess.run([GPUPOOL, "submit", "--token", token] + list(args),
                          capture_output=True, text=True, timeout=60, env=env)


def reason_of(client, ref, prefix, timeout=10):
    """Waits until the job's reason starts with prefix (a scheduling cycle has looked at it)."""
    deadline = time.time() + timeout
    while True:
        d = p.job(client, ref)
        if d["reason"].startswith(prefix) or time.time() > deadline:
            return d
        time.sleep(0.05)


try:
    with Pool(GPUPOOLD, ["--nodes-heartbeat-timeout", "1s", "--billing-price-table", prices,
                         "--scheduler-model-cost", "A100-80GB=9,T4=1"]) as p:
        p.register(node_doc("dgx-1", ngpus=8, model=A100, mem=81920))
        p.register(node_doc("t4-1", ngpus=4, model=T4, mem=15360, cpu_milli=32000,
                            nvlink=False))
        p.register(node_doc("v100-1", ngpus=2, model=V100, mem=32768, nvlink=False))
        beater = Beater(p)
        beater.nodes |= {"dgx-1", "t4-1"}
        p.tenant("team-a")
        p.tenant("team-q", gpus=6, models={"T4": 1})
        users = {"team-a": p.user("alice", "team-a"), "team-q": p.user("quinn", "team-q")}
        wait("v100-1 down", lambda: p.admin.get("/v1/nodes/v100-1")[1]["state"] == "NotReady")

        # ---- impossible jobs: 400 with the field and what exists, nothing stored ----
        for name, fields, tenant, message in IMPOSSIBLE:
            s, d = users[tenant].post("/v1/jobs", spec(name, fields))
            got = d["error"]["message"] if isinstance(d, dict) and "error" in d else d
            check(s == 400 and got == message, "%s refused with its field" % name, s, got,
                  message)
        s, d = p.admin.get("/v1/jobs")
        check(s == 200 and d["items"] == [], "no refused job stored", d)

        r = cli(users["team-a"].token, "--name", "cli-unknown", "--gpus", "1", "--gpu-model", "A100-40GB",
                "--", "sleep", "1")
        check(r.returncode != 0 and 'no node has model "A100-40GB"' in r.stderr,
              "gpupool submit fails with the server's message", r.returncode, r.stderr)

        # ---- the same, allowed to wait: Pending with the reason ----
        for name, fields, tenant, message in IMPOSSIBLE:
            client = users[tenant]
            s, d = client.post("/v1/jobs", spec(name, fields, allow_unschedulable=True))
            check(s == 201 and d["state"] == "Pending", "%s accepted when it may wait" % name,
                  s, d)
            why = message.split(": ", 1)[1]
            d = reason_of(client, d["id"], "unschedulable:")
            check(d["state"] == "Pending" and
                  d["reason"] == "unschedulable: %s (allowed to wait)" % why,
                  "%s waits saying why" % name, d["reason"], why)
        r = cli(users["team-a"].token, "--name", "cli-wait", "--gpus", "1", "--gpu-model", "A100-40GB",
                "--allow-unschedulable", "-o", "json", "--", "sleep", "1")
        check(r.returncode == 0, "gpupool submit --allow-unschedulable accepted", r.stderr)
        job = json.loads(r.stdout)
        d = reason_of(users["team-a"], job["id"], "unschedulable:")
        check(d["reason"].startswith('unschedulable: no node has model "A100-40GB"') and
              d["reason"].endswith("(allowed to wait)"), "the CLI's job waits saying why", d)
        check(p.job(p.admin, job["id"])["spec"].get("allow_unschedulable") is True,
              "the flag is in the stored spec", d)

        # ---- a node that is down still counts ----
        s, d = submit(users["team-a"], "on-down-node", resources={"gpus": 1,
                                                                "gpu_models": ["V100-32GB"]})
        check(s == 201, "a job for the down node's model is accepted", s, d)
        p.settle()
        d = p.job(users["team-a"], d["id"])
        check(d["state"] == "Pending" and not d["reason"].startswith("unschedulable"),
              "it waits for capacity, not as unschedulable", d["reason"])

        # ---- short names: submit, per-model quota, model cost, prices ----
        s, big = submit(users["team-a"], "a100-seven", resources={"gpus": 7,
                                                                "gpu_models": ["A100-80GB"]})
        check(s == 201, "A100-80GB accepted", s, big)
        big = p.wait_state(users["team-a"], big["id"], ("Scheduled", "Running"))
        check(big["placement"][0]["node"] == "dgx-1", "placed on the A100 node", big)
        s, q1 = submit(users["team-q"], "t4-one", resources={"gpus": 1, "gpu_models": ["T4"]})
        check(s == 201, "T4 accepted", s, q1)
        q1 = p.wait_state(users["team-q"], q1["id"], ("Scheduled", "Running"))
        check(q1["placement"][0]["node"] == "t4-1", "placed on the T4 node", q1)
        s, q2 = submit(users["team-q"], "t4-two", resources={"gpus": 1, "gpu_models": ["t4"]})
        check(s == 201, "a second T4 job accepted", s, q2)
        q2 = reason_of(users["team-q"], q2["id"], "quota:")
        check(q2["state"] == "Pending" and
              q2["reason"].startswith("quota: tenant team-q uses 1 of 1 %s" % T4),
              "the quota on T4 holds Tesla T4 jobs", q2["reason"])
        # The DGX is the fuller node, but T4 costs less: a job allowing both goes there.
        s, cheap = submit(users["team-a"], "cheapest", resources={
            "gpus": 1, "gpu_models": ["A100-80GB", "T4"]})
        check(s == 201, "a job allowing both models accepted", s, cheap)
        cheap = p.wait_state(users["team-a"], cheap["id"], ("Scheduled", "Running"))
        check(cheap["placement"][0]["node"] == "t4-1", "scheduler.model_cost by short names",
              cheap["placement"])
        time.sleep(1.0)
        now = int(time.time() * 1000)
        s, rep = p.admin.get("/v1/usage?by=model&from=%d&to=%d" % (now - 3600000, now + 1000))
        check(s == 200, "usage by model", s, rep)
        rows = {row["key"]: row for row in rep["rows"]}
        check(A100 in rows and T4 in rows, "rows by the models' names", rows)
        for m in (A100, T4):
            check(rows[m]["gpu_hours"] > 0 and rows[m]["gpu_hours_unpriced"] == 0 and
                  float(rows[m]["cost"]) > 0, "%s priced by its short name" % m, rows[m])
        beater.stop = True
        beater.t.join()
finally:
    shutil.rmtree(tmp, ignore_errors=True)
print("ok")
