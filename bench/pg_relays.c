/* Benchmark: several relays on one PostgreSQL against one relay on SQLite (the floor,
 * measured in the same run). Part 1: N small pprof uploads (variants of
 * google-pprof_sample.cpu) converted and stored by 1, 2 and 3 relay processes at once, each
 * with its own store (connection pool, writer threads, content-id caches) fed by T threads,
 * the uploads dealt out among them; prints profiles/s and the ratio to one relay on SQLite.
 * The HTTP layer is left out (bench_serve_load measures it): what is measured is decoding,
 * converting and storing, the part that several relays share one database for. Part 2: the
 * merged top over M stored profiles of one service (variants of
 * pyroscope_go.cpu.labels.pprof), best of a few rounds, on each engine, and the ratio.
 * Usage: bench_pg_relays [--uploads N] [--threads T] [--profiles M]
 * Env: SPAA_BENCH_PG (a postgresql:// location: every profile in it is deleted), else
 * SPAA_TEST_STORE as tests/support/pg.sh sets it:
 *   SPAA_PG_FSYNC=on bash tests/support/pg.sh run build/bench/bench_pg_relays
 * SPAA_SHARED (fixtures), TMPDIR (the SQLite files), SPAA_BENCH_DURABILITY. */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"
#include "server/api_views.h"
#include "spaa/view.h"
#include "variants.h"

#define MAX_THREADS 32
#define MAX_RELAYS 3
#define TOP_ROUNDS 5

struct feed {
  struct spaa_store *store;
  const struct spaa_buf *ups; /* every upload, gzipped */
  unsigned n;                 /* uploads */
  unsigned first, step;       /* this thread stores uploads first, first + step, ... */
  const char *service;
  uint64_t seed;              /* its id stream */
  int rc;
};

static void *feed_main(void *arg)
{
  struct feed *f = arg;
  struct bench_ingest g;
  unsigned i;
  memset(&g, 0, sizeof(g));
  g.store = f->store;
  g.conv = spaa_converter("pprof");
  g.service = f->service;
  g.labels = json_pack("{s:s}", "env", "bench");
  g.ids = f->seed;
  g.received_ns = 1767225600000000000LL + (int64_t)(f->seed & 0xffff);
  for (i = f->first; i < f->n && !f->rc; i += f->step)
    f->rc = bench_ingest_one(&g, (const uint8_t *)f->ups[i].p, f->ups[i].len);
  json_decref(g.labels);
  return NULL;
}

/* Store the uploads slots[k] = first + k * step from `threads` threads (ids from `seed`). */
static int feed(struct spaa_store *s, const struct spaa_buf *ups, unsigned n, unsigned first,
                unsigned step, unsigned threads, const char *service, uint64_t seed)
{
  struct feed f[MAX_THREADS];
  pthread_t th[MAX_THREADS];
  unsigned t, started = 0;
  int rc = 0;
  for (t = 0; t < threads; t++) {
    f[t] = (struct feed){s, ups, n, first + t * step, step * threads, service,
                         seed + ((uint64_t)t << 32), 0};
    if (pthread_create(&th[t], NULL, feed_main, &f[t])) {
      rc = -1;
      break;
    }
    started++;
  }
  for (t = 0; t < started; t++) {
    pthread_join(th[t], NULL);
    rc |= f[t].rc;
  }
  return rc;
}

static struct spaa_store *store_open(const char *loc, int empty)
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
  if (empty && spaa_store_delete(s, &all, &del, &err)) {
    fprintf(stderr, "emptying the store: %s\n", err.msg);
    spaa_store_close(s);
    return NULL;
  }
  return s;
}

/* ---- part 1: relay processes ---------------------------------------------------------------- */

struct outcome {
  uint64_t stored, transactions;
  int rc;
};

/* One relay process: open its store, say so on `ready`, wait for the word on `go`, store its
 * share, report on `res`. */
static void relay_child(const char *loc, unsigned c, unsigned k, const struct spaa_buf *ups,
                        unsigned n, unsigned threads, int ready, int go, int res)
{
  struct spaa_store *s = store_open(loc, 0);
  struct spaa_store_stats st;
  struct outcome o = {0, 0, -1};
  char b = 'r';
  if (write(ready, &b, 1) != 1 || read(go, &b, 1) != 1 || !s)
    goto out;
  o.rc = feed(s, ups, n, c, k, threads, "bench-relays", 0xe9e1ull + ((uint64_t)c << 48));
  spaa_store_stats(s, &st);
  o.stored = st.stored;
  o.transactions = st.transactions;
out:
  if (write(res, &o, sizeof(o)) != (ssize_t)sizeof(o))
    o.rc = -1;
  spaa_store_close(s);
  _exit(o.rc ? 1 : 0);
}

/* k relay processes on loc storing the uploads together: seconds from the start word to the
 * last one's report, or -1. *tx: transactions they committed in all. */
