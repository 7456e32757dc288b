"""What the web dashboard needs of gpupoold, against a real one: its static files at /ui, the
active alerts at GET /v1/alerts, and usage reports as files (GET /v1/usage?format=).

/ui (ui.dir a temporary directory; requests sent byte for byte with http.client, which neither
follows redirects nor normalises paths):
- / redirects to /ui/ (302), /ui to /ui/ (301); /ui/ answers index.html; files under it answer
  with the content type of their extension; no token is needed;
- every answer carries nosniff, X-Frame-Options DENY and a same-origin Content-Security-Policy;
  index.html is revalidated (no-cache), a file with a content hash in its name cached for long;
- ".." (plain or percent-encoded), a backslash, %00, an empty or hidden segment, a directory, a
  symbolic link leading out of the directory (also into a sibling whose name extends the
  directory's) all answer 404 and never the file's content; a missing file is a 404, a missing
  page (no extension) answers index.html;
- ui.dir none turns it all off (404, / too); a directory without index.html is "not built";
  with ui.dir empty, gpupoold serves BINDIR/../share/gpupool/ui (a copy of the binary in a
  temporary tree).

/v1/alerts (no Alertmanager configured): an XID 48 through a heartbeat lists GpuDrained for the
GPU and JobRestartedAfterFault for the job; a tenant over its quota lists TenantQuotaExhausted;
each user sees its own tenant's alerts and those naming no tenant, never another tenant's; an
undrain and the end of the quota wait take them off the list.

/v1/usage?format=csv is byte for byte what `gpupool usage -o csv` writes for the same report;
format=xlsx is a workbook (a zip with the sheet: header, rows, total); both are attachments named
gpupool-usage-BY-FROM-TO.EXT; a bad format is 400.

Usage: ctl_ui_api.py GPUPOOLD GPUPOOL
"""
import atexit
import http.client
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile

from pool import Beater, Pool, check, node_doc, submit, wait

GPUPOOLD, GPUPOOL = sys.argv[1], sys.argv[2]
tmp = tempfile.mkdtemp(prefix="gpupool-ui.")
atexit.register(shutil.rmtree, tmp, True)

SECRET = b"the secret: never served"
INDEX = b"<!doctype html><title>gpupool</title><script type=module src=./assets/index-4f2a9c1b.js></script>"
FILES = {  # path under ui.dir -> (content, content type)
    "index.html": (INDEX, "text/html; charset=utf-8"),
    "assets/index-4f2a9c1b.js": (b"console.log('gpupool')", "text/javascript; charset=utf-8"),
    "assets/worker-77aa01bc.mjs": (b"export {}", "text/javascript; charset=utf-8"),
    "assets/index-4f2a9c1b.css": (b"body{margin:0}", "text/css; charset=utf-8"),
    "assets/index-4f2a9c1b.js.map": (b"{}", "application/json"),
    "logo.svg": (b"<svg xmlns='http://www.w3.org/2000/svg'/>", "image/svg+xml"),
    "icon.png": (b"\x89PNG\r\n\x1a\n", "image/png"),
    "manifest.json": (b"{\"name\": \"gpupool\"}", "application/json"),
    "fonts/inter.woff2": (b"wOF2", "font/woff2"),
    "notes.bin": (b"\x00\x01", "application/octet-stream"),
}


def make_tree(root):
    for rel, (content, _) in FILES.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(content)


ui = os.path.join(tmp, "ui")
make_tree(ui)
outside = os.path.join(tmp, "outside")
os.makedirs(outside)
with open(os.path.join(outside, "secret.txt"), "wb") as f:
    f.write(SECRET)
sibling = os.path.join(tmp, "ui-sibling")  # its path starts with ui's
os.makedirs(sibling)
with open(os.path.join(sibling, "secret.txt"), "wb") as f:
    f.write(SECRET)
os.symlink(outside, os.path.join(ui, "out"))
os.symlink(os.path.join(outside, "secret.txt"), os.path.join(ui, "leak.txt"))
os.symlink(os.path.join(sibling, "secret.txt"), os.path.join(ui, "sib.txt"))
os.symlink(sibling, os.path.join(ui, "sibdir"))
os.symlink("assets/index-4f2a9c1b.css", os.path.join(ui, "inside.css"))  # stays inside: served
with open(os.path.join(ui, ".hidden.txt"), "wb") as f:
    f.write(SECRET)


def raw(p, path, method="GET", token=None):
    """(status, headers with lower-case names, body bytes) of one request sent as written."""
    c = http.client.HTTPConnection("127.0.0.1", p.port, timeout=30)
    headers = {"Authorization": "Bearer " + token} if token else {}
    c.putrequest(method, path, skip_accept_encoding=True)
    for k, v in headers.items():
        c.putheader(k, v)
    c.endheaders()
    r = c.getresponse()
    body = r.read()
    hdrs = {k.lower(): v for k, v in r.getheaders()}
    c.close()
    return r.status, hdrs, body


