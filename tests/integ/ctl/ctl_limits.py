"""Request limits of the API on a real gpupoold started with small limits.

- A body over http.max_body is 413; a request head over http.max_header_bytes is 431 (the
  API's error shape), and far over it still 431; one under it is served.
- JSON and YAML bodies nested 65 deep are 400 naming the depth; 64 deep pass the depth check
  (and are judged on their fields); brackets inside strings do not count; a very deep YAML
  document is refused without harm to the server.
- A client that sends half a request and waits, or trickles its request a byte at a time, is
  disconnected after http.timeout while another client's requests succeed meanwhile.
- A tenant flooding the API gets 429 with Retry-After (and the API's error) while another
  tenant's requests all succeed, none refused, at a latency printed for the record and held
  only to a generous bound; the flooder is served again after the Retry-After it was given;
  agents are never limited; api.token_rate_limit limits admin tokens when set.
- Nothing a refused request carried is stored: the flooder has exactly as many jobs as it got
  201s, and no job of a refused body exists.
"""
import json
import socket
import statistics
import sys
import threading
import time
import urllib.error
import urllib.request

from pool import Pool, check, node_doc

LIMITS = ["--http-max-body", "64KiB", "--http-max-header-bytes", "4KiB", "--http-timeout", "1s",
          "--api-rate-limit", "20", "--api-rate-burst", "20"]


def call(base, token, method, path, body=None, headers=None, raw=None, timeout=30):
    """(status, headers with lower-case names, parsed body or text)."""
    hdrs = dict(headers or {})
    if token:
        hdrs["Authorization"] = "Bearer " + token
    data = None
    if raw is not None:
        data = raw.encode() if isinstance(raw, str) else raw
    elif body is not None:
        data = json.dumps(body).encode()
        hdrs.setdefault("Content-Type", "application/json")
    req = urllib.request.Request(base + path, data=data, method=method, headers=hdrs)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            status, h, text = r.status, r.headers, r.read().decode()
    except urllib.error.HTTPError as e:
        status, h, text = e.code, e.headers, e.read().decode()
    try:
        doc = json.loads(text) if text else None
    except ValueError:
        doc = text
    return status, {k.lower(): v for k, v in h.items()}, doc


