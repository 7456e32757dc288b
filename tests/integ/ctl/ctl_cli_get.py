"""gpupool get's kubectl output forms and --watch against a real gpupoold:

- -o name, -o jsonpath=... (lists as {"items": [...]}, one object as itself, {range}...{end}),
  -o custom-columns=... for every kind get lists;
- bad templates: exit 2 and a message naming the position;
- --watch: the table, then a line when a job appears, changes state or ends, until killed;
  its refusals (other kinds, a NAME) exit 2.

Arguments: the gpupoold binary, the gpupool binary.
"""
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from pool import Pool, check, node_doc, submit, wait

GPUPOOLD, GPUPOOL = sys.argv[1], sys.argv[2]
home = tempfile.mkdtemp(prefix="gpupool-cli-get.")
watcher = None


def run(p, *args):
    env = dict(os.environ, HOME=home, GPUPOOL_SERVER=p.base, GPUPOOL_TOKEN=p.admin_token)
    return subprocess.run([GPUPOOL] + list(args), capture_output=True, text=True, timeout=30,
                          env=env)


def cli(p, *args):
    r = run(p, *args)
    check(r.returncode == 0, "gpupool %s" % " ".join(args), r.stdout, r.stderr)
    return r.stdout


def refused(p, args, code, words):
    r = run(p, *args)
    check(r.returncode == code and all(w in r.stderr for w in words),
          "gpupool %s: exit %d naming %s" % (" ".join(args), code, words), r.returncode,
          r.stderr)


