/* Benchmark: the same ingest on both storage engines. N small pprof uploads (variants of
 * google-pprof_sample.cpu, 1.8 KB) converted and stored through spaa_store_put_many from T
 * threads at once, first into SQLite (the floor, measured in the same run), then into
 * PostgreSQL; prints profiles/s, transactions committed (how many uploads shared one) and
 * the ratio PostgreSQL / SQLite.
 * Usage: bench_store_engines [--uploads N] [--threads T] [--fixture pprof/NAME]
 * Env: SPAA_BENCH_PG (a postgresql:// location; its profiles are deleted first), else
 * SPAA_TEST_STORE as tests/support/pg.sh sets it:
 *   bash tests/support/pg.sh run build/bench/bench_store_engines
 * SPAA_SHARED (fixtures), TMPDIR (the SQLite file), SPAA_BENCH_DURABILITY. */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "variants.h"

#define MAX_THREADS 64

struct run {
  struct spaa_store *store;
  struct spaa_buf *ups;        /* every upload, gzipped */
  unsigned n, threads, t;      /* uploads, threads, this thread's number */
  int rc;
};

static void *worker(void *arg)
{
  struct run *r = arg;
  struct bench_ingest g;
  unsigned i;
  memset(&g, 0, sizeof(g));
  g.store = r->store;
  g.conv = spaa_converter("pprof");
  g.service = "bench-engines";
  g.labels = json_pack("{s:s}", "env", "bench");
  g.ids = 0xe9e1ull + ((uint64_t)r->t << 40); /* streams far apart: no id twice */
  g.received_ns = 1767225600000000000LL + (int64_t)r->t;
  for (i = r->t; i < r->n && !r->rc; i += r->threads)
    r->rc = bench_ingest_one(&g, (const uint8_t *)r->ups[i].p, r->ups[i].len);
  json_decref(g.labels);
  return NULL;
}

static struct spaa_store *store_open(const char *loc)
{
  struct spaa_store_opts o = {0};
  struct spaa_store *s = NULL;
  struct spaa_err err = {0};
  struct spaa_list_query all;
  struct spaa_store_deleted del;
  o.path = loc;
  o.queue_depth = 1024;
  o.batch_max = 64;
  o.readers = 2;
  o.durability = bench_durability();
  if (spaa_store_open(&o, &s, &err)) {
    fprintf(stderr, "open: %s\n", err.msg);
    return NULL;
  }
  memset(&all, 0, sizeof(all));
  if (spaa_store_delete(s, &all, &del, &err)) { /* a PostgreSQL database outlives a run */
    fprintf(stderr, "emptying the store: %s\n", err.msg);
    spaa_store_close(s);
    return NULL;
  }
  return s;
}

/* Store every upload from `threads` threads; seconds, or -1. *tx: transactions it took. */
static double ingest(const char *loc, struct spaa_buf *ups, unsigned n, unsigned threads,
                     uint64_t *tx)
{
  struct spaa_store *s = store_open(loc);
  struct spaa_store_stats a, b;
  struct run r[MAX_THREADS];
  pthread_t th[MAX_THREADS];
  double t0, secs = -1;
  unsigned i;
  int bad = 0;
  if (!s)
    return -1;
  spaa_store_stats(s, &a);
  t0 = bench_now();
  for (i = 0; i < threads; i++) {
    r[i] = (struct run){s, ups, n, threads, i, 0};
    if (pthread_create(&th[i], NULL, worker, &r[i]))
      r[i].rc = -1, threads = i;
  }
  for (i = 0; i < threads; i++) {
    pthread_join(th[i], NULL);
    bad |= r[i].rc;
  }
  if (!bad)
    secs = bench_now() - t0;
  spaa_store_stats(s, &b);
  *tx = b.transactions - a.transactions;
  if (b.stored - a.stored != n) {
    fprintf(stderr, "stored %" PRIu64 " of %u uploads\n", b.stored - a.stored, n);
    secs = -1;
  }
  spaa_store_close(s);
  return secs;
}