def check_security(h, what):
    csp = h.get("content-security-policy", "")
    check("default-src 'self'" in csp and "frame-ancestors 'none'" in csp
          and "'unsafe-inline'" not in csp and "'unsafe-eval'" not in csp,
          what + ": a same-origin Content-Security-Policy", h)
    check(h.get("x-content-type-options") == "nosniff", what + ": nosniff", h)
    check(h.get("x-frame-options") == "DENY", what + ": X-Frame-Options DENY", h)


# ---- /ui from ui.dir ----
with Pool(GPUPOOLD, ["--ui-dir", ui]) as p:
    s, h, b = raw(p, "/")
    check(s == 302 and h.get("location") == "/ui/", "GET / redirects to /ui/", s, h)
    s, h, b = raw(p, "/ui")
    check(s == 301 and h.get("location") == "/ui/", "GET /ui redirects to /ui/", s, h)
    s, h, b = raw(p, "/ui/")
    check(s == 200 and b == INDEX, "GET /ui/ answers index.html", s, b)
    check(h.get("content-type") == "text/html; charset=utf-8", "index.html is HTML", h)
    check(h.get("cache-control") == "no-cache", "index.html is revalidated", h)
    check_security(h, "/ui/")
    for rel, (content, ctype) in FILES.items():
        s, h, b = raw(p, "/ui/" + rel)
        check(s == 200 and b == content, "GET /ui/%s answers the file" % rel, s, b)
        check(h.get("content-type") == ctype, "/ui/%s: Content-Type %s" % (rel, ctype), h)
        check_security(h, "/ui/" + rel)
    s, h, b = raw(p, "/ui/assets/index-4f2a9c1b.js")
    check("max-age=31536000" in h.get("cache-control", ""), "a hashed file is cached long", h)
    s, h, b = raw(p, "/ui/manifest.json")
    check(h.get("cache-control") == "no-cache", "a file without a hash is revalidated", h)
    s, h, b = raw(p, "/ui/inside.css")
    check(s == 200 and b == FILES["assets/index-4f2a9c1b.css"][0],
          "a link that stays inside the directory is followed", s, b)
    s, h, b = raw(p, "/ui/jobs/42")
    check(s == 200 and b == INDEX and h.get("content-type").startswith("text/html"),
          "a page of the dashboard (no extension) answers index.html", s, b)
    refused = ["/ui/../etc/passwd", "/ui/%2e%2e/%2e%2e/etc/passwd", "/ui/%2E%2E%2Fleak.txt",
               "/ui/assets/..%2f..%2fleak.txt", "/ui/..%5c..%5cetc%5cpasswd", "/ui/a\\b",
               "/ui/out/secret.txt", "/ui/leak.txt", "/ui/sib.txt", "/ui/sibdir/secret.txt",
               "/ui/.hidden.txt", "/ui//etc/passwd", "/ui/assets", "/ui/fonts/",
               "/ui/index.html%00.js", "/ui/missing.js", "/ui/assets/missing-4f2a9c1b.css",
               "/ui/" + outside + "/secret.txt"]
    for path in refused:
        s, h, b = raw(p, path)
        check(s == 404, "GET %s: 404" % path, s, b[:200])
        check(SECRET not in b and b"root:" not in b and b != INDEX,
              "GET %s: neither the file nor index.html" % path, b[:200])
        check_security(h, path)
    s, h, b = raw(p, "/ui/", method="POST")
    check(s == 405, "POST /ui/ is not allowed", s, b)
    # A token changes nothing, and a bad one is not looked at.
    s, h, b = raw(p, "/ui/", token="gpu_not-a-token")
    check(s == 200 and b == INDEX, "the dashboard needs no token", s, b)
    s, api = p.client(None).get("/openapi.json")
    for path in ("/", "/ui", "/ui/", "/ui/{path}", "/v1/alerts"):
        check(path in api["paths"], "openapi.json documents " + path, sorted(api["paths"]))

# ---- ui.dir none, not built, and the installed layout ----
with Pool(GPUPOOLD, ["--ui-dir", "none"]) as p:
    for path in ("/", "/ui/", "/ui/index.html", "/ui/assets/index-4f2a9c1b.js"):
        s, h, b = raw(p, path)
        check(s == 404 and b"ui.dir: none" in b, "ui.dir none: %s is 404" % path, s, b)
