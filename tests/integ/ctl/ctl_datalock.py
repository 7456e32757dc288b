"""One gpupoold per data directory: the first holds DATA_DIR/gpupoold.lock (its pid written in
it) for as long as it runs; a second gpupoold on the same directory exits 1 at once, naming the
holder's pid, before it opens the store or listens; another directory is not affected; the
lock goes with its holder, by a clean stop or by kill -9, and the next start takes it."""
import os
import re
import signal
import subprocess
import sys
import tempfile

from pool import Pool, check

binary = sys.argv[1]


def second(data_dir):
    """gpupoold on data_dir beside the running one: (exit status, stderr)."""
    proc = subprocess.Popen([binary, "--data-dir", data_dir, "--listen", "127.0.0.1:0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        check(False, "a second gpupoold on %s kept running" % data_dir, err[-2000:])
    return proc.returncode, err


def holder(lock):
    """What the lock file says ("" when there is none)."""
    try:
        with open(lock) as f:
            return f.read()
    except OSError:
        return ""


with Pool(binary) as p:
    data = os.path.join(p.dir, "data")
    lock = os.path.join(data, "gpupoold.lock")
    check(holder(lock) == "%d\n" % p.proc.pid, "the lock file names the holder's pid",
          holder(lock), p.proc.pid)
    rc, err = second(data)
    check(rc == 1 and "pid %d" % p.proc.pid in err and "gpupoold.lock" in err and
          "in use" in err, "a second gpupoold on the directory exits 1 naming the holder",
          rc, err)
    check(not re.search(r"listening=", err), "the second did not listen", err)
    check(holder(lock) == "%d\n" % p.proc.pid, "the holder's pid stays in the lock file")
    s, d = p.admin.get("/readyz")
    check(s == 200, "the first still serves", s, d)

    with tempfile.TemporaryDirectory(prefix="gpupool-ctl.") as other:
        with Pool(binary, data_dir=other) as q:
            check(q.proc.poll() is None, "a gpupoold on another directory starts")

    check(p.stop() == 0, "a clean stop")
    p.start()
    check(holder(lock) == "%d\n" % p.proc.pid, "after a stop the next start takes the lock")
    p.stop(signal.SIGKILL)
    p.start()
    check(holder(lock) == "%d\n" % p.proc.pid, "after kill -9 the next start takes the lock")
    rc, err = second(data)
    check(rc == 1 and "pid %d" % p.proc.pid in err, "and holds it against a second", rc, err)
print("ok")
