"""gpupoold as a program: the admin token file (mode 0600, written on the first start only),
--dump-config, exit codes for bad configuration (2) and for a start that cannot happen (1),
a clean stop on SIGTERM, and JSON log lines."""
import json
import os
import stat
import subprocess
import sys

from pool import Pool, check

binary = sys.argv[1]
with Pool(binary, ["--log-format", "json"]) as p:
    path = os.path.join(p.dir, "data", "admin.token")
    mode = stat.S_IMODE(os.stat(path).st_mode)
    check(mode == 0o600, "admin.token is mode 0600", oct(mode))
    check(stat.S_IMODE(os.stat(os.path.join(p.dir, "data", "join.token")).st_mode) == 0o600,
          "join.token is mode 0600")
    first = open(path).read()
    check(p.stop() == 0, "SIGTERM stops gpupoold cleanly (exit 0)")
    lines = [l for l in p.read_log().splitlines() if l.startswith("{")]
    check(lines and all("level" in json.loads(l) for l in lines), "log lines are JSON",
          p.read_log()[-500:])
    os.chmod(path, 0o600)
    p.start()
    check(open(path).read() == first, "a later start leaves admin.token alone")
    s, d = p.client(first.strip()).get("/v1/whoami")
    check(s == 200 and d["role"] == "admin", "the first token still works", s, d)
    os.unlink(path)
    p.restart()
    check(not os.path.exists(path), "a deleted admin.token is not silently recreated")

out = subprocess.run([binary, "--dump-config", "--data-dir", "/tmp/x", "--http-threads", "3"],
                     capture_output=True, text=True)
check(out.returncode == 0 and 'data_dir: "/tmp/x"' in out.stdout and "threads: 3" in out.stdout,
      "--dump-config prints the effective configuration", out.stdout, out.stderr)
for args, code, text in ((["--data-dir", "/tmp/x", "--listen", "nope"], 2, "--listen"),
                         (["--data-dir", "/tmp/x", "--frobnicate"], 2, "--frobnicate"),
                         ([], 2, "data_dir: required"),
                         (["--data-dir", "/proc/no/such/dir"], 1, "/proc/no/such/dir")):
    out = subprocess.run([binary] + args, capture_output=True, text=True, timeout=20)
    check(out.returncode == code and text in out.stderr,
          "gpupoold %s: exit %d naming %s" % (args, code, text), out.returncode, out.stderr)
print("ok")
