"""Contexts for several clusters and --cacert, against real gpupoolds (one of them over TLS):

- `gpupool config set-context|use-context|get-contexts|current-context|delete-context`, and
  --context NAME / GPUPOOL_CONTEXT on any command; unknown contexts exit 2 naming the flag;
- a config file as `gpupool login` wrote it before contexts existed still works, and login keeps
  the contexts; tokens stay in 0600 files (--token writes one; a --token-file others can read
  is refused); a context's token is never sent to a --server given for another cluster;
- the CLI refuses a TLS gpupoold whose certificate it cannot check, and works with --cacert
  (as a flag or from the context); gpupool-agent likewise registers only with --cacert.

Skipped (exit 77) without the openssl tool.
Arguments: gpupoold, gpupool, gpupool-agent, the mock NVML library, the inventories directory.
"""
import http.server
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mockagent import MockAgent  # noqa: E402
from pool import Pool, check, kill_replica_leftovers, wait  # noqa: E402

GPUPOOLD, GPUPOOL, AGENT, MOCK, INVENTORIES = sys.argv[1:6]
if not shutil.which("openssl"):
    print("skipped: no openssl")
    sys.exit(77)
tmp = tempfile.mkdtemp(prefix="gpupool-ctx.")
home = os.path.join(tmp, "home")
os.makedirs(home)
cfg_path = os.path.join(home, ".config", "gpupool", "config")
agents = []
fake = None


def run(*args, env_extra=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUPOOL_")}
    env.update(HOME=home, PATH=os.environ.get("PATH", ""))
    env.pop("XDG_CONFIG_HOME", None)
    env.update(env_extra or {})
    return subprocess.run([GPUPOOL] + list(args), capture_output=True, text=True, timeout=60,
                          env=env)


def ok(*args, **kw):
    r = run(*args, **kw)
    check(r.returncode == 0, "gpupool %s" % " ".join(args), r.stdout, r.stderr)
    return r.stdout


def refused(args, code, words, **kw):
    r = run(*args, **kw)
    check(r.returncode == code and all(w in r.stderr for w in words),
          "gpupool %s: exit %d naming %s" % (" ".join(args), code, words), r.returncode,
          r.stdout, r.stderr)
    return r


def secret(path, text, mode=0o600):
    with open(path, "w") as f:
        f.write(text + "\n")
    os.chmod(path, mode)
    return path


class Recorder(http.server.BaseHTTPRequestHandler):
    """A server of another cluster: records the Authorization headers it is sent."""
    seen = []

    def do_GET(self):
        Recorder.seen.append(self.headers.get("Authorization"))
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        body = b'{"error": {"code": "GP_EAUTH", "message": "who are you"}}'
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a):
        pass


