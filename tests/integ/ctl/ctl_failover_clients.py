"""gpupool and gpupool-agent given several controllers (--server URL,URL,... or GPUPOOL_SERVER)
follow the leader, against small fake controllers (fakectl.py) on 127.0.0.1: a dead port, a
follower answering 503 {"leader": null}, a follower answering 307 to the leader, the leader.

- the CLI (whoami, submit) reaches the leader through the dead port and both followers, with the
  same list from GPUPOOL_SERVER, and from the config file `gpupool login` wrote (its token only to
  the servers of that list);
- a submit whose connection is lost after sending (a leader dying mid-request) is sent again to
  the next server with the same Idempotency-Key, and makes one job;
- a follower naming a leader outside the list is not followed: that host gets nothing (no
  token); the command fails naming the refusal; a bad list is a usage error naming the entry;
- an agent registers and heartbeats with the leader; when the leader changes (the old one
  answers 307 to the new one, then dies), its heartbeats go to the new leader by themselves.
Arguments: gpupool, gpupool-agent (gpupool-run beside it), libgpupool-nvml-mock.so, the
inventories directory.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fakectl import FakeController  # noqa: E402
from mockagent import MockAgent  # noqa: E402
from pool import check, free_port, wait  # noqa: E402

gpupool, agent_bin, mock, inventories = sys.argv[1:5]
inventory = os.path.join(inventories, "pcie-t4.yaml")
tmp = tempfile.mkdtemp(prefix="gpupool-failover.")
TOKEN = "user-secret"
fakes = []


def fake(**kw):
    f = FakeController(check_tokens=True, **kw)
    fakes.append(f)
    return f


def cli(*args, env_extra=None):
    env = dict(os.environ, HOME=tmp, XDG_CONFIG_HOME=os.path.join(tmp, "config"))
    for k in ("GPUPOOL_SERVER", "GPUPOOL_TOKEN"):
        env.pop(k, None)
    env.update(env_extra or {})
    p = subprocess.run([gpupool] + list(args), capture_output=True, text=True, env=env,
                       timeout=60)
    return p.returncode, p.stdout, p.stderr


def authed(f):
    """The requests f got with the user's token."""
    return [r for r in f.requests() if r[2] == "Bearer " + TOKEN]


