"""Real monitoring servers for integration tests: Prometheus (/usr/bin/prometheus) and
Alertmanager (/usr/bin/prometheus-alertmanager), Debian's packages, each on a free port of
127.0.0.1 with its state in a temporary directory, stopped (and the directory removed) by stop().
"""
import json
import os
import shutil
import subprocess
import tempfile
import urllib.error
import urllib.parse
import urllib.request

from pool import check, free_port, terminate, wait

PROMETHEUS = "/usr/bin/prometheus"
ALERTMANAGER = "/usr/bin/prometheus-alertmanager"


def stop(server):
    """Stops a server's process (SIGTERM, then SIGKILL after 20 s), removes its directory."""
    terminate(server.proc)
    server.log.close()
    shutil.rmtree(server.dir, ignore_errors=True)


def need(binary):
    """Exits 77 (skipped) when binary is missing, unless CI is set: then the test fails."""
    if os.access(binary, os.X_OK):
        return
    check(not os.environ.get("CI"), binary + " is missing (the CI image must have it)")
    print("skipped: %s is not installed" % binary)
    raise SystemExit(77)


class Alertmanager:
    """A real Alertmanager on 127.0.0.1:port, clustering off, its state in a temporary
    directory; routes everything to a receiver that sends nothing."""

    def __init__(self, port):
        self.port = port
        self.dir = tempfile.mkdtemp(prefix="gpupool-am.")
        with open(os.path.join(self.dir, "am.yml"), "w") as f:
            f.write('route:\n  receiver: "null"\nreceivers:\n  - name: "null"\n')
        self.log = open(os.path.join(self.dir, "am.log"), "wb")
        self.proc = subprocess.Popen(
            [ALERTMANAGER, "--config.file=" + os.path.join(self.dir, "am.yml"),
             "--storage.path=" + os.path.join(self.dir, "data"),
             "--web.listen-address=127.0.0.1:%d" % port, "--cluster.listen-address="],
            stdout=self.log, stderr=self.log)
        wait("Alertmanager to answer", self.ready, 30)

    def ready(self):
        check(self.proc.poll() is None, "Alertmanager exited", self.read_log())
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d/-/ready" % self.port,
                                        timeout=5) as r:
                return r.status == 200
        except (urllib.error.URLError, OSError):
            return False

    def read_log(self):
        with open(os.path.join(self.dir, "am.log"), "rb") as f:
            return f.read().decode(errors="replace")[-3000:]

    def alerts(self):
        """The active alerts (resolved ones are not listed)."""
        with urllib.request.urlopen("http://127.0.0.1:%d/api/v2/alerts" % self.port,
                                    timeout=10) as r:
            return json.loads(r.read().decode())

    def find(self, **labels):
        return [a for a in self.alerts()
                if all(a["labels"].get(k) == v for k, v in labels.items())]

    def wait_for(self, what, timeout=60, **labels):
        return wait("Alertmanager to hold %s %s" % (what, labels),
                    lambda: self.find(alertname=what, **labels), timeout)

    def wait_gone(self, what, timeout=60, **labels):
        wait("%s %s to be resolved" % (what, labels),
             lambda: not self.find(alertname=what, **labels), timeout)

    def stop(self):
        stop(self)


class Prometheus:
    """A real Prometheus on 127.0.0.1 (a free port) with config (prometheus.yml text; may name
    rule files by absolute path)."""

    def __init__(self, config):
        self.dir = tempfile.mkdtemp(prefix="gpupool-prom.")
        self.port = free_port()
        self.base = "http://127.0.0.1:%d" % self.port
        path = os.path.join(self.dir, "prometheus.yml")
        with open(path, "w") as f:
            f.write(config)
        self.log = open(os.path.join(self.dir, "prometheus.log"), "wb")
        self.proc = subprocess.Popen(
            [PROMETHEUS, "--config.file", path, "--storage.tsdb.path",
             os.path.join(self.dir, "data"), "--web.listen-address",
             "127.0.0.1:%d" % self.port], stdout=self.log, stderr=self.log)

    def read_log(self):
        with open(os.path.join(self.dir, "prometheus.log"), "rb") as f:
            return f.read().decode(errors="replace")[-4000:]

    def api(self, path, **params):
        """The data of an API answer, or None (not up yet, or an error)."""
        check(self.proc.poll() is None, "Prometheus exited", self.read_log())
        url = self.base + path + ("?" + urllib.parse.urlencode(params) if params else "")
        try:
            with urllib.request.urlopen(url, timeout=10) as r:
                doc = json.loads(r.read().decode())
        except (OSError, ValueError):
            return None
        return doc.get("data") if doc.get("status") == "success" else None

    def query(self, expr):
        """[(labels dict, value)] of an instant query, or None."""
        data = self.api("/api/v1/query", query=expr)
        if data is None or data.get("resultType") != "vector":
            return None
        return [(r["metric"], float(r["value"][1])) for r in data["result"]]

    def targets(self, pool):
        """The active targets of a scrape pool (job), or None."""
        data = self.api("/api/v1/targets")
        if data is None:
            return None
        return [t for t in data.get("activeTargets", []) if t.get("scrapePool") == pool]

    def stop(self):
        stop(self)