empty = os.path.join(tmp, "empty")
os.makedirs(empty)
with Pool(GPUPOOLD, ["--ui-dir", empty]) as p:
    s, h, b = raw(p, "/ui/")
    check(s == 404 and b"the dashboard is not built" in b and empty.encode() in b,
          "no index.html: the dashboard is not built, saying where", s, b)
    s, h, b = raw(p, "/")
    check(s == 302, "/ still leads to /ui/", s, h)
    check("no dashboard at /ui/" in p.read_log(), "the start says there is no dashboard")
layout = os.path.join(tmp, "prefix")
os.makedirs(os.path.join(layout, "bin"))
shutil.copy2(GPUPOOLD, os.path.join(layout, "bin", "gpupoold"))
make_tree(os.path.join(layout, "share", "gpupool", "ui"))
with Pool(os.path.join(layout, "bin", "gpupoold")) as p:
    s, h, b = raw(p, "/ui/")
    check(s == 200 and b == INDEX, "ui.dir empty: BINDIR/../share/gpupool/ui is served", s, b)
    s, h, b = raw(p, "/ui/logo.svg")
    check(s == 200 and b == FILES["logo.svg"][0], "and its files", s, b)

# ---- /v1/alerts and usage files ----
PRICES = """currency: USD
prices:
  - model: A100-80GB
    from: 2020-01-01
    hourly: 2.5
"""
prices = os.path.join(tmp, "prices.yaml")
with open(prices, "w") as f:
    f.write(PRICES)


def alerts(client):
    s, d = client.get("/v1/alerts")
    check(s == 200 and isinstance(d.get("items"), list), "GET /v1/alerts", s, d)
    return d["items"]


def named(items, name):
    return [a for a in items if a["name"] == name]


