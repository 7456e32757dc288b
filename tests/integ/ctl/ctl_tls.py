"""The optional TLS listener: gpupoold serves the same API over HTTPS with the configured
certificate, beside the plain listener. Skipped (exit 77) when the openssl tool is missing."""
import json
import os
import re
import shutil
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.request

from pool import Pool, check

if not shutil.which("openssl"):
    print("skipped: no openssl")
    sys.exit(77)
tmp = tempfile.mkdtemp(prefix="gpupool-tls.")
try:
    cert, key = os.path.join(tmp, "cert.pem"), os.path.join(tmp, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", key, "-out", cert], check=True, capture_output=True)
    with Pool(sys.argv[1], ["--tls-listen", "127.0.0.1:0", "--tls-cert", cert,
                            "--tls-key", key]) as p:
        port = None
        deadline = time.time() + 10
        while port is None and time.time() < deadline:
            m = re.search(r"listening=127\.0\.0\.1:(\d+) tls=on", p.read_log())
            port = int(m.group(1)) if m else None
            time.sleep(0.05)
        check(port is not None, "the TLS listener reports its port", p.read_log())
        ctx = ssl.create_default_context(cafile=cert)
        req = urllib.request.Request("https://127.0.0.1:%d/v1/whoami" % port,
                                     headers={"Authorization": "Bearer " + p.admin_token})
        with urllib.request.urlopen(req, context=ctx, timeout=10) as r:
            doc = json.loads(r.read())
        check(r.status == 200 and doc["role"] == "admin", "whoami over HTTPS", doc)
        s, d = p.admin.get("/v1/whoami")
        check(s == 200, "the plain listener still answers", s, d)
finally:
    shutil.rmtree(tmp, ignore_errors=True)
print("ok")
