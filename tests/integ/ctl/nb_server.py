"""A small notebook stand-in for ctl_proxy.py, run as the job's command: an HTTP server on
127.0.0.1:$GPUPOOL_PORT (its own network namespace) that answers what it got, and a minimal
WebSocket echo. Standard library only.

  GET  /...?...        200 JSON {method, target, headers, base_url, port}, with two cookies:
                       one for Path=/ (the proxy scopes it to the job's prefix) and one for the
                       job's base URL
  POST /...            200 JSON {method, target, body}
  GET  .../chunked     the same JSON in the chunked coding
  GET  .../stream?f=F  chunked: "first;" at once, "last" once the file F exists
  GET  .../ws          (Upgrade: websocket) 101, then every text or binary frame echoed back
  PUT  /...            200 JSON {len, sha256} of the body (a large upload arrives whole)
  POST .../write       the body into $GPUPOOL_DATA_DIR/home/note.txt (a volume)
  GET  .../read        200 with what note.txt holds
  GET  .../early        a 103 Early Hints and the 200 after it, in one write
  GET  .../big          300,000 bytes (a head and body that fill the proxy's first read)
  GET  .../keepalive   200 JSON {conns, pid}: the client connections this server has accepted
                       so far, its process; the connection kept open (Content-Length, or the
                       chunked coding with ?chunked)
  GET  .../exit        answers, then the process exits with status 3
  GET  .../connect?to=HOST:PORT   200 JSON {"connect": "ok" or the error}: what the job reaches
"""
import base64
import hashlib
import json
import os
import socket
import socketserver
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler

BASE = os.environ.get("GPUPOOL_BASE_URL", "")
PORT = int(os.environ.get("GPUPOOL_PORT", "0"))
WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
CONNS = [0]
CONNS_LOCK = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self):
        super().setup()
        with CONNS_LOCK:
            CONNS[0] += 1

    def keepalive(self):
        with CONNS_LOCK:
            body = json.dumps({"conns": CONNS[0], "pid": os.getpid()}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        if "chunked" in self.path:
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self.wfile.write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body))
        else:
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    def log_message(self, fmt, *args):
        sys.stderr.write("nb: " + (fmt % args) + "\n")

    def doc(self, extra=None):
        d = {"method": self.command, "target": self.path,
             "headers": [[k, v] for k, v in self.headers.items()],
             "base_url": BASE, "port": PORT}
        d.update(extra or {})
        return json.dumps(d).encode()

    def send_doc(self, body, chunked=False):
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Set-Cookie", "planted=1; Path=/")
        self.send_header("Set-Cookie", "mine=2; Path=%s; HttpOnly" % BASE)
        self.send_header("Connection", "close")
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            half = len(body) // 2
            for part in (body[:half], body[half:]):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
            self.wfile.write(b"0\r\n\r\n")
        else:
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        self.close_connection = True

    def do_GET(self):
        if self.headers.get("Upgrade", "").lower() == "websocket":
            return self.websocket()
        path = self.path.split("?")[0]
        if path.endswith("/stream"):
            return self.stream()
        if path.endswith("/early"):
            self.wfile.write(b"HTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\n"
                             b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                             b"Content-Length: 5\r\nConnection: close\r\n\r\nafter")
            self.close_connection = True
            return
        if path.endswith("/big"):
            body = bytes(i % 251 for i in range(300000))
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(body)
            self.close_connection = True
            return
        if path.endswith("/keepalive"):
            return self.keepalive()
        if path.endswith("/exit"):
            self.send_doc(self.doc())
            self.wfile.flush()
            os._exit(3)
        if path.endswith("/connect"):
            host, port = self.path.split("to=", 1)[1].rsplit(":", 1)
            try:
                socket.create_connection((host, int(port)), timeout=3).close()
                result = "ok"
            except OSError as e:
                result = "error: %s" % e
            return self.send_doc(self.doc({"connect": result}))
        if path.endswith("/read"):
            with open(self.note()) as f:
                return self.send_doc(self.doc({"note": f.read()}))
        self.send_doc(self.doc(), chunked=path.endswith("/chunked"))

    def note(self):
        return os.path.join(os.environ.get("GPUPOOL_DATA_DIR", "/nonexistent"), "home",
                            "note.txt")

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n).decode()
        if self.path.endswith("/write"):
            with open(self.note(), "w") as f:
                f.write(body)
        self.send_doc(self.doc({"body": body}))

    def do_PUT(self):
        left = int(self.headers.get("Content-Length", "0"))
        h, n = hashlib.sha256(), 0
        while left > 0:
            piece = self.rfile.read(min(left, 1 << 16))
            if not piece:
                break
            h.update(piece)
            n += len(piece)
            left -= len(piece)
        self.send_doc(json.dumps({"len": n, "sha256": h.hexdigest()}).encode())

    def stream(self):
        flag = self.path.split("f=", 1)[1]
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(b"6\r\nfirst;\r\n")
        self.wfile.flush()
        deadline = time.time() + 60
        while not os.path.exists(flag) and time.time() < deadline:
            time.sleep(0.05)
        self.wfile.write(b"4\r\nlast\r\n0\r\n\r\n")
        self.close_connection = True

    def websocket(self):
        key = self.headers["Sec-WebSocket-Key"]
        accept = base64.b64encode(hashlib.sha1((key + WS_GUID).encode()).digest()).decode()
        self.send_response(101)
        self.send_header("Upgrade", "websocket")
        self.send_header("Connection", "Upgrade")
        self.send_header("Sec-WebSocket-Accept", accept)
        self.end_headers()
        self.wfile.flush()
        while True:
            head = self.rfile.read(2)
            if len(head) < 2:
                break
            opcode, n = head[0] & 0x0F, head[1] & 0x7F
            if n == 126:
                n = struct.unpack(">H", self.rfile.read(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self.rfile.read(8))[0]
            mask = self.rfile.read(4) if head[1] & 0x80 else b"\0\0\0\0"
            data = bytes(b ^ mask[i % 4] for i, b in enumerate(self.rfile.read(n)))
            if opcode == 8:
                self.wfile.write(b"\x88\x00")
                break
            out = bytes([0x80 | opcode])
            out += bytes([len(data)]) if len(data) < 126 else b"\x7e" + struct.pack(">H", len(data))
            self.wfile.write(out + data)
            self.wfile.flush()
        self.close_connection = True


class Server(socketserver.ThreadingMixIn, socketserver.TCPServer):
    allow_reuse_address = True
    daemon_threads = True


if __name__ == "__main__":
    with Server(("127.0.0.1", PORT), Handler) as srv:
        srv.serve_forever()
