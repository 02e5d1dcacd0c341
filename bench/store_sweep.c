/* Benchmark: how long a put waits while a delete sweeps. A store is filled with N_FILL
 * profiles (half their stacks shared by all, half their own), then one thread puts profiles
 * one at a time, each with the content of a profile about to be deleted (rows the sweep must
 * keep), while the main thread deletes the older half (profiles, then the stacks, frames and dsos nothing
 * references, then the space). The floor is the same putter with nothing else running, in
 * the same run: the longest and the 99th-percentile put latency of both are printed, with
 * their ratios, and every profile put during the delete is read back afterwards.
 * Usage: bench_store_sweep [DIR] [N_FILL]
 * Env: SPAA_BENCH_PG, a postgresql:// location (every profile in it is deleted first), or
 * SPAA_TEST_STORE as tests/support/pg.sh sets it: the store is that database instead of a
 * SQLite file in DIR, and the putter puts through a second store on it (another relay). */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "spaa/spaa_io.h"
#include "storage/storage.h"

#define N_STACKS 100       /* stacks per profile */
#define N_COMMON 50        /* of which every profile has the same */
#define N_FRAMES 300       /* frames per profile */
#define N_COMMON_FRAMES 200 /* of which every profile has the same */
#define N_DSOS 5           /* dsos every profile shares (plus one of its own) */
#define MAX_LAT 200000     /* put latencies kept per phase */

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
  fprintf(stderr, "bench_store_sweep: %s: %s\n", what, msg);
  exit(1);
}

/* Profile number k: common dsos, frames and stacks, and its own (named after k). */
static struct spaa_profile *build(uint64_t k)
{
  struct spaa_profile *p = spaa_profile_new();
  struct spaa_event *e = spaa_add_event(p);
  struct spaa_err err = {0};
  char name[96];
  size_t i, j;
  p->header.source_tool = "bench";
  p->header.id_mode = SPAA_IDS_LOCAL;
  e->name = "cpu";
  e->kind = "timer";
  e->mode = "frequency";
  e->primary_metric = "samples";
  for (i = 0; i <= N_DSOS; i++) {
    struct spaa_dso *d = spaa_add_dso(p);
    if (i < N_DSOS)
      snprintf(name, sizeof(name), "/usr/lib/libcommon%zu.so", i);
    else
      snprintf(name, sizeof(name), "/opt/app%" PRIu64 "/libown.so", k);
    d->id = i + 1;
    d->name = spaa_strdup(p, name);
  }
  for (i = 0; i < N_FRAMES; i++) {
    struct spaa_frame *f = spaa_add_frame(p);
    int own = i >= N_COMMON_FRAMES;
    if (own)
      snprintf(name, sizeof(name), "app%" PRIu64 ".handler_%zu", k, i);
    else
      snprintf(name, sizeof(name), "lib.common_%zu", i);
    f->id = i + 1;
    f->func = spaa_strdup(p, name);
    f->has_dso = 1;
    f->dso = own ? N_DSOS + 1 : 1 + i % N_DSOS;
    f->kind = "user";
  }
  for (i = 0; i < N_STACKS; i++) {
    struct spaa_stack *s = spaa_add_stack(p);
    uint64_t fr[16], r = mix(i < N_COMMON ? i : k * 1000 + i);
    size_t depth = 4 + (size_t)(r % 12);
    if (!s)
      die("stack", "out of memory");
    for (j = 0; j < depth; j++) {
      r = mix(r + j);
      /* common stacks over common frames; a profile's own stacks end in its own frames */
      fr[j] = 1 + (i < N_COMMON || j > 1 ? r % N_COMMON_FRAMES
                                          : N_COMMON_FRAMES + r % (N_FRAMES - N_COMMON_FRAMES));
    }
    snprintf(s->id, sizeof(s->id), "s%zu", i);
    s->event = "cpu";
    if (spaa_stack_set_frames(p, s, fr, depth) ||
        spaa_weights_add(p, &s->weights, "samples", spaa_int((int64_t)(1 + r % 100)), NULL))
      die("stack", "out of memory");
  }
  if (spaa_normalize(p, &err))
    die("normalize", err.msg);
  return p;
}

static void meta_of(struct spaa_meta *m, const char *id, int64_t received)
{
  memset(m, 0, sizeof(*m));
  m->id = id;
  m->service = "bench";
  m->source = "spaa";
  m->received_ns = received;
}

/* The putter: puts profiles built like old ones (their rows about to be orphaned) under
 * new ids until told to stop, timing each. */
