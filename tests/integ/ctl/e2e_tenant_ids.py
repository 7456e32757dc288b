"""Every tenant's jobs under host ids of its own, on a whole pool: `gpupool up` (gpupoold, one
agent over the mock NVML, the real podman with storage of the test's own), two tenants, each
with a job over the host root and a job from an image (a local registry, busybox-static), all
four fractions of the node's one GPU, running side by side:

- every process of a job runs on the host as its tenant's uid FIRST + T * 65536 + 65534 (T the
  tenant's id, FIRST the agent's default 2^30), so the two tenants' processes never share a uid;
- an image job is in a user namespace mapping 0..65535 onto its tenant's range (its
  /proc/self/uid_map) and is uid 65534 inside; a job over the host root runs as the host uid
  itself (no user namespace: the host's directories keep their owners);
- what a job writes in its work directory belongs to its tenant's uid on the host;
- a fraction's share region: the usage file writable by the job, the limits file not, owned by
  the namespace's root (an image job) or the host's root (over the host root);
- the pool's admin token, database, metrics and join tokens, opened to everyone, are hidden from
  every job (gpupool up's agents mask them);
- an agent given --tenant-uids below 65536 refuses to start, naming the flag.
Arguments: the gpupool program (gpupoold, gpupool-agent, gpupool-run beside it).
"""
import json
import os
import subprocess
import sys
import tempfile

from oci import Registry, Storage, build_image
from pool import Client, check, free_ports, pool_down, wait

gpupool = sys.argv[1]
bindir = os.path.dirname(os.path.abspath(gpupool))
build = os.path.dirname(bindir)
FIRST, SIZE, NOBODY = 1 << 30, 65536, 65534

bad = subprocess.run([os.path.join(bindir, "gpupool-agent"), "--tenant-uids", "1000"],
                     capture_output=True, text=True, timeout=30)
check(bad.returncode == 2 and "--tenant-uids" in bad.stderr, "--tenant-uids below 65536 refused",
      bad.returncode, bad.stderr)

tmp = tempfile.mkdtemp(prefix="gpupool-e2e-tenant-ids.", dir=build)
os.chmod(tmp, 0o755)
pool = os.path.join(tmp, "pool")
agent_dir = os.path.join(pool, "agents", "pcie-t4-1")
port = free_ports(1)
st = Storage()
env = dict(st.env)
env.pop("GPUPOOL_RUNTIME", None)
env.pop("GPUPOOL_TENANT_UIDS", None)

# What each job reports, then it waits to be looked at.
SCRIPT = ("echo uid=$(id -u) gid=$(id -g); echo map=$(head -1 /proc/self/uid_map); "
          "for f in %s; do grep -q . $f 2>/dev/null && echo visible=$f; done; "
          "touch /gpupool/work/made && echo made; "
          "test -w /run/gpupool/share.region && echo usage-writable; "
          "test -w /run/gpupool/share.region.limits && echo limits-writable || "
          "echo limits-readonly; "
          "ls -n /run/gpupool/share.region.limits | while read m l u g r; do "
          "echo limits-owner=$u; done; exec sleep 1000") % " ".join(
              os.path.join(pool, f) for f in ("admin.token", "gpupool.db", "scrape.token",
                                              "join.token"))


def replica_dir(job_id):
    base = os.path.join(agent_dir, "replicas")
    for name in os.listdir(base) if os.path.isdir(base) else []:
        if name.startswith("%d-0-" % job_id):
            return os.path.join(base, name)
    return None


def output(job_id):
    d = replica_dir(job_id)
    try:
        return open(os.path.join(d, "stdout.log")).read().splitlines() if d else []
    except OSError:
        return []


def job_uids(job_id):
    """The host uids of the processes in the job's container (its cgroup's libpod-* part: not
    podman or its monitor, which run as root). The cgroup is this pool's replica's: named with
    its supervisor's pid, as other pools on the machine have jobs of the same ids."""
    with open(os.path.join(replica_dir(job_id), "status.json")) as f:
        sup = json.load(f)["supervisor_pid"]
    mine = "/gpupool/job%d-r0-" % job_id
    uids = set()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open("/proc/%s/cgroup" % pid) as f:
                cg = f.read()
            if not any(mine in ln and "-p%d/libpod-" % sup in ln for ln in cg.splitlines()):
                continue
            with open("/proc/%s/status" % pid) as f:
                uids |= {int(ln.split()[1]) for ln in f if ln.startswith("Uid:")}
        except OSError:
            continue
    return uids


