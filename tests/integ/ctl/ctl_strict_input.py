"""Strict input at the edge of a real gpupoold.

- Heartbeats with utilisation -5 or 1e308, negative memory, memory past the GPU's total, XID 0
  or -7, a GPU index past the node's GPUs are refused 400 naming the field, and nothing of them
  is applied: the node (readings, XID counts, heartbeat time) is unchanged afterwards. A good
  heartbeat is still taken.
- A query of 2,000 parameters is 414 at once; a chunk of FFFFFFFFFFFFFFFF bytes is 413 and the
  connection closed; a TLS ClientHello and binary garbage on the plain port are closed at once
  (the server's request timeout is 30 s: "at once" here means well before it). Keep-alive
  requests go on working.
"""
import http.client
import json
import socket
import sys

from pool import Pool, check, node_doc

HELLO = bytes.fromhex("16030100c4010000c00303") + bytes(range(32)) + b"\x00\x02\x13\x01\x01\x00"


def raw(port, data, timeout=15):
    """Sends data; returns (answer bytes, closed by the server). A server that refuses a request
    as it starts may answer and close before all of data is sent: the send then fails (broken
    pipe, reset) and what the server answered is still read."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    out, closed = b"", False
    try:
        s.sendall(data)
    except (BrokenPipeError, ConnectionResetError):
        closed = True
    try:
        while True:
            d = s.recv(65536)
            if not d:
                closed = True
                break
            out += d
    except ConnectionResetError:
        closed = True
    except socket.timeout:
        pass
    s.close()
    return out, closed


def node(p):
    s, d = p.admin.get("/v1/nodes/n1")
    check(s == 200, "get node", s, d)
    return d


with Pool(sys.argv[1], ["--http-timeout", "30s"]) as p:
    agent = p.register(node_doc("n1", ngpus=4))
    beat = "/v1/nodes/n1/heartbeat"
    s, d = agent.post(beat, {"gpus": [{"index": 0, "utilization": 40, "memory_used_mib": 1024}],
                             "events": [], "replicas": []})
    check(s == 200, "a good heartbeat is taken", s, d)
    before = node(p)

    bad = [
        ({"gpus": [{"index": 0}, {"index": 1}, {"index": 2},
                   {"index": 3, "utilization": -5}]}, "gpus[3].utilization"),
        ({"gpus": [{"index": 0, "utilization": 1e308}]}, "gpus[0].utilization"),
        ({"gpus": [{"index": 0, "memory_used_mib": -512}]}, "gpus[0].memory_used_mib"),
        ({"gpus": [{"index": 0, "memory_used_mib": 1e308}]}, "gpus[0].memory_used_mib"),
        ({"gpus": [{"index": 1, "memory_used_mib": 90000}]}, "gpus[0].memory_used_mib"),
        ({"gpus": [{"index": 0, "temperature_c": 900}]}, "gpus[0].temperature_c"),
        ({"events": [{"gpu": 0, "xid": 0}]}, "events[0].xid"),
        ({"events": [{"gpu": 0, "xid": -7}]}, "events[0].xid"),
        ({"gpus": [{"index": 7, "utilization": 10}]}, "gpus[0].index"),
        ({"events": [{"gpu": 79, "xid": 79}]}, "events[0].gpu"),
        # A bad value late in the document: what came before it is not applied either.
        ({"gpus": [{"index": 0, "utilization": 99}],
          "events": [{"gpu": 1, "xid": 79}, {"gpu": 0, "xid": -7}]}, "events[1].xid"),
    ]
    for doc, field in bad:
        s, d = agent.post(beat, doc)
        msg = d.get("error", {}).get("message", "") if isinstance(d, dict) else ""
        check(s == 400 and msg.startswith(field + ":"), "refused naming %s" % field, s, d)
    after = node(p)
    check(after == before, "nothing of a refused heartbeat is stored or applied", before, after)

    # ---- the HTTP edge ----
    q = "&".join("p%d=1" % i for i in range(2000))
    out, closed = raw(p.port, b"GET /v1/whoami?" + q.encode() + b" HTTP/1.1\r\nHost: x\r\n\r\n")
    check(out.startswith(b"HTTP/1.1 414") and b"GP_ETOOBIG" in out, "2,000 parameters: 414",
          out[:300])
    out, closed = raw(p.port, b"POST /v1/jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " +
                      p.admin_token.encode() + b"\r\nTransfer-Encoding: chunked\r\n\r\n"
                      b"FFFFFFFFFFFFFFFF\r\n" + b"x" * (1024 * 1024 + 1))
    check(out.startswith(b"HTTP/1.1 413") and closed, "chunk of 2^64-1 bytes: 413, closed",
          out[:300])
    # The same chunk that then stalls: refused as it starts, not held until the timeout (30 s;
    # raw() gives up after 15 s, so a held connection fails here).
    out, closed = raw(p.port, b"POST /v1/jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " +
                      p.admin_token.encode() + b"\r\nTransfer-Encoding: chunked\r\n\r\n"
                      b"FFFFFFFFFFFFFFFF\r\n" + b"x" * 10)
    check(out.startswith(b"HTTP/1.1 413") and closed, "a stalled chunk of 2^64-1 bytes: 413, closed",
          out[:300])
    out, closed = raw(p.port, HELLO)
    check(out == b"" and closed, "a TLS hello on the plain port is closed at once", out[:100])
    out, closed = raw(p.port, b"\x00\xff\xfe\x01garbage\r\n\r\n")
    check(out == b"" and closed, "binary garbage is closed at once", out[:100])

    conn = http.client.HTTPConnection("127.0.0.1", p.port, timeout=15)
    for i in range(3):
        conn.request("GET", "/v1/whoami?x=%d" % i,
                     headers={"Authorization": "Bearer " + p.admin_token})
        r = conn.getresponse()
        body = r.read()
        check(r.status == 200, "keep-alive request %d" % i, r.status, body.decode())
    conn.close()
    s, d = agent.post(beat, {"gpus": [{"index": 0, "utilization": 60}]})
    check(s == 200, "a good heartbeat after all that", s, d)
print("ok")
