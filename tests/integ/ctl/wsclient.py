"""Raw HTTP and WebSocket for the proxy's tests: a request without redirects, and WebSocket
frames written and read by hand (a client's frames masked, as RFC 6455 wants)."""
import http.client
import os
import struct


def raw(port, method, target, headers=None, body=None):
    """One request to 127.0.0.1:port without redirects: (status, headers as a list, body text)."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    c.request(method, target, body=body, headers=headers or {})
    r = c.getresponse()
    out = (r.status, r.getheaders(), r.read().decode(errors="replace"))
    c.close()
    return out


def ws_frame(text):
    """A client's text frame (masked) carrying text."""
    data = text.encode()
    mask = os.urandom(4)
    head = bytes([0x81])
    if len(data) < 126:
        head += bytes([0x80 | len(data)])
    elif len(data) < 65536:
        head += bytes([0x80 | 126]) + struct.pack(">H", len(data))
    else:
        head += bytes([0x80 | 127]) + struct.pack(">Q", len(data))
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data))


def recv_exact(sock, n):
    """n bytes from sock; AssertionError when the stream ends first."""
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise AssertionError("the WebSocket ended early")
        data += chunk
    return data


def ws_recv(sock):
    """The next frame from a server (unmasked): (opcode, payload bytes)."""
    head = recv_exact(sock, 2)
    n = head[1] & 0x7F
    if n == 126:
        n = struct.unpack(">H", recv_exact(sock, 2))[0]
    elif n == 127:
        n = struct.unpack(">Q", recv_exact(sock, 8))[0]
    return head[0] & 0x0F, recv_exact(sock, n)
