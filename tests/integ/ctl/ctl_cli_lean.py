"""The CLI loads only the libraries a command needs (src/cli/lazylib.h), against a real gpupoold:

- `gpupool submit` (flags, and -f with a JSON spec), `get jobs`, `cancel` and `describe` against
  a plain http:// pool load neither libcurl (libevent's evhttp carries plain HTTP) nor libyaml
  nor libxlsxwriter: the dynamic loader's own list of the files it opens (LD_DEBUG=files) names
  none of them, and none is a DT_NEEDED entry of the program; nor does it load libjansson,
  which is linked into it (libjansson.a);
- an https:// pool still works through libcurl, loaded then, with the CA given by --cacert; a
  certificate that CA did not sign (or no --cacert: the system's store) is refused, nothing
  submitted;
- the commands that use them still do, and work: `get -o yaml` (libyaml's emitter), `submit -f`
  of a YAML spec read back as the job (the server parses it) and `apply --dry-run=client -f` of
  a YAML manifest (libyaml's parser, in the CLI), and `usage -o xlsx` (libxlsxwriter: a zip
  archive whose workbook names the tenant's sheet);
- nothing is asked before the submit that the submit does not need: without --name, `gpupool
  submit` makes one request, the POST (a fake server records them); when the server refuses the
  generated name (409, "name: a job named ... is already active") another is drawn and posted,
  silently, up to 8 names, the last refusal printed; any other 409, and a clash of a --name
  given, is printed at once and not retried.

Arguments: gpupoold, gpupool.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pool import Pool, check  # noqa: E402

GPUPOOLD, GPUPOOL = sys.argv[1:3]
LAZY = ("libyaml", "libxlsxwriter", "libcurl")
LINKED = ("libjansson",)  # linked into the program (libjansson.a): never loaded
tmp = tempfile.mkdtemp(prefix="gpupool-cli-lean.")


def env_for(p, token):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("GPUPOOL_") and k != "LD_DEBUG"}
    env.update(HOME=tmp, GPUPOOL_SERVER=p.base, GPUPOOL_TOKEN=token)
    return env


def run(p, token, *args, debug=False, stdin=None):
    env = env_for(p, token)
    if debug:
        env["LD_DEBUG"] = "files"
    return subprocess.run([GPUPOOL] + list(args), capture_output=True, timeout=60, env=env,
                          input=stdin)


def loaded(stderr):
    """The shared objects the dynamic loader opened, from its LD_DEBUG=files lines."""
    names = set()
    for line in stderr.decode(errors="replace").splitlines():
        if "file=" in line and ("generating link map" in line or "needed by" in line or
                                "dynamically loaded" in line):
            names.add(line.split("file=", 1)[1].split()[0].split(";")[0])
    return names


def lean(p, token, *args, stdin=None):
    r = run(p, token, *args, debug=True, stdin=stdin)
    check(r.returncode == 0, "gpupool %s" % " ".join(args), r.stdout.decode(errors="replace"),
          r.stderr.decode()[-3000:])
    libs = loaded(r.stderr)
    check(any(n.startswith("libc.so") for n in libs),
          "LD_DEBUG=files lists the libraries gpupool %s loads (libc among them)"
          % args[0], sorted(libs))
    bad = sorted(n for n in libs if n.startswith(LAZY + LINKED))
    check(not bad, "gpupool %s loads no library it does not use" % " ".join(args), bad)
    return r.stdout.decode()


def uses(p, token, lib, *args, stdin=None):
    r = run(p, token, *args, debug=True, stdin=stdin)
    check(r.returncode == 0, "gpupool %s" % " ".join(args), r.stdout.decode(errors="replace"),
          r.stderr.decode()[-3000:])
    libs = loaded(r.stderr)
    check(any(n.startswith(lib) for n in libs), "gpupool %s loads %s" % (" ".join(args), lib),
          sorted(libs))
    return r.stdout


class FakeServer(BaseHTTPRequestHandler):
    """Records (method, path, body) of every request; refuses the next `clashes` submits as a
    name clash (or with `other`, a 409 of another kind), then accepts one as job 7."""
    seen = []
    prefer = []  # the Prefer header of each POST ("" without one)
    clashes = 0
    other = None

    def log_message(self, *args):
        pass

    def answer(self, status, doc):
        body = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        FakeServer.seen.append(("GET", self.path, None))
        self.answer(200, {"items": [], "next": None})

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        FakeServer.seen.append(("POST", self.path, body))
        FakeServer.prefer.append(self.headers.get("Prefer", ""))
        if FakeServer.other:
            return self.answer(409, {"error": {"message": FakeServer.other}})
        if FakeServer.clashes > 0:
            FakeServer.clashes -= 1
            return self.answer(409, {"error": {"message": "name: a job named %s is already "
                                                          "active" % body.get("name")}})
        self.answer(201, dict(body, id=7))


def fake_submit(base, *args, clashes=0, other=None):
    FakeServer.seen, FakeServer.clashes, FakeServer.other = [], clashes, other
    FakeServer.prefer = []
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUPOOL_")}
    env.update(HOME=tmp, GPUPOOL_SERVER=base, GPUPOOL_TOKEN="user-secret")
    r = subprocess.run([GPUPOOL, "submit"] + list(args), capture_output=True, text=True,
                       timeout=60, env=env)
    return r, list(FakeServer.seen)


def one_request_submits():
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeServer)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = "http://127.0.0.1:%d" % server.server_address[1]
    try:
        cmd = ["--gpus", "1", "--", "sleep", "600"]
        r, seen = fake_submit(base, *cmd)
        check(r.returncode == 0 and r.stdout == "7\n" and r.stderr == "",
              "submit against the fake server", r.returncode, r.stdout, r.stderr)
        check([(m, p) for m, p, _ in seen] == [("POST", "/v1/jobs")],
              "a submit without --name makes one request, the POST", seen)
        check(re.fullmatch(r"sleep-[b-z2-9]{5}", seen[0][2]["name"]), "a generated name",
              seen[0][2])
        check(FakeServer.prefer == ["return=minimal"],
              "a submit that prints the id asks for a minimal answer", FakeServer.prefer)
        r, seen = fake_submit(base, "-o", "json", *cmd)
        check(r.returncode == 0 and json.loads(r.stdout)["id"] == 7 and FakeServer.prefer == [""],
              "submit -o json asks for the whole document", r.stdout, FakeServer.prefer)

        r, seen = fake_submit(base, *cmd, clashes=2)
        names = [b["name"] for _, _, b in seen]
        check(r.returncode == 0 and r.stdout == "7\n" and r.stderr == "",
              "two name clashes: a third name is posted, nothing printed", r.returncode,
              r.stdout, r.stderr)
        check([m for m, _, _ in seen] == ["POST"] * 3 and len(set(names)) == 3,
              "three POSTs with three names", seen)

        r, seen = fake_submit(base, *cmd, clashes=100)
        check(r.returncode == 1 and len(seen) == 8, "8 names refused: exit 1 after 8 POSTs",
              r.returncode, seen)
        check(r.stderr.count("\n") == 1 and "already active" in r.stderr,
              "the last refusal printed, once", r.stderr)

        r, seen = fake_submit(base, *cmd, other="idempotency: key used for another job")
        check(r.returncode == 1 and len(seen) == 1 and
              r.stderr == "gpupool: idempotency: key used for another job\n",
              "another 409: printed at once, not retried", r.returncode, seen, r.stderr)

        r, seen = fake_submit(base, "--name", "mine", *cmd, clashes=1)
        check(r.returncode == 1 and len(seen) == 1 and "a job named mine" in r.stderr,
              "a clash of a --name given: printed, not retried", r.returncode, seen, r.stderr)
    finally:
        server.shutdown()
        server.server_close()


def make_cert(name):
    cert, key = os.path.join(tmp, name + ".pem"), os.path.join(tmp, name + ".key")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1", "-subj",
                    "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", key,
                    "-out", cert], check=True, capture_output=True)
    return cert, key


def https_pool(gpupoold):
    """An https:// pool: libcurl is loaded for it, checks the certificate against --cacert."""
    if not shutil.which("openssl"):
        print("https part skipped: no openssl")
        return
    cert, key = make_cert("pool")
    other, _ = make_cert("other")
    with Pool(gpupoold, ["--tls-listen", "127.0.0.1:0", "--tls-cert", cert,
                         "--tls-key", key]) as p:
        p.tenant("team-a")
        user = p.user("alice", "team-a").token
        m = None
        for _ in range(200):
            m = re.search(r"listening=127\.0\.0\.1:(\d+) tls=on", p.read_log())
            if m:
                break
            time.sleep(0.05)
        check(m is not None, "the TLS listener reports its port", p.read_log())
        url = "https://127.0.0.1:%s" % m.group(1)
        cmd = ["--gpus", "1", "--allow-unschedulable", "--", "sleep", "600"]
        r = run(p, user, "submit", "--server", url, "--cacert", cert, *cmd, debug=True)
        check(r.returncode == 0 and r.stdout.decode().strip().isdigit(),
              "submit to an https:// pool with --cacert", r.returncode, r.stdout.decode(),
              r.stderr.decode()[-3000:])
        check(any(n.startswith("libcurl") for n in loaded(r.stderr)),
              "an https:// submit loads libcurl", sorted(loaded(r.stderr)))
        s, d = p.admin.get("/v1/jobs")
        before = len(d["items"])
        for args in (["--cacert", other], []):
            r = run(p, user, "submit", "--server", url, *(args + cmd))
            err = r.stderr.decode()
            check(r.returncode != 0 and "certificate" in err.lower(),
                  "a certificate the CA did not sign is refused (%s)" % (args or "system store"),
                  r.returncode, r.stdout.decode(), err)
        s, d = p.admin.get("/v1/jobs")
        check(s == 200 and len(d["items"]) == before, "nothing submitted on a refused CA", d)


