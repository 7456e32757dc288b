#!/usr/bin/env python3
"""The container measurements behind bench/containers.sh. Everything runs on this machine with the
production programs (build/bin) and podman storage of the run's own (tests/integ/ctl/oci.py);
nothing is pulled from the internet. Raw results go to --results (JSON) for
bench/containers_report.py.

1. Start overhead. The same trivial job (`sh -c 'read u r < /proc/uptime; echo $u'`: shell
   builtins only, it prints the boot-clock second at which it ran) through gpupool-run, --starts
   times each, the kinds in turn (run i of every kind, then run i+1, so that a change in the
   machine's load touches every kind alike), after one warm-up run of each that is not counted:
     host      --runtime none: a host process in a session of its own;
     sandbox   --runtime podman (the default) over the host root, read-only;
     image     --runtime podman from a busybox image (built here, pushed to a local registry and
               pulled before the runs: image_pull_policy IfNotPresent, so no pull is timed).
   Per run: wall time from spawning gpupool-run to its exit (the record written, the container
   removed); "leader" = status.json start_ms minus the spawn (gpupool-run ready to exec the job,
   or `podman run` in a sandbox); "first" = the boot-clock second the job printed minus the
   spawn's (the job's first instruction; /proc/uptime has 10 ms steps).
2. Pull time. A local docker-registry on 127.0.0.1 and a free port; images of busybox alone and
   with a layer of random data (--pull-sizes, MB); each pulled --pulls times the way gpupool-run
   pulls (src/agent/pull.c, sup_podman.c): `skopeo inspect --raw [--registries-conf F]
   docker://REF` for the size, then `podman pull REF` with TMPDIR a fresh directory, each time
   into fresh podman storage. The size is the manifest's (config + compressed layers: what
   crosses the wire).
3. Memory watch reaction. `gpupool up` with one mock-NVML node (pcie-t4, 4 GPUs) and the agent's
   defaults (GPUPOOL_MEMORY_* removed from the environment; the agent logs the grace and interval
   in force); --watch-runs fractional jobs (gpu_milli 250, 1024 MiB of GPU memory each, in the
   podman sandbox) run at once. One after another, the mock's control file is told that the
   job's main process uses 2048 MiB (`proc GPU PID 2048`; the mock reads it at its next NVML
   call); then from the time that line was written: "detected" = the agent's log line
   `memwatch stop job=J` (its ts, milliseconds); "stopped" = the replica's final status.json
   end_ms (its processes gone, the record written); "failed" = when GET /v1/jobs/J first shows
   Failed (polled every 20 ms).

Usage: containers.py --bin DIR --results FILE [--starts N] [--pulls N] [--pull-sizes 0,100,500]
                     [--watch-runs N]
"""
import argparse
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integ", "ctl"))
import benchinfo  # noqa: E402
from oci import Registry, Storage, build_image  # noqa: E402
from pool import Client, free_ports, job_main, pool_down  # noqa: E402

JOB = ["sh", "-c", "read u r < /proc/uptime; echo $u"]
CLEAN_ENV = ("GPUPOOL_RUNTIME", "GPUPOOL_MEMORY_GRACE_SECONDS", "GPUPOOL_MEMORY_INTERVAL_MS")


def fail(msg, *details):
    print("containers: " + msg, file=sys.stderr)
    for d in details:
        print("   " + (d if isinstance(d, str) else json.dumps(d))[:3000], file=sys.stderr)
    sys.exit(1)


def boot_s():
    return time.clock_gettime(time.CLOCK_BOOTTIME)


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def clean_env(env):
    return {k: v for k, v in env.items() if k not in CLEAN_ENV}


# ---- 1. start overhead ----

