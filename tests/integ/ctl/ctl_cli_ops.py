"""The CLI's daily commands against a real gpupoold and a real gpupool-agent over the mock NVML
(--runtime none: jobs are host processes):

- `gpupool completion bash` sourced in bash: COMPREPLY for commands, flags, flag values,
  subcommands, and job and node names (the script calls the CLI, which asks the server);
- `gpupool top nodes|jobs`: GPU utilisation, GPU memory and allocation from the agents'
  readings and the jobs' metrics history, --sort-by, its errors;
- `gpupool logs`: --tail, --since (a duration, an RFC 3339 time), --timestamps (the times the
  agent recorded), every replica at once with "[replica N]" prefixes, -f to the job's end, and
  the errors (--tail -1, --since garbage) with exit 2 naming the flag.

Arguments: gpupoold, gpupool, gpupool-agent, the mock NVML library, the inventories directory.
"""
import datetime
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mockagent import MockAgent  # noqa: E402
from pool import Pool, check, kill_replica_leftovers, node_doc, wait  # noqa: E402

GPUPOOLD, GPUPOOL, AGENT, MOCK, INVENTORIES = sys.argv[1:6]
tmp = tempfile.mkdtemp(prefix="gpupool-cli-ops.")
home = os.path.join(tmp, "home")
os.makedirs(home)
mark = os.path.basename(tmp).replace(".", "-")
agent = None


def env_for(p):
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUPOOL_")}
    env.update(HOME=home, GPUPOOL_SERVER=p.base, GPUPOOL_TOKEN=p.admin_token)
    return env


def run(p, *args):
    return subprocess.run([GPUPOOL] + list(args), capture_output=True, text=True, timeout=60,
                          env=env_for(p))


def ok(p, *args):
    r = run(p, *args)
    check(r.returncode == 0, "gpupool %s" % " ".join(args), r.stdout, r.stderr)
    return r.stdout


def refused(p, args, code, words):
    r = run(p, *args)
    check(r.returncode == code and all(w in r.stderr for w in words),
          "gpupool %s: exit %d naming %s" % (" ".join(args), code, words), r.returncode,
          r.stderr)


def complete(p, script, *words):
    """COMPREPLY of bash completing the last of words after `gpupool`."""
    words = [GPUPOOL] + list(words)
    arr = " ".join("'%s'" % w for w in words)
    prog = ("source %s\nCOMP_WORDS=(%s)\nCOMP_CWORD=%d\n_gpupool\n"
            "printf '%%s\\n' \"${COMPREPLY[@]}\"\n" % (script, arr, len(words) - 1))
    r = subprocess.run(["bash", "-c", prog], capture_output=True, text=True, timeout=60,
                       env=env_for(p))
    check(r.returncode == 0, "bash completion of %s" % words, r.stderr)
    return [w for w in r.stdout.splitlines() if w]


def rows(table):
    lines = table.strip("\n").splitlines()
    head = re.split(r" {2,}", lines[0].strip())
    return [dict(zip(head, re.split(r" {2,}", l.strip()))) for l in lines[1:]]


