#!/usr/bin/python3
"""Build a push.v1 PushRequest (codecs/pprof/pprof_push.proto) for the tests, encoded by hand
from the published field numbers, as protobuf or as its JSON form.

  push_request.py proto|json OUT SERIES...
  SERIES = LABELS@SAMPLE[,SAMPLE...]   LABELS = k=v;k=v   SAMPLE = FILE[:ID]
Each raw profile is sent gzip-compressed, as Pyroscope's clients send it (a file that is
gzip already is sent as it is). Labels are sent in the order given.
"""
import base64
import gzip
import json
import sys


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(num, payload):
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def raw_profile(path):
    data = open(path, "rb").read()
    return data if data[:2] == b"\x1f\x8b" else gzip.compress(data, mtime=0)


def parse(spec):
    labels, samples = spec.split("@", 1)
    pairs = [tuple(kv.split("=", 1)) for kv in labels.split(";") if kv]
    out = []
    for s in samples.split(","):
        path, _, sid = s.partition(":")
        out.append((raw_profile(path), sid))
    return pairs, out


def main():
    kind, dest, specs = sys.argv[1], sys.argv[2], [parse(s) for s in sys.argv[3:]]
    if kind == "proto":
        body = b""
        for pairs, samples in specs:
            series = b"".join(field(1, field(1, k.encode()) + field(2, v.encode()))
                              for k, v in pairs)
            for raw, sid in samples:
                series += field(2, field(1, raw) + (field(2, sid.encode()) if sid else b""))
            body += field(1, series)
    else:
        doc = {"series": [{"labels": [{"name": k, "value": v} for k, v in pairs],
                           "samples": [dict({"rawProfile": base64.b64encode(raw).decode()},
                                            **({"ID": sid} if sid else {}))
                                       for raw, sid in samples]}
                          for pairs, samples in specs]}
        body = json.dumps(doc).encode()
    open(dest, "wb").write(body)


if __name__ == "__main__":
    main()