agent = None
try:
    leader, f307, f503, outside = fake(), fake(), fake(), fake()
    f307.follow(leader.url)
    f503.follow(None)
    dead = "http://127.0.0.1:%d" % free_port()
    servers = ",".join([dead, f503.url, f307.url, leader.url])

    # ---- the CLI: --server with a list ----
    rc, out, err = cli("whoami", "-o", "json", "--server", servers, "--token", TOKEN)
    check(rc == 0 and json.loads(out)["served_by"] == leader.url,
          "whoami reaches the leader past a dead port, a 503 and a 307", rc, out, err)
    check([r[:2] for r in f503.requests()] == [("GET", "/v1/whoami")]
          and [r[:2] for r in f307.requests()] == [("GET", "/v1/whoami")],
          "each follower was asked once", f503.requests(), f307.requests())

    # ---- GPUPOOL_SERVER, and a submit carries an Idempotency-Key ----
    spec = os.path.join(tmp, "job.json")
    with open(spec, "w") as f:
        json.dump({"name": "j1", "command": ["true"], "resources": {"gpus": 1}}, f)
    rc, out, err = cli("submit", "-f", spec, env_extra={"GPUPOOL_SERVER": servers,
                                                         "GPUPOOL_TOKEN": TOKEN})
    check(rc == 0 and out.strip() == "1", "submit through GPUPOOL_SERVER", rc, out, err)
    check(len(leader.jobs) == 1 and (leader.jobs[0]["key"] or "").startswith("cli-"),
          "the job reached the leader with a generated Idempotency-Key", leader.jobs)

    # ---- a submit lost after sending is sent again with the same key: one job ----
    dying = fake()
    dying.drop()
    rc, out, err = cli("submit", "-f", spec, "--idempotency-key", "k-42", "--server",
                       dying.url + "," + leader.url, "--token", TOKEN)
    got = [r[3] for r in dying.requests()]
    check(rc == 0 and out.strip() == "2" and got == ["k-42"]
          and [j["key"] for j in leader.jobs] == [leader.jobs[0]["key"], "k-42"],
          "the dropped submit went to the leader with the same key, once", rc, out, err, got,
          leader.jobs)
    rc, out, err = cli("submit", "-f", spec, "--server", dying.url + "," + leader.url,
                       "--token", TOKEN)
    keys = [r[3] for r in dying.requests()]
    check(rc == 0 and len(leader.jobs) == 3 and leader.jobs[2]["key"] == keys[-1]
          and keys[-1].startswith("cli-"),
          "without --idempotency-key the retry carries the CLI's own key", rc, err, keys,
          leader.jobs)

    # ---- a redirect outside the list is never followed ----
    away = fake()
    away.follow(outside.url)
    rc, out, err = cli("whoami", "--server", away.url + "," + f503.url, "--token", TOKEN)
    check(rc == 1 and "no leader yet" in err, "no leader in the list: the refusal is shown",
          rc, out, err)
    check(outside.requests() == [], "the host outside the list got nothing", outside.requests())
    check(len(away.requests()) >= 2, "the follower was asked in each round", away.requests())
    rc, out, err = cli("whoami", "--server", leader.url + ",," + f307.url, "--token", TOKEN)
    check(rc == 2 and "entry 2 is empty" in err, "a bad list is a usage error", rc, err)
    rc, out, err = cli("whoami", "--server", "ftp://x:1", "--token", TOKEN)
    check(rc == 2 and "entry 1 (ftp://x:1): the scheme must be http or https" in err,
          "a bad scheme names the entry", rc, err)

    # ---- login with a list: the config file's token goes to that list only ----
    rc, out, err = cli("login", "--server", f307.url + "," + leader.url, "--token", TOKEN)
    check(rc == 0, "login with a list", rc, out, err)
    before = len(outside.requests())
    rc, out, err = cli("whoami", "-o", "json")
    check(rc == 0 and json.loads(out)["served_by"] == leader.url, "the saved list is used",
          rc, out, err)
    rc, out, err = cli("whoami", "-o", "json", "--server", leader.url)
    check(rc == 0, "a server of the saved list gets the saved token", rc, out, err)
    rc, out, err = cli("whoami", "--server", outside.url + "," + leader.url)
    seen = outside.requests()[before:]
    check(seen and all(r[2] == "" for r in seen),
          "a list with another server gets no saved token", rc, err, seen)

    # ---- an agent follows the leader, and a change of leader ----
    other = fake()
    other.follow(leader.url)
    token_file = leader.join_token_file(tmp)
    agent = MockAgent(agent_bin, mock, tmp, "n1", inventory,
                      ",".join([dead, f503.url, other.url, leader.url]), token_file,
                      listen=False)
    wait("registration at the leader", lambda: leader.registered("n1"))
    wait("heartbeats at the leader", lambda: len(leader.heartbeats("n1")) >= 3)
    check(other.registered("n1") == [] and f503.registered("n1") == [],
          "no follower registered the node")
    # The leader moves: the old one now points to the new one.
    other.lead()
    leader.follow(other.url)
    wait("heartbeats at the new leader", lambda: len(other.heartbeats("n1")) >= 3)
    # The old leader dies; the new one goes on getting heartbeats.
    leader.close()
    fakes.remove(leader)
    n = len(other.heartbeats("n1"))
    wait("heartbeats after the old leader died", lambda: len(other.heartbeats("n1")) >= n + 3)
    check(other.registered("n1") == [], "the agent kept its token: no new registration")
    # The CLI finds the new leader too.
    rc, out, err = cli("whoami", "-o", "json", "--server", ",".join([leader.url, other.url]),
                       "--token", TOKEN)
    check(rc == 0 and json.loads(out)["served_by"] == other.url, "the CLI finds the new leader",
          rc, out, err)
    check(agent.stop() == 0, "the agent exits cleanly", agent.log()[-2000:])
    agent = None
    print("ok")
finally:
    if agent:
        agent.stop()
    for f in fakes:
        f.close()
    shutil.rmtree(tmp, ignore_errors=True)
