/* Variants of a pprof profile and the server's pprof path, for the storage benchmarks. */
#include "variants.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/compress.h"
#include "spaa/convert.h"

enum spaa_durability bench_durability(void)
{
  const char *d = getenv("SPAA_BENCH_DURABILITY");
  return d && strcmp(d, "normal") == 0 ? SPAA_DURABILITY_NORMAL : SPAA_DURABILITY_FULL;
}

double bench_now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* splitmix64: a fixed seed gives the same variants on every machine. */
uint64_t bench_rnd(uint64_t *state)
{
  uint64_t x = (*state += 0x9e3779b97f4a7c15ull);
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}



void bench_src_close(struct bench_src *s)
{
  if (s->msg && s->all) { /* give the message its samples back before it is freed */
    s->msg->sample = s->all;
    s->msg->n_sample = s->n_all;
  }
  if (s->msg)
    perftools__profiles__profile__free_unpacked(s->msg, NULL);
  free(s->kept);
  free(s->vals);
  memset(s, 0, sizeof(*s));
}

/* Decode buf (gzip or not) and check it through the pprof codec; then unpack it whole, samples
 * included, to make variants of. 0 or -1 with a line on stderr. */
int bench_src_open(struct bench_src *s, const uint8_t *buf, size_t len)
{
  struct spaa_err err = {0};
  struct spaa_pprof *d = NULL;
  struct spaa_buf raw;
  size_t i, j, n = 0;
  memset(s, 0, sizeof(*s));
  spaa_buf_init(&raw, 0);
  if (spaa_pprof_decode(buf, len, &d, &err)) {
    fprintf(stderr, "decode: %s\n", err.msg);
    return -1;
  }
  spaa_pprof_free(d);
  if (spaa_is_gzip(buf, len)) {
    if (spaa_decompress(SPAA_CODING_GZIP, buf, len, SPAA_PPROF_MAX_RAW, &raw, &err))
      return -1;
    buf = (const uint8_t *)raw.p, len = raw.len;
  }
  s->msg = perftools__profiles__profile__unpack(NULL, len, buf);
  spaa_buf_free(&raw);
  if (!s->msg)
    return -1;
  s->all = s->msg->sample;
  s->n_all = s->msg->n_sample;
  s->time0 = s->msg->time_nanos;
  for (i = 0; i < s->n_all; i++)
    n += s->all[i]->n_value;
  s->kept = malloc((s->n_all + 1) * sizeof(*s->kept));
  s->vals = malloc((n + 1) * sizeof(*s->vals));
  if (!s->kept || !s->vals) {
    bench_src_close(s);
    return -1;
  }
  for (i = 0, n = 0; i < s->n_all; i++)
    for (j = 0; j < s->all[i]->n_value; j++)
      s->vals[n++] = s->all[i]->value[j];
  return 0;
}

/* Variant number `seq` (seeded by `seed`): BENCH_KEEP_PERCENT of the samples, each value jittered,
 * time_nanos moved on by 10 s per variant; re-encoded by protobuf-c and gzipped (zlib's
 * default level) into gz (emptied first). 0 or -1. */
int bench_src_variant(struct bench_src *s, uint64_t seed, unsigned seq, struct spaa_buf *gz)
{
  Perftools__Profiles__Profile *m = s->msg;
  struct spaa_csink *cs = NULL;
  struct spaa_err err = {0};
  uint64_t r = seed;
  size_t i, j, k = 0, v = 0, plen;
  uint8_t *packed = NULL;
  int rc = -1;
  for (i = 0; i < s->n_all; i++) {
    Perftools__Profiles__Sample *sm = s->all[i];
    for (j = 0; j < sm->n_value; j++) {
      double f = 1.0 + ((double)(bench_rnd(&r) % (2 * BENCH_JITTER_PERMILLE + 1)) - BENCH_JITTER_PERMILLE) / 1000.0;
      sm->value[j] = (int64_t)llround((double)s->vals[v++] * f);
    }
    if (bench_rnd(&r) % 100 < BENCH_KEEP_PERCENT)
      s->kept[k++] = sm;
  }
  m->sample = s->kept;
  m->n_sample = k;
  m->time_nanos = s->time0 + (int64_t)seq * 10000000000LL;
  plen = perftools__profiles__profile__get_packed_size(m);
  gz->len = 0;
  if (!(packed = malloc(plen + 1)))
    goto out;
  perftools__profiles__profile__pack(m, packed);
  if (spaa_csink_open(SPAA_CODING_GZIP, -1, spaa_buf_sink, gz, &cs, &err) ||
      spaa_csink_write(cs, packed, plen) || spaa_csink_finish(cs, &err)) {
    fprintf(stderr, "gzip: %s\n", err.msg[0] ? err.msg : "failed");
    goto out;
  }
  rc = 0;
out:
  m->sample = s->all;
  m->n_sample = s->n_all;
  spaa_csink_free(cs);
  free(packed);
  return rc;
}

