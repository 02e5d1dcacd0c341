/* Merged views over 1,000 stored profiles of one service: GET /api/v1/top and
 * /api/v1/flamegraph's work (scan, sum by stack id, resolve the distinct stacks' frames,
 * write the answer) timed against a bare spaa_store_scan of the same blocks (the floor),
 * each the best of a few rounds. Peak RSS is printed: it follows the distinct stacks, not
 * the samples. Usage: bench_query_merged [N_PROFILES] [FIXTURE] (default 1000 and
 * pprof/pyroscope_go.cpu.labels.pprof, each profile a variant with other weights). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "fixture.h"
#include "pprof/pprof.h"
#include "server/api_views.h"
#include "spaa/view.h"
#include "storage/storage.h"

#define ROUNDS 5
#define BATCH 50

static double now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int null_sink(void *ctx, const void *data, size_t len)
{
  (void)data;
  *(size_t *)ctx += len;
  return 0;
}

static int scan_cb(void *ctx, const struct spaa_store_scan_stack *st)
{
  *(double *)ctx += st->n_weights ? spaa_num_as_double(st->weights[0].value) : 0;
  return 0;
}

static struct spaa_profile *convert(const uint8_t *buf, size_t len)
{
  struct spaa_conv_list l = {0};
  struct spaa_err err = {0};
  struct spaa_profile *p = NULL;
  if (spaa_convert_pprof(buf, len, NULL, &l, &err) || l.n != 1) {
    fprintf(stderr, "convert: %s\n", err.msg);
    exit(1);
  }
  p = l.v[0].profile;
  l.v[0].profile = NULL;
  spaa_conv_list_free(&l);
  return p;
}

/* Store n variants of the fixture (weights shifted by the variant's number). */
static void fill(struct spaa_store *s, const uint8_t *buf, size_t len, int n)
{
  struct spaa_profile *ps[BATCH];
  struct spaa_meta meta[BATCH];
  char ids[BATCH][40];
  int rcs[BATCH], i, k;
  struct spaa_err errs[BATCH];
  for (i = 0; i < n; i += BATCH) {
    int m = n - i < BATCH ? n - i : BATCH;
    for (k = 0; k < m; k++) {
      size_t j;
      ps[k] = convert(buf, len);
      for (j = 0; j < ps[k]->n_stacks; j++)
        if (!ps[k]->stacks[j].weights.v[0].value.is_float)
          ps[k]->stacks[j].weights.v[0].value.i += i + k;
      snprintf(ids[k], sizeof(ids[k]), "%032x", i + k + 1);
      memset(&meta[k], 0, sizeof(meta[k]));
      meta[k].id = ids[k];
      meta[k].service = "bench";
      meta[k].source = "pprof";
      meta[k].received_ns = 1700000000000000000LL + (int64_t)(i + k) * 1000000000LL;
    }
    memset(errs, 0, sizeof(errs));
    if (spaa_store_put_many(s, (size_t)m, (const struct spaa_profile *const *)ps, meta, rcs,
                            errs)) {
      fprintf(stderr, "put_many failed: %s\n", errs[0].msg);
      exit(1);
    }
    for (k = 0; k < m; k++)
      spaa_profile_free(ps[k]);
  }
}

/* One merged view: 0 top, 1 flamegraph. Returns seconds; *bytes the answer's size. */
static double view_timed(struct spaa_store *s, const struct spaa_list_query *q, int which,
                         size_t *bytes, size_t *stacks)
{
  struct spaa_vset v;
  struct spaa_err err = {0};
  double t0 = now();
  spaa_vset_init(&v);
  *bytes = 0;
  if (spaa_api_merged_vset(s, q, NULL, 0, &v, NULL, &err) ||
      (which == 0 ? spaa_view_top(&v, 50, null_sink, bytes, &err)
                  : spaa_view_flamegraph(&v, 2000, null_sink, bytes, &err))) {
    fprintf(stderr, "view: %s\n", err.msg);
    exit(1);
  }
  *stacks = v.n_stacks;
  spaa_vset_free(&v);
  return now() - t0;
}

int main(int argc, char **argv)
{
  int n = argc > 1 ? atoi(argv[1]) : 1000, r;
  const char *fx = argc > 2 ? argv[2] : "pyroscope_go.cpu.labels.pprof";
  char dir[] = "/tmp/bench_query_XXXXXX", path[256];
  struct spaa_store_opts so = {0};
  struct spaa_store *s = NULL;
  struct spaa_list_query q;
  struct spaa_err err = {0};
  struct rusage ru;
  double floor = 1e9, top = 1e9, fg = 1e9, sum = 0, t;
  size_t len, bytes, stacks = 0, bytes_fg = 0;
  uint8_t *buf = spaa_test_fixture_in("pprof", fx, &len);
  if (!buf || n < 1 || !mkdtemp(dir)) {
    fprintf(stderr, "usage: bench_query_merged [N] [FIXTURE] (fixtures under SPAA_SHARED)\n");
    return 2;
  }
  snprintf(path, sizeof(path), "%s/spaa.db", dir);
  so.path = path;
  so.queue_depth = 256;
  so.batch_max = 64;
  so.readers = 2;
  so.durability = SPAA_DURABILITY_NORMAL;
  if (spaa_store_open(&so, &s, &err)) {
    fprintf(stderr, "open: %s\n", err.msg);
    return 1;
  }
  t = now();
  fill(s, buf, len, n);
  printf("stored %d profiles of %s in %.2f s\n", n, fx, now() - t);
  memset(&q, 0, sizeof(q));
  q.service = "bench";
  for (r = 0; r < ROUNDS; r++) {
    t = now();
    if (spaa_store_scan(s, &q, scan_cb, &sum, &err)) {
      fprintf(stderr, "scan: %s\n", err.msg);
      return 1;
    }
    if ((t = now() - t) < floor)
      floor = t;
    if ((t = view_timed(s, &q, 0, &bytes, &stacks)) < top)
      top = t;
    if ((t = view_timed(s, &q, 1, &bytes_fg, &stacks)) < fg)
      fg = t;
  }
  getrusage(RUSAGE_SELF, &ru);
  printf("floor: bare scan of the blocks      %8.4f s\n", floor);
  printf("merged top (%zu stacks, %zu B)     %8.4f s  %5.2fx floor\n", stacks, bytes, top,
         top / floor);
  printf("merged flamegraph (%zu B)          %8.4f s  %5.2fx floor\n", bytes_fg, fg, fg / floor);
  printf("peak RSS %ld KiB\n", ru.ru_maxrss);
  spaa_store_close(s);
  unlink(path);
  snprintf(path, sizeof(path), "%s/spaa.db-wal", dir);
  unlink(path);
  snprintf(path, sizeof(path), "%s/spaa.db-shm", dir);
  unlink(path);
  rmdir(dir);
  free(buf);
  return 0;
}