with Pool(GPUPOOLD, ["--alerts-resolve-after", "10m", "--billing-price-table", prices]) as p:
    t0 = int(time.time() * 1000) - 1000
    p.tenant("team-a")
    p.tenant("team-b", gpus=1)
    alice = p.user("alice", "team-a")
    bob = p.user("bob", "team-b")
    p.register(node_doc("n0", ngpus=4))
    b = Beater(p)
    b.nodes.add("n0")
    check(alerts(p.admin) == [], "no alerts at first", alerts(p.admin))
    s, d = p.client(None).get("/v1/alerts")
    check(s == 401, "/v1/alerts needs a token", s, d)

    s, job = submit(alice, "train", tenant="team-a", restart_policy="on-failure")
    check(s == 201, "submit train", s, job)
    j = p.wait_state(alice, "train", "Running")
    gpu0 = j["placement"][0]["gpus"][0]["index"]
    b.send("n0", events=[{"gpu": gpu0, "xid": 48}])
    drained = wait("GpuDrained listed", lambda: named(alerts(p.admin), "GpuDrained"))
    a = drained[0]
    check(a["labels"]["Hostname"] == "n0" and a["labels"]["gpu"] == str(gpu0)
          and a["severity"] == "warning" and "XID 48" in a["summary"]
          and "tenant" not in a["labels"], "GpuDrained names the node and GPU", a)
    check(a["ends_ms"] - a["starts_ms"] == 600000 and a["starts_ms"] <= time.time() * 1000 + 1000,
          "an event ends alerts.resolve_after after its start", a)
    restarted = wait("JobRestartedAfterFault listed",
                     lambda: named(alerts(p.admin), "JobRestartedAfterFault"))
    check(restarted[0]["labels"]["tenant"] == "team-a"
          and restarted[0]["labels"]["gpupool_job_id"] == str(job["id"]),
          "JobRestartedAfterFault names the job and its tenant", restarted)

    # team-b's quota is one GPU: its second job waits for it.
    s, b1 = submit(bob, "b1", tenant="team-b")
    check(s == 201, "submit b1", s, b1)
    p.wait_state(bob, "b1", "Running")
    s, b2 = submit(bob, "b2", tenant="team-b")
    check(s == 201, "submit b2", s, b2)
    quota = wait("TenantQuotaExhausted listed",
                 lambda: named(alerts(p.admin), "TenantQuotaExhausted"))
    check(quota[0]["labels"]["tenant"] == "team-b", "the quota alert names team-b", quota)

    mine = alerts(alice)
    check(named(mine, "GpuDrained") and named(mine, "JobRestartedAfterFault")
          and not named(mine, "TenantQuotaExhausted"),
          "alice sees the GPU and her tenant's alerts, not team-b's", mine)
    theirs = alerts(bob)
    check(named(theirs, "GpuDrained") and named(theirs, "TenantQuotaExhausted")
          and not named(theirs, "JobRestartedAfterFault"),
          "bob sees the GPU and his tenant's alerts, not team-a's", theirs)
    check("team-a" not in json.dumps(theirs) and "team-b" not in json.dumps(mine),
          "no other tenant's name in a user's alerts", mine, theirs)

    s, d = p.admin.post("/v1/nodes/n0/gpus/%d/undrain" % gpu0)
    check(s == 200, "undrain", s, d)
    wait("GpuDrained off the list", lambda: not named(alerts(p.admin), "GpuDrained"))
    s, d = bob.post("/v1/jobs/%d/cancel" % b2["id"])
    check(s == 200, "cancel b2", s, d)
    wait("TenantQuotaExhausted off the list",
         lambda: not named(alerts(p.admin), "TenantQuotaExhausted"))
    check(named(alerts(p.admin), "JobRestartedAfterFault"), "the restart is still listed")

    # ---- usage as files: every job ended, so the report stays the same ----
    for name, client in (("train", alice), ("b1", bob)):
        s, d = client.post("/v1/jobs/%s/cancel" % name)
        check(s == 200, "cancel " + name, s, d)
        p.wait_state(client, name, "Cancelled")
    t1 = int(time.time() * 1000) + 60000
    b.stop = True
    query = "by=job&from=%d&to=%d" % (t0, t1)
    s, ref = p.admin.get("/v1/usage?" + query)
    check(s == 200 and len(ref["rows"]) >= 2, "usage by job", s, ref)

    def filename(doc, ext):
        def part(t):
            return t[:10] if t.endswith("T00:00:00Z") else t.replace(":", "")
        return "gpupool-usage-%s-%s-%s.%s" % (doc["by"], part(doc["from"]), part(doc["to"]), ext)

    s, h, body = raw(p, "/v1/usage?format=csv&" + query, token=p.admin_token)
    check(s == 200 and h.get("content-type") == "text/csv; charset=utf-8", "usage as CSV", s, h)
    check(h.get("content-disposition") == 'attachment; filename="%s"' % filename(ref, "csv"),
          "the CSV is an attachment named by grouping and range", h)
    cli = subprocess.run([GPUPOOL, "usage", "--server", p.base, "--token", p.admin_token, "--by",
                          "job", "--from", str(t0), "--to", str(t1), "-o", "csv"],
                         capture_output=True, timeout=60)
    check(cli.returncode == 0, "gpupool usage -o csv", cli.stderr)
    check(body == cli.stdout, "the API's CSV is the CLI's, byte for byte", body, cli.stdout)
    check(body.startswith(b"job,period_start,gpu_hours,") and body.count(b"\r\n") ==
          len(ref["rows"]) + 1, "a header and one CRLF line per row", body)

    s, h, body = raw(p, "/v1/usage?format=xlsx&" + query, token=p.admin_token)
    check(s == 200 and h.get("content-type") ==
          "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", "usage as xlsx", s, h)
    check(h.get("content-disposition") == 'attachment; filename="%s"' % filename(ref, "xlsx"),
          "the workbook is an attachment", h)
    with zipfile.ZipFile(io.BytesIO(body)) as z:
        sheet = z.read("xl/worksheets/sheet1.xml").decode()
        strings = z.read("xl/sharedStrings.xml").decode()
        book = z.read("xl/workbook.xml").decode()
    check('name="usage"' in book, "the workbook's sheet is usage", book)
    check(sheet.count("<row ") == len(ref["rows"]) + 2, "xlsx: header, rows and total", sheet)
    for r in ref["rows"]:
        check(">%s<" % r["key"] in strings, "xlsx: row " + r["key"], strings)
    check("SUM(G2:G%d)" % (len(ref["rows"]) + 1) in sheet, "xlsx: a total of the cost", sheet)
    left = [f for f in os.listdir(os.path.join(p.dir, "data")) if "usage" in f]
    check(not left, "no temporary file left in data_dir", left)

    s, h, body = raw(p, "/v1/usage?format=json&" + query, token=p.admin_token)
    check(s == 200 and json.loads(body)["rows"] == ref["rows"]
          and h.get("content-disposition") == 'attachment; filename="%s"' % filename(ref, "json"),
          "format=json: the report as an attachment", s, h)
    s, h, body = raw(p, "/v1/usage?" + query, token=p.admin_token)
    check(s == 200 and "content-disposition" not in h, "no format: the plain document", h)
    s, d = p.admin.get("/v1/usage?format=pdf")
    check(s == 400 and "format" in d["error"]["message"], "a bad format is 400", s, d)
    s, d = p.client(None).get("/v1/usage?format=csv")
    check(s == 401, "no token, no file", s, d)
    s, h, body = raw(p, "/v1/usage?format=csv&" + query, token=bob.token)
    keys = [line.split(",")[0] for line in body.decode().split("\r\n")[1:] if line]
    check(s == 200 and keys == [str(b1["id"])], "a user's CSV holds only its tenant's rows", body)

print("ok")