class Starter:
    """Runs one gpupool-run of a kind and measures it."""

    def __init__(self, run_bin, base, st, image):
        self.run_bin, self.base, self.env, self.image = run_bin, base, clean_env(st.env), image
        self.n = 0

    def once(self, kind):
        self.n += 1
        name = "%s-%d" % (kind, self.n)
        spec = {"job": 1000 + self.n, "replica": 0, "epoch": 1, "spec": {"command": JOB}}
        if kind == "image":
            spec.update(image=self.image, image_pull_policy="IfNotPresent")
        path = os.path.join(self.base, name + ".json")
        with open(path, "w") as f:
            json.dump(spec, f)
        state = os.path.join(self.base, name)
        argv = [self.run_bin, "--state-dir", state, "--spec", path, "--runtime",
                "none" if kind == "host" else "podman"]
        with open(state + ".log", "wb") as log:
            w0, b0 = time.time(), boot_s()
            p = subprocess.Popen(argv, stdout=log, stderr=log, env=self.env)
            rc = p.wait(timeout=120)
            b1 = boot_s()
        st = read_json(os.path.join(state, "status.json")) or {}
        try:
            with open(os.path.join(state, "stdout.log")) as f:
                first = float(f.read().split()[0]) - b0
        except (OSError, ValueError, IndexError):
            first = None
        ok = rc == 0 and st.get("state") == "exited" and st.get("exit_code") == 0
        r = {"kind": kind, "ok": ok, "wall_s": b1 - b0,
             "leader_s": st["start_ms"] / 1000.0 - w0 if st.get("start_ms") else None,
             "first_s": first}
        if not ok:
            with open(state + ".log", errors="replace") as f:
                r["error"] = "rc=%d status=%s log=%s" % (rc, json.dumps(st), f.read()[-800:])
        else:
            shutil.rmtree(state, ignore_errors=True)
            os.unlink(state + ".log")
            os.unlink(path)
        return r


def starts(args, st, reg, out):
    print("containers: start overhead, %d runs of each kind" % args.starts, file=sys.stderr)
    image = build_image(st, reg, "bench/busybox:1")
    st.podman("pull", image)
    base = tempfile.mkdtemp(prefix="starts.", dir=args.work)
    os.chmod(base, 0o755)
    s = Starter(os.path.join(args.bin, "gpupool-run"), base, st, image)
    kinds = ("host", "sandbox", "image")
    for k in kinds:  # warm-up, not counted
        r = s.once(k)
        if not r["ok"]:
            fail("the warm-up %s run failed" % k, r.get("error", ""))
    out["starts"] = {k: [] for k in kinds}
    for _ in range(args.starts):
        for k in kinds:
            out["starts"][k].append(s.once(k))
    out["starts_image"] = image
    shutil.rmtree(base, ignore_errors=True)


# ---- 2. pull time ----

def manifest_bytes(raw):
    """config + layers of an image manifest (what gp_pull_manifest_bytes counts)."""
    m = json.loads(raw)
    return m.get("config", {}).get("size", 0) + sum(l.get("size", 0) for l in m.get("layers", []))


def pull_once(args, reg, ref):
    ps = Storage()  # fresh storage: nothing of the image is there
    try:
        ps.allow(reg.host)
        tmp = os.path.join(ps.dir, "pull-tmp")
        os.mkdir(tmp, 0o700)
        env = dict(clean_env(ps.env), TMPDIR=tmp)
        t0 = time.monotonic()
        ins = subprocess.run(["skopeo", "inspect", "--raw", "--registries-conf", ps.registries,
                              "docker://" + ref], capture_output=True, text=True, env=env)
        t1 = time.monotonic()
        pull = subprocess.run(["podman", "pull", ref], capture_output=True, text=True, env=env)
        t2 = time.monotonic()
        if ins.returncode != 0 or pull.returncode != 0:
            fail("pulling " + ref, ins.stderr, pull.stderr)
        return {"inspect_s": t1 - t0, "pull_s": t2 - t1, "bytes": manifest_bytes(ins.stdout)}
    finally:
        ps.close()


