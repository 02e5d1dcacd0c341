/* Benchmark: spaa_store_put of a 20k-stack profile into a fresh database, then of a second
 * profile sharing 90% of its stacks, against a floor measured in the same run: the same
 * number of rows through one bare prepared INSERT into a plain table, in one transaction,
 * with the same pragmas. Prints rows/s and the ratios. Usage: bench_store_insert [DIR] */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "spaa/canon.h"
#include "spaa/spaa_io.h"
#include "storage/storage.h"

#define N_STACKS 20000
#define N_SHARED 18000 /* stacks the second profile shares with the first */
#define N_FRAMES 5000
#define N_DSOS 20

static uint64_t mix(uint64_t x)
{
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

static double now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what, const char *msg)
{
  fprintf(stderr, "bench_store_insert: %s: %s\n", what, msg);
  exit(1);
}

/* Stack number `key` (its frames are a function of the key only). */
static void add_stack(struct spaa_profile *p, uint64_t key, size_t idx)
{
  struct spaa_stack *s = spaa_add_stack(p);
  uint64_t fr[40], r = mix(key);
  size_t depth = 8 + (size_t)(r % 25), i;
  if (!s)
    die("stack", "out of memory");
  for (i = 0; i < depth; i++) {
    r = mix(r + i);
    fr[i] = 1 + r % N_FRAMES;
  }
  snprintf(s->id, sizeof(s->id), "s%zu", idx);
  s->event = "cpu";
  if (spaa_stack_set_frames(p, s, fr, depth) ||
      spaa_weights_add(p, &s->weights, "samples", spaa_int((int64_t)(1 + r % 100)), NULL) ||
      spaa_weights_add(p, &s->weights, "cpu_time", spaa_int((int64_t)(r % 100000000)),
                       "nanoseconds"))
    die("stack", "out of memory");
}

/* N_STACKS stacks: keys 0..shared-1, then fresh keys from `fresh`. */
static struct spaa_profile *build(size_t shared, uint64_t fresh)
{
  struct spaa_profile *p = spaa_profile_new();
  struct spaa_event *e = spaa_add_event(p);
  struct spaa_err err = {0};
  size_t i;
  char name[64];
  p->header.source_tool = "bench";
  p->header.id_mode = SPAA_IDS_LOCAL;
  e->name = "cpu";
  e->kind = "timer";
  e->mode = "frequency";
  e->primary_metric = "samples";
  for (i = 0; i < N_DSOS; i++) {
    struct spaa_dso *d = spaa_add_dso(p);
    snprintf(name, sizeof(name), "/usr/lib/libbench%zu.so", i);
    d->id = i + 1;
    d->name = spaa_strdup(p, name);
  }
  for (i = 0; i < N_FRAMES; i++) {
    struct spaa_frame *f = spaa_add_frame(p);
    uint64_t r = mix(1000000 + i);
    snprintf(name, sizeof(name), "pkg%u.Type%u.method_%zu", (unsigned)(r % 97),
             (unsigned)(r % 13), i);
    f->id = i + 1;
    f->func = spaa_strdup(p, name);
    f->has_dso = 1;
    f->dso = 1 + r % N_DSOS;
    f->kind = "user";
    f->has_ip = 1;
    f->ip = 0x400000 + 16 * i;
  }
  for (i = 0; i < N_STACKS; i++)
    add_stack(p, i < shared ? i : fresh + i, i);
  if (spaa_normalize(p, &err))
    die("normalize", err.msg);
  return p;
}

static struct spaa_store_counts counts(struct spaa_store *s)
{
  struct spaa_store_counts c;
  struct spaa_err err = {0};
  if (spaa_store_counts(s, &c, &err))
    die("counts", err.msg);
  return c;
}

/* Rows a put wrote: the new shared rows plus the profile's own. */
static int64_t rows_written(const struct spaa_profile *p, struct spaa_store_counts a,
                            struct spaa_store_counts b)
{
  return (b.dsos - a.dsos) + (b.frames - a.frames) + (b.stacks - a.stacks) + 1 /* profile */ +
         (int64_t)(p->header.n_events + p->n_dsos + p->n_frames + p->n_threads + p->n_stacks +
                   p->n_samples);
}

static double put_timed(struct spaa_store *s, const struct spaa_profile *p, const char *id)
{
  struct spaa_meta m = {0};
  struct spaa_err err = {0};
  double t0;
  m.id = id;
  m.service = "bench";
  m.source = "spaa";
  m.received_ns = 1;
  t0 = now();
  if (spaa_store_put(s, p, &m, &err))
    die("put", err.msg);
  return now() - t0;
}

/* The floor: `n` rows of (integer key, 16-byte blob, integer) through one prepared INSERT in
 * one transaction, WAL and synchronous=FULL like the store. */
static double floor_timed(const char *path, int64_t n)
{
  sqlite3 *db;
  sqlite3_stmt *st;
  unsigned char blob[16];
  double t0, t;
  int64_t i;
  if (sqlite3_open(path, &db) != SQLITE_OK ||
      sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
                       "CREATE TABLE t(id INTEGER PRIMARY KEY, cid BLOB, v INTEGER);",
                   NULL, NULL, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2(db, "INSERT INTO t(cid, v) VALUES(?1, ?2)", -1, &st, NULL) != SQLITE_OK)
    die("floor", sqlite3_errmsg(db));
  t0 = now();
  sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
  for (i = 0; i < n; i++) {
    uint64_t r = mix((uint64_t)i);
    memcpy(blob, &r, 8);
    memcpy(blob + 8, &i, 8);
    sqlite3_bind_blob(st, 1, blob, 16, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, (int64_t)r);
    if (sqlite3_step(st) != SQLITE_DONE)
      die("floor insert", sqlite3_errmsg(db));
    sqlite3_reset(st);
  }
  if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
    die("floor commit", sqlite3_errmsg(db));
  t = now() - t0;
  sqlite3_finalize(st);
  sqlite3_close(db);
  return t;
}

