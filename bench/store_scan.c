/* Benchmark: per-stack totals merged over a service's stored history. N uploads (default
 * 1,000) derived from one pprof fixture (default pyroscope_go.cpu.labels.pprof, a Go
 * service's CPU profile with labels) are stored through the server's pprof path; then
 *   floor: a bare read of the same blocks (the selection's rows read and decompressed, no
 *          decoding), on the store's own SQLite file;
 *   scan:  spaa_store_scan over the service, every stack's weights summed per metric into a
 *          hash map keyed by the stack's number (what a merged top or flamegraph starts from).
 * Each is run ROUNDS times; the median and the ratio scan / floor are printed, with the
 * target of issue 16 (scan <= 0.25 s for 1,000 profiles). Asserts nothing.
 * Usage: bench_store_scan [--uploads N] [--fixture pprof/NAME]
 * Env: SPAA_SHARED (fixtures), TMPDIR (where the store goes). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "storage/sqlite/sqlite_int.h"
#include "storage/storage.h"

#include "fixture.h"
#include "variants.h"

#define ROUNDS 5
#define MAX_METRICS 8

/* ---- the merge: stack number -> sums per metric ----------------------------------------- */

struct acc {
  int64_t stack; /* 0 = empty slot (row ids start at 1) */
  double sum[MAX_METRICS];
};

struct merge {
  struct acc *slots;
  size_t cap, n;
  char *metrics[MAX_METRICS]; /* names seen, in order (owned) */
  size_t n_metrics;
  uint64_t visits;            /* stacks handed over by the scan */
};

static int metric_index(struct merge *m, const char *name)
{
  size_t i;
  for (i = 0; i < m->n_metrics; i++)
    if (strcmp(m->metrics[i], name) == 0)
      return (int)i;
  if (m->n_metrics == MAX_METRICS || !(m->metrics[m->n_metrics] = strdup(name)))
    return -1;
  return (int)m->n_metrics++;
}

static struct acc *slot(struct merge *m, int64_t stack)
{
  size_t i;
  if (m->n * 2 >= m->cap) { /* grow: rehash into twice the slots */
    size_t cap = m->cap ? m->cap * 2 : 4096, k;
    struct acc *a = calloc(cap, sizeof(*a));
    if (!a)
      return NULL;
    for (k = 0; k < m->cap; k++) {
      if (!m->slots[k].stack)
        continue;
      for (i = ((uint64_t)m->slots[k].stack * 0x9e3779b97f4a7c15ull) & (cap - 1); a[i].stack;
           i = (i + 1) & (cap - 1))
        ;
      a[i] = m->slots[k];
    }
    free(m->slots);
    m->slots = a;
    m->cap = cap;
  }
  for (i = ((uint64_t)stack * 0x9e3779b97f4a7c15ull) & (m->cap - 1); m->slots[i].stack;
       i = (i + 1) & (m->cap - 1))
    if (m->slots[i].stack == stack)
      return &m->slots[i];
  m->slots[i].stack = stack;
  m->n++;
  return &m->slots[i];
}

static int merge_cb(void *ctx, const struct spaa_store_scan_stack *st)
{
  struct merge *m = ctx;
  struct acc *a = slot(m, st->stack);
  size_t k;
  if (!a)
    return SPAA_E_NOMEM;
  m->visits++;
  for (k = 0; k < st->n_weights; k++) {
    int mi = metric_index(m, st->weights[k].metric);
    if (mi < 0)
      return SPAA_E_NOMEM;
    a->sum[mi] += st->weights[k].value.is_float ? st->weights[k].value.f
                                                : (double)st->weights[k].value.i;
  }
  return 0;
}

static void merge_free(struct merge *m)
{
  size_t i;
  for (i = 0; i < m->n_metrics; i++)
    free(m->metrics[i]);
  free(m->slots);
  memset(m, 0, sizeof(*m));
}

/* ---- the two measurements ----------------------------------------------------------------- */

/* One merged scan of the service; seconds, or -1. */
static double run_scan(struct spaa_store *s, const char *service, struct merge *m)
{
  struct spaa_list_query q = {0};
  struct spaa_err err = {0};
  double t0 = bench_now();
  q.service = service;
  merge_free(m);
  if (spaa_store_scan(s, &q, merge_cb, m, &err)) {
    fprintf(stderr, "scan: %s\n", err.msg);
    return -1;
  }
  return bench_now() - t0;
}

/* The bare read: the same rows, each block decompressed (with its service dictionary), no
 * decoding. Seconds, or -1; *raw_bytes the decompressed total. */
