"""gpupool apply -f and delete -f on a real `gpupool up` pool (gpupoold, agents over the mock
NVML, podman with storage of the test's own, a local registry):

- each manifest users already have (../shared/k8s-manifests) applied, and what gpupool stored
  checked field by field against the translation (`--dry-run=client -o json`) and by hand for
  the fields that matter; the ones refused are refused with their exact reason and store
  nothing (the Deployment without a command, the MIG profile no node has);
- --dry-run=server checks without storing; --strict refuses what is not honoured; re-applying
  says unchanged; a batch job's changed spec is refused; a document the server refuses leaves
  nothing of its file applied; delete -f removes what apply made;
- a manifest of our own runs to completion from an image of the test's registry: the job saw
  its environment (value, fieldRefs of its name, namespace, a label, an annotation and its GPU
  limit), the registered volume its hostPath names, and one GPU.
Arguments: the gpupool program (gpupoold, gpupool-agent, gpupool-run beside it), the shared
manifests' directory.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

from oci import Registry, Storage, build_image
from pool import Client, check, free_ports, open_to_all, pool_down, wait

gpupool = sys.argv[1]
shared = sys.argv[2]
build = os.path.dirname(os.path.dirname(os.path.abspath(gpupool)))
tmp = tempfile.mkdtemp(prefix="gpupool-e2e-apply.", dir=build)
os.chmod(tmp, 0o755)
pool = os.path.join(tmp, "pool")
port = free_ports(2)
st = Storage()
env = dict(st.env)
env.pop("GPUPOOL_RUNTIME", None)
NS = "apply"
reg = None


def gp(*args, stdin=None):
    """gpupool ARGS with the pool's server and admin token: (exit status, stdout, stderr)."""
    r = subprocess.run([gpupool, *args, "--server", "http://127.0.0.1:%d" % port,
                        "--token-file", os.path.join(pool, "admin.token")],
                       input=stdin, capture_output=True, text=True, timeout=120, env=env)
    return r.returncode, r.stdout, r.stderr


def manifest(name):
    return os.path.join(shared, name)


def translated(path):
    """What the client makes of a manifest: {(kind, name): document}."""
    rc, out, err = gp("apply", "--dry-run=client", "-o", "json", "-n", NS, "-f", path)
    check(rc == 0, "client dry run of " + path, out, err)
    return {(i["kind"], i["name"]): i.get("spec") or i.get("object")
            for i in json.loads(out)["items"]}


def subset(want, got, where=""):
    """Every member of want is in got with the same value (got may hold defaults besides)."""
    if isinstance(want, dict):
        check(isinstance(got, dict), where + ": an object", want, got)
        for k, v in want.items():
            check(k in got, where + "." + k + ": stored", want, got)
            subset(v, got[k], where + "." + k)
    elif isinstance(want, list):
        check(isinstance(got, list) and len(got) == len(want), where + ": the list", want, got)
        for i, (a, b) in enumerate(zip(want, got)):
            subset(a, b, "%s[%d]" % (where, i))
    elif where.endswith(".image"):  # kept in its normal form: docker.io/nvidia/cuda:...
        check(got == want or got.endswith("/" + want), where, want, got)
    else:
        check(want == got, where, want, got)


def active_job(name):
    s, d = admin.get("/v1/jobs?name=%s&state=Pending,Scheduled,Running&tenant=%s" % (name, NS))
    check(s == 200, "jobs named " + name, s, d)
    return d["items"][-1] if d["items"] else None


def stored(kind, name):
    if kind in ("job", "service"):
        j = active_job(name)
        return j and j["spec"]
    path = {"tenant": "tenants", "queue": "queues", "priorityclass": "priorityclasses"}[kind]
    s, d = admin.get("/v1/%s/%s" % (path, name))
    return d if s == 200 else None