struct putter {
  struct spaa_store *s;
  int stop;             /* atomic */
  uint64_t first, next; /* profile numbers put: [first, next) */
  uint64_t reuse_base, reuse_mod; /* profile k has the content of old profile
                                     reuse_base + k % reuse_mod */
  double *lat;          /* seconds per put */
  size_t n;
};

static void *putter_main(void *arg)
{
  struct putter *pt = arg;
  while (!__atomic_load_n(&pt->stop, __ATOMIC_ACQUIRE) && pt->n < MAX_LAT) {
    struct spaa_profile *p = build(pt->reuse_base + pt->next % pt->reuse_mod);
    struct spaa_meta m;
    struct spaa_err err = {0};
    char id[32];
    double t0;
    snprintf(id, sizeof(id), "live%" PRIu64, pt->next);
    meta_of(&m, id, 1000000000LL + (int64_t)pt->next);
    t0 = now();
    if (spaa_store_put(pt->s, p, &m, &err))
      die("put", err.msg);
    pt->lat[pt->n++] = now() - t0;
    pt->next++;
    spaa_profile_free(p);
  }
  return NULL;
}

static int cmp_d(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Sort the latencies; the 99th percentile and the longest. */
static void lat_stats(struct putter *pt, double *p99, double *max)
{
  qsort(pt->lat, pt->n, sizeof(double), cmp_d);
  *p99 = pt->n ? pt->lat[pt->n * 99 / 100] : 0;
  *max = pt->n ? pt->lat[pt->n - 1] : 0;
}

static void fill(struct spaa_store *s, uint64_t n)
{
  enum { CHUNK = 16 };
  const struct spaa_profile *ps[CHUNK];
  struct spaa_profile *own[CHUNK];
  struct spaa_meta ms[CHUNK];
  struct spaa_err errs[CHUNK];
  char ids[CHUNK][32];
  int rcs[CHUNK];
  uint64_t k, i, c;
  for (k = 0; k < n; k += c) {
    c = n - k < CHUNK ? n - k : CHUNK;
    for (i = 0; i < c; i++) {
      own[i] = build(k + i);
      ps[i] = own[i];
      snprintf(ids[i], sizeof(ids[i]), "old%" PRIu64, k + i);
      meta_of(&ms[i], ids[i], (int64_t)(k + i + 1));
    }
    if (spaa_store_put_many(s, c, ps, ms, rcs, errs))
      die("fill", "put_many failed");
    for (i = 0; i < c; i++) {
      if (rcs[i] != 0)
        die("fill", errs[i].msg);
      spaa_profile_free(own[i]);
    }
  }
}

/* The PostgreSQL location to run on (SPAA_BENCH_PG, else SPAA_TEST_STORE when it is one), or
 * NULL for a SQLite file. */
static const char *pg_location(void)
{
  const char *pg = getenv("SPAA_BENCH_PG");
  if (!pg || !*pg)
    pg = getenv("SPAA_TEST_STORE");
  return pg && strncmp(pg, "postgres", 8) == 0 ? pg : NULL;
}

/* Read every profile the putter put back; the number that could not be read. */
static uint64_t check_back(struct spaa_store *s, const struct putter *pt)
{
  uint64_t k, bad = 0;
  for (k = pt->first; k < pt->next; k++) {
    struct spaa_profile *p = NULL;
    struct spaa_err err = {0};
    char id[32];
    snprintf(id, sizeof(id), "live%" PRIu64, k);
    if (spaa_store_get(s, id, &p, &err)) {
      if (!bad)
        fprintf(stderr, "bench_store_sweep: %s unreadable: %s\n", id, err.msg);
      bad++;
    } else if (p->n_stacks != N_STACKS) {
      bad++;
    }
    spaa_profile_free(p);
  }
  return bad;
}

int main(int argc, char **argv)
{
  char dir[256], db[300];
  struct spaa_store_opts o = {0};
  struct spaa_store *s = NULL, *other = NULL;
  const char *pg = pg_location();
  struct spaa_err err = {0};
  struct spaa_store_deleted d;
  struct spaa_list_query q;
  struct putter base, during;
  pthread_t th;
  uint64_t n_fill = argc > 2 ? strtoull(argv[2], NULL, 10) : 3000;
  double t0, t_fill, t_del, b99, bmax, d99, dmax;

  snprintf(dir, sizeof(dir), "%s/spaa-bench-XXXXXX", argc > 1 ? argv[1] : "/tmp");
  if (!mkdtemp(dir))
    die("mkdtemp", dir);
  snprintf(db, sizeof(db), "%s/store.db", dir);
  o.path = pg ? pg : db;
  o.queue_depth = 64;
  o.batch_max = 32;
  o.readers = 2;
  if (spaa_store_open(&o, &s, &err))
    die("open", err.msg);
  if (pg) { /* a database of earlier runs emptied; the putter is another relay */
    memset(&q, 0, sizeof(q));
    if (spaa_store_delete(s, &q, &d, &err))
      die("emptying the database", err.msg);
    if (spaa_store_open(&o, &other, &err))
      die("open", err.msg);
  }
  printf("engine: %s\n", pg ? "PostgreSQL (the putter on a second store)" : "SQLite");
  t0 = now();
  fill(s, n_fill);
  t_fill = now() - t0;

  /* the floor: the putter alone, with the content of profiles that stay */
  memset(&base, 0, sizeof(base));
  base.s = other ? other : s;
  base.first = base.next = 10000000;
  base.reuse_base = n_fill / 2;
  base.reuse_mod = n_fill / 2;
  base.lat = calloc(MAX_LAT, sizeof(double));
  memset(&during, 0, sizeof(during));
  during = base;
  during.first = during.next = 20000000;
  during.reuse_base = 0; /* with the content of profiles being deleted: rows the sweep must keep */
  during.lat = calloc(MAX_LAT, sizeof(double));
  if (!base.lat || !during.lat)
    die("alloc", "out of memory");
  pthread_create(&th, NULL, putter_main, &base);
  usleep(2000000);
  __atomic_store_n(&base.stop, 1, __ATOMIC_RELEASE);
  pthread_join(th, NULL);

  /* the delete of the older half, with the putter running */
  pthread_create(&th, NULL, putter_main, &during);
  usleep(100000);
  memset(&q, 0, sizeof(q));
  q.received_before_ns = (int64_t)(n_fill / 2 + 1);
  t0 = now();
  if (spaa_store_delete(s, &q, &d, &err))
    die("delete", err.msg);
  t_del = now() - t0;
  usleep(100000);
  __atomic_store_n(&during.stop, 1, __ATOMIC_RELEASE);
  pthread_join(th, NULL);

  printf("filled %" PRIu64 " profiles (%d stacks each, %d of them shared) in %.2f s\n", n_fill,
         N_STACKS, N_COMMON, t_fill);
  printf("delete: %" PRIu64 " profiles, %" PRIu64 " stacks, %" PRIu64 " frames, %" PRIu64
         " dsos swept in %.3f s; %lld -> %lld bytes\n", d.profiles, d.stacks, d.frames, d.dsos,
         t_del, (long long)d.bytes_before, (long long)d.bytes_after);
  {
    uint64_t bad = check_back(s, &during) + check_back(s, &base);
    printf("profiles put during the delete: %zu, all read back: %s\n", during.n,
           bad ? "NO" : "yes");
    if (bad)
      die("check", "profiles put during the delete are unreadable");
  }
  lat_stats(&base, &b99, &bmax);
  lat_stats(&during, &d99, &dmax);
  printf("put latency, putter alone (floor): p99 %.2f ms, max %.2f ms over %zu puts\n",
         b99 * 1e3, bmax * 1e3, base.n);
  printf("put latency during the delete:     p99 %.2f ms, max %.2f ms over %zu puts\n",
         d99 * 1e3, dmax * 1e3, during.n);
  {
    struct spaa_store_stats st;
    spaa_store_stats(s, &st);
    printf("%s of the delete: %" PRIu64 ", %.2f ms on average, the longest %.2f ms\n",
           pg ? "sweep steps holding the lock (asked to COMMIT)" : "writer steps",
           st.steps, st.steps ? (double)st.step_ns / (double)st.steps / 1e6 : 0,
           (double)st.step_max_ns / 1e6);
  }
  printf("ratio during/floor: p99 %.2f, max %.2f (1.0 = the delete costs puts nothing)\n",
         b99 > 0 ? d99 / b99 : 0, bmax > 0 ? dmax / bmax : 0);
  spaa_store_close(other);
  spaa_store_close(s);
  free(base.lat);
  free(during.lat);
  {
    static const char *const suffix[] = {"", "-wal", "-shm"};
    char f[320];
    for (size_t i = 0; i < 3; i++) {
      snprintf(f, sizeof(f), "%s%s", db, suffix[i]);
      unlink(f);
    }
  }
  rmdir(dir);
  return 0;
}