static double run_floor(const char *db, const char *service, uint64_t *raw_bytes)
{
  struct storage__conn c = {0};
  struct storage__rdict dict = {0};
  struct spaa_buf raw;
  struct spaa_err err = {0};
  sqlite3_stmt *st = NULL;
  double t0 = bench_now(), t = -1;
  int step = SQLITE_ERROR;
  *raw_bytes = 0;
  spaa_buf_init(&raw, 0);
  spaa_buf_init(&dict.raw, 0);
  if (sqlite3_open_v2(db, &c.db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2(c.db, "SELECT b.dict, b.data FROM profile p JOIN profile_block b"
                               " ON b.profile = p.num WHERE p.service = ?1"
                               " ORDER BY p.received_ns DESC, p.id DESC", -1, &st, NULL) !=
          SQLITE_OK)
    goto out;
  sqlite3_bind_text(st, 1, service, -1, SQLITE_STATIC);
  while ((step = sqlite3_step(st)) == SQLITE_ROW) {
    if (storage__sq_block_raw(&c, &dict, sqlite3_column_int64(st, 0),
                              sqlite3_column_blob(st, 1), (size_t)sqlite3_column_bytes(st, 1),
                              &raw, &err))
      goto out;
    *raw_bytes += raw.len;
  }
  if (step == SQLITE_DONE)
    t = bench_now() - t0;
out:
  if (t < 0)
    fprintf(stderr, "bare read failed: %s\n", c.db ? sqlite3_errmsg(c.db) : "cannot open");
  sqlite3_finalize(st);
  storage__conn_close(&c);
  spaa_buf_free(&raw);
  spaa_buf_free(&dict.raw);
  return t;
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n)
{
  qsort(v, (size_t)n, sizeof(*v), cmp_double);
  return v[n / 2];
}

/* ---- filling the store --------------------------------------------------------------------- */

/* N variants of the fixture into a new store at db. 0 or -1. */
static int fill(struct spaa_store *s, const char *fixture, unsigned n, const char *service)
{
  struct bench_src src;
  struct bench_ingest g;
  struct spaa_buf gz;
  size_t len;
  uint8_t *buf = spaa_test_fixture(fixture, &len);
  unsigned i;
  int rc = -1;
  if (!buf) {
    printf("skipped: no fixtures/%s (set SPAA_SHARED)\n", fixture);
    return -1;
  }
  memset(&g, 0, sizeof(g));
  spaa_buf_init(&gz, 0);
  if (bench_src_open(&src, buf, len)) {
    free(buf);
    return -1;
  }
  g.store = s;
  g.conv = spaa_converter("pprof");
  g.service = service;
  g.labels = json_pack("{s:s}", "env", "bench");
  g.ids = 0x5ca9ull;
  g.received_ns = 1767225600000000000LL;
  for (i = 0; i < n; i++)
    if (bench_src_variant(&src, 0x5ca9ull + i * 0x100000001b3ull, i, &gz) ||
        bench_ingest_one(&g, (const uint8_t *)gz.p, gz.len))
      goto out;
  printf("stored %u variants of %s (%zu samples; each keeps %d%%, values jittered) in %.1f s\n",
         n, fixture, src.n_all, BENCH_KEEP_PERCENT, g.secs);
  rc = 0;
out:
  json_decref(g.labels);
  spaa_buf_free(&gz);
  bench_src_close(&src);
  free(buf);
  return rc;
}

static struct spaa_store *store_open(const char *db)
{
  struct spaa_store_opts o = {0};
  struct spaa_store *s = NULL;
  struct spaa_err err = {0};
  o.path = db;
  o.queue_depth = 256;
  o.batch_max = 32;
  o.readers = 2;
  if (spaa_store_open(&o, &s, &err))
    fprintf(stderr, "open %s: %s\n", db, err.msg);
  return s;
}

static void measure(struct spaa_store *s, const char *db, const char *service, unsigned n)
{
  double fl[ROUNDS], sc[ROUNDS], f, t;
  struct merge m = {0};
  uint64_t raw = 0;
  int r;
  for (r = 0; r < ROUNDS; r++) {
    if ((fl[r] = run_floor(db, service, &raw)) < 0 || (sc[r] = run_scan(s, service, &m)) < 0)
      goto out;
  }
  f = median(fl, ROUNDS);
  t = median(sc, ROUNDS);
  printf("blocks: %u profiles, %.1f MB decompressed in all; merged %llu stack visits into %zu "
         "distinct stacks, %zu metric(s)\n", n, (double)raw / 1e6,
         (unsigned long long)m.visits, m.n, m.n_metrics);
  printf("bare read of the blocks (floor), median of %d: %8.1f ms\n", ROUNDS, f * 1e3);
  printf("merged per-stack totals (scan),  median of %d: %8.1f ms   (%.2fx the floor)\n",
         ROUNDS, t * 1e3, t / f);
  printf("\nsummary\nscan of %u profiles: %.3f s   (target <= 0.25 s for 1,000: %s), "
         "%.2fx a bare read of the same blocks\n", n, t, t <= 0.25 ? "met" : "missed", t / f);
out:
  merge_free(&m);
}

int main(int argc, char **argv)
{
  const char *fixture = "pprof/pyroscope_go.cpu.labels.pprof", *tmp = getenv("TMPDIR");
  unsigned n = 1000;
  char dir[1024], db[1100], cmd[1200];
  struct spaa_store *s;
  int i;
  for (i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--uploads") == 0 && i + 1 < argc && atoi(argv[i + 1]) > 0)
      n = (unsigned)atoi(argv[++i]);
    else if (strcmp(argv[i], "--fixture") == 0 && i + 1 < argc)
      fixture = argv[++i];
    else {
      fprintf(stderr, "usage: %s [--uploads N] [--fixture pprof/NAME]\n", argv[0]);
      return 2;
    }
  }
  snprintf(dir, sizeof(dir), "%s/spaa-bench-scan-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    return 1;
  }
  snprintf(db, sizeof(db), "%s/store.db", dir);
  if ((s = store_open(db))) {
    if (fill(s, fixture, n, "bench-scan") == 0)
      measure(s, db, "bench-scan", n);
    spaa_store_close(s);
  }
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
  return system(cmd) == 0 ? 0 : 1;
}