static double relays(const char *loc, unsigned k, const struct spaa_buf *ups, unsigned n,
                     unsigned threads, uint64_t *tx)
{
  int ready[2], go[2], res[2], bad = 0, status;
  pid_t pids[MAX_RELAYS];
  struct outcome o;
  uint64_t stored = 0;
  double t0, secs;
  unsigned c;
  char b;
  *tx = 0;
  if (pipe(ready) || pipe(go) || pipe(res))
    return -1;
  fflush(NULL);
  for (c = 0; c < k; c++)
    if ((pids[c] = fork()) == 0)
      relay_child(loc, c, k, ups, n, threads, ready[1], go[0], res[1]);
  for (c = 0; c < k; c++)
    bad |= read(ready[0], &b, 1) != 1;
  t0 = bench_now();
  for (c = 0; c < k; c++)
    bad |= write(go[1], "g", 1) != 1;
  for (c = 0; c < k; c++) {
    if (read(res[0], &o, sizeof(o)) != (ssize_t)sizeof(o))
      o.rc = -1;
    bad |= o.rc;
    stored += o.stored;
    *tx += o.transactions;
  }
  secs = bench_now() - t0;
  for (c = 0; c < k; c++)
    bad |= waitpid(pids[c], &status, 0) != pids[c] || !WIFEXITED(status) ||
           WEXITSTATUS(status) != 0;
  close(ready[0]), close(ready[1]), close(go[0]), close(go[1]), close(res[0]), close(res[1]);
  if (stored != n) {
    fprintf(stderr, "%u relays stored %" PRIu64 " of %u uploads\n", k, stored, n);
    bad = 1;
  }
  return bad ? -1 : secs;
}

/* Empty loc, then time k relays on it. */
static double relays_on(const char *loc, unsigned k, const struct spaa_buf *ups, unsigned n,
                        unsigned threads, uint64_t *tx)
{
  struct spaa_store *s = store_open(loc, 1);
  if (!s)
    return -1;
  spaa_store_close(s); /* no thread and no connection left in this process before fork */
  return relays(loc, k, ups, n, threads, tx);
}

/* ---- part 2: the merged top --------------------------------------------------------------- */

static int null_sink(void *ctx, const void *data, size_t len)
{
  (void)data;
  *(size_t *)ctx += len;
  return 0;
}

/* Best of TOP_ROUNDS merged tops (50 functions) over the service's profiles; -1 on failure. */
static double merged_top(struct spaa_store *s, size_t *stacks, size_t *profiles)
{
  struct spaa_list_query q;
  struct spaa_err err = {0};
  double best = -1, t0;
  int r;
  memset(&q, 0, sizeof(q));
  q.service = "bench-top";
  for (r = 0; r < TOP_ROUNDS; r++) {
    struct spaa_vset v;
    size_t bytes = 0;
    int rc;
    spaa_vset_init(&v);
    t0 = bench_now();
    rc = spaa_api_merged_vset(s, &q, NULL, 0, &v, profiles, &err) ||
         spaa_view_top(&v, 50, null_sink, &bytes, &err);
    t0 = bench_now() - t0;
    *stacks = v.n_stacks;
    spaa_vset_free(&v);
    if (rc) {
      fprintf(stderr, "merged top: %s\n", err.msg);
      return -1;
    }
    if (best < 0 || t0 < best)
      best = t0;
  }
  return best;
}

/* Fill an emptied loc with the M uploads of part 2 and time its merged top. */
static double top_on(const char *loc, const struct spaa_buf *ups, unsigned m, unsigned threads,
                     size_t *stacks, size_t *profiles)
{
  struct spaa_store *s = store_open(loc, 1);
  double secs = -1;
  if (!s)
    return -1;
  if (!feed(s, ups, m, 0, 1, threads, "bench-top", 0x70b0ull << 40))
    secs = merged_top(s, stacks, profiles);
  spaa_store_close(s);
  return secs;
}

/* ---- main ----------------------------------------------------------------------------------- */

static int make_uploads(const char *fixture, struct spaa_buf *ups, unsigned n, uint64_t seed)
{
  struct bench_src src;
  size_t len;
  uint8_t *buf = spaa_test_fixture(fixture, &len);
  unsigned i;
  int rc = 0;
  for (i = 0; i < n; i++)
    spaa_buf_init(&ups[i], 0);
  if (!buf) {
    printf("skipped: no fixtures/%s (set SPAA_SHARED)\n", fixture);
    return -1;
  }
  if (bench_src_open(&src, buf, len)) {
    free(buf);
    return -1;
  }
  for (i = 0; i < n && !rc; i++)
    rc = bench_src_variant(&src, seed + i * 0x100000001b3ull, i, &ups[i]);
  bench_src_close(&src);
  free(buf);
  return rc;
}

