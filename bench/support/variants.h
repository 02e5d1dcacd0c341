/* What the storage benchmarks share: variants of a pprof profile (a share of its samples,
 * values jittered, re-encoded and gzipped, seeded so that every machine makes the same ones)
 * and the server's pprof path into a store (the registry's converter, then
 * spaa_store_put_many with the metadata the server gives). */
#ifndef SPAA_BENCH_VARIANTS_H
#define SPAA_BENCH_VARIANTS_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/buf.h"
#include "codecs/registry.h"
#include "pprof/pprof.h"
#include "pprof/pprof_int.h"
#include "storage/storage.h"

#define BENCH_KEEP_PERCENT 80    /* share of a source's samples each variant keeps */
#define BENCH_JITTER_PERMILLE 40 /* each value moves by up to +-4% */
#define BENCH_MAX_ENTRIES 16     /* profiles one converted upload may hold */

/* The durability the benchmarks open their stores with: SPAA_BENCH_DURABILITY=normal for
 * synchronous=NORMAL, anything else (or unset) full, the server's default. */
enum spaa_durability bench_durability(void);

/* Monotonic seconds. */
double bench_now(void);
/* splitmix64: a fixed seed gives the same sequence on every machine. */
uint64_t bench_rnd(uint64_t *state);

/* A decoded pprof from which variants are made: its samples and their values are kept aside
 * so that each variant starts from the original. */
struct bench_src {
  Perftools__Profiles__Profile *msg;      /* the whole message, samples unpacked too */
  Perftools__Profiles__Sample **all;      /* the message's own sample array */
  Perftools__Profiles__Sample **kept;     /* n_all slots: a variant's samples */
  size_t n_all;                           /* samples of the original */
  int64_t *vals;                          /* every sample's values, in sample order */
  int64_t time0;                          /* the original's time_nanos */
};

/* Decode buf (gzip or not) through the pprof codec; 0 or -1 with a line on stderr. */
int bench_src_open(struct bench_src *s, const uint8_t *buf, size_t len);
void bench_src_close(struct bench_src *s);
/* Variant number `seq` (seeded by `seed`): BENCH_KEEP_PERCENT of the samples, each value
 * jittered, time_nanos moved on by 10 s per variant; re-encoded and gzipped into gz (emptied
 * first). 0 or -1. */
int bench_src_variant(struct bench_src *s, uint64_t seed, unsigned seq, struct spaa_buf *gz);

/* What one series of uploads goes through: the converter and the store, and what the
 * collector dialect (POST /v1/pprof?service=...&label=...) adds to each upload. */
struct bench_ingest {
  struct spaa_store *store; /* open store (borrowed) */
  spaa_convert_fn conv;     /* spaa_converter("pprof") */
  const char *service;      /* the request's service name */
  json_t *labels;           /* the request's labels (owned) */
  int originals;            /* 1: each profile's original reaches the store, as in the server */
  uint64_t ids;             /* state of the id generator */
  int64_t received_ns;      /* the next upload's arrival time */
  double secs;              /* time spent converting and storing (committed) */
};

/* Convert and store one upload, committed; g->secs grows by the time it took and
 * g->received_ns moves on by 10 s. 0, or -1 with a line on stderr. */
int bench_ingest_one(struct bench_ingest *g, const uint8_t *buf, size_t len);

#endif