try:
    with Pool(GPUPOOLD) as p:
        p.tenant("team-a")
        token_file = os.path.join(tmp, "join.token")
        with open(token_file, "w") as f:
            f.write(p.join_token + "\n")
        agent = MockAgent(AGENT, MOCK, tmp, "n1", os.path.join(INVENTORIES, "pcie-t4.yaml"),
                          p.base, token_file, "--runtime", "none")
        wait("n1 ready", lambda: (lambda s, d: s == 200 and d["state"] == "Ready")(
            *p.admin.get("/v1/nodes/n1")), 30)
        for g in range(4):
            agent.control("util %d 70" % g)

        # ---- logs ----
        say = "for i in 1 2 3 4 5; do echo line-$i; sleep 0.3; done; echo err >&2 # %s" % mark
        s, d = p.admin.post("/v1/jobs", {"name": "talk", "tenant": "team-a",
                                         "command": ["sh", "-c", say],
                                         "resources": {"gpus": 1}})
        check(s == 201, "submit talk", s, d)
        p.wait_state(p.admin, "talk", "Succeeded", 60)
        out = ok(p, "logs", "talk")
        check(out == "".join("line-%d\n" % i for i in range(1, 6)), "all of the log", out)
        check(ok(p, "logs", "talk", "--stderr") == "err\n", "--stderr")
        check(ok(p, "logs", "talk", "--tail", "2") == "line-4\nline-5\n", "--tail 2")
        check(ok(p, "logs", "talk", "--tail", "0") == "", "--tail 0")
        out = ok(p, "logs", "talk", "--timestamps")
        stamps = re.findall(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z) line-(\d)$", out, re.M)
        check(len(stamps) == 5, "--timestamps: a time before each line", out)
        times = [datetime.datetime.strptime(t, "%Y-%m-%dT%H:%M:%S.%fZ") for t, _ in stamps]
        check(times == sorted(times) and times[0] < times[4], "the times as written", out)
        now = datetime.datetime.utcnow()
        check(abs((now - times[4]).total_seconds()) < 600, "times near now", out, str(now))
        out = ok(p, "logs", "talk", "--since", stamps[2][0])
        check(out == "line-3\nline-4\nline-5\n", "--since an RFC 3339 time", out)
        check(ok(p, "logs", "talk", "--since", "1h").count("line-") == 5, "--since 1h")
        future = (now + datetime.timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
        check(ok(p, "logs", "talk", "--since", future) == "", "--since the future")
        refused(p, ["logs", "talk", "--tail", "-1"], 2, ["--tail:"])
        refused(p, ["logs", "talk", "--since", "yesterday"], 2, ["--since:"])
        refused(p, ["logs", "talk", "--since", "2026-13-01T00:00:00Z"], 2, ["--since:"])
        refused(p, ["logs", "nope"], 1, ["nope"])

        # every replica at once, and -f until the end
        pair = ("for i in 1 2 3; do echo r$GPUPOOL_REPLICA-$i; sleep 0.4; done # %s" % mark)
        s, d = p.admin.post("/v1/jobs", {"name": "pair", "tenant": "team-a", "replicas": 2,
                                         "command": ["sh", "-c", pair],
                                         "resources": {"gpus": 1}})
        check(s == 201, "submit pair", s, d)
        p.wait_state(p.admin, "pair", ("Running", "Succeeded"), 60)
        r = subprocess.run([GPUPOOL, "logs", "pair", "-f"], capture_output=True, text=True,
                           timeout=60, env=env_for(p))
        check(r.returncode == 0, "logs -f ends with the job", r.stderr)
        got = r.stdout.splitlines()
        for rep in (0, 1):
            mine = [l for l in got if l.startswith("[replica %d] " % rep)]
            check(mine == ["[replica %d] r%d-%d" % (rep, rep, i) for i in (1, 2, 3)],
                  "replica %d's lines, prefixed, in order" % rep, r.stdout)
        check(len(got) == 6, "nothing else", r.stdout)
        check(ok(p, "logs", "pair", "--replica", "1") == "r1-1\nr1-2\nr1-3\n",
              "--replica: one, no prefix")
        out = ok(p, "logs", "pair", "--tail", "1")
        check(sorted(out.splitlines()) == ["[replica 0] r0-3", "[replica 1] r1-3"],
              "--tail per replica", out)

        # ---- top ----
        p.register(node_doc("idle-z", ngpus=2))  # no agent: no readings
        ok(p, "nodes", "cordon", "idle-z")  # and no work
        s, d = p.admin.post("/v1/jobs", {"name": "busy", "tenant": "team-a",
                                         "command": ["sh", "-c", "sleep 600 # %s" % mark],
                                         "resources": {"gpus": 2}})
        check(s == 201, "submit busy", s, d)
        p.wait_state(p.admin, "busy", "Running", 30)
        wait("top jobs shows busy's utilisation", lambda: any(
            r["NAME"] == "busy" and r["GPU-UTIL"] == "70%"
            for r in rows(ok(p, "top", "jobs"))), 40)
        t = rows(ok(p, "top", "jobs"))
        check([r["NAME"] for r in t] == ["busy"] and t[0]["GPUS"] == "2",
              "top jobs: the running job with its GPUs", t)
        wait("top nodes shows n1's utilisation", lambda: any(
            r["NAME"] == "n1" and r["GPU-UTIL"] == "70%" for r in rows(ok(p, "top", "nodes"))),
            30)
        t = rows(ok(p, "top", "nodes"))
        check([r["NAME"] for r in t] == ["idle-z", "n1"], "top nodes by name", t)
        n1 = [r for r in t if r["NAME"] == "n1"][0]
        check(n1["GPUS"] == "4" and n1["ALLOCATED"] == "2" and n1["ALLOC%"] == "50%",
              "n1's allocation", n1)
        z = [r for r in t if r["NAME"] == "idle-z"][0]
        check(z["GPU-UTIL"] == "-", "no readings: -", z)
        t = rows(ok(p, "top", "nodes", "--sort-by", "gpu-util"))
        check([r["NAME"] for r in t] == ["n1", "idle-z"], "--sort-by gpu-util", t)
        t = rows(ok(p, "top", "nodes", "--sort-by", "allocation"))
        check([r["NAME"] for r in t] == ["n1", "idle-z"], "--sort-by allocation", t)
        import json
        doc = json.loads(ok(p, "top", "nodes", "-o", "json"))
        check([i["name"] for i in doc["items"]] == ["idle-z", "n1"] and
              doc["items"][1]["gpu_util_percent"] == 70, "top nodes -o json", doc)
        refused(p, ["top", "pods"], 2, ["unknown kind \"pods\""])
        refused(p, ["top", "nodes", "--sort-by", "cpu"], 2, ["--sort-by:"])

        # ---- completion ----
        script = os.path.join(tmp, "gpupool.bash")
        with open(script, "w") as f:
            f.write(ok(p, "completion", "bash"))
        check(sorted(complete(p, script, "lo")) == ["login", "logs"], "commands",
              complete(p, script, "lo"))
        check("top" in complete(p, script, ""), "every command")
        check(complete(p, script, "get", "--wat") == ["--watch"], "get's flags")
        check(set(complete(p, script, "logs", "--t")) == {"--tail", "--timestamps",
                                                          "--token", "--token-file"},
              "logs' flags", complete(p, script, "logs", "--t"))
        check(complete(p, script, "top", "") == ["nodes", "jobs"], "top's kinds")
        check(complete(p, script, "config", "use") == ["use-context"], "subcommands")
        check(complete(p, script, "queue", "create", "--wei") == ["--weight"],
              "a subcommand's flags")
        check(complete(p, script, "get", "jobs", "-o", "js") == ["json", "jsonpath="],
              "-o values")
        check(complete(p, script, "logs", "") == ["busy", "pair", "talk"] or
              sorted(complete(p, script, "logs", "")) == ["busy", "pair", "talk"],
              "job names from the server", complete(p, script, "logs", ""))
        check(complete(p, script, "logs", "ta") == ["talk"], "a job name's prefix")
        check(sorted(complete(p, script, "get", "nodes", "")) == ["idle-z", "n1"],
              "node names for get nodes")
        check(sorted(complete(p, script, "nodes", "cordon", "")) == ["idle-z", "n1"],
              "node names for nodes cordon")
        check("--tail" in complete(p, script, "logs", "talk", "--"), "flags after a name")
        r = run(p, "completion", "fish")
        check(r.returncode == 2 and "bash or zsh" in r.stderr, "completion: unknown shell",
              r.stderr)
        z = ok(p, "completion", "zsh")
        check("compdef _gpupool gpupool" in z and " logs " in z, "the zsh script", z)
        s, d = p.admin.post("/v1/jobs/busy/cancel")
    check(agent.stop() == 0, "the agent stops cleanly", agent.log()[-2000:])
finally:
    if agent and agent.proc.poll() is None:
        agent.stop()
    kill_replica_leftovers(tmp)
    shutil.rmtree(tmp, ignore_errors=True)
print("ok")