def pulls(args, st, reg, out):
    out["pulls"] = []
    for mb in args.pull_sizes:
        print("containers: pull time, busybox + %d MB, %d pulls" % (mb, args.pulls),
              file=sys.stderr)
        ref = build_image(st, reg, "bench/pull-%d:1" % mb, extra_bytes=mb * 1000 * 1000)
        runs = [pull_once(args, reg, ref) for _ in range(args.pulls)]
        out["pulls"].append({"extra_mb": mb, "ref": ref, "runs": runs})


# ---- 3. memory watch reaction ----

TS = re.compile(r"ts=(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3})Z")


def log_ms(line):
    m = TS.search(line)
    if not m:
        return None
    t = datetime.datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S.%f")
    return t.replace(tzinfo=datetime.timezone.utc).timestamp() * 1000.0


def final_status(agent_dir, job_id, epoch):
    for sub in ("replicas", "finished"):
        st = read_json(os.path.join(agent_dir, sub, "%d-0-%d" % (job_id, epoch), "status.json"))
        if st and st.get("state") in ("killed", "exited"):
            return st
    return None


def poll(what, cond, timeout=60, step=0.1):
    deadline = time.time() + timeout
    while time.time() < deadline:
        v = cond()
        if v:
            return v
        time.sleep(step)
    fail("timed out waiting for " + what)


def react(admin, agent_dir, alog, j):
    """Reports j's main process above its limit; the times of what follows."""
    with open(os.path.join(agent_dir, "nvml-control"), "a") as f:
        f.write("proc %d %d 2048\n" % (j["gpu"], j["pid"]))
    t0 = time.time() * 1000.0
    final, failed = None, None
    deadline = time.time() + 60
    while (final is None or failed is None) and time.time() < deadline:
        if final is None:
            final = final_status(agent_dir, j["id"], j["epoch"])
        if failed is None:
            s, d = admin.get("/v1/jobs/%d" % j["id"])
            if s == 200 and d["state"] in ("Failed", "Succeeded"):
                failed = (time.time() * 1000.0, d["state"], d.get("reason", ""))
        time.sleep(0.02)
    if final is None or failed is None:
        fail("job %d was not stopped" % j["id"], final, failed)
    detect = None
    with open(alog, errors="replace") as f:
        for line in f:
            if "memwatch stop job=%d " % j["id"] in line:
                detect = log_ms(line)
                break
    return {"job": j["id"], "ok": failed[1] == "Failed" and final["state"] == "killed" and
            final.get("stop_reason", "").startswith("GPU memory 2048 MiB"),
            "detected_s": (detect - t0) / 1000.0 if detect else None,
            "stopped_s": (final["end_ms"] - t0) / 1000.0, "failed_s": (failed[0] - t0) / 1000.0,
            "reason": failed[2]}