try:
    up = subprocess.run([gpupool, "up", "--data-dir", pool, "--port", str(port), "--nodes",
                         "pcie-t4:1"], capture_output=True, text=True, timeout=120, env=env)
    check(up.returncode == 0 and "is up" in up.stdout, "gpupool up", up.stdout, up.stderr)
    admin = Client("http://127.0.0.1:%d" % port,
                   open(os.path.join(pool, "admin.token")).read().strip())
    for t in ("ta", "tb"):
        check(admin.post("/v1/tenants", {"name": t})[0] == 201, "tenant " + t)
    # The pool's files opened to everyone, as a careless operator might: gpupool up's agents hide
    # them from the jobs all the same.
    os.chmod(pool, 0o755)
    for f in ("admin.token", "gpupool.db", "scrape.token", "join.token"):
        os.chmod(os.path.join(pool, f), 0o644)
    with Registry(st) as reg:
        ref = build_image(st, reg, "team/ids:1")
        jobs = {}
        for t in ("ta", "tb"):
            for kind, extra in (("host", {}), ("image", {"image": ref})):
                spec = dict({"name": "%s-%s" % (t, kind), "tenant": t,
                             "command": ["sh", "-c", SCRIPT],
                             "resources": {"gpu_milli": 250, "gpu_memory_mib": 1024}}, **extra)
                s, d = admin.post("/v1/jobs", spec)
                check(s == 201, "submit " + spec["name"], s, d)
                jobs[(t, kind)] = d["id"]
        for key, jid in jobs.items():
            wait("%s-%s reported" % key, lambda: any(ln.startswith("limits-owner=")
                                                      for ln in output(jid)), timeout=60)
    tenant_id = {}
    for (t, kind), jid in jobs.items():
        with open(os.path.join(replica_dir(jid), "spec.json")) as f:
            tenant_id.setdefault(t, json.load(f)["tenant_id"])
    check(tenant_id["ta"] != tenant_id["tb"], "two tenants, two ids", tenant_id)
    seen = {}
    for (t, kind), jid in jobs.items():
        base = FIRST + tenant_id[t] * SIZE
        host_uid = base + NOBODY
        out = output(jid)
        uids = job_uids(jid)
        check(uids == {host_uid}, "%s-%s: every process as the tenant's host uid" % (t, kind),
              sorted(uids), host_uid)
        seen.setdefault(t, set()).update(uids)
        mapping = [ln[len("map="):].split() for ln in out if ln.startswith("map=")]
        if kind == "image":
            check(out[0] == "uid=%d gid=%d" % (NOBODY, NOBODY) and
                  mapping and mapping[0] == ["0", str(base), str(SIZE)],
                  "%s-image: uid 65534 in a namespace mapping 0.. onto its range" % t, out)
            owner = "0"  # the namespace's root: the host's base id
        else:
            check(out[0] == "uid=%d gid=%d" % (host_uid, host_uid) and mapping and
                  mapping[0] == ["0", "0", "4294967295"],
                  "%s-host: the host uid itself, no user namespace" % t, out)
            owner = "0"  # the host's root
        made = os.stat(os.path.join(replica_dir(jid), "work", "made"))
        check((made.st_uid, made.st_gid) == (host_uid, host_uid),
              "%s-%s: its file belongs to its tenant's uid" % (t, kind), made)
        check(not [ln for ln in out if ln.startswith("visible=")],
              "%s-%s: the pool's tokens and database hidden" % (t, kind), out)
        check("usage-writable" in out and "limits-readonly" in out and
              "limits-owner=" + owner in out, "%s-%s: the share region" % (t, kind), out)
        limits = os.stat(os.path.join(replica_dir(jid), "share.region.limits"))
        check(limits.st_uid == (base if kind == "image" else 0) and limits.st_gid == host_uid,
              "%s-%s: the limits file's owner on the host" % (t, kind), limits)
    check(not (seen["ta"] & seen["tb"]), "the tenants share no uid",
          {t: sorted(u) for t, u in seen.items()})
finally:
    down, leftover = pool_down(gpupool, pool, tmp, tmp)
    st.close()
check(down.returncode == 0, "gpupool down", down.stdout, down.stderr)
check(not leftover, "down stopped every job", leftover)
print("ok")
