#!/usr/bin/env python3
"""Write an OTLP v1development ExportProfilesServiceRequest (protobuf) whose bytes do not
bound what it expands to:
  gen_otlp_expand.py OUT DEPTH SAMPLES [SHARED]
One profile; the dictionary holds one stack of DEPTH locations; SAMPLES samples each name
that stack with an attribute of its own, so that each is a stack of its own in SPAA, with
all DEPTH frames: about DEPTH * SAMPLES frame references from about 20 * (DEPTH + SAMPLES)
bytes. With SHARED, each sample also names SHARED attributes common to all (two bytes each
on the wire, a key and value in every stack's context). Field numbers:
shared/specs/otlp-and-pprof-wire.md."""
import struct
import sys

from gen_pprof import varint  # the same base-128 varint (beside this file)


def tag(field, wire):
    return varint(field << 3 | wire)


def msg(field, body):
    return tag(field, 2) + varint(len(body)) + body


def num(field, v):
    return tag(field, 0) + varint(v)


def packed(field, values):
    return msg(field, b"".join(varint(v) for v in values))


def main():
    out, depth, samples = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    shared = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    d = bytearray(msg(1, b""))                         # mapping_table[0]
    d += msg(2, b"")                                   # location_table[0]
    for i in range(1, depth + 1):                      # location i: one line of function i
        d += msg(2, msg(3, num(1, i)))
    d += msg(3, b"")                                   # function_table[0]
    for i in range(1, depth + 1):                      # function i, named string 2
        d += msg(3, num(1, 2))
    d += msg(4, b"")                                   # link_table[0]
    keys = [b"key%d" % k for k in range(shared)]
    for s in [b"", b"worker.id", b"frame", b"samples", b"count"] + keys:
        d += msg(5, s)                                 # string_table
    d += msg(6, b"")                                   # attribute_table[0]
    for j in range(1, samples + 1):                    # worker.id = j
        d += msg(6, num(1, 1) + msg(2, num(3, j)))
    for k in range(shared):                            # key<k> = k
        d += msg(6, num(1, 5 + k) + msg(2, num(3, k)))
    common = b"".join(varint(samples + 1 + k) for k in range(shared))
    d += msg(7, b"") + msg(7, packed(1, range(1, depth + 1)))  # stack_table: [0], the deep one
    prof = bytearray(msg(1, num(1, 3) + num(2, 4)))    # sample_type samples/count
    for j in range(1, samples + 1):                    # stack 1, attributes j (+ common), 1
        attrs = varint(j) + common
        prof += msg(2, num(1, 1) + msg(2, attrs) + packed(4, [1]))
    prof += tag(3, 1) + struct.pack("<Q", 1767225600000000000) + num(4, 10**9)
    req = msg(1, msg(2, msg(2, bytes(prof)))) + msg(2, bytes(d))
    with open(out, "wb") as f:
        f.write(req)


if __name__ == "__main__":
    main()