static int make_uploads(const char *fixture, struct spaa_buf *ups, unsigned n)
{
  struct bench_src src;
  size_t len;
  uint8_t *buf = spaa_test_fixture(fixture, &len);
  unsigned i;
  int rc = 0;
  if (!buf) {
    printf("skipped: no fixtures/%s (set SPAA_SHARED)\n", fixture);
    return -1;
  }
  if (bench_src_open(&src, buf, len)) {
    free(buf);
    return -1;
  }
  for (i = 0; i < n && !rc; i++) {
    spaa_buf_init(&ups[i], 0);
    rc = bench_src_variant(&src, 0xe9e1ull + i * 0x100000001b3ull, i, &ups[i]);
  }
  bench_src_close(&src);
  free(buf);
  return rc;
}

static void report(const char *name, unsigned n, unsigned threads, double secs, uint64_t tx)
{
  printf("%-10s %u uploads from %u threads: %7.3f s  %8.1f profiles/s  %5" PRIu64
         " transactions (%.1f uploads each)\n", name, n, threads, secs, n / secs, tx,
         tx ? (double)n / (double)tx : 0.0);
}

int main(int argc, char **argv)
{
  const char *fixture = "pprof/google-pprof_sample.cpu", *tmp = getenv("TMPDIR");
  const char *pg = getenv("SPAA_BENCH_PG");
  unsigned n = 500, threads = 8, i;
  char dir[1024], db[1100], cmd[1200];
  struct spaa_buf *ups;
  double sq, pq;
  uint64_t sq_tx = 0, pq_tx = 0;
  int rc = 1;
  for (i = 1; i < (unsigned)argc; i++) {
    if (strcmp(argv[i], "--uploads") == 0 && i + 1 < (unsigned)argc && atoi(argv[i + 1]) > 0)
      n = (unsigned)atoi(argv[++i]);
    else if (strcmp(argv[i], "--threads") == 0 && i + 1 < (unsigned)argc &&
             atoi(argv[i + 1]) > 0 && atoi(argv[i + 1]) <= MAX_THREADS)
      threads = (unsigned)atoi(argv[++i]);
    else if (strcmp(argv[i], "--fixture") == 0 && i + 1 < (unsigned)argc)
      fixture = argv[++i];
    else {
      fprintf(stderr, "usage: %s [--uploads N] [--threads T] [--fixture pprof/NAME]\n",
              argv[0]);
      return 2;
    }
  }
  if (!pg || !*pg)
    pg = getenv("SPAA_TEST_STORE");
  if (!(ups = calloc(n, sizeof(*ups))))
    return 1;
  snprintf(dir, sizeof(dir), "%s/spaa-bench-engines-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    free(ups);
    return 1;
  }
  snprintf(db, sizeof(db), "sqlite:%s/store.db", dir);
  if (make_uploads(fixture, ups, n))
    goto out;
  printf("%u variants of %s, durability %s\n", n, fixture,
         bench_durability() == SPAA_DURABILITY_NORMAL ? "normal" : "full");
  if ((sq = ingest(db, ups, n, threads, &sq_tx)) < 0)
    goto out;
  report("sqlite", n, threads, sq, sq_tx);
  if (!pg || !*pg || strncmp(pg, "postgres", 8) != 0) {
    printf("postgresql: skipped (set SPAA_BENCH_PG, or run under "
           "`bash tests/support/pg.sh run`)\n");
    rc = 0;
    goto out;
  }
  if ((pq = ingest(pg, ups, n, threads, &pq_tx)) < 0)
    goto out;
  report("postgresql", n, threads, pq, pq_tx);
  printf("\nsummary\npostgresql / sqlite: %.2fx the time (%.2fx the profiles/s) for %u uploads "
         "from %u threads\n", pq / sq, sq / pq, n, threads);
  rc = 0;
out:
  for (i = 0; i < n; i++)
    spaa_buf_free(&ups[i]);
  free(ups);
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
  if (system(cmd) != 0)
    rc = 1;
  return rc;
}