/* Average packed bytes per profile_stack row, against the same weights as JSON text. */
static void blob_sizes(const char *path, const struct spaa_profile *p)
{
  sqlite3 *db;
  sqlite3_stmt *st = NULL;
  struct spaa_buf b;
  size_t i, json = 0;
  spaa_buf_init(&b, 0);
  for (i = 0; i < p->n_stacks; i++) {
    const struct spaa_weights *w = &p->stacks[i].weights;
    b.len = 0;
    spaa_buf_add(&b, "[", 1);
    for (size_t k = 0; k < w->n; k++) {
      spaa_buf_adds(&b, k ? ",{\"metric\":" : "{\"metric\":");
      spaa_canon_str(&b, w->v[k].metric, strlen(w->v[k].metric));
      spaa_buf_adds(&b, ",\"value\":");
      spaa_canon_num(&b, w->v[k].value);
      if (w->v[k].unit) {
        spaa_buf_adds(&b, ",\"unit\":");
        spaa_canon_str(&b, w->v[k].unit, strlen(w->v[k].unit));
      }
      spaa_buf_add(&b, "}", 1);
    }
    spaa_buf_add(&b, "]", 1);
    json += b.len;
  }
  spaa_buf_free(&b);
  if (sqlite3_open(path, &db) != SQLITE_OK ||
      sqlite3_prepare_v2(db, "SELECT avg(length(weights) + coalesce(length(x), 0)),"
                             " avg(length(frames)) FROM profile_stack ps"
                             " JOIN stack s ON s.id = ps.stack", -1, &st, NULL) != SQLITE_OK)
    die("sizes", sqlite3_errmsg(db));
  if (sqlite3_step(st) == SQLITE_ROW)
    printf("profile_stack: %.1f packed bytes/row (the same weights as JSON text: %.1f); "
           "stack.frames: %.1f bytes/row\n",
           sqlite3_column_double(st, 0), (double)json / (double)p->n_stacks,
           sqlite3_column_double(st, 1));
  sqlite3_finalize(st);
  sqlite3_close(db);
}

int main(int argc, char **argv)
{
  char dir[256], db[300], floor_db[300];
  struct spaa_store_opts o = {0};
  struct spaa_store *s = NULL;
  struct spaa_err err = {0};
  struct spaa_store_counts c0, c1, c2;
  struct spaa_profile *p1, *p2;
  double t1, t2, tf1, tf2;
  int64_t r1, r2;

  snprintf(dir, sizeof(dir), "%s/spaa-bench-XXXXXX", argc > 1 ? argv[1] : "/tmp");
  if (!mkdtemp(dir))
    die("mkdtemp", dir);
  snprintf(db, sizeof(db), "%s/store.db", dir);
  snprintf(floor_db, sizeof(floor_db), "%s/floor.db", dir);

  p1 = build(N_STACKS, 0);
  p2 = build(N_SHARED, 1u << 30);
  o.path = db;
  o.queue_depth = 4;
  o.batch_max = 4;
  o.readers = 1;
  if (spaa_store_open(&o, &s, &err))
    die("open", err.msg);
  c0 = counts(s);
  t1 = put_timed(s, p1, "first");
  c1 = counts(s);
  t2 = put_timed(s, p2, "second");
  c2 = counts(s);
  spaa_store_close(s);
  r1 = rows_written(p1, c0, c1);
  r2 = rows_written(p2, c1, c2);
  tf1 = floor_timed(floor_db, r1);
  unlink(floor_db);
  tf2 = floor_timed(floor_db, r2);

  printf("profile 1: %zu stacks, %zu frames, %zu dsos -> %" PRId64 " rows in %.3f s: "
         "%.0f rows/s, %.0f stacks/s\n", p1->n_stacks, p1->n_frames, p1->n_dsos, r1, t1,
         (double)r1 / t1, (double)p1->n_stacks / t1);
  printf("profile 2: %d%% shared stacks, %" PRId64 " new stacks -> %" PRId64 " rows in %.3f s: "
         "%.0f rows/s, %.0f stacks/s\n", 100 * N_SHARED / N_STACKS, c2.stacks - c1.stacks, r2, t2,
         (double)r2 / t2, (double)p2->n_stacks / t2);
  printf("floor (bare prepared INSERT, one transaction): %.0f rows/s and %.0f rows/s\n",
         (double)r1 / tf1, (double)r2 / tf2);
  printf("ratio store/floor: profile 1 %.3f, profile 2 %.3f (1.0 = as fast as the floor)\n",
         tf1 / t1, tf2 / t2);
  blob_sizes(db, p1);

  spaa_profile_free(p1);
  spaa_profile_free(p2);
  {
    static const char *const suffix[] = {"", "-wal", "-shm"};
    char f[320];
    for (size_t i = 0; i < 3; i++) {
      snprintf(f, sizeof(f), "%s%s", db, suffix[i]);
      unlink(f);
      snprintf(f, sizeof(f), "%s%s", floor_db, suffix[i]);
      unlink(f);
    }
  }
  rmdir(dir);
  return 0;
}
