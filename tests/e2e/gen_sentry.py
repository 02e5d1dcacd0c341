#!/usr/bin/env python3
"""Write a synthetic Sentry envelope holding one large profile to OUT:
  gen_sentry.py OUT v2|v1 SAMPLES STACKS FRAMES [SEED]
v2: a profile_chunk item (continuous profiling, Sample Format V2) as sentry-python sends it:
    4 threads, SAMPLES samples spread over 60 s, float timestamps.
v1: a transaction item and a profile item (Sample Format V1), SAMPLES samples over 29 s.
STACKS distinct stacks 5 to 30 frames deep over FRAMES frames (function, module, filename,
abs_path, lineno, in_app), each stack used by some sample. Deterministic (seed 7 unless
given). Prints the number of samples and the number of stacks the samples use."""
import json
import random
import sys


def main():
    out, version = sys.argv[1], sys.argv[2]
    n_samples, n_stacks, n_frames = (int(a) for a in sys.argv[3:6])
    rnd = random.Random(int(sys.argv[6]) if len(sys.argv) > 6 else 7)
    frames = [{"function": "handler_%d" % i, "module": "app.mod%d" % (i % 60),
               "filename": "app/mod%d.py" % (i % 60),
               "abs_path": "/srv/app/app/mod%d.py" % (i % 60), "lineno": 1 + i % 900,
               "in_app": i % 5 != 0} for i in range(n_frames)]
    stacks = [[rnd.randrange(n_frames) for _ in range(rnd.randint(5, 30))]
              for _ in range(n_stacks)]
    # every stack first, then random ones: the samples use them all
    order = list(range(n_stacks)) + [rnd.randrange(n_stacks)
                                     for _ in range(max(0, n_samples - n_stacks))]
    threads = ["1397%011d" % (rnd.randrange(10 ** 11)) for _ in range(4)]
    t0 = 1710805688.0
    if version == "v2":
        step = 60.0 / n_samples
        samples = [{"stack_id": order[i], "thread_id": threads[i % 4],
                    "timestamp": round(t0 + i * step, 6)} for i in range(n_samples)]
        item = {"version": "2", "chunk_id": "%032x" % rnd.getrandbits(128),
                "profiler_id": "%032x" % rnd.getrandbits(128), "platform": "python",
                "release": "shop@1.4.2", "environment": "production",
                "client_sdk": {"name": "sentry.python", "version": "2.19.0"},
                "profile": {"samples": samples, "stacks": stacks, "frames": frames,
                            "thread_metadata": {t: {"name": "Thread-%d" % k}
                                                for k, t in enumerate(threads)}}}
        items = [({"type": "profile_chunk", "platform": "python"}, item)]
    else:
        step = 29000000000 // n_samples
        tid = [str(int(t)) for t in threads]
        samples = [{"stack_id": order[i], "thread_id": tid[i % 4],
                    "elapsed_since_start_ns": str(i * step)} for i in range(n_samples)]
        event_id = "%032x" % rnd.getrandbits(128)
        trace_id = "%032x" % rnd.getrandbits(128)
        txn_id = "%032x" % rnd.getrandbits(128)
        item = {"event_id": event_id, "version": "1", "platform": "python",
                "timestamp": "2024-03-19T00:28:08.000000Z", "release": "shop@1.4.2",
                "environment": "production",
                "device": {"architecture": "x86_64"},
                "os": {"name": "Linux", "version": "6.1.0"},
                "runtime": {"name": "CPython", "version": "3.11.7"},
                "transaction": {"id": txn_id, "name": "GET /checkout", "trace_id": trace_id,
                                "active_thread_id": tid[0], "relative_start_ns": "0",
                                "relative_end_ns": str(29500000000)},
                "profile": {"samples": samples, "stacks": stacks, "frames": frames,
                            "thread_metadata": {t: {"name": "Thread-%d" % k}
                                                for k, t in enumerate(tid)}}}
        txn = {"type": "transaction", "event_id": txn_id, "transaction": "GET /checkout",
               "release": "shop@1.4.2", "environment": "production",
               "contexts": {"trace": {"trace_id": trace_id, "op": "http.server",
                                      "status": "ok"}}}
        items = [({"type": "transaction"}, txn), ({"type": "profile"}, item)]
    with open(out, "wb") as f:
        f.write(json.dumps({"sdk": {"name": "sentry.python", "version": "2.19.0"}}).encode())
        f.write(b"\n")
        for head, body in items:
            payload = json.dumps(body, separators=(",", ":")).encode()
            head = dict(head, length=len(payload))
            f.write(json.dumps(head).encode() + b"\n" + payload + b"\n")
    print(n_samples, n_stacks)


main()