try:
    cert, key = os.path.join(tmp, "cert.pem"), os.path.join(tmp, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", key, "-out", cert], check=True, capture_output=True)
    with Pool(GPUPOOLD, ["--tls-listen", "127.0.0.1:0", "--tls-cert", cert,
                         "--tls-key", key]) as tls, Pool(GPUPOOLD) as plain:
        port = None
        deadline = time.time() + 10
        while port is None and time.time() < deadline:
            m = re.search(r"listening=127\.0\.0\.1:(\d+) tls=on", tls.read_log())
            port = int(m.group(1)) if m else None
            time.sleep(0.05)
        check(port is not None, "the TLS listener reports its port", tls.read_log())
        https = "https://127.0.0.1:%d" % port
        tls_token = secret(os.path.join(tmp, "tls.token"), tls.admin_token)

        # --cacert: refused without it (exit 1, the certificate named), works with it
        r = refused(["whoami", "--server", https, "--token-file", tls_token], 1,
                    ["gpupool:"])
        check("certificate" in r.stderr.lower() or "ssl" in r.stderr.lower(),
              "the refusal says why", r.stderr)
        out = ok("whoami", "--server", https, "--token-file", tls_token, "--cacert", cert)
        check("role admin" in out, "whoami over TLS with --cacert", out)
        refused(["whoami", "--server", https, "--token-file", tls_token, "--cacert",
                 os.path.join(tmp, "nope.pem")], 2, ["--cacert", "nope.pem"])

        # a legacy config file (server and token lines, as login wrote them) still works
        os.makedirs(os.path.dirname(cfg_path))
        secret(cfg_path, "# written by gpupool login\nserver: %s\ntoken: %s" %
               (plain.base, plain.admin_token))
        check("role admin" in ok("whoami"), "the legacy config file works")

        # contexts
        refused(["config", "set-context", "tls", "--token-file", tls_token], 2,
                ["--server: required for a new context"])
        loose = secret(os.path.join(tmp, "loose.token"), tls.admin_token, 0o644)
        refused(["config", "set-context", "tls", "--server", https, "--token-file", loose], 2,
                ["--token-file", "chmod 600"])
        refused(["config", "set-context", "bad/name", "--server", https], 2, ["NAME:"])
        ok("config", "set-context", "tls", "--server", https, "--token-file", tls_token,
           "--cacert", cert)
        ok("config", "set-context", "plain", "--server", plain.base, "--token",
           plain.admin_token)
        saved = os.path.join(home, ".config", "gpupool", "tokens", "plain")
        check(stat.S_IMODE(os.stat(saved).st_mode) == 0o600, "--token is saved 0600")
        check(plain.admin_token not in open(cfg_path).read().replace(
            "token: " + plain.admin_token, ""), "the context's token is not in the config file")
        check(stat.S_IMODE(os.stat(cfg_path).st_mode) == 0o600, "the config file stays 0600")
        refused(["config", "current-context"], 1, ["none set"])
        refused(["config", "use-context", "nope"], 2, ["no context \"nope\""])
        ok("config", "use-context", "tls")
        check(ok("config", "current-context") == "tls\n", "current-context")
        out = ok("config", "get-contexts")
        check(re.search(r"^\*\s+tls\s+" + re.escape(https), out, re.M) and
              re.search(r"^\s+plain\s+", out, re.M), "get-contexts marks the current one", out)
        check("role admin" in ok("whoami"), "whoami through the current context (TLS, CA)")
        out = ok("whoami", "--context", "plain")
        check(out.startswith(plain.base), "--context picks another cluster", out)
        out = ok("whoami", env_extra={"GPUPOOL_CONTEXT": "plain"})
        check(out.startswith(plain.base), "GPUPOOL_CONTEXT picks another cluster", out)
        refused(["get", "jobs", "--context", "nope"], 2, ["--context: no context \"nope\""])
        refused(["whoami"], 2, ["GPUPOOL_CONTEXT: no context \"zzz\""],
                env_extra={"GPUPOOL_CONTEXT": "zzz"})

        # the current context's token never goes to another cluster's --server
        fake = http.server.HTTPServer(("127.0.0.1", 0), Recorder)
        threading.Thread(target=fake.serve_forever, daemon=True).start()
        r = run("whoami", "--server", "http://127.0.0.1:%d" % fake.server_port)
        check(r.returncode == 1 and Recorder.seen == [None],
              "no token sent to a --server of another cluster", Recorder.seen, r.stderr)

        # login keeps the contexts
        ok("login", "--server", plain.base, "--token", plain.admin_token)
        out = ok("config", "get-contexts")
        check("tls" in out and "plain" in out, "login keeps the contexts", out)
        check("role admin" in ok("whoami"), "still the current context after login")
        ok("config", "delete-context", "tls")
        refused(["config", "delete-context", "tls"], 2, ["no context \"tls\""])
        refused(["config", "current-context"], 1, ["none set"])
        out = ok("whoami")
        check(out.startswith(plain.base), "without a context: what login saved", out)

        # gpupool-agent: --cacert lets it register with the TLS controller
        join = secret(os.path.join(tmp, "join.token"), tls.join_token)
        inventory = os.path.join(INVENTORIES, "pcie-t4.yaml")
        bad = MockAgent(AGENT, MOCK, tmp, "no-ca", inventory, https, join, "--runtime", "none")
        agents.append(bad)
        good = MockAgent(AGENT, MOCK, tmp, "with-ca", inventory, https, join, "--runtime",
                         "none", "--cacert", cert)
        agents.append(good)
        wait("the agent with --cacert registers", lambda: (lambda s, d: s == 200)(
            *tls.admin.get("/v1/nodes/with-ca")), 30)
        wait("the agent without it reports the certificate",
             lambda: re.search("certificate|SSL", bad.log(), re.I), 30)
        s, d = tls.admin.get("/v1/nodes/no-ca")
        check(s == 404, "the agent without --cacert did not register", s, d)
        r = subprocess.run([AGENT, "--server", https, "--join-token-file", join, "--state-dir",
                            os.path.join(tmp, "x"), "--cacert", os.path.join(tmp, "nope.pem")],
                           capture_output=True, text=True, timeout=30)
        check(r.returncode == 2 and "--cacert" in r.stderr, "the agent refuses a missing CA",
              r.returncode, r.stderr)
finally:
    for a in agents:
        if a.proc.poll() is None:
            a.stop()
    if fake:
        fake.shutdown()
    kill_replica_leftovers(tmp)
    shutil.rmtree(tmp, ignore_errors=True)
print("ok")