/* ---- the server's pprof path ------------------------------------------------------------- */


/* The request's labels merged over the converter's, as the server merges them (owned). */
static json_t *merged_labels(json_t *conv, json_t *req)
{
  json_t *all;
  if (!conv || !req)
    return json_incref(conv ? conv : req);
  if ((all = json_deep_copy(conv)))
    json_object_update(all, req);
  return all;
}

/* Convert and store one upload, committed. 0, or -1 with a line on stderr. */
int bench_ingest_one(struct bench_ingest *g, const uint8_t *buf, size_t len)
{
  struct spaa_convert_opts o;
  struct spaa_conv_list l = {0};
  struct spaa_meta meta[BENCH_MAX_ENTRIES];
  const struct spaa_profile *p[BENCH_MAX_ENTRIES];
  json_t *labels[BENCH_MAX_ENTRIES] = {0};
  struct spaa_err err = {0}, errs[BENCH_MAX_ENTRIES];
  char ids[BENCH_MAX_ENTRIES][40];
  int rcs[BENCH_MAX_ENTRIES], rc = -1;
  size_t i, n = 0;
  double t0 = bench_now();
  memset(&o, 0, sizeof(o));
  o.keep_original = g->originals;
  o.service = g->service;
  if (g->conv(buf, len, &o, &l, &err)) {
    fprintf(stderr, "convert: %s\n", err.msg);
    goto out;
  }
  for (i = 0; i < l.n && n < BENCH_MAX_ENTRIES; i++) {
    struct spaa_converted *c = &l.v[i];
    if (!c->profile)
      continue;
    memset(&meta[n], 0, sizeof(meta[n]));
    snprintf(ids[n], sizeof(ids[n]), "%016" PRIx64 "%016" PRIx64, bench_rnd(&g->ids), bench_rnd(&g->ids));
    labels[n] = merged_labels(c->labels, g->labels);
    meta[n].id = ids[n];
    meta[n].service = c->service ? c->service : g->service;
    meta[n].source = "pprof";
    meta[n].received_ns = g->received_ns;
    meta[n].start_ns = c->start_ns;
    meta[n].end_ns = c->end_ns;
    if (!c->start_ns && !c->end_ns)
      spaa_header_range_ns(c->profile, &meta[n].start_ns, &meta[n].end_ns);
    meta[n].payload_bytes = len;
    meta[n].labels = labels[n];
    meta[n].attrs = c->attrs;
    meta[n].original = g->originals ? c->original : NULL;
    meta[n].original_len = g->originals ? c->original_len : 0;
    p[n++] = c->profile;
  }
  if (n == 0 || spaa_store_put_many(g->store, n, p, meta, rcs, errs)) {
    fprintf(stderr, "store: %s\n", n ? errs[0].msg : "the upload converted to no profile");
    goto out;
  }
  for (i = 0; i < n; i++)
    if (rcs[i] != 0) {
      fprintf(stderr, "store: profile %zu: %d %s\n", i, rcs[i], errs[i].msg);
      goto out;
    }
  rc = 0;
out:
  g->secs += bench_now() - t0;
  g->received_ns += 10000000000LL;
  for (i = 0; i < n; i++)
    json_decref(labels[i]);
  spaa_conv_list_free(&l);
  return rc;
}