def read_until(proc, buf, want, timeout=20):
    """Reads proc's stdout (unbuffered, bytes) into buf (a list of lines) until a line holds
    every word of want; returns that line."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        for line in buf:
            if line.endswith("\n") and all(w in line for w in want):
                return line
        r, _, _ = select.select([proc.stdout], [], [], 0.2)
        if r:
            data = os.read(proc.stdout.fileno(), 65536).decode()
            check(data != "", "the watch ended early", "".join(buf))
            tail = buf.pop() if buf and not buf[-1].endswith("\n") else ""
            buf.extend((tail + data).splitlines(keepends=True))
    check(False, "a watch line with %s" % (want,), "".join(buf))


try:
    with Pool(GPUPOOLD) as p:
        p.register(node_doc("gpu-a", ngpus=4))
        p.tenant("team-a")
        p.queue("q1", weight=2)
        s, d = p.admin.post("/v1/priorityclasses", {"name": "urgent", "value": 100})
        check(s == 201, "priority class", s, d)
        s, d = p.admin.post("/v1/tokens", {"name": "ci", "role": "user", "tenant": "team-a"})
        check(s == 201, "token", s, d)
        for name, gpus in (("train-1", 2), ("eval-1", 1)):
            s, d = submit(p.admin, name, gpus=gpus, tenant="team-a")
            check(s == 201, "submit " + name, s, d)
        p.wait_state(p.admin, "train-1", "Scheduled")

        # -o name for every kind
        out = cli(p, "get", "jobs", "-o", "name")
        check(sorted(out.split()) == ["job/eval-1", "job/train-1"], "-o name of jobs", out)
        check(cli(p, "get", "nodes", "-o", "name") == "node/gpu-a\n", "-o name of nodes")
        check("queue/q1\n" in cli(p, "get", "queues", "-o", "name"), "-o name of queues")
        check("tenant/team-a\n" in cli(p, "get", "tenants", "-o", "name"), "-o name of tenants")
        check("priorityclass/urgent\n" in cli(p, "get", "pc", "-o", "name"), "-o name of pcs")
        check("token/ci\n" in cli(p, "get", "tokens", "-o", "name"), "-o name of tokens")
        check(cli(p, "get", "job", "train-1", "-o", "name") == "job/train-1\n", "one job by name")

        # jsonpath over a list and over one object
        out = cli(p, "get", "jobs", "--order", "asc", "-o", "jsonpath={.items[*].name}")
        check(out == "train-1 eval-1", "jsonpath over the list", out)
        out = cli(p, "get", "jobs", "--order", "asc", "-o",
                  'jsonpath={range .items[*]}{.name}{"\\t"}{.state}{"\\n"}{end}')
        check(out.startswith("train-1\tScheduled\neval-1\t"), "jsonpath range", out)
        out = cli(p, "get", "job", "train-1", "-o", "jsonpath={.name} {.spec.resources.gpus}")
        check(out == "train-1 2", "jsonpath over one object", out)
        out = cli(p, "get", "nodes", "-o", "jsonpath={.items[0].name}:{.items[0].gpus[*].model}")
        check(out == "gpu-a:" + " ".join(["A100-80GB"] * 4), "jsonpath of nodes", out)
        for kind, want in (("queues", "q1"), ("tenants", "team-a"), ("pc", "urgent"),
                           ("tokens", "ci"), ("volumes", "")):
            out = cli(p, "get", kind, "-o", "jsonpath={.items[*].name}")
            check(want in out.split() or (want == "" and out == ""), "jsonpath of " + kind, out)

        # custom columns
        out = cli(p, "get", "jobs", "--order", "asc", "-o",
                  "custom-columns=NAME:.name,GPUS:.spec.resources.gpus,NOPE:.nope")
        lines = [l.split() for l in out.splitlines()]
        check(lines == [["NAME", "GPUS", "NOPE"], ["train-1", "2", "<none>"],
                        ["eval-1", "1", "<none>"]], "custom columns of jobs", out)
        out = cli(p, "get", "queues", "-o", "custom-columns=Q:.name,W:{.weight}")
        check(["q1", "2"] in [l.split() for l in out.splitlines()], "custom columns of queues",
              out)

        # bad templates and forms
        refused(p, ["get", "jobs", "-o", "jsonpath={.items[*].name"], 2,
                ["-o jsonpath: position 1:", "without its '}'"])
        refused(p, ["get", "jobs", "-o", "jsonpath={..name}"], 2,
                ["position 2: recursive descent"])
        refused(p, ["get", "jobs", "-o", "custom-columns=NAME:.name,GPUS"], 2,
                ["-o custom-columns: column 2: position 12: expected HEADER:PATH"])
        refused(p, ["get", "jobs", "-o", "xml"], 2, ["-o: must be table, wide, json, yaml, name"])

        # --watch
        refused(p, ["get", "queues", "--watch"], 2, ["--watch: for jobs and nodes only"])
        refused(p, ["get", "jobs", "train-1", "-w"], 2, ["--watch: watches a list"])
        env = dict(os.environ, HOME=home, GPUPOOL_SERVER=p.base, GPUPOOL_TOKEN=p.admin_token)
        watcher = subprocess.Popen([GPUPOOL, "get", "jobs", "--watch"], stdout=subprocess.PIPE,
                                   env=env)
        lines = []
        read_until(watcher, lines, ["NAME", "STATE"])
        read_until(watcher, lines, ["train-1", "Scheduled"])
        seen = len(lines)
        s, d = submit(p.admin, "late-1", gpus=1, tenant="team-a")
        check(s == 201, "submit late-1", s, d)
        read_until(watcher, lines, ["late-1"])
        s, d = p.admin.post("/v1/jobs/train-1/cancel")
        check(s in (200, 202), "cancel train-1", s, d)
        line = read_until(watcher, lines, ["train-1", "Cancel"])
        check(not any("NAME" in l for l in lines[seen:]), "one header only", "".join(lines))
        check(watcher.poll() is None, "the watch goes on until interrupted")
        watcher.send_signal(signal.SIGINT)
        watcher.wait(timeout=10)
        watcher = None

        # nodes: a cordon shows as a line
        env = dict(os.environ, HOME=home, GPUPOOL_SERVER=p.base, GPUPOOL_TOKEN=p.admin_token)
        watcher = subprocess.Popen([GPUPOOL, "get", "nodes", "-w", "-o",
                                    "custom-columns=NODE:.name,CORDONED:.cordoned"],
                                   stdout=subprocess.PIPE, env=env)
        lines = []
        read_until(watcher, lines, ["gpu-a", "false"])
        cli(p, "nodes", "cordon", "gpu-a")
        read_until(watcher, lines, ["gpu-a", "true"])
finally:
    if watcher is not None:
        watcher.kill()
        watcher.wait()
    shutil.rmtree(home, ignore_errors=True)
print("ok")