def memwatch(args, st, out):
    print("containers: memory watch reaction, %d runs" % args.watch_runs, file=sys.stderr)
    gpupool = os.path.join(args.bin, "gpupool")
    tmp = tempfile.mkdtemp(prefix="gpupool-bench-mw.", dir=args.work)
    pool, node = os.path.join(tmp, "pool"), "pcie-t4-1"
    agent_dir = os.path.join(pool, "agents", node)
    mark = os.path.basename(tmp).replace(".", "-")
    port = free_ports(2)
    try:
        up = subprocess.run([gpupool, "up", "--data-dir", pool, "--port", str(port), "--nodes",
                             "pcie-t4:1"], capture_output=True, text=True, timeout=120,
                            env=clean_env(st.env))
        if up.returncode != 0:
            fail("gpupool up", up.stdout, up.stderr)
        alog = os.path.join(pool, "logs", "agent-%s.log" % node)
        cfg = poll("the agent's memory watch", lambda: re.search(
            r"memwatch grace_s=(\d+) interval_ms=(\d+)", open(alog).read()))
        out["memwatch_grace_s"], out["memwatch_interval_ms"] = int(cfg.group(1)), int(cfg.group(2))
        admin = Client("http://127.0.0.1:%d" % port,
                       open(os.path.join(pool, "admin.token")).read().strip())
        s, n = admin.get("/v1/nodes/" + node)
        out["node_runtime"] = n.get("runtime") if s == 200 else None
        s, d = admin.post("/v1/tenants", {"name": "bench"})
        if s != 201:
            fail("tenant", s, d)
        jobs = []
        for i in range(args.watch_runs):
            s, d = admin.post("/v1/jobs", {
                "name": "mw%02d" % i, "tenant": "bench",
                "command": ["sh", "-c", "sleep 600 & wait # mw%02d-%s" % (i, mark)],
                "resources": {"gpu_milli": 250, "gpu_memory_mib": 1024}})
            if s != 201:
                fail("submit", s, d)
            jobs.append({"id": d["id"], "marker": "mw%02d-%s" % (i, mark)})
        for j in jobs:
            d = poll("job %d running" % j["id"], lambda: (lambda s, d: s == 200 and d["state"] ==
                                                          "Running" and d)(
                *admin.get("/v1/jobs/%d" % j["id"])), timeout=120)
            j["gpu"] = d["placement"][0]["gpus"][0]["index"]
            j["epoch"] = d["placement"][0]["epoch"]
            j["pid"] = poll("job %d's process" % j["id"], lambda: job_main(j["marker"]))
        out["memwatch"] = [react(admin, agent_dir, alog, j) for j in jobs]
    finally:
        down, left = pool_down(gpupool, pool, tmp, mark)
        if down.returncode != 0 or left:
            print("containers: gpupool down: rc=%d left=%s" % (down.returncode, left),
                  file=sys.stderr)


# ---- the machine ----

def machine():
    return benchinfo.machine(podman=["podman", "--version"], runc=["runc", "--version"],
                             crun=["crun", "--version"], skopeo=["skopeo", "--version"],
                             registry=["docker-registry", "--version"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--results", required=True)
    ap.add_argument("--starts", type=int, default=50)
    ap.add_argument("--pulls", type=int, default=5)
    ap.add_argument("--pull-sizes", default="0,100,500")
    ap.add_argument("--watch-runs", type=int, default=10)
    args = ap.parse_args()
    args.bin = os.path.abspath(args.bin)
    args.pull_sizes = [int(x) for x in args.pull_sizes.split(",") if x != ""]
    os.makedirs(os.path.dirname(os.path.abspath(args.results)), exist_ok=True)
    # Outside /tmp (a sandbox has a /tmp of its own), like an agent's state directory.
    args.work = tempfile.mkdtemp(prefix="containers-bench.",
                                 dir=os.path.dirname(os.path.abspath(args.results)))
    os.chmod(args.work, 0o755)
    out = {"machine": machine(), "args": {"starts": args.starts, "pulls": args.pulls,
                                          "pull_sizes_mb": args.pull_sizes,
                                          "watch_runs": args.watch_runs}}
    t0 = time.monotonic()
    # Podman's storage in /tmp: with a run root longer than about 50 characters, podman 4.3
    # noticed a container's exit only after conmon's 20 s timeout here.
    st = Storage()
    try:
        with Registry(st) as reg:
            starts(args, st, reg, out)
            pulls(args, st, reg, out)
        memwatch(args, st, out)
    finally:
        st.close()
        shutil.rmtree(args.work, ignore_errors=True)
    out["machine"]["load_end"] = os.getloadavg()
    out["seconds"] = time.monotonic() - t0
    with open(args.results, "w") as f:
        json.dump(out, f, indent=1)
    bad = [r for k in out["starts"].values() for r in k if not r["ok"]] + \
        [r for r in out["memwatch"] if not r["ok"]]
    print("containers: %d s, %d failed runs; results in %s" % (out["seconds"], len(bad),
                                                               args.results), file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
