"""Distributed launchers in gangs of a `gpupool up` pool, with the real tools from Debian.

- torchrun (python3-torch, gloo on the CPU): a 2 x 2-GPU gang on two simulated 2-GPU nodes runs
  a plain `torchrun train.py` in each replica; the four processes form one job (ranks 0..3, world
  size 4, replica 0 holding ranks 0 and 1) and an all-reduce of rank + 1 gives 10 everywhere.
- mpirun (openmpi-bin): a 2 x 8-GPU gang on the two DGX nodes; replica 0 runs
  `mpirun -np 16 --hostfile $GPUPOOL_HOSTFILE`, which starts 16 ranks (both nodes are 127.0.0.1
  here, so the hostfile is one line with 16 slots).

Skipped (77) when torchrun or mpirun is missing, except under CI=true (scripts/deps.sh installs
them there). Arguments: the gpupool program (gpupoold, gpupool-agent, gpupool-run beside it).
"""
import glob
import os
import shutil
import subprocess
import sys
import tempfile

from pool import Client, check, free_ports, pool_down, wait

gpupool = sys.argv[1]
JOB_PATH = "/usr/local/bin:/usr/bin:/bin"  # the job's PATH under a `gpupool up` agent
tools = {t: shutil.which(t, path=JOB_PATH) for t in ("torchrun", "mpirun")}
missing = [t for t, p in tools.items() if not p]
if missing:
    print("missing %s (apt-get install python3-torch openmpi-bin)" % ", ".join(missing))
    sys.exit(1 if os.environ.get("CI") == "true" else 77)

here = os.path.dirname(os.path.abspath(__file__))
inventories = os.path.join(here, "..", "..", "..", "deploy", "inventories")
tmp = tempfile.mkdtemp(prefix="gpupool-dist.")
pool = os.path.join(tmp, "pool")

# Two GPUs per node, so that each replica of the 2 x 2 gang gets a node of its own.
with open(os.path.join(inventories, "pcie-t4.yaml")) as f:
    lines = f.read().splitlines()
first_gpu = next(i for i, l in enumerate(lines) if l.lstrip().startswith("- {uuid:"))
t4x2 = os.path.join(tmp, "t4x2.yaml")
with open(t4x2, "w") as f:
    f.write("\n".join(lines[:first_gpu + 2]) + "\n")

# The script reaches the jobs through a read-only volume (their sandboxes see nothing else of
# this machine's /tmp), at /data/code/train.py.
code = os.path.join(tmp, "code")
os.makedirs(code)
train = os.path.join(code, "train.py")
with open(train, "w") as f:
    f.write("""import os
import torch
import torch.distributed as dist
dist.init_process_group("gloo")
t = torch.tensor([float(dist.get_rank() + 1)])
dist.all_reduce(t)
line = "rank=%d world=%d local=%s node=%s sum=%d\\n" % (dist.get_rank(), dist.get_world_size(),
       os.environ["LOCAL_RANK"], os.environ["GPUPOOL_NODE_RANK"], int(t.item()))
os.write(1, line.encode())  # one write: the two workers share the replica's stdout
dist.destroy_process_group()
""")


def node_of(jid, replica):
    """The node whose agent ran the replica (from where its directory is)."""
    paths = glob.glob(os.path.join(pool, "agents", "*", "*", "%d-%d-*" % (jid, replica)))
    return paths[0].split(os.sep)[-3] if len(paths) == 1 else None


def stdout_of(jid, replica):
    paths = glob.glob(os.path.join(pool, "agents", "*", "*", "%d-%d-*" % (jid, replica),
                                   "stdout.log"))
    return open(sorted(paths)[-1]).read() if paths else ""


def stderr_of(jid, replica):
    paths = glob.glob(os.path.join(pool, "agents", "*", "*", "%d-%d-*" % (jid, replica),
                                   "stderr.log"))
    return open(sorted(paths)[-1], errors="replace").read()[-3000:] if paths else ""


