"""Job arrays, dependencies, /dev/shm's size and gpupool sbatch on a real gpupoold with a real
gpupool-agent (mock NVML, jobs as host processes: --runtime none) and the gpupool CLI.

- An array of 6 with %2: one child per index, named NAME-INDEX; never more than 2 children
  active at once (sampled throughout); each child's process sees GPUPOOL_ARRAY_INDEX,
  SLURM_ARRAY_TASK_ID and SLURM_ARRAY_JOB_ID; the array ends Succeeded with its counts; a job
  after the array waits for all of it. Cancelling an array cancels its children and makes no more.
- after_ok: a job waits ("waiting for prep") until prep Succeeded, then runs; after a failed
  job it is Cancelled with a DependencyFailed event. Another tenant's job, by name or id, is
  refused exactly as a job that does not exist. An array above jobs.max_array_size is refused.
- shm_size_mib reaches the agent (the desired replica) and the job (GPUPOOL_SHM_SIZE_MIB; a
  host process shares the host's /dev/shm).
- gpupool sbatch: #SBATCH lines mapped, the script run with its arguments, its -o file written
  in its working directory; an unsupported option warned about, refused with --strict.
Arguments: gpupoold, gpupool, gpupool-agent, the mock NVML library, the inventories directory.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mockagent import MockAgent  # noqa: E402
from pool import all_jobs, check, events, kill_replica_leftovers, Pool, wait  # noqa: E402

gpupoold, gpupool, agent_bin, mock, inventories = sys.argv[1:6]
tmp = tempfile.mkdtemp(prefix="gpupool-arrays.")
out = os.path.join(tmp, "out")
os.makedirs(out)
agents = []


def cli(p, token, *args, cwd=None):
    e = dict(os.environ, GPUPOOL_SERVER=p.base, GPUPOOL_TOKEN=token)
    r = subprocess.run([gpupool] + list(args), capture_output=True, text=True, timeout=60, env=e,
                       cwd=cwd)
    return r.returncode, r.stdout, r.stderr


def job(name, script, **extra):
    d = {"name": name, "command": ["sh", "-c", script]}
    d.update(extra)
    return d


class Sampler(threading.Thread):
    """Counts, over and over, the active children of an array: the most seen at once."""

    def __init__(self, client, array):
        super().__init__(daemon=True)
        self.client, self.array, self.most, self.stop, self.samples = client, array, 0, False, 0

    def run(self):
        while not self.stop:
            kids = [j for j in all_jobs(self.client)
                    if j.get("array", {}).get("name") == self.array]
            active = [j for j in kids if j["state"] in ("Pending", "Scheduled", "Running")]
            self.most = max(self.most, len(active))
            self.samples += 1
            time.sleep(0.02)  # within the API's rate limit


try:
    with Pool(gpupoold) as p:
        admin = p.admin
        p.tenant("team-a")
        p.tenant("team-b")
        alice, bob = p.user("alice", "team-a"), p.user("bob", "team-b")
        token_file = os.path.join(tmp, "join.token")
        with open(token_file, "w") as f:
            f.write(p.join_token + "\n")
        real = MockAgent(agent_bin, mock, tmp, "t4", os.path.join(inventories, "pcie-t4.yaml"),
                         p.base, token_file, "--runtime", "none")
        agents.append(real)
        wait("t4 registered", lambda: admin.get("/v1/nodes/t4")[0] == 200)

        # ---- an array of 6, at most 2 at once ----
        s, arr = alice.post("/v1/jobs", job(
            "sweep", 'echo "$GPUPOOL_ARRAY_INDEX $SLURM_ARRAY_TASK_ID $SLURM_ARRAY_JOB_ID" > '
            '%s/sweep-$GPUPOOL_ARRAY_INDEX.txt; sleep 0.3' % out, array="0-5%2"))
        check(s == 201 and arr["spec"]["array"] == "0-5%2", "submit an array", s, arr)
        sampler = Sampler(admin, "sweep")
        sampler.start()
        done = p.wait_state(alice, "sweep", ("Succeeded", "Failed"), timeout=120)
        sampler.stop = True
        sampler.join()
        check(done["state"] == "Succeeded", "the array succeeded", done, real.log()[-3000:])
        check(done["array"] == {"indices": 6, "max_running": 2, "pending": 0, "running": 0,
                                "succeeded": 6, "failed": 0, "cancelled": 0},
              "its counts", done)
        check(sampler.samples > 0 and 1 <= sampler.most <= 2,
              "never more than 2 children active at once", sampler.most, sampler.samples)
        kids = [j for j in all_jobs(alice) if j.get("array", {}).get("name") == "sweep"]
        check(sorted(j["name"] for j in kids) == ["sweep-%d" % i for i in range(6)] and
              all(j["state"] == "Succeeded" and j["array"]["id"] == arr["id"] for j in kids),
              "one child per index, named NAME-INDEX", kids)
        for i in range(6):
            seen = open(os.path.join(out, "sweep-%d.txt" % i)).read().split()
            check(seen == [str(i), str(i), str(arr["id"])], "child %d sees its index" % i, seen)
        check(any(e["type"] == "ChildCreated" for e in events(alice, "sweep")),
              "the array's events say what it made")
        rc, so, se = cli(p, alice.token, "describe", "job", "sweep")
        check(rc == 0 and "6 children: 6 succeeded" in so, "describe shows its progress", so, se)
        rc, so, se = cli(p, alice.token, "get", "jobs", "--all-states", "--name", "sweep")
        check(rc == 0 and "6 children: 6 succeeded" in so, "get shows its progress", so, se)

        # ---- cancelling an array cancels its children ----
        s, big = alice.post("/v1/jobs", job("long", "sleep 60", array="0-9%1"))
        check(s == 201, "submit a long array", s, big)
        wait("long-0 runs", lambda: (alice.get("/v1/jobs/long-0")[1] or {}).get("state") ==
             "Running", 60)
        s, d = alice.post("/v1/jobs/long/cancel")
        check(s == 200 and d["state"] == "Cancelled", "cancel the array", s, d)
        p.settle(0.5)
        kids = [j for j in all_jobs(alice) if j.get("array", {}).get("name") == "long"]
        check(len(kids) == 1 and kids[0]["state"] == "Cancelled",
              "its child is cancelled and no more are made", kids)

        # ---- dependencies ----
        gate = os.path.join(tmp, "gate")
        s, prep = alice.post("/v1/jobs", job("prep", "while [ ! -e %s ]; do sleep 0.05; done" %
                                             gate))
        check(s == 201, "submit prep", s, prep)
        s, train = alice.post("/v1/jobs", job("train", "true", after_ok=["prep"]))
        check(s == 201 and train["spec"]["after_ok"] == ["prep"], "submit train after prep",
              s, train)
        p.wait_state(alice, "prep", "Running", timeout=60)
        wait("train waits for prep", lambda: p.job(alice, "train")["reason"] == "waiting for prep")
        check(p.job(alice, "train")["state"] == "Pending", "train is Pending meanwhile")
        open(gate, "w").close()
        d = p.wait_state(alice, "train", ("Succeeded", "Failed", "Cancelled"), timeout=60)
        check(d["state"] == "Succeeded", "train ran once prep succeeded", d)

        s, _ = alice.post("/v1/jobs", job("bad", "exit 3"))
        s, after_bad = alice.post("/v1/jobs", job("after-bad", "true",
                                                  after_ok=["prep", str(p.job(alice, "bad")["id"])]))
        check(s == 201, "submit a job after bad (by id)", s, after_bad)
        d = p.wait_state(alice, "after-bad", ("Succeeded", "Failed", "Cancelled"), timeout=60)
        check(d["state"] == "Cancelled" and d["reason"] == "DependencyFailed: bad ended Failed",
              "cancelled when its dependency failed", d)
        ev = [e for e in events(alice, "after-bad") if e["type"] == "DependencyFailed"]
        check(ev and "bad ended Failed" in ev[0]["message"], "a DependencyFailed event", ev)

        s, post = alice.post("/v1/jobs", job("post", "true", after_ok=["sweep"]))
        d = p.wait_state(alice, "post", ("Succeeded", "Failed", "Cancelled"), timeout=60)
        check(d["state"] == "Succeeded", "a job after a succeeded array runs", d)

        # another tenant's job reads as no job at all
        s0, nope = bob.post("/v1/jobs", job("b0", "true", after_ok=["nope"]))
        s1, by_name = bob.post("/v1/jobs", job("b1", "true", after_ok=["prep"]))
        s2, by_id = bob.post("/v1/jobs", job("b2", "true", after_ok=[str(prep["id"])]))
        check(s0 == s1 == s2 == 404, "unknown and foreign dependencies: 404", s0, s1, s2)
        check(by_name["error"]["message"] == "after_ok[0]: job prep: not found" and
              by_id["error"]["message"] == "after_ok[0]: job %d: not found" % prep["id"] and
              nope["error"]["message"] == "after_ok[0]: job nope: not found",
              "the same message as for no job", nope, by_name, by_id)
        check(not [j for j in all_jobs(admin) if j["name"] in ("b0", "b1", "b2")],
              "nothing stored")

        s, d = alice.post("/v1/jobs", job("huge", "true", array="0-10000"))
        check(s == 400 and d["error"]["message"].startswith("array: 10001 indices"),
              "an array above jobs.max_array_size is refused naming the field", s, d)

        # ---- /dev/shm's size ----
        s, shm = alice.post("/v1/jobs", job(
            "shm", 'echo "$GPUPOOL_SHM_SIZE_MIB" > %s/shm.txt; sleep 30' % out, shm_size_mib=2048))
        check(s == 201 and shm["spec"]["shm_size_mib"] == 2048, "submit with shm_size_mib", s, shm)
        p.wait_state(alice, "shm", "Running", timeout=60)
        s, d = admin.get("/v1/nodes/t4/desired")
        rep = [r for r in d["desired"] if r["job"] == shm["id"]]
        check(s == 200 and rep and rep[0]["shm_size_mib"] == 2048,
              "the desired replica carries shm_size_mib", s, d)
        wait("the job saw it", lambda: os.path.exists(os.path.join(out, "shm.txt")) and
             open(os.path.join(out, "shm.txt")).read().strip() == "2048")
        alice.post("/v1/jobs/shm/cancel")

        # ---- gpupool sbatch ----
        work = os.path.join(tmp, "work")
        os.makedirs(work)
        script = os.path.join(tmp, "train.sbatch")
        with open(script, "w") as f:
            f.write("#!/bin/sh\n"
                    "#SBATCH -J SB_Test\n"
                    "#SBATCH --output=out-%j-%x.log\n"
                    "#SBATCH --time=5 --mail-type=END\n"
                    "echo \"hello $SLURM_JOB_ID $SLURM_JOB_NAME $1 $(pwd)\"\n"
                    "echo oops >&2\n")
        rc, so, se = cli(p, alice.token, "sbatch", "--strict", script, cwd=work)
        check(rc == 2 and "--mail-type: not supported" in se, "--strict refuses", rc, so, se)
        rc, so, se = cli(p, alice.token, "sbatch", "-D", work, script, "first-arg", cwd=tmp)
        check(rc == 0 and so == "Submitted batch job sb-test\n" and
              "warning: --mail-type: not supported, ignored (line 4)" in se,
              "gpupool sbatch submits and warns", rc, so, se)
        d = p.wait_state(alice, "sb-test", ("Succeeded", "Failed"), timeout=60)
        check(d["state"] == "Succeeded" and d["spec"]["max_runtime"] == "5m" and
              d["spec"]["working_dir"] == work, "the batch job ran", d)
        log = os.path.join(work, "out-%d-sb-test.log" % d["id"])
        check(os.path.exists(log), "the -o file is written in its working directory",
              os.listdir(work))
        text = open(log).read()
        check(text == "hello %d sb-test first-arg %s\noops\n" % (d["id"], work),
              "the script's output and error, its arguments and Slurm's variables", text)

        # ---- the CLI's submit flags ----
        rc, so, se = cli(p, alice.token, "submit", "--name", "cli-arr", "--array", "0-1%1",
                         "--after-ok", "prep,train", "--shm-size", "1Gi", "-o", "json", "--",
                         "true")
        check(rc == 0, "gpupool submit --array --after-ok --shm-size", so, se)
        d = json.loads(so)
        check(d["spec"]["array"] == "0-1%1" and d["spec"]["after_ok"] == ["prep", "train"] and
              d["spec"]["shm_size_mib"] == 1024, "the flags' spec", d)
        d = p.wait_state(alice, "cli-arr", ("Succeeded", "Failed"), timeout=60)
        check(d["state"] == "Succeeded", "the CLI's array ran", d)
        check(real.stop() == 0, "the agent stops cleanly", real.log()[-2000:])

        # ---- a restarted controller keeps arrays and dependencies ----
        s, never = alice.post("/v1/jobs", job("never", "true", resources={"gpus": 32},
                                              allow_unschedulable=True))
        s, waits = alice.post("/v1/jobs", job("waits", "true", after_ok=["never"]))
        wait("waits waits", lambda: p.job(alice, "waits")["reason"] == "waiting for never")
        p.restart()
        alice = p.client(alice.token)
        kid = p.job(alice, "sweep-3")
        check(kid["array"] == {"id": arr["id"], "name": "sweep", "index": 3},
              "a child keeps its array and index", kid)
        check(p.job(alice, "sweep")["array"]["succeeded"] == 6, "the array keeps its children")
        p.settle(0.5)
        check(p.job(alice, "waits")["reason"] == "waiting for never", "waits still waits",
              p.job(alice, "waits"))
        alice.post("/v1/jobs/never/cancel")
        d = p.wait_state(alice, "waits", ("Cancelled", "Succeeded"), timeout=30)
        check(d["reason"] == "DependencyFailed: never ended Cancelled",
              "its dependency, known after the restart, ended Cancelled", d)
finally:
    for a in agents:
        if a.proc.poll() is None:
            a.stop()
    kill_replica_leftovers(tmp)  # an agent never stops its jobs when it stops
    shutil.rmtree(tmp, ignore_errors=True)
print("ok")