def applied(path, said):
    """apply -f path; its output lines must be said; every object stored as translated."""
    want = translated(path)
    rc, out, err = gp("apply", "-n", NS, "-f", path)
    check(rc == 0 and sorted(out.split("\n")[:-1]) == sorted(said), "apply " + path, said, out,
          err)
    for (kind, name), doc in want.items():
        got = stored(kind, name)
        check(got is not None, "%s/%s stored" % (kind, name))
        subset(doc, got, "%s/%s" % (kind, name))
    return want


try:
    up = subprocess.run([gpupool, "up", "--data-dir", pool, "--port", str(port), "--nodes",
                         "dgx-a100:1,pcie-t4:1"], capture_output=True, text=True, timeout=120,
                        env=env)
    check(up.returncode == 0 and "is up" in up.stdout, "gpupool up", up.stdout, up.stderr)
    admin = Client("http://127.0.0.1:%d" % port,
                   open(os.path.join(pool, "admin.token")).read().strip())
    open_to_all(tmp)
    vols = os.path.join(tmp, "volumes")
    for v in ("training-data-pvc", "checkpoint-pvc", "model-repository-pvc", "inputs"):
        os.makedirs(os.path.join(vols, v))
        s, d = admin.post("/v1/volumes", {"name": v, "path": os.path.join(vols, v)})
        check(s == 201, "volume " + v, s, d)
    s, d = admin.post("/v1/volumes", {"name": "nvidia-driver", "path": "/usr/local/nvidia",
                                      "read_only": True})
    check(s == 201, "the driver's volume", s, d)
    with open(os.path.join(vols, "inputs", "hello.txt"), "w") as f:
        f.write("hello from a volume\n")
    open_to_all(vols)

    # A Namespace is a tenant.
    rc, out, err = gp("apply", "-f", "-", stdin="apiVersion: v1\nkind: Namespace\n"
                      "metadata: {name: %s}\n" % NS)
    check(rc == 0 and out == "tenant/%s created\n" % NS, "the namespace", out, err)

    # --dry-run=server: every check, nothing stored.
    rc, out, err = gp("apply", "--dry-run=server", "-f", manifest("06-quotas.yaml"))
    check(rc == 0 and out == "tenant/ai-team created (server dry run)\n"
          "tenant/research created (server dry run)\n", "server dry run", out, err)
    check(stored("tenant", "ai-team") is None, "a server dry run stores nothing")
    applied(manifest("06-quotas.yaml"), ["tenant/ai-team created", "tenant/research created"])
    check(stored("tenant", "ai-team")["quota"] == {"gpus": 10, "gpu_memory_mib": 204800,
                                                   "models": {"a100": 4}},
          "ai-team's quota", stored("tenant", "ai-team"))

    # Queues and priority classes; applied again, unchanged.
    said = ["queue/gpu-high-priority created", "queue/gpu-medium-priority created",
            "queue/gpu-low-priority created", "priorityclass/gpu-high created",
            "priorityclass/gpu-medium created", "priorityclass/gpu-low created",
            "priorityclass/inference-service created", "priorityclass/research-job created"]
    applied(manifest("05-queues-and-classes.yaml"), said)
    check(stored("queue", "gpu-medium-priority")["capability"] == {"gpus": 40} and
          stored("queue", "gpu-medium-priority")["weight"] == 50, "a queue's weight and capability",
          stored("queue", "gpu-medium-priority"))
    check(stored("priorityclass", "gpu-high")["preemption_policy"] == "PreemptLowerPriority" and
          stored("priorityclass", "inference-service")["preemption_policy"] == "Never",
          "preemption policies (Kubernetes' default: PreemptLowerPriority)")
    applied(manifest("05-queues-and-classes.yaml"), [x.replace("created", "unchanged")
                                                     for x in said])

    # A changed queue: configured, but not by a server dry run.
    heavier = open(manifest("05-queues-and-classes.yaml")).read().replace("weight: 50",
                                                                           "weight: 60")
    rc, out, err = gp("apply", "--dry-run=server", "-f", "-", stdin=heavier)
    check(rc == 0 and "queue/gpu-medium-priority configured (server dry run)\n" in out and
          "queue/gpu-high-priority unchanged (server dry run)\n" in out, "a dry-run update",
          out, err)
    check(stored("queue", "gpu-medium-priority")["weight"] == 50, "a dry run changes nothing")
    rc, out, err = gp("apply", "-f", "-", stdin=heavier)
    check(rc == 0 and "queue/gpu-medium-priority configured\n" in out and
          stored("queue", "gpu-medium-priority")["weight"] == 60, "the queue updated", out, err)

    # --strict refuses a manifest with fields not honoured, and stores nothing.
    rc, out, err = gp("apply", "--strict", "-n", NS, "-f", manifest("09-mixed-precision-job.yaml"))
    check(rc == 2 and "--strict: 2 fields not honoured (above): nothing applied" in err and
          "spec.template.spec.volumes[0].emptyDir: warning: not mounted" in err,
          "--strict", out, err)
    check(active_job("mixed-precision-training") is None, "--strict stored nothing")

    # The workloads. The GPU pods ask for privileged: refused for a tenant an admin has not
    # allowed, naming the manifest's field; stored once allowed.
    rc, out, err = gp("apply", "-n", NS, "-f", manifest("01-gpu-pod.yaml"))
    check(rc == 1 and "Pod/gpu-pod: spec.containers[0].securityContext.privileged: refused by "
          "the server: tenant %s may not run privileged jobs (an admin allows it: gpupool tenant "
          "set %s --allow-privileged)" % (NS, NS) in err and "nothing applied" in err,
          "privileged refused for the tenant", out, err)
    check(active_job("gpu-pod") is None, "nothing stored of it")
    rc, out, err = gp("tenant", "set", NS, "--allow-privileged")
    check(rc == 0, "an admin allows the tenant privileged jobs", out, err)
    applied(manifest("01-gpu-pod.yaml"), ["job/gpu-pod created"])
    pod = stored("job", "gpu-pod")
    check(pod["privileged"] is True and pod["volumes"] == ["nvidia-driver:ro"] and
          pod["node_selector"] == {"accelerator": "nvidia-tesla-a100"} and
          pod["labels"] == {"app": "ai-training"} and
          pod["resources"]["gpus"] == 1 and pod["resources"]["cpu_milli"] == 4000 and
          pod["network"] == "private" and "NVIDIA_VISIBLE_DEVICES" not in pod["env"],
          "the GPU pod as stored", pod)
    applied(manifest("04-vgpu-pod.yaml"), ["job/vgpu-pod created"])
    check(stored("job", "vgpu-pod")["resources"]["gpu_memory_mib"] == 10240, "the vGPU's memory")
    applied(manifest("07-pytorch-ddp-job.yaml"), ["job/pytorch-ddp-training created"])
    ddp = stored("job", "pytorch-ddp-training")
    check(ddp["env"]["GPU_COUNT"] == "8" and ddp["shm_size_mib"] == 32768 and
          ddp["network"] == "host" and ddp["volumes"] == ["training-data-pvc",
                                                          "checkpoint-pvc"] and
          ddp["tolerations"][0]["key"] == "nvidia.com/gpu" and ddp["max_restarts"] == 6,
          "the DDP job as stored", ddp)
    applied(manifest("08-triton-inference.yaml"), ["service/triton-inference-server created"])
    svc = stored("service", "triton-inference-server")
    check(svc["autoscale"]["metric"] == "gpu_memory_utilization" and
          svc["autoscale"]["target"] == 70 and svc["port"] == 8000 and
          svc["readiness_probe"]["http_get"]["path"] == "/v2/health/ready",
          "the service as stored", svc)
    applied(manifest("08-triton-inference.yaml"), ["service/triton-inference-server unchanged"])
    applied(manifest("09-mixed-precision-job.yaml"), ["job/mixed-precision-training created"])
    # A changed Deployment rolls its service to the new spec; -o name prints names only.
    rolled = open(manifest("08-triton-inference.yaml")).read().replace(
        "periodSeconds: 10", "periodSeconds: 5")
    rc, out, err = gp("apply", "-n", NS, "-f", "-", stdin=rolled)
    check(rc == 0 and out == "service/triton-inference-server configured\n", "a rolling update",
          out, err)
    svc = active_job("triton-inference-server")
    s, ev = admin.get("/v1/jobs/%d/events" % svc["id"])
    check(s == 200 and any(e["type"] == "RollingUpdate" for e in ev["items"]),
          "the service rolled", ev)
    rc, out, err = gp("apply", "-n", NS, "-f", "-", stdin=rolled)
    check(rc == 0 and out == "service/triton-inference-server unchanged\n",
          "the rolled service unchanged", out, err)
    rc, out, err = gp("apply", "-o", "name", "-n", NS, "-f", "-", stdin=rolled)
    check(rc == 0 and out == "service/triton-inference-server\n", "-o name", out, err)


    # Refused on the client: the Deployment with no command.
    rc, out, err = gp("apply", "-n", NS, "-f", manifest("03-gpu-share-deployment.yaml"))
    check(rc == 2 and "Deployment/gpu-share-deployment: spec.template.spec.containers[0]."
          "command: error: required: gpupool does not run the image's ENTRYPOINT" in err and
          "1 error: nothing applied" in err, "the Deployment without a command", out, err)
    check(active_job("gpu-share-deployment") is None, "nothing stored of it")
    # A MIG profile no node has: accepted and Pending, as Kubernetes keeps such a pod.
    applied(manifest("02-mig-pod.yaml"), ["job/mig-pod created"])
    check(stored("job", "mig-pod")["resources"]["mig_profile"] == "2g.10gb" and
          active_job("mig-pod")["state"] == "Pending", "the MIG pod waits", active_job("mig-pod"))

    # A batch job's spec cannot change.
    changed = open(manifest("01-gpu-pod.yaml")).read().replace('cpu: "4"', 'cpu: "3"')
    rc, out, err = gp("apply", "-n", NS, "-f", "-", stdin=changed)
    check(rc == 1 and "job/gpu-pod: refused: job %d (" % active_job("gpu-pod")["id"] in err and
          "a batch job's spec cannot change" in err, "a changed batch job", out, err)

    # -o json: the server's answers.
    rc, out, err = gp("apply", "-o", "json", "-n", NS, "-f", "-",
                      stdin="apiVersion: v1\nkind: Pod\nmetadata: {name: as-json}\nspec:\n"
                            "  restartPolicy: Never\n  containers:\n  - {name: a, command: [\"true\"]}\n")
    items = json.loads(out)["items"] if rc == 0 else []
    check(len(items) == 1 and items[0]["kind"] == "job" and items[0]["action"] == "created" and
          items[0]["server"]["spec"]["name"] == "as-json" and items[0]["server"]["id"] > 0,
          "apply -o json", out, err)

    # A Deployment of the name of an active batch job: refused by the server's dry run.
    clash = ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: gpu-pod}\nspec:\n"
             "  template:\n    spec:\n      containers:\n      - name: a\n"
             "        command: [sleep, \"60\"]\n        ports: [{containerPort: 8080}]\n")
    rc, out, err = gp("apply", "-n", NS, "-f", "-", stdin=clash)
    check(rc == 1 and "kind: job gpu-pod is active and not a service" in err and
          "nothing applied" in err, "a service over a batch job", out, err)

    # A file whose one document the server refuses applies nothing, not even what comes first.
    doomed = ("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: doomed}\n"
              "value: 5\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: no-class}\nspec:\n"
              "  restartPolicy: Never\n  priorityClassName: nowhere\n  containers:\n"
              "  - name: a\n    command: [\"true\"]\n")
    rc, out, err = gp("apply", "-n", NS, "-f", "-", stdin=doomed)
    check(rc == 1 and "priority_class: nowhere does not exist" in err and
          "job/no-class (from Pod/no-class): refused by the server" in err and
          "nothing applied" in err and out == "", "a refused document", out, err)
    check(stored("priorityclass", "doomed") is None, "the class before it not applied")

    # Our own manifest runs: what the job saw.
    reg = Registry(st)
    ref = build_image(st, reg, "team/apply:1")
    run = """apiVersion: v1
kind: Pod
metadata:
  name: sees
  namespace: %s
  labels: {team: vision}
  annotations: {owner: ann}
spec:
  restartPolicy: Never
  hostNetwork: true
  containers:
  - name: main
    image: %s
    command: [sh, -c, 'env | sort; cat /data/inputs/hello.txt']
    env:
    - {name: GREETING, value: hi}
    - name: POD_NAME
      valueFrom: {fieldRef: {fieldPath: metadata.name}}
    - name: POD_NAMESPACE
      valueFrom: {fieldRef: {fieldPath: metadata.namespace}}
    - name: TEAM
      valueFrom: {fieldRef: {fieldPath: "metadata.labels['team']"}}
    - name: OWNER
      valueFrom: {fieldRef: {fieldPath: "metadata.annotations['owner']"}}
    - name: GPU_COUNT
      valueFrom: {resourceFieldRef: {resource: limits.nvidia.com/gpu}}
    resources:
      limits: {nvidia.com/gpu: 1, cpu: 500m, memory: 256Mi}
    volumeMounts:
    - {name: in, mountPath: /data/inputs, readOnly: true}
  volumes:
  - name: in
    hostPath: {path: %s}
""" % (NS, ref, os.path.join(vols, "inputs"))
    rc, out, err = gp("apply", "--strict", "-f", "-", stdin=run)
    check(rc == 0 and out == "job/sees created\n" and err == "", "the run manifest", out, err)
    s, d = admin.get("/v1/jobs?name=sees&tenant=%s" % NS)
    job_id = d["items"][0]["id"]

    def state():
        return admin.get("/v1/jobs/%d" % job_id)[1]["state"]

    wait("the job done", lambda: state() in ("Succeeded", "Failed"), 180)
    check(state() == "Succeeded", "the job succeeded", admin.get("/v1/jobs/%d" % job_id)[1])
    rc, out, err = gp("logs", str(job_id))
    check(rc == 0, "its logs", out, err)
    seen = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
    for k, v in {"GREETING": "hi", "POD_NAME": "sees", "POD_NAMESPACE": NS, "TEAM": "vision",
                 "OWNER": "ann", "GPU_COUNT": "1"}.items():
        check(seen.get(k) == v, "the job saw %s=%s" % (k, v), out)
    visible = seen.get("NVIDIA_VISIBLE_DEVICES") or seen.get("CUDA_VISIBLE_DEVICES", "")
    check(len(visible.split(",")) == 1 and visible != "", "one GPU visible", out)
    check("hello from a volume" in out, "the job read its volume", out)

    # The server's dry run of a submission: the canonical spec, nothing stored; a bad value 400.
    n_jobs = len(admin.get("/v1/jobs?tenant=%s&limit=1000" % NS)[1]["items"])
    s, d = admin.post("/v1/jobs?dry_run=true", {"name": "dry", "tenant": NS,
                                                "command": ["true"]})
    check(s == 200 and d["dry_run"] is True and d["spec"]["queue"] == "default" and
          d["spec"]["args"] == [], "a dry-run submission", s, d)
    check(len(admin.get("/v1/jobs?tenant=%s&limit=1000" % NS)[1]["items"]) == n_jobs,
          "a dry run stores no job")
    s, d = admin.post("/v1/jobs?dry_run=yes", {"name": "dry", "tenant": NS, "command": ["true"]})
    check(s == 400 and "dry_run: must be true or false" in d["error"]["message"], "dry_run=yes",
          s, d)

    # A tenant's user: its own tenant only, and no host directory but a registered volume.
    s, d = admin.post("/v1/tokens", {"name": "una", "role": "user", "tenant": NS})
    check(s == 201, "a user", s, d)
    una = os.path.join(tmp, "una.token")
    with open(una, "w") as f:
        f.write(d["token"])
    sneaky = ("apiVersion: v1\nkind: Pod\nmetadata: {name: %s}\nspec:\n"
              "  restartPolicy: Never\n  containers:\n  - name: a\n    command: [cat, /x/shadow]\n"
              "    securityContext: {privileged: true}\n"
              "    volumeMounts: [{name: etc, mountPath: /x}]\n"
              "  volumes: [{name: etc, hostPath: {path: /etc}}]\n")

    def as_una(*args, stdin=None):
        r = subprocess.run([gpupool, *args, "--server", "http://127.0.0.1:%d" % port,
                            "--token-file", una], input=stdin, capture_output=True, text=True,
                           timeout=60, env=env)
        return r.returncode, r.stdout, r.stderr

    rc, out, err = as_una("apply", "-n", "ai-team", "-f", "-", stdin=sneaky % "elsewhere")
    check(rc == 1 and "tenant ai-team: not found" in err and "nothing applied" in err,
          "another tenant's namespace", out, err)
    rc, out, err = as_una("apply", "-f", "-", stdin=sneaky % "sneaky")
    check(rc == 0 and out == "job/sneaky created\n" and
          "spec.volumes[0].hostPath: warning: not honoured: no registered volume has path /etc"
          in err, "a hostPath", out, err)
    spec = stored("job", "sneaky")
    check(spec["tenant"] == NS and spec["volumes"] == [] and spec["privileged"] is True,
          "stored without the host directory; privileged, as its tenant allows", spec)
    rc, out, err = as_una("tenant", "set", NS, "--allow-privileged=false")
    check(rc == 1 and "not allowed for role user" in err, "a user cannot change it", out, err)
    rc, out, err = gp("tenant", "set", NS, "--allow-privileged=false")
    check(rc == 0, "an admin withdraws it", out, err)
    rc, out, err = as_una("apply", "-f", "-", stdin=sneaky % "sneakier")
    check(rc == 1 and "Pod/sneakier: spec.containers[0].securityContext.privileged: refused by "
          "the server: tenant %s may not run privileged jobs" % NS in err and
          "nothing applied" in err, "privileged refused once withdrawn", out, err)
    check(active_job("sneakier") is None, "nothing stored of it")

    # delete -f: the queues and classes go, the service and jobs are cancelled.
    rc, out, err = gp("delete", "-f", manifest("05-queues-and-classes.yaml"))
    check(rc == 0 and sorted(out.split("\n")[:-1]) == sorted(x.replace("created", "deleted")
                                                              for x in said),
          "delete -f", out, err)
    check(stored("queue", "gpu-high-priority") is None and
          stored("priorityclass", "gpu-low") is None, "deleted")
    rc, out, err = gp("delete", "-n", NS, "-f", manifest("08-triton-inference.yaml"))
    check(rc == 0 and out == "service/triton-inference-server cancelled\n", "delete a service",
          out, err)
    check(active_job("triton-inference-server") is None, "the service cancelled")
    rc, out, err = gp("delete", "-n", NS, "-f", manifest("08-triton-inference.yaml"))
    check(rc == 1 and "service/triton-inference-server: not found" in err, "deleted twice",
          out, err)
    rc, out, err = gp("delete", "-n", NS, "-f", manifest("03-gpu-share-deployment.yaml"))
    check(rc == 1 and "Deployment/gpu-share-deployment: left alone: apply refuses it" in err,
          "delete -f of a manifest apply refuses", out, err)
finally:
    pool_down(gpupool, pool, tmp)
    if reg:
        reg.close()
    st.close()
    shutil.rmtree(tmp, ignore_errors=True)
