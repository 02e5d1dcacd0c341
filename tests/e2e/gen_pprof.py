#!/usr/bin/env python3
"""Write a synthetic CPU pprof (protobuf, uncompressed) of about SIZE_MIB MiB to OUT:
  gen_pprof.py OUT SIZE_MIB [SEED]
Deterministic (seed 15 unless given; another seed, other stacks): 4,000 functions and locations, 60,000 distinct stacks 8 to 24
frames deep, samples of 2 values (samples, cpu nanoseconds) until the size is reached."""
import random
import sys


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


def field_len(num, payload):
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def field_int(num, v):
    return varint(num << 3) + varint(v)


def string_table(n_fn):
    """The profile's strings: 6 fixed ones, then each function's name and file."""
    strings = ["", "samples", "count", "cpu", "nanoseconds", "/app/bin"]
    for i in range(n_fn):
        strings.append("pkg%d.(*Type%d).method%d" % (i % 97, i % 13, i))
        strings.append("/src/pkg%d/file%d.go" % (i % 97, i % 400))
    return strings


def main():
    out_path, size_mib = sys.argv[1], float(sys.argv[2])
    target = int(size_mib * 1024 * 1024)
    rnd = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 15)
    n_fn = 4000
    strings = string_table(n_fn)
    parts = [field_len(1, field_int(1, 1) + field_int(2, 2)),
             field_len(1, field_int(1, 3) + field_int(2, 4))]
    head = bytearray()
    head += field_len(3, field_int(1, 1) + field_int(2, 0x400000) + field_int(3, 0x900000) +
                      field_int(5, 5) + field_int(7, 1))
    for i in range(n_fn):
        line = field_int(1, i + 1) + field_int(2, 10 + i % 300)
        head += field_len(4, field_int(1, i + 1) + field_int(2, 1) +
                          field_int(3, 0x400000 + 16 * i) + field_len(4, line))
        head += field_len(5, field_int(1, i + 1) + field_int(2, 6 + 2 * i) +
                          field_int(3, 6 + 2 * i) + field_int(4, 7 + 2 * i))
    for s in strings:
        head += field_len(6, s.encode())
    head += field_int(9, 1700000000000000000) + field_int(10, 10000000000)
    head += field_len(11, field_int(1, 3) + field_int(2, 4)) + field_int(12, 10000000)
    stacks = []
    for _ in range(60000):
        depth = rnd.randint(8, 24)
        locs = b"".join(varint(rnd.randint(1, n_fn)) for _ in range(depth))
        stacks.append(field_len(1, locs))
    size = sum(len(p) for p in parts) + len(head)
    samples = []
    while size < target:
        vals = field_len(2, varint(rnd.randint(1, 5)) + varint(rnd.randint(1, 50) * 10000000))
        smp = field_len(2, stacks[rnd.randrange(len(stacks))] + vals)
        samples.append(smp)
        size += len(smp)
    with open(out_path, "wb") as f:
        f.write(b"".join(parts))
        f.write(b"".join(samples))
        f.write(bytes(head))


if __name__ == "__main__":
    main()
