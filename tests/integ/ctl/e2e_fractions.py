"""Every shape of GPU fraction is enforced the same way, end to end: `gpupool up` (gpupoold with
the operator's default jobs.compute_policy set to strict through its environment, one T4 node's
agent over the mock NVML, real gpupool-run supervisors and processes), jobs submitted with
`gpupool submit`. For each fraction the job's process has libgpushare mapped (/proc/PID/maps),
the share region gpupool-run wrote holds the limits derived from the request, and the job's
environment says the same:

- `--gpu-memory 4Gi --cores 25` (aliyun.com/gpu-mem + aliyun.com/gpu-core): 4096 MiB, 25%, the
  operator's strict (stored in the job's spec); 250 milli reserved;
- `--gpu-memory 2Gi --compute-policy shared`: 2048 MiB, the memory's share of the T4 (2048 of
  15360 MiB: 14%), shared;
- `--gpu-milli 300`: no memory limit, 30%, strict;
- `--gpus 1`: no library, no region, no limits.
A cap above what gpu_milli reserves and an unknown compute policy are refused naming the field.
Arguments: the gpupool program (gpupoold, gpupool-agent, gpupool-run beside it).
"""
import os
import struct
import subprocess
import sys
import tempfile

from pool import Client, check, free_ports, sandbox_main, wait, pool_down

gpupool = sys.argv[1]
tmp = tempfile.mkdtemp(prefix="gpupool-fractions.")
pool = os.path.join(tmp, "pool")
node = "pcie-t4-1"
agent_dir = os.path.join(pool, "agents", node)
mark = os.path.basename(tmp).replace(".", "-")
nap = "sleep %d" % (400 + sum(map(ord, mark)) % 500)
# The job prints its limits, then stays (the test reads its process's maps).
job_cmd = ("echo limits=$GPUPOOL_GPU_MEMORY_LIMIT_MIB,$GPUPOOL_GPU_CORE_LIMIT,"
           "$GPUPOOL_GPU_CORE_POLICY region=$GPUPOOL_SHARE_REGION; %s & wait # %s" % (nap, mark))


def region_limits(path):
    """(ndevices, core_percent, core_policy, memory bytes of device 0) from a share region's
    limits file, PATH.limits (src/shim/region.c: eight uint32, a 16-byte id, then the per-device
    limits)."""
    with open(path + ".limits", "rb") as f:
        h = f.read(48 + 8 * 16)
    magic, version, _, _, ndev, core, policy, _ = struct.unpack_from("=8I", h)
    check(magic == 0x4c535047 and version == 2, "a share region's limits", path)
    return ndev, core, policy, struct.unpack_from("=Q", h, 48)[0]


port = free_ports(2)
env = dict(os.environ, GPUPOOL_JOBS_COMPUTE_POLICY="strict")
try:
    up = subprocess.run([gpupool, "up", "--data-dir", pool, "--port", str(port), "--nodes",
                         "pcie-t4:1"], capture_output=True, text=True, timeout=60, env=env)
    check(up.returncode == 0 and "is up" in up.stdout, "gpupool up", up.stdout, up.stderr)
    token = open(os.path.join(pool, "admin.token")).read().strip()
    admin = Client("http://127.0.0.1:%d" % port, token)
    s, d = admin.post("/v1/tenants", {"name": "fr"})
    check(s == 201, "tenant", s, d)
    cli_env = dict(os.environ, GPUPOOL_SERVER="http://127.0.0.1:%d" % port, GPUPOOL_TOKEN=token)

    def submit(name, *flags):
        out = subprocess.run([gpupool, "submit", "--name", name, "--tenant", "fr"] +
                             list(flags) + ["--", "sh", "-c", job_cmd],
                             capture_output=True, text=True, env=cli_env, timeout=30)
        return out

    def job(ref):
        s, d = admin.get("/v1/jobs/%s" % ref)
        check(s == 200, "get job", s, d)
        return d

    # Refused at submission, naming the field.
    out = submit("over", "--gpu-milli", "200", "--cores", "30")
    check(out.returncode != 0 and "resources.cores_percent: at most 20" in out.stderr,
          "a cap above the reserved share is refused", out.stdout, out.stderr)
    out = submit("hard", "--gpu-milli", "200", "--compute-policy", "hard")
    check(out.returncode != 0 and "resources.compute_policy: must be one of shared, strict"
          in out.stderr, "an unknown compute policy is refused", out.stdout, out.stderr)

    shapes = {
        # name: (flags, memory MiB, core percent, policy (1: strict), reserved milli)
        "mem-cores": (["--gpu-memory", "4Gi", "--cores", "25"], 4096, 25, 1, 250),
        "mem-only": (["--gpu-memory", "2Gi", "--compute-policy", "shared"], 2048, 14, 0, 0),
        "milli": (["--gpu-milli", "300"], 0, 30, 1, 300),
        "whole": (["--gpus", "1"], None, None, None, 1000),
    }
    for name, (flags, _, _, _, _) in shapes.items():
        out = submit(name, *flags)
        check(out.returncode == 0, "submit " + name, out.stdout, out.stderr)

    for name, (flags, mem, core, policy, milli) in shapes.items():
        d = wait(name + " running", lambda: job(name)["state"] == "Running" and job(name))
        place = d["placement"][0]
        check(place["gpus"][0]["milli"] == milli, name + ": the compute reserved", place)
        rdir = os.path.join(agent_dir, "replicas", "%d-0-%d" % (d["id"], place["epoch"]))
        stdout = os.path.join(rdir, "stdout.log")
        line = wait(name + " printed its limits",
                    lambda: os.path.exists(stdout) and open(stdout).read().strip())
        # The job's shell in its sandbox (child.pid is podman's client, outside it).
        leader = wait(name + "'s process", lambda: sandbox_main(rdir))
        with open("/proc/%d/maps" % leader) as f:
            mapped = "libgpushare.so" in f.read()
        region = os.path.join(rdir, "share.region")
        if mem is None:
            check(not mapped and not os.path.exists(region) and line == "limits=,, region=",
                  name + ": a whole GPU runs without libgpushare", line, mapped)
            continue
        check(mapped, name + ": libgpushare is loaded in the job's process", leader)
        # The region is the replica's file on the host, mounted into the sandbox.
        want = "limits=%d,%d,%s region=/run/gpupool/share.region" % (mem, core,
                                                                  ("shared", "strict")[policy])
        check(line == want, name + ": the job's environment", line, want)
        ndev, got_core, got_policy, got_mem = region_limits(region)
        check((ndev, got_core, got_policy) == (1, core, policy) and
              got_mem == (mem << 20 if mem else 2 ** 64 - 1),
              name + ": the share region's limits", (ndev, got_core, got_policy, got_mem))
        res = d["spec"]["resources"]
        check(res.get("compute_policy") == ("shared", "strict")[policy],
              name + ": the job's spec names its policy", res)
finally:
    down, leftover = pool_down(gpupool, pool, tmp, mark)
check(down.returncode == 0, "gpupool down", down.stdout, down.stderr)
check(not leftover, "down stopped every job", leftover)
print("ok")
