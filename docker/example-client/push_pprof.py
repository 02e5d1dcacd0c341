#!/usr/bin/env python3
"""Example client for spaa-relay: builds a small CPU profile in pprof's protobuf format
(by hand, standard library only), gzips it and pushes it the way Pyroscope SDKs do
(POST /ingest?name=APP.cpu{labels}&format=pprof), every INTERVAL seconds, or once.

  python3 push_pprof.py --url http://127.0.0.1:8080 [--token TOKEN] [--once]

Environment: SPAA_URL, SPAA_INGEST_TOKEN, SPAA_INTERVAL (seconds, default 15), SPAA_APP.
Prints the server's answer and the stored profile ids (X-Spaa-Profile-Ids) of each push.
"""
import argparse
import gzip
import os
import random
import sys
import time
import urllib.error
import urllib.parse
import urllib.request


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field_varint(num, value):
    return varint(num << 3) + varint(value)


def field_bytes(num, data):
    return varint(num << 3 | 2) + varint(len(data)) + data


def packed(num, values):
    return field_bytes(num, b"".join(varint(v) for v in values))


# a toy program: call paths (root first) and how often each is on the CPU
FUNCTIONS = ["main", "serve", "handle_request", "parse_json", "render", "compress", "gc"]
PATHS = [
    (["main", "serve", "handle_request", "parse_json"], 40),
    (["main", "serve", "handle_request", "render"], 25),
    (["main", "serve", "handle_request", "render", "compress"], 15),
    (["main", "gc"], 10),
]


def build_profile(rng, period_ns=10_000_000):
    strings = ["", "cpu", "nanoseconds", "samples", "count", "app.c"] + FUNCTIONS
    sidx = {s: i for i, s in enumerate(strings)}
    out = bytearray()
    out += field_bytes(1, field_varint(1, sidx["samples"]) + field_varint(2, sidx["count"]))
    out += field_bytes(1, field_varint(1, sidx["cpu"]) + field_varint(2, sidx["nanoseconds"]))
    fid = {name: i + 1 for i, name in enumerate(FUNCTIONS)}  # location id == function id
    for path, weight in PATHS:
        n = max(1, weight + rng.randint(-5, 5))
        leaf_first = [fid[f] for f in reversed(path)]
        out += field_bytes(2, packed(1, leaf_first) + packed(2, [n, n * period_ns]))
    for name, i in fid.items():
        line = field_varint(1, i) + field_varint(2, 10 * i)
        out += field_bytes(4, field_varint(1, i) + field_bytes(4, line))
    for name, i in fid.items():
        out += field_bytes(5, field_varint(1, i) + field_varint(2, sidx[name]) +
                           field_varint(4, sidx["app.c"]))
    for s in strings:
        out += field_bytes(6, s.encode())
    out += field_varint(9, time.time_ns() - 10_000_000_000)
    out += field_varint(10, 10_000_000_000)
    out += field_bytes(11, field_varint(1, sidx["cpu"]) + field_varint(2, sidx["nanoseconds"]))
    out += field_varint(12, period_ns)
    return gzip.compress(bytes(out))


def push(url, token, app, body):
    query = urllib.parse.urlencode({"name": app + ".cpu{env=demo,client=example}",
                                    "format": "pprof", "sampleRate": "100"})
    req = urllib.request.Request(url.rstrip("/") + "/ingest?" + query, data=body,
                                 method="POST",
                                 headers={"Content-Type": "application/octet-stream"})
    if token:
        req.add_header("Authorization", "Bearer " + token)
    with urllib.request.urlopen(req, timeout=10) as r:
        return r.status, r.headers.get("X-Spaa-Profile-Ids", ""), r.read().decode()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--url", default=os.environ.get("SPAA_URL", "http://127.0.0.1:8080"))
    ap.add_argument("--token", default=os.environ.get("SPAA_INGEST_TOKEN", ""))
    ap.add_argument("--app", default=os.environ.get("SPAA_APP", "example-client"))
    ap.add_argument("--interval", type=float,
                    default=float(os.environ.get("SPAA_INTERVAL", "15")))
    ap.add_argument("--once", action="store_true", help="push one profile and exit")
    ap.add_argument("--seed", type=int, default=None, help="fixed random seed")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    while True:
        try:
            status, ids, body = push(a.url, a.token, a.app, build_profile(rng))
            print(f"pushed: {status} ids={ids} {body}", flush=True)
        except urllib.error.HTTPError as e:
            print(f"push refused: {e.code} {e.read().decode()}", file=sys.stderr, flush=True)
            if a.once:
                return 1
        except OSError as e:
            print(f"push failed: {e}", file=sys.stderr, flush=True)
            if a.once:
                return 1
        if a.once:
            return 0
        time.sleep(a.interval)


if __name__ == "__main__":
    sys.exit(main())