port = free_ports(5)
try:
    up = subprocess.run([gpupool, "up", "--data-dir", pool, "--port", str(port), "--nodes",
                         "dgx-a100:2,%s:2" % t4x2], capture_output=True, text=True, timeout=60)
    check(up.returncode == 0 and "is up" in up.stdout, "gpupool up", up.stdout, up.stderr)
    token = open(os.path.join(pool, "admin.token")).read().strip()
    admin = Client("http://127.0.0.1:%d" % port, token)
    check(admin.post("/v1/tenants", {"name": "dist"})[0] == 201, "tenant")
    s, d = admin.post("/v1/volumes", {"name": "code", "path": code, "read_only": True})
    check(s == 201, "the code volume", s, d)

    def submit(spec):
        spec = dict(spec, tenant="dist", replicas=2)
        s, d = admin.post("/v1/jobs", spec)
        check(s == 201, "submit " + spec["name"], s, d)
        return d["id"]

    def job(jid):
        return admin.get("/v1/jobs/%d" % jid)[1]

    # Debian's torch 1.13 under Python 3.11 cannot parse torchrun's default --redirects/--tee
    # ("0"); any other value works (the job's own PET_ variables, not gpupool's).
    torch = submit({"name": "torch", "command": ["torchrun", "/data/code/train.py"],
                    "volumes": ["code"],
                    "resources": {"gpus": 2, "gpu_models": ["Tesla T4"]},
                    "env": {"PET_REDIRECTS": "2", "PET_TEE": "2"}})
    mpi = submit({"name": "mpi", "resources": {"gpus": 8},
                  "env": {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
                          },
                  "command": ["sh", "-c",
                              'cat "$GPUPOOL_HOSTFILE"; [ "$GPUPOOL_NODE_RANK" = 0 ] || exit 0; '
                              'exec mpirun -np 16 --hostfile "$GPUPOOL_HOSTFILE" sh -c '
                              '\'echo "mpi rank=$OMPI_COMM_WORLD_RANK size=$OMPI_COMM_WORLD_SIZE '
                              'world=$WORLD_SIZE"\'']})

    # mpirun over the hostfile: 16 ranks, every one of them seeing the 16-process world.
    d = wait("the mpi gang done", lambda: job(mpi)["state"] in ("Succeeded", "Failed") and
             job(mpi), timeout=120)
    out = stdout_of(mpi, 0)
    check(d["state"] == "Succeeded", "mpirun ran", d, out, stderr_of(mpi, 0))
    nodes = [node_of(mpi, r) for r in (0, 1)]
    check(sorted(nodes) == ["dgx-a100-1", "dgx-a100-2"], "one replica per DGX node", nodes)
    check(out.splitlines()[0] == "127.0.0.1 slots=16",
          "one hostfile line for the one host, 8 slots per replica", out)
    ranks = sorted(l for l in out.splitlines() if l.startswith("mpi "))
    want = sorted("mpi rank=%d size=16 world=16" % r for r in range(16))
    check(ranks == want, "mpirun -np 16 started 16 ranks", out)

    # torchrun in each replica: one job of four processes, the all-reduce over all of them.
    d = wait("the torch gang done", lambda: job(torch)["state"] in ("Succeeded", "Failed") and
             job(torch), timeout=240)
    outs = [stdout_of(torch, r) for r in (0, 1)]
    check(d["state"] == "Succeeded", "torchrun ran in both replicas", d, outs,
          stderr_of(torch, 0), stderr_of(torch, 1))
    nodes = [node_of(torch, r) for r in (0, 1)]
    check(sorted(nodes) == ["t4x2-3", "t4x2-4"], "one replica per 2-GPU node", nodes)
    for r in (0, 1):
        got = sorted(l for l in outs[r].splitlines() if l.startswith("rank="))
        want = sorted("rank=%d world=4 local=%d node=%d sum=10" % (2 * r + k, k, r)
                      for k in range(2))
        check(got == want, "replica %d: ranks %d and %d of 4, sum 10" % (r, 2 * r, 2 * r + 1),
              outs[r])
finally:
    down, leftover = pool_down(gpupool, pool, tmp, tmp)
check(down.returncode == 0, "gpupool down", down.stdout, down.stderr)
check(not leftover, "down stopped every job", leftover)
print("ok")
