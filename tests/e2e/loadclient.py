#!/usr/bin/env python3
"""A small HTTP/1.1 load client for the serving-core tests (asyncio, raw sockets, 127.0.0.1).

  loadclient.py idle PORT N SECONDS
      open N connections that send nothing, hold them SECONDS; print how many were still
      open at the end ({"opened":..,"open_at_end":..})
  loadclient.py slowloris PORT N SECONDS
      N connections each sending one byte of a request head per second for up to SECONDS;
      print how many the server closed and how long the slowest took to be closed
  loadclient.py slowbody PORT SECONDS
      one upload declaring 1 MB that sends 10 bytes a second for up to SECONDS; print
      whether the server closed it ("closed") and after how long
  loadclient.py post PORT CLIENTS SECONDS PATH BODY_FILE [HEADER ...]
      CLIENTS keep-alive clients posting BODY_FILE to PATH for SECONDS; print the count of
      each status, answers 503/429 without Retry-After, connections closed without an
      answer, and latency percentiles (ms)
Output: one JSON object on stdout.
"""
import asyncio
import json
import sys
import time


async def read_answer(reader):
    """Read one answer: (status, headers dict lower-case). Raises on EOF before the end."""
    line = await reader.readline()
    if not line:
        raise ConnectionError("closed without an answer")
    parts = line.decode("latin-1").split(" ", 2)
    status = int(parts[1])
    headers = {}
    while True:
        h = await reader.readline()
        if not h:
            raise ConnectionError("closed inside the answer's head")
        if h in (b"\r\n", b"\n"):
            break
        k, _, v = h.decode("latin-1").partition(":")
        headers[k.strip().lower()] = v.strip()
    n = int(headers.get("content-length", "0"))
    if n:
        await reader.readexactly(n)
    return status, headers


async def idle(port, n, seconds):
    conns = []
    for _ in range(n):
        try:
            conns.append(await asyncio.open_connection("127.0.0.1", port))
        except OSError:
            pass
    await asyncio.sleep(seconds)
    still = 0
    for r, w in conns:
        try:
            data = await asyncio.wait_for(r.read(1), 0.001)
            still += 0 if data == b"" else 1
        except asyncio.TimeoutError:
            still += 1
        except OSError:
            pass
        w.close()
    return {"opened": len(conns), "open_at_end": still}


async def slow_one(port, seconds, t0, out):
    head = b"POST /ingest?name=slow HTTP/1.1\r\nHost: x\r\nX-Pad: " + b"a" * 4096
    try:
        r, w = await asyncio.open_connection("127.0.0.1", port)
    except OSError:
        out["connect_errors"] += 1
        return
    for i in range(len(head)):
        try:
            w.write(head[i:i + 1])
            await w.drain()
            data = await asyncio.wait_for(r.read(1), 1.0)
            if data == b"":
                out["closed"] += 1
                out["slowest_close_s"] = max(out["slowest_close_s"], time.monotonic() - t0)
                break
            out["answered"] += 1
            break
        except asyncio.TimeoutError:
            pass
        except OSError:
            out["closed"] += 1
            out["slowest_close_s"] = max(out["slowest_close_s"], time.monotonic() - t0)
            break
        if time.monotonic() - t0 > seconds:
            out["still_open"] += 1
            break
    w.close()


async def slowloris(port, n, seconds):
    out = {"closed": 0, "answered": 0, "still_open": 0, "connect_errors": 0,
           "slowest_close_s": 0.0}
    t0 = time.monotonic()
    await asyncio.gather(*(slow_one(port, seconds, t0, out) for _ in range(n)))
    out["slowest_close_s"] = round(out["slowest_close_s"], 1)
    return out


async def slowbody(port, seconds):
    r, w = await asyncio.open_connection("127.0.0.1", port)
    w.write(b"POST /api/v1/spaa HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n")
    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds:
        try:
            w.write(b"0123456789")
            await w.drain()
            data = await asyncio.wait_for(r.read(1), 1.0)
            if data == b"":
                return {"closed": 1, "after_s": round(time.monotonic() - t0, 1)}
        except asyncio.TimeoutError:
            pass
        except OSError:
            return {"closed": 1, "after_s": round(time.monotonic() - t0, 1)}
    w.close()
    return {"closed": 0, "after_s": round(time.monotonic() - t0, 1)}


async def post_client(port, deadline, req, out, lat):
    r = w = None
    while time.monotonic() < deadline:
        if w is None:
            try:
                r, w = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                out["connect_errors"] += 1
                await asyncio.sleep(0.05)
                continue
        t = time.monotonic()
        try:
            w.write(req)
            await w.drain()
            status, headers = await read_answer(r)
        except (OSError, ConnectionError, asyncio.IncompleteReadError, ValueError):
            out["unanswered"] += 1
            w.close()
            r = w = None
            continue
        lat.append(time.monotonic() - t)
        out["status"][str(status)] = out["status"].get(str(status), 0) + 1
        if status in (429, 503):
            if "retry-after" not in headers:
                out["no_retry_after"] += 1
            await asyncio.sleep(min(float(headers.get("retry-after", "1")), 1.0) * 0.2)
        if headers.get("connection", "").lower() == "close":
            w.close()
            r = w = None
    if w is not None:
        w.close()


async def post(port, clients, seconds, path, body_file, headers):
    body = open(body_file, "rb").read()
    head = "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: %d\r\n" % (path, len(body))
    for h in headers:
        head += h + "\r\n"
    req = head.encode() + b"\r\n" + body
    out = {"status": {}, "unanswered": 0, "no_retry_after": 0, "connect_errors": 0}
    lat = []
    deadline = time.monotonic() + seconds
    t0 = time.monotonic()
    await asyncio.gather(*(post_client(port, deadline, req, out, lat) for _ in range(clients)))
    el = time.monotonic() - t0
    lat.sort()
    n = len(lat)
    out["requests"] = n
    out["rps"] = round(n / el, 1) if el > 0 else 0
    out["p50_ms"] = round(lat[n // 2] * 1000, 1) if n else 0
    out["p99_ms"] = round(lat[min(n - 1, n * 99 // 100)] * 1000, 1) if n else 0
    return out


def main():
    a = sys.argv[1:]
    if not a:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    mode, port = a[0], int(a[1])
    if mode == "idle":
        res = asyncio.run(idle(port, int(a[2]), float(a[3])))
    elif mode == "slowloris":
        res = asyncio.run(slowloris(port, int(a[2]), float(a[3])))
    elif mode == "slowbody":
        res = asyncio.run(slowbody(port, float(a[2])))
    elif mode == "post":
        res = asyncio.run(post(port, int(a[2]), float(a[3]), a[4], a[5], a[6:]))
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    print(json.dumps(res, sort_keys=True, separators=(",", ":")))


if __name__ == "__main__":
    main()
