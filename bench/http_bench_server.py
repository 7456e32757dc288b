#!/usr/bin/env python3
"""A small, fast HTTP/1.1 server for the services benchmark (bench/services.py), run as a
notebook's or service's replica: keep-alive, one short answer to every GET, and at /metrics (in
Prometheus text) the requests it answered per second over the last whole second,
`bench_requests_per_second`, and the requests in progress, `bench_inflight`.

Usage: http_bench_server.py PORT   (listens on 127.0.0.1:PORT, in the replica's namespace)
"""
import asyncio
import sys
import time

BODY = b"ok\n"
count = {"second": 0, "n": 0, "last": 0, "inflight": 0}


def tick():
    now = int(time.monotonic())
    if now != count["second"]:
        count["last"] = count["n"] if now == count["second"] + 1 else 0
        count["second"], count["n"] = now, 0


async def serve(reader, writer):
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            line, _, rest = head.partition(b"\r\n")
            parts = line.split()
            path = parts[1] if len(parts) > 1 else b"/"
            headers = rest.lower()
            n = 0
            for h in headers.split(b"\r\n"):
                if h.startswith(b"content-length:"):
                    n = int(h.split(b":", 1)[1])
            if n:
                await reader.readexactly(n)
            close = b"connection: close" in headers or (len(parts) > 2 and parts[2] == b"HTTP/1.0"
                                                        and b"keep-alive" not in headers)
            tick()
            if path.startswith(b"/metrics"):
                body = ("# TYPE bench_requests_per_second gauge\nbench_requests_per_second %d\n"
                        "# TYPE bench_inflight gauge\nbench_inflight %d\n"
                        % (count["last"], count["inflight"])).encode()
                ctype = b"text/plain; version=0.0.4"
            else:
                count["n"] += 1
                body, ctype = BODY, b"text/plain"
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: " + ctype + b"\r\nContent-Length: " +
                         str(len(body)).encode() + (b"\r\nConnection: close" if close else b"") +
                         b"\r\n\r\n" + body)
            await writer.drain()
            if close:
                break
    except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
        pass
    finally:
        writer.close()


async def main(port):
    server = await asyncio.start_server(serve, "127.0.0.1", port, backlog=1024)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1])))
