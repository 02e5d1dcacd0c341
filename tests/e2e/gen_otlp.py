#!/usr/bin/env python3
"""Write a synthetic OTLP ExportProfilesServiceRequest (v1development protobuf, uncompressed)
of about SIZE_MIB MiB to OUT, carrying what gen_pprof.py writes as a pprof: one CPU profile
translated the way the Collector's pprof translator does it (one OTLP Profile per sample
type, sharing one dictionary):
  gen_otlp.py OUT SIZE_MIB
Deterministic (fixed seed): 4,000 functions and locations, 60,000 distinct stacks 8 to 24
frames deep; samples (a stack, one value) are added to both profiles until the size is
reached. Prints the two profiles' totals: "COUNT_TOTAL CPU_TOTAL"."""
import random
import struct
import sys

from gen_pprof import field_int, field_len, string_table, varint


def packed(num, values):
    return field_len(num, b"".join(varint(v) for v in values))


def main():
    out_path, size_mib = sys.argv[1], float(sys.argv[2])
    target = int(size_mib * 1024 * 1024)
    rnd = random.Random(15)
    n_fn = 4000
    strings = string_table(n_fn)
    # the dictionary: every table's element 0 is the zero value
    d = bytearray()
    d += field_len(1, b"")
    d += field_len(1, field_int(1, 0x400000) + field_int(2, 0x900000) + field_int(4, 5))
    d += field_len(2, b"")
    d += field_len(3, b"")
    for i in range(n_fn):
        d += field_len(3, field_int(1, 6 + 2 * i) + field_int(2, 6 + 2 * i) +
                       field_int(3, 7 + 2 * i))
        line = field_int(1, i + 1) + field_int(2, 10 + i % 300)
        d += field_len(2, field_int(1, 1) + field_int(2, 0x400000 + 16 * i) + field_len(3, line))
    d += field_len(4, b"")
    for s in strings:
        d += field_len(5, s.encode())
    d += field_len(6, b"")
    d += field_len(7, b"")
    for _ in range(60000):
        depth = rnd.randint(8, 24)
        d += field_len(7, packed(1, [rnd.randint(1, n_fn) for _ in range(depth)]))
    # two profiles (samples/count, cpu/nanoseconds) with the same stacks sample by sample
    counts, cpu = bytearray(), bytearray()
    total_counts = total_cpu = 0
    size = len(d) + 256
    while size < target:
        st = 1 + rnd.randrange(60000)
        n, t = rnd.randint(1, 5), rnd.randint(1, 50) * 10000000
        total_counts += n
        total_cpu += t
        a = field_len(2, field_int(1, st) + packed(4, [n]))
        b = field_len(2, field_int(1, st) + packed(4, [t]))
        counts += a
        cpu += b
        size += len(a) + len(b)
    t0 = struct.pack("<Q", 1700000000000000000)

    def profile(typ, unit, samples):
        return field_len(2, field_len(1, field_int(1, typ) + field_int(2, unit)) + samples + varint(3 << 3 | 1) + t0 +
                         field_int(4, 10000000000) +
                         field_len(5, field_int(1, 3) + field_int(2, 4)) +
                         field_int(6, 10000000))
    scope = field_len(2, profile(1, 2, bytes(counts)) + profile(3, 4, bytes(cpu)))
    svc = field_len(1, field_len(1, b"service.name") + field_len(2, field_len(1, b"big")))
    rp = field_len(1, field_len(1, svc) + scope)
    with open(out_path, "wb") as f:
        f.write(rp)
        f.write(field_len(2, bytes(d)))
    print(total_counts, total_cpu)


if __name__ == "__main__":
    main()