try:
    one_request_submits()
    https_pool(GPUPOOLD)

    # Not one of the program's DT_NEEDED entries.
    dyn = subprocess.run(["readelf", "-d", GPUPOOL], capture_output=True, text=True)
    if dyn.returncode == 0:
        needed = [ln for ln in dyn.stdout.splitlines() if "(NEEDED)" in ln]
        check(needed and not any(lib in ln for ln in needed for lib in LAZY + LINKED),
              "gpupool's DT_NEEDED holds neither libcurl nor libyaml nor libxlsxwriter nor "
              "libjansson", needed)

    with Pool(GPUPOOLD) as p:
        p.tenant("team-a")
        user = p.user("alice", "team-a").token

        # The hot commands: no YAML, no workbook.
        job = lean(p, user, "submit", "--gpus", "1", "--allow-unschedulable", "--", "sleep",
                   "600").strip()
        check(job.isdigit(), "submit prints the job id", job)
        spec = json.dumps({"name": "from-json", "resources": {"gpus": 1},
                           "command": ["sleep", "600"], "allow_unschedulable": True})
        lean(p, user, "submit", "-f", "-", stdin=spec.encode())
        listing = lean(p, user, "get", "jobs")
        check("from-json" in listing, "get jobs lists the job", listing)
        lean(p, user, "describe", "job", job)
        lean(p, user, "cancel", job)

        # Prefer: return=minimal (RFC 7240) on the real server: the job's id, name and state only,
        # for a new job and for a retry of its key; without it, the whole document.
        alice = p.user("alice2", "team-a")
        doc = {"name": "minimal", "resources": {"gpus": 1}, "command": ["sleep", "600"],
               "allow_unschedulable": True}
        want = {"Prefer": "return=minimal", "Idempotency-Key": "k-minimal"}
        s, d = alice.post("/v1/jobs", doc, headers=want)
        check(s == 201 and sorted(d) == ["id", "name", "state"] and d["name"] == "minimal" and
              d["state"] == "Pending", "a minimal answer to a submit", s, d)
        s2, d2 = alice.post("/v1/jobs", doc, headers=want)
        check(s2 == 200 and d2 == d, "a retry of its key: the same minimal answer", s2, d2)
        s3, d3 = alice.post("/v1/jobs", doc, headers={"Idempotency-Key": "k-minimal"})
        check(s3 == 200 and d3["id"] == d["id"] and d3["spec"]["name"] == "minimal",
              "the same retry without the preference: the whole document", s3, d3)

        # The commands that need them load them, and work.
        out = uses(p, user, "libyaml", "get", "jobs", "-o", "yaml").decode()
        check("name: from-json" in out, "get jobs -o yaml prints YAML", out)
        yspec = ("name: from-yaml\nresources:\n  gpus: 1\ncommand: [sleep, '600']\n"
                 "allow_unschedulable: true\n")
        yaml_file = os.path.join(tmp, "job.yaml")
        with open(yaml_file, "w") as f:
            f.write(yspec)
        yid = run(p, user, "submit", "-f", yaml_file)
        check(yid.returncode == 0, "submit -f job.yaml", yid.stderr.decode())
        s, d = p.admin.get("/v1/jobs/" + yid.stdout.decode().strip())
        check(s == 200 and d["name"] == "from-yaml", "the YAML spec stored as the job", s, d)
        manifest = os.path.join(tmp, "queue.yaml")
        with open(manifest, "w") as f:
            f.write("apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\n"
                    "metadata:\n  name: lean-q\nspec:\n  weight: 2\n")
        out = uses(p, p.admin_token, "libyaml", "apply", "--dry-run=client", "-f",
                   manifest).decode()
        check("lean-q" in out, "apply --dry-run=client -f reads the YAML manifest", out)
        xlsx = uses(p, p.admin_token, "libxlsxwriter", "usage", "-o", "xlsx")
        check(xlsx[:2] == b"PK" and b"xl/worksheets/sheet1.xml" in xlsx,
              "usage -o xlsx writes a workbook (a zip archive with its sheet)", xlsx[:64])
finally:
    shutil.rmtree(tmp, ignore_errors=True)
print("ok")