static int args(int argc, char **argv, unsigned *n, unsigned *threads, unsigned *m)
{
  int i;
  for (i = 1; i < argc; i += 2) { /* flag and value */
    int v = i + 1 < argc ? atoi(argv[i + 1]) : 0;
    if (strcmp(argv[i], "--uploads") == 0 && v > 0)
      *n = (unsigned)v;
    else if (strcmp(argv[i], "--threads") == 0 && v > 0 && v <= MAX_THREADS)
      *threads = (unsigned)v;
    else if (strcmp(argv[i], "--profiles") == 0 && v > 0)
      *m = (unsigned)v;
    else {
      fprintf(stderr, "usage: %s [--uploads N] [--threads T] [--profiles M]\n", argv[0]);
      return -1;
    }
  }
  return 0;
}

/* Part 1 on both engines; fills sq (one relay on SQLite) and pq[0..2]. */
static int part1(const char *sqlite, const char *pg, const struct spaa_buf *ups, unsigned n,
                 unsigned threads, double *sq, double *pq)
{
  uint64_t tx;
  unsigned k;
  if ((*sq = relays_on(sqlite, 1, ups, n, threads, &tx)) < 0)
    return -1;
  printf("sqlite      1 relay : %7.3f s  %8.1f profiles/s  %5" PRIu64 " transactions\n", *sq,
         n / *sq, tx);
  for (k = 1; k <= MAX_RELAYS; k++) {
    if ((pq[k - 1] = relays_on(pg, k, ups, n, threads, &tx)) < 0)
      return -1;
    printf("postgresql  %u relay%s: %7.3f s  %8.1f profiles/s  %5" PRIu64 " transactions"
           "  %.2fx sqlite's profiles/s\n", k, k > 1 ? "s" : " ", pq[k - 1], n / pq[k - 1], tx,
           *sq / pq[k - 1]);
  }
  return 0;
}

int main(int argc, char **argv)
{
  const char *tmp = getenv("TMPDIR"), *pg = getenv("SPAA_BENCH_PG");
  unsigned n = 2000, threads = 8, m = 1000, i, k;
  char dir[1024], db1[1100], db2[1100], cmd[1200];
  struct spaa_buf *ups = NULL, *tops = NULL;
  double sq, pq[MAX_RELAYS], tsq, tpq;
  size_t stacks = 0, profiles = 0;
  int rc = 1;
  if (args(argc, argv, &n, &threads, &m))
    return 2;
  if (!pg || !*pg)
    pg = getenv("SPAA_TEST_STORE");
  if (!pg || strncmp(pg, "postgres", 8) != 0) {
    printf("skipped: no PostgreSQL (set SPAA_BENCH_PG, or run under "
           "`bash tests/support/pg.sh run`)\n");
    return 0;
  }
  snprintf(dir, sizeof(dir), "%s/spaa-bench-relays-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!(ups = calloc(n, sizeof(*ups))) || !(tops = calloc(m, sizeof(*tops))) || !mkdtemp(dir)) {
    free(ups);
    free(tops);
    return 1;
  }
  snprintf(db1, sizeof(db1), "sqlite:%s/relays.db", dir);
  snprintf(db2, sizeof(db2), "sqlite:%s/top.db", dir);
  if (make_uploads("pprof/google-pprof_sample.cpu", ups, n, 0xe9e1ull) ||
      make_uploads("pprof/pyroscope_go.cpu.labels.pprof", tops, m, 0x70b0ull))
    goto out;
  printf("%ld cores; durability %s; %u uploads (variants of google-pprof_sample.cpu), %u "
         "threads per relay\n", sysconf(_SC_NPROCESSORS_ONLN),
         bench_durability() == SPAA_DURABILITY_NORMAL ? "normal" : "full", n, threads);
  if (part1(db1, pg, ups, n, threads, &sq, pq))
    goto out;
  printf("\nmerged top (50 functions) over %u profiles (variants of "
         "pyroscope_go.cpu.labels.pprof), best of %d\n", m, TOP_ROUNDS);
  if ((tsq = top_on(db2, tops, m, threads, &stacks, &profiles)) < 0)
    goto out;
  printf("sqlite     %8.4f s  (%zu profiles, %zu distinct stacks)\n", tsq, profiles, stacks);
  if ((tpq = top_on(pg, tops, m, threads, &stacks, &profiles)) < 0)
    goto out;
  printf("postgresql %8.4f s  (%zu profiles, %zu distinct stacks)\n", tpq, profiles, stacks);
  printf("\nsummary (ratios to one relay on SQLite, measured in this run)\n");
  for (k = 1; k <= MAX_RELAYS; k++)
    printf("postgresql, %u relay%s: %.2fx the profiles/s\n", k, k > 1 ? "s" : " ", sq / pq[k - 1]);
  printf("merged top over %u profiles, postgresql / sqlite: %.2fx the time\n", m, tpq / tsq);
  rc = 0;
out:
  for (i = 0; i < n; i++)
    spaa_buf_free(&ups[i]);
  for (i = 0; i < m; i++)
    spaa_buf_free(&tops[i]);
  free(ups);
  free(tops);
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
  if (system(cmd) != 0)
    rc = 1;
  return rc;
}