def raw_exchange(port, data, timeout=10):
    """Sends raw bytes, reads until the server closes; returns what came back."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        s.sendall(data)
    except OSError:
        pass
    out = b""
    try:
        while True:
            d = s.recv(65536)
            if not d:
                break
            out += d
    except OSError:
        pass
    s.close()
    return out


def closed_by_server(sock, timeout):
    """True when the server closes sock within timeout (end of stream or reset)."""
    sock.settimeout(timeout)
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False


def error_of(doc):
    return doc["error"] if isinstance(doc, dict) and "error" in doc else {}


def spec(name, **extra):
    s = {"name": name, "command": ["sleep", "60"], "resources": {"cpu_milli": 100}}
    s.update(extra)
    return s


def nested(depth_arrays):
    return "[" * depth_arrays + "1" + "]" * depth_arrays


def job_names(p, tenant):
    names, after = [], None
    while True:
        q = "/v1/jobs?tenant=%s&limit=1000" % tenant + ("&after=%s" % after if after else "")
        s, d = p.admin.get(q)
        check(s == 200, "list %s's jobs" % tenant, s, d)
        names += [j["name"] for j in d["items"]]
        after = d.get("next")
        if not after:
            return names


with Pool(sys.argv[1], LIMITS) as p:
    for t in ("probe", "steady", "calm", "flood"):
        p.tenant(t)
    tokens = {}
    for user, t in (("pat", "probe"), ("sam", "steady"), ("carol", "calm"), ("fred", "flood")):
        s, d = p.admin.post("/v1/tokens", {"name": user, "role": "user", "tenant": t})
        check(s == 201, "token " + user, s, d)
        tokens[t] = d["token"]
    base = p.base

    def probe(method, path, **kw):
        return call(base, tokens["probe"], method, path, **kw)

    # ---- 413: a body over http.max_body ----
    s, h, d = probe("POST", "/v1/jobs", body=spec("too-big", args=["x" * 70000]))
    check(s == 413 and error_of(d).get("code") == "GP_ETOOBIG", "body over max_body: 413", s, d)

    # ---- 431: a head over http.max_header_bytes ----
    s, h, d = probe("GET", "/v1/whoami", headers={"X-Pad": "p" * 2000})
    check(s == 200 and d["tenant"] == "probe", "a 2 KiB head is served", s, d)
    s, h, d = probe("POST", "/v1/jobs", body=spec("big-head"), headers={"X-Pad": "p" * 5000})
    check(s == 431 and error_of(d).get("code") == "GP_ETOOBIG", "head over 4 KiB: 431", s, d)
    check("http.max_header_bytes" in error_of(d).get("message", ""), "431 names the setting", d)
    s, h, d = call(base, None, "GET", "/healthz", headers={"X-Pad": "p" * 5000})
    check(s == 431, "the head limit holds on public endpoints too", s, d)
    # Far over it (past what the server buffers for a head): still 431, not a dropped connection.
    req = (b"GET /v1/whoami HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Pad: " + b"p" * 150000 +
           b"\r\n\r\n")
    out = raw_exchange(p.port, req)
    check(out.startswith(b"HTTP/1.1 431"), "a 150 KiB head: 431", out[:200].decode(errors="replace"))

    # ---- nesting depth, JSON and YAML ----
    def deep_json(arrays):
        return '{"name": "deep-json", "command": ["true"], "x": %s}' % nested(arrays)

    s, h, d = probe("POST", "/v1/jobs", raw=deep_json(64),
                    headers={"Content-Type": "application/json"})
    msg = error_of(d).get("message", "")
    check(s == 400 and "nested deeper than 64" in msg and "body" in msg,
          "JSON 65 deep: 400 naming the depth", s, d)
    s, h, d = probe("POST", "/v1/jobs", raw=deep_json(63),
                    headers={"Content-Type": "application/json"})
    msg = error_of(d).get("message", "")
    check(s == 400 and "nested" not in msg and "x" in msg,
          "JSON 64 deep passes the depth check and is judged on its fields", s, d)
    s, h, d = probe("POST", "/v1/jobs", raw="[" * 60000, headers={"Content-Type": "application/json"})
    check(s == 400 and "nested deeper than 64" in error_of(d).get("message", ""),
          "JSON 60000 deep: 400", s, d)
    # Brackets inside strings are text, not nesting: this job is stored.
    s, h, d = probe("POST", "/v1/jobs", body=spec("brackets", args=["[" * 100 + "{\\\"" * 50]))
    check(s == 201, "brackets inside strings do not count", s, d)

    def deep_yaml(seqs):
        return "name: deep-yaml\ncommand: [\"true\"]\nx: %s\n" % nested(seqs)

    yaml = {"Content-Type": "application/yaml"}
    s, h, d = probe("POST", "/v1/jobs", raw=deep_yaml(64), headers=yaml)
    msg = error_of(d).get("message", "")
    check(s == 400 and "nested deeper than 64" in msg and "line 3" in msg,
          "YAML 65 deep: 400 naming the depth and the line", s, d)
    s, h, d = probe("POST", "/v1/jobs", raw=deep_yaml(63), headers=yaml)
    msg = error_of(d).get("message", "")
    check(s == 400 and "nested" not in msg and "x" in msg,
          "YAML 64 deep passes the depth check and is judged on its fields", s, d)
    block = "".join("  " * i + "k%d:\n" % i for i in range(150))
    s, h, d = probe("POST", "/v1/jobs", raw=block, headers=yaml)
    check(s == 400 and "nested deeper than 64" in error_of(d).get("message", ""),
          "YAML 150 deep (block style): 400", s, d)
    s, h, d = probe("POST", "/v1/jobs", raw="x: " + "[" * 60000, headers=yaml)
    check(s == 400, "YAML 60000 deep: 400", s, d)
    s, d = p.admin.get("/readyz")
    check(s == 200, "the server is fine after the deep bodies", s, d)

    # ---- slow clients ----
    def steady_client(results):
        for i in range(15):
            t0 = time.time()
            s, h, d = call(base, tokens["steady"], "GET", "/v1/whoami")
            results.append((s, time.time() - t0))
            time.sleep(0.1)

    steady = []
    st = threading.Thread(target=steady_client, args=(steady,))
    st.start()
    half = socket.create_connection(("127.0.0.1", p.port))
    half.sendall(b"POST /v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"name\":")
    check(closed_by_server(half, 15), "a half request is disconnected after http.timeout")
    half.close()
    trickle = socket.create_connection(("127.0.0.1", p.port))
    trickle.sendall(b"GET /v1/whoami HTTP/1.1\r\nHost: x\r\nX-Slow: ")
    sent, cut = 0, False
    while sent < 100 and not cut:
        try:
            trickle.sendall(b"s")
            sent += 1
        except OSError:
            cut = True
            break
        cut = closed_by_server(trickle, 0.1)
    trickle.close()
    check(cut and sent < 100, "a trickling client is disconnected (sent %d bytes)" % sent)
    st.join()
    check(all(s == 200 for s, _ in steady), "the other client was served meanwhile", steady)

    # ---- rate limits ----
    def timed(tenant, method, path, body=None):
        t0 = time.time()
        s, h, d = call(base, tokens[tenant], method, path, body=body)
        return s, h, d, time.time() - t0

    calm_before = []
    for i in range(10):
        s, h, d, dt = timed("calm", "GET", "/v1/jobs")
        check(s == 200, "calm lists its jobs", s, d)
        calm_before.append(dt)
        time.sleep(0.1)

    flood_results = []  # (status, headers, doc, name)
    stop = threading.Event()

    def flooder(k):
        i = 0
        while not stop.is_set():
            name = "f-%d-%d" % (k, i)
            i += 1
            s, h, d = call(base, tokens["flood"], "POST", "/v1/jobs", body=spec(name))
            flood_results.append((s, h, d, name))

    threads = [threading.Thread(target=flooder, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    time.sleep(0.3)
    calm_during, calm_created = [], []
    for i in range(20):  # 10 requests per second, half of them submits: under calm's limit
        if i % 2:
            s, h, d, dt = timed("calm", "POST", "/v1/jobs", spec("calm-%d" % i))
            check(s == 201, "calm submits during the flood", s, d)
            calm_created.append("calm-%d" % i)
        else:
            s, h, d, dt = timed("calm", "GET", "/v1/jobs")
            check(s == 200, "calm lists during the flood", s, d)
        calm_during.append(dt)
        time.sleep(0.1)
    stop.set()
    for t in threads:
        t.join()

    refused = [r for r in flood_results if r[0] == 429]
    created = [r[3] for r in flood_results if r[0] == 201]
    others = [(r[0], r[2]) for r in flood_results if r[0] not in (201, 429)]
    check(not others, "the flooder got only 201 or 429", others[:3])
    check(len(refused) > 0, "the flooder was limited (%d requests)" % len(flood_results))
    for s, h, d, name in refused[:50]:
        ra = h.get("retry-after", "")
        check(ra.isdigit() and 1 <= int(ra) <= 60, "429 carries Retry-After in seconds", h)
        e = error_of(d)
        check(e.get("code") == "GP_EUNAVAIL" and "rate limit" in e.get("message", "")
              and "flood" in e.get("message", ""), "429 in the API's error shape, naming the tenant",
              d)
    print("flood: %d requests, %d created, %d refused" % (len(flood_results), len(created),
                                                           len(refused)))
    before, during = statistics.median(calm_before), statistics.median(calm_during)
    print("calm median latency: before %.1f ms, during the flood %.1f ms" % (before * 1000,
                                                                          during * 1000))
    check(during <= 20 * before + 2.0, "calm's latency stays within a generous bound",
          "before %.3fs during %.3fs" % (before, during))

    # Served again after the wait it was told.
    s, h, d = call(base, tokens["flood"], "GET", "/v1/jobs?limit=1")
    if s == 429:
        time.sleep(int(h["retry-after"]))
        s, h, d = call(base, tokens["flood"], "GET", "/v1/jobs?limit=1")
    check(s == 200, "the flooder is served after Retry-After", s, h, d)

    # Nothing a refused request carried is stored.
    stored = job_names(p, "flood")
    check(sorted(stored) == sorted(created),
          "the flooder's jobs are exactly its 201s (%d stored, %d created)" % (len(stored),
                                                                              len(created)))
    check(sorted(job_names(p, "calm")) == sorted(calm_created), "calm's jobs are its own 201s")
    probe_jobs = job_names(p, "probe")
    check(probe_jobs == ["brackets"], "no job of a refused body exists", probe_jobs)

    # Agents are never limited: far more heartbeats than any burst, all answered.
    agent = p.register(node_doc("n1", ngpus=1))
    for i in range(60):
        s, d = agent.post("/v1/nodes/n1/heartbeat", {})
        check(s == 200, "heartbeat %d answered" % i, s, d)
    # Admin tokens are not limited by default.
    for i in range(60):
        s, d = p.admin.get("/v1/whoami")
        check(s == 200, "admin request %d answered" % i, s, d)

with Pool(sys.argv[1], ["--api-token-rate-limit", "1", "--api-token-rate-burst", "3"]) as p:
    statuses = []
    for i in range(6):
        s, h, d = call(p.base, p.admin_token, "GET", "/v1/whoami")
        statuses.append((s, h.get("retry-after"), error_of(d).get("message")))
    check([s for s, _, _ in statuses[:3]] == [200] * 3 and statuses[3][0] == 429,
          "api.token_rate_limit limits an admin token past its burst", statuses)
    check(statuses[3][1] == "1" and "token admin" in statuses[3][2], "named, with Retry-After",
          statuses[3])
print("ok")
