/* The storage contract, the same on every engine: put, get byte-identical, meta, list with
 * every filter and the keyset cursor, scan, delete and sweep (puts racing it included), dedup
 * counts, and, on an engine
 * several stores share (PostgreSQL), stores putting the same new stacks at once and opening
 * (migrating) a database together; a SQLite file refuses a second store while one is open. The location comes from SPAA_TEST_STORE (CTest
 * runs this program a second time with a throwaway PostgreSQL, tests/support/pg.sh); without
 * it, a SQLite file in a temporary directory. */
#include <pthread.h>
#include <unistd.h>

#include "tprofiles.h"

#include "base/limits.h"

static struct tdir g_dir;
static char g_loc[512];

/* 1 on an engine several stores (relays) share: PostgreSQL. A SQLite file is written by one
 * store at a time; another open of it is refused while the first is open. */
static int shared_engine(void) { return strncmp(g_loc, "postgres", 8) == 0; }

/* On SQLite: a second store on the file of the open one is refused, naming why. */
static void second_refused(void)
{
  struct spaa_store_opts o = {.path = g_loc, .queue_depth = 64, .batch_max = 16, .readers = 2,
                              .durability = SPAA_DURABILITY_FULL};
  struct spaa_store *t = NULL;
  struct spaa_err err = {0};
  assert_int_equal(spaa_store_open(&o, &t, &err), SPAA_E_STORE);
  assert_null(t);
  assert_non_null(strstr(err.msg, "is in use by another process"));
}

/* A store on the location, emptied first (a PostgreSQL database outlives a case). */
static struct spaa_store *open_empty(void)
{
  struct spaa_store *s = topen(g_loc, 64, 16);
  struct spaa_list_query all;
  struct spaa_store_deleted del;
  struct spaa_store_counts c;
  struct spaa_err err = {0};
  memset(&all, 0, sizeof(all));
  if (spaa_store_delete(s, &all, &del, &err))
    fail_msg("emptying the store: %s", err.msg);
  assert_int_equal(spaa_store_counts(s, &c, &err), 0);
  assert_int_equal(c.profiles, 0);
  return s;
}

static int setup(void **state)
{
  const char *env = getenv("SPAA_TEST_STORE");
  (void)state;
  tdir_make(&g_dir);
  snprintf(g_loc, sizeof(g_loc), "%s", env && *env ? env : g_dir.db);
  return 0;
}

static int teardown(void **state)
{
  (void)state;
  tdir_rm(&g_dir);
  return 0;
}

static void put_ok(struct spaa_store *s, const struct spaa_profile *p, const char *id,
                   const char *service, int64_t received, const char *labels, int want)
{
  struct spaa_meta m = {0};
  struct spaa_err err = {0};
  json_t *l = labels ? tjson(labels) : NULL;
  /* a and b carry Sentry-like attrs for the attribute filters */
  json_t *a = strcmp(id, "a") == 0   ? tjson("{\"release\":\"1.0\",\"trace_id\":\"t1\"}")
              : strcmp(id, "b") == 0 ? tjson("{\"release\":\"2.0\",\"n\":3}")
                                     : NULL;
  int rc;
  m.attrs = a;
  m.id = id;
  m.service = service;
  m.source = strcmp(service, "api") == 0 ? "otlp" : "pprof";
  m.received_ns = received;
  m.start_ns = received * 10;
  m.end_ns = received * 10 + 5;
  m.payload_bytes = 42;
  m.labels = l;
  rc = spaa_store_put(s, p, &m, &err);
  if (rc != want)
    fail_msg("put %s: %d (want %d) %s", id, rc, want, err.msg);
  json_decref(l);
  json_decref(a);
}

static void assert_same(struct spaa_store *s, const char *id, const char *want)
{
  struct spaa_profile *q = NULL;
  struct spaa_err err = {0};
  char *got;
  if (spaa_store_get(s, id, &q, &err))
    fail_msg("get %s: %s", id, err.msg);
  got = twrite(q);
  assert_string_equal(got, want);
  free(got);
  spaa_profile_free(q);
}

static struct spaa_store_counts counts(struct spaa_store *s)
{
  struct spaa_store_counts c;
  struct spaa_err err = {0};
  assert_int_equal(spaa_store_counts(s, &c, &err), 0);
  return c;
}

static void test_put_get_identical(void **state)
{
  struct spaa_store *s = open_empty();
  struct spaa_profile *p[3] = {tp_rich(SPAA_LEAF_TO_ROOT, 0), tp_rich(SPAA_ROOT_TO_LEAF, 1),
                               tp_small(7, 20)};
  static const char *const ids[3] = {"r1", "r2", "small"};
  struct spaa_profile *q = NULL;
  struct spaa_store_profile_info pi;
  struct spaa_err err = {0};
  (void)state;
  for (size_t i = 0; i < 3; i++) {
    char *want = twrite(p[i]);
    put_ok(s, p[i], ids[i], "web", 100 + (int64_t)i, "{\"env\":\"prod\"}", 0);
    assert_same(s, ids[i], want);
    free(want);
  }
  put_ok(s, p[0], "r1", "web", 100, NULL, 1); /* the id again: nothing written */
  assert_int_equal(counts(s).profiles, 3);
  assert_int_equal(spaa_store_get(s, "nope", &q, &err), SPAA_E_NOT_FOUND);
  assert_int_equal(spaa_store_meta(s, "small", &pi, &err), 0);
  assert_string_equal(pi.service, "web");
  assert_string_equal(pi.source, "pprof");
  assert_int_equal(pi.received_ns, 102);
  assert_int_equal(pi.start_ns, 1020);
  assert_int_equal(pi.samples, 20);
  assert_int_equal(pi.n_labels, 1);
  assert_string_equal(pi.labels[0].value, "prod");
  assert_int_equal(pi.n_events, 1);
  assert_string_equal(pi.events[0].name, "cpu");
  spaa_store_profile_info_free(&pi);
  for (size_t i = 0; i < 3; i++)
    spaa_profile_free(p[i]);
  spaa_store_close(s);
}

static void expect_list(struct spaa_store *s, const struct spaa_list_query *q, const char *want)
{
  struct spaa_store_page pg;
  struct spaa_err err = {0};
  char buf[256];
  size_t n = 0;
  buf[0] = 0;
  if (spaa_store_list(s, q, &pg, &err))
    fail_msg("list: %s", err.msg);
  for (size_t i = 0; i < pg.n; i++)
    n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s", i ? "," : "", pg.profiles[i].id);
  assert_string_equal(buf, want);
  spaa_store_page_free(&pg);
}

#define FILTERS(...) ((const struct spaa_store_label_filter[]){__VA_ARGS__})

static void test_list_filters(void **state)
{
  struct spaa_store *s = open_empty();
  struct spaa_profile *p = tp_small(3, 2);
  struct spaa_list_query q;
  struct spaa_store_page pg;
  struct spaa_err err = {0};
  (void)state;
  put_ok(s, p, "a", "web", 10, "{\"env\":\"prod\",\"region\":\"eu\"}", 0);
  put_ok(s, p, "b", "web", 20, "{\"env\":\"prod\"}", 0);
  put_ok(s, p, "c", "api", 20, "{\"env\":\"dev\",\"region\":\"eu\"}", 0);
  put_ok(s, p, "d", "api", 30, NULL, 0);
  memset(&q, 0, sizeof(q));
  expect_list(s, &q, "d,c,b,a");
  q.service = "web";
  expect_list(s, &q, "b,a");
  q.service = NULL;
  q.source = "otlp";
  expect_list(s, &q, "d,c");
  q.source = NULL;
  q.event = "cpu";
  expect_list(s, &q, "d,c,b,a");
  q.event = "wall";
  expect_list(s, &q, "");
  q.event = NULL;
  q.labels = FILTERS({"env", "prod"}, {"region", "eu"});
  q.n_labels = 2;
  expect_list(s, &q, "a");
  q.labels = FILTERS({"region", "eu"});
  q.n_labels = 1;
  expect_list(s, &q, "c,a");
  q.n_labels = 0;
  q.from_ns = 200; /* a: 100-105, b and c: 200-205, d: 300-305 */
  q.to_ns = 205;
  expect_list(s, &q, "c,b");
  q.to_ns = 0;
  expect_list(s, &q, "d,c,b");
  q.from_ns = 0;
  q.received_from_ns = 20; /* received time: a 10, b and c 20, d 30 */
  expect_list(s, &q, "d,c,b");
  q.received_to_ns = 20;
  expect_list(s, &q, "c,b");
  q.received_from_ns = q.received_to_ns = 0;
  q.metric = "samples";
  expect_list(s, &q, "d,c,b,a");
  q.metric = "bytes";
  expect_list(s, &q, "");
  q.metric = NULL;
  q.attrs = FILTERS({"release", "1.0"});
  q.n_attrs = 1;
  expect_list(s, &q, "a");
  q.attrs = FILTERS({"release", "1.0"}, {"trace_id", "t2"});
  q.n_attrs = 2;
  expect_list(s, &q, "");
  q.attrs = FILTERS({"n", "3"}); /* a number is not the string "3" */
  q.n_attrs = 1;
  expect_list(s, &q, "");
  q.attrs = FILTERS({"release'", "1.0"}); /* only [A-Za-z0-9_] names */
  assert_int_equal(spaa_store_list(s, &q, &pg, &err), SPAA_E_BAD_REQUEST);
  spaa_store_page_free(&pg);
  q.n_attrs = 0;
  q.received_before_ns = 30; /* what retention selects: d came at 30, not before */
  expect_list(s, &q, "c,b,a");
  q.received_before_ns = 11;
  expect_list(s, &q, "a");
  {
    /* and deletes: only what came before */
    struct spaa_store_deleted del;
    assert_int_equal(spaa_store_delete(s, &q, &del, &err), 0);
    assert_int_equal(del.profiles, 1);
    q.received_before_ns = 0;
    expect_list(s, &q, "d,c,b");
    put_ok(s, p, "a", "web", 10, "{\"env\":\"prod\",\"region\":\"eu\"}", 0);
  }
  /* keyset pages of one: the received tie (b, c) broken by id descending */
  memset(&q, 0, sizeof(q));
  q.limit = 2;
  assert_int_equal(spaa_store_list(s, &q, &pg, &err), 0);
  assert_int_equal(pg.n, 2);
  assert_true(pg.has_next);
  assert_string_equal(pg.next.id, "c");
  {
    struct spaa_store_cursor after = {pg.next.received_ns, strdup(pg.next.id)};
    spaa_store_page_free(&pg);
    q.after = &after;
    expect_list(s, &q, "b,a");
    free((char *)after.id);
  }
  q.after = NULL;
  q.limit = SPAA_QUERY_MAX_PAGE + 1;
  assert_int_equal(spaa_store_list(s, &q, &pg, &err), SPAA_E_BAD_REQUEST);
  spaa_profile_free(p);
  spaa_store_close(s);
}

struct scan_sum {
  int64_t samples;
  size_t stacks;
  int64_t stack[8]; /* the first 8 stack numbers seen */
};

static int sum_stack(void *ctx, const struct spaa_store_scan_stack *st)
{
  struct scan_sum *x = ctx;
  for (size_t i = 0; i < st->n_weights; i++)
    if (strcmp(st->weights[i].metric, "samples") == 0)
      x->samples += st->weights[i].value.i;
  if (x->stacks < 8)
    x->stack[x->stacks] = st->stack;
  x->stacks++;
  return 0;
}

static void test_scan(void **state)
{
  struct spaa_store *s = open_empty();
  struct spaa_profile *p = tp_small(4, 0), *one = tp_small(1, 0);
  struct spaa_list_query q;
  struct scan_sum x;
  struct spaa_err err = {0};
  (void)state;
  put_ok(s, p, "p1", "web", 10, NULL, 0);
  put_ok(s, one, "p2", "web", 20, NULL, 0);
  put_ok(s, p, "p3", "api", 30, NULL, 0);
  memset(&q, 0, sizeof(q));
  memset(&x, 0, sizeof(x));
  q.service = "web";
  assert_int_equal(spaa_store_scan(s, &q, sum_stack, &x, &err), 0);
  assert_int_equal(x.stacks, 5);
  assert_int_equal(x.samples, 1 + (1 + 2 + 3 + 4));
  memset(&x, 0, sizeof(x));
  q.service = NULL;
  q.limit = 2; /* the two newest: p3 then p2 */
  assert_int_equal(spaa_store_scan(s, &q, sum_stack, &x, &err), 0);
  assert_int_equal(x.stacks, 5);
  /* p2's only stack is one of p3's: the same stack number */
  memset(&q, 0, sizeof(q));
  q.source = "pprof";
  q.limit = 1;
  memset(&x, 0, sizeof(x));
  assert_int_equal(spaa_store_scan(s, &q, sum_stack, &x, &err), 0);
  assert_int_equal(x.stacks, 1);
  {
    int64_t stack = x.stack[0], seen = 0;
    struct scan_sum y;
    memset(&y, 0, sizeof(y));
    q.source = "otlp";
    assert_int_equal(spaa_store_scan(s, &q, sum_stack, &y, &err), 0);
    assert_int_equal(y.stacks, 4);
    for (size_t i = 0; i < y.stacks; i++)
      seen += y.stack[i] == stack;
    assert_int_equal(seen, 1);
  }
  spaa_profile_free(p);
  spaa_profile_free(one);
  spaa_store_close(s);
}

static void test_dedup_delete_sweep(void **state)
{
  struct spaa_store *s = open_empty();
  struct spaa_profile *p = tp_rich(SPAA_LEAF_TO_ROOT, 0), *small = tp_small(5, 3);
  struct spaa_store_counts c1, c2, c3;
  struct spaa_list_query q;
  struct spaa_store_deleted del;
  struct spaa_err err = {0};
  char *want = twrite(p);
  (void)state;
  put_ok(s, p, "x1", "web", 10, NULL, 0);
  c1 = counts(s);
  put_ok(s, p, "x2", "api", 20, NULL, 0);
  c2 = counts(s);
  assert_int_equal(c2.profiles, 2);
  assert_int_equal(c2.stacks, c1.stacks);
  assert_int_equal(c2.frames, c1.frames);
  assert_int_equal(c2.dsos, c1.dsos);
  assert_int_equal(c2.profile_stacks, 2 * c1.profile_stacks);
  put_ok(s, small, "y", "web", 30, NULL, 0);
  c3 = counts(s);
  assert_true(c3.stacks > c2.stacks);
  memset(&q, 0, sizeof(q));
  q.service = "web";
  assert_int_equal(spaa_store_delete(s, &q, &del, &err), 0);
  assert_int_equal(del.profiles, 2);
  assert_int_equal(del.stacks, (uint64_t)(c3.stacks - c2.stacks)); /* small's own stacks */
  assert_int_equal(counts(s).stacks, c1.stacks);
  assert_same(s, "x2", want);
  memset(&q, 0, sizeof(q));
  assert_int_equal(spaa_store_delete(s, &q, &del, &err), 0);
  assert_int_equal(del.profiles, 1);
  c3 = counts(s);
  assert_int_equal(c3.stacks, 0);
  assert_int_equal(c3.frames, 0);
  assert_int_equal(c3.dsos, 0);
  /* a put after the sweep writes its rows again and reads back the same */
  put_ok(s, p, "x3", "web", 40, NULL, 0);
  assert_same(s, "x3", want);
  assert_int_equal(counts(s).stacks, c1.stacks);
  free(want);
  spaa_profile_free(p);
  spaa_profile_free(small);
  spaa_store_close(s);
}

/* Uploads racing a sweep: put from inside it (spaa_store__sweep_hook), once it has read what
 * the remaining profiles name and before it deletes anything. */
struct racer {
  struct spaa_store *s[2];  /* the deleting store, and another one on the same database */
  size_t n;                 /* stores putting */
  const struct spaa_profile *p;
  int calls;
};

static void put_racing(void *arg)
{
  struct racer *r = arg;
  char id[32];
  size_t i;
  r->calls++;
  for (i = 0; i < r->n; i++) {
    snprintf(id, sizeof(id), "race%zu", i);
    put_ok(r->s[i], r->p, id, "live", 100 + (int64_t)i, NULL, 0);
  }
}

/* A profile put while a sweep runs keeps every row it takes, on any store: here the rows of
 * the deleted profile, which only it named when the sweep read the blocks. */
static void test_put_during_sweep(void **state)
{
  struct spaa_store *s = open_empty(), *b = NULL;
  struct spaa_profile *p = tp_rich(SPAA_LEAF_TO_ROOT, 0), *small = tp_small(5, 3);
  struct spaa_store_counts before, after;
  struct spaa_list_query q;
  struct spaa_store_deleted del;
  struct spaa_err err = {0};
  struct racer r;
  char *want = twrite(p);
  (void)state;
  put_ok(s, p, "old", "old", 10, NULL, 0);
  put_ok(s, small, "keep", "keep", 20, NULL, 0);
  before = counts(s);
  memset(&r, 0, sizeof(r));
  r.s[r.n++] = s;
  if (shared_engine()) /* another relay's put too */
    r.s[r.n++] = b = topen(g_loc, 64, 16);
  r.p = p;
  spaa_store__sweep_hook(s, put_racing, &r);
  memset(&q, 0, sizeof(q));
  q.service = "old";
  assert_int_equal(spaa_store_delete(s, &q, &del, &err), 0);
  spaa_store__sweep_hook(s, NULL, NULL);
  assert_int_equal(r.calls, 1);
  assert_int_equal(del.profiles, 1);
  /* every stack, frame and dso of the deleted profile is a racing put's now */
  assert_int_equal(del.stacks, 0);
  assert_int_equal(del.frames, 0);
  assert_int_equal(del.dsos, 0);
  after = counts(s);
  assert_int_equal(after.profiles, 1 + (int64_t)r.n);
  assert_int_equal(after.stacks, before.stacks);
  assert_int_equal(after.frames, before.frames);
  assert_int_equal(after.dsos, before.dsos);
  assert_same(s, "race0", want);
  if (b) {
    assert_same(s, "race1", want);
    assert_same(b, "race0", want);
  }
  /* a delete once they are gone too sweeps those rows */
  memset(&q, 0, sizeof(q));
  q.service = "live";
  assert_int_equal(spaa_store_delete(s, &q, &del, &err), 0);
  assert_int_equal(del.profiles, (uint64_t)r.n);
  after = counts(s);
  assert_int_equal(after.stacks, (int64_t)small->n_stacks);
  assert_true(del.stacks > 0);
  spaa_store_close(b);
  free(want);
  spaa_profile_free(p);
  spaa_profile_free(small);
  spaa_store_close(s);
}

/* ---- several stores on one database at once ------------------------------------------------ */

#define RELAYS 4

struct relay {
  struct spaa_store *s;
  const struct spaa_profile *p;
  int idx, rc;
};

static void *relay_put(void *arg)
{
  struct relay *r = arg;
  char id[16];
  struct spaa_meta m = {0};
  struct spaa_err err = {0};
  snprintf(id, sizeof(id), "c%d", r->idx);
  m.id = id;
  m.service = "web";
  m.source = "spaa";
  m.received_ns = r->idx + 1;
  r->rc = spaa_store_put(r->s, r->p, &m, &err);
  if (r->rc)
    print_error("relay %d: %s\n", r->idx, err.msg);
  return NULL;
}

static void *relay_open(void *arg)
{
  struct relay *r = arg;
  r->s = topen(g_loc, 64, 16);
  return NULL;
}

static void test_concurrent_stores(void **state)
{
  struct spaa_store *s = open_empty();
  struct spaa_profile *p = tp_rich(SPAA_ROOT_TO_LEAF, 1);
  struct relay r[RELAYS];
  pthread_t t[RELAYS];
  struct spaa_store_counts c, c2;
  char *want;
  (void)state;
  if (!shared_engine()) {
    second_refused();
    spaa_profile_free(p);
    spaa_store_close(s);
    return;
  }
  want = twrite(p);
  /* opening together: the schema migrated once, every open succeeds */
  for (int i = 0; i < RELAYS; i++) {
    memset(&r[i], 0, sizeof(r[i]));
    r[i].idx = i;
    r[i].p = p;
    assert_int_equal(pthread_create(&t[i], NULL, relay_open, &r[i]), 0);
  }
  for (int i = 0; i < RELAYS; i++)
    pthread_join(t[i], NULL);
  /* the same new stacks from every store at once: one row each, every put stored */
  for (int i = 0; i < RELAYS; i++)
    assert_int_equal(pthread_create(&t[i], NULL, relay_put, &r[i]), 0);
  for (int i = 0; i < RELAYS; i++)
    pthread_join(t[i], NULL);
  for (int i = 0; i < RELAYS; i++)
    assert_int_equal(r[i].rc, 0);
  c = counts(s);
  assert_int_equal(c.profiles, RELAYS);
  assert_int_equal(c.stacks, (int64_t)p->n_stacks);
  assert_true(c.frames <= (int64_t)p->n_frames);
  {
    struct relay again = r[0];
    again.idx = RELAYS; /* once more alone: nothing new */
    relay_put(&again);
    assert_int_equal(again.rc, 0);
    c2 = counts(s);
    assert_int_equal(c2.stacks, c.stacks);
    assert_int_equal(c2.frames, c.frames);
    assert_int_equal(c2.dsos, c.dsos);
  }
  for (int i = 0; i < RELAYS; i++) {
    char id[16];
    snprintf(id, sizeof(id), "c%d", i);
    assert_same(r[(i + 1) % RELAYS].s, id, want);
  }
  for (int i = 0; i < RELAYS; i++)
    spaa_store_close(r[i].s);
  free(want);
  spaa_profile_free(p);
  spaa_store_close(s);
}

/* Concurrent puts queued together share one transaction, each answered after it. */
static void test_grouped_puts(void **state)
{
  struct spaa_store *s = open_empty();
  struct spaa_profile *p = tp_rich(SPAA_LEAF_TO_ROOT, 1);
  struct spaa_store_stats before, st;
  struct relay r[8];
  pthread_t t[8];
  int i, spins;
  (void)state;
  spaa_store_stats(s, &before);
  spaa_store__pause(s, 1);
  for (i = 0; i < 8; i++) {
    memset(&r[i], 0, sizeof(r[i]));
    r[i].s = s;
    r[i].p = p;
    r[i].idx = 10 + i;
    assert_int_equal(pthread_create(&t[i], NULL, relay_put, &r[i]), 0);
  }
  /* every put queued before the writer may take any (no timing: the queue is watched) */
  for (spins = 0; spins < 20000; spins++) {
    spaa_store_stats(s, &st);
    if (st.queued == 8)
      break;
    usleep(1000);
  }
  assert_int_equal(st.queued, 8);
  spaa_store__pause(s, 0);
  for (i = 0; i < 8; i++)
    pthread_join(t[i], NULL);
  for (i = 0; i < 8; i++)
    assert_int_equal(r[i].rc, 0);
  spaa_store_stats(s, &st);
  assert_int_equal(st.transactions - before.transactions, 1);
  assert_int_equal(st.stored - before.stored, 8);
  assert_int_equal(counts(s).profiles, 8);
  spaa_profile_free(p);
  spaa_store_close(s);
}

/* Two stores storing the same two new profiles in crossed order, each pair in one
 * transaction: on PostgreSQL each waits for the other's new rows, a deadlock the database
 * breaks by aborting one transaction; the writer runs that batch again, so both commit. */
struct crossed {
  struct spaa_store *s;
  const struct spaa_profile *p[2];
  const char *ids[2];
  pthread_barrier_t *go;
  int rcs[2], rc;
};

static void *crossed_put(void *arg)
{
  struct crossed *x = arg;
  struct spaa_meta m[2];
  struct spaa_err errs[2];
  memset(m, 0, sizeof(m));
  for (int i = 0; i < 2; i++) {
    m[i].id = x->ids[i];
    m[i].service = "web";
    m[i].source = "spaa";
    m[i].received_ns = 100 + i;
  }
  pthread_barrier_wait(x->go);
  x->rc = spaa_store_put_many(x->s, 2, x->p, m, x->rcs, errs);
  for (int i = 0; i < 2; i++)
    if (x->rcs[i])
      print_error("%s: %s\n", x->ids[i], errs[i].msg);
  return NULL;
}

static void test_crossed_batches(void **state)
{
  struct spaa_store *s = open_empty(), *t;
  struct spaa_profile *a, *b;
  pthread_barrier_t go;
  pthread_t th[2];
  char *want;
  (void)state;
  if (!shared_engine()) { /* one store per SQLite file: nothing to cross */
    second_refused();
    spaa_store_close(s);
    return;
  }
  t = topen(g_loc, 64, 16);
  a = tp_rich(SPAA_LEAF_TO_ROOT, 1);
  b = tp_small(40, 0);
  want = twrite(a);
  struct crossed x[2] = {{s, {a, b}, {"xa1", "xb1"}, NULL, {0, 0}, 0},
                         {t, {b, a}, {"xb2", "xa2"}, NULL, {0, 0}, 0}};
  pthread_barrier_init(&go, NULL, 2);
  for (int i = 0; i < 2; i++) {
    x[i].go = &go;
    assert_int_equal(pthread_create(&th[i], NULL, crossed_put, &x[i]), 0);
  }
  for (int i = 0; i < 2; i++)
    pthread_join(th[i], NULL);
  for (int i = 0; i < 2; i++) {
    assert_int_equal(x[i].rc, 0);
    assert_int_equal(x[i].rcs[0], 0);
    assert_int_equal(x[i].rcs[1], 0);
  }
  assert_int_equal(counts(s).profiles, 4);
  assert_int_equal(counts(s).stacks, (int64_t)(a->n_stacks + b->n_stacks));
  assert_same(t, "xa1", want);
  assert_same(s, "xa2", want);
  pthread_barrier_destroy(&go);
  free(want);
  spaa_profile_free(a);
  spaa_profile_free(b);
  spaa_store_close(t);
  spaa_store_close(s);
}

/* ---- discovery ------------------------------------------------------------------------------ */

/* Every stack handed over, as text: "event type id: func@dso(srcline)+addr<-...\n". */
struct stack_text {
  char buf[4096];
  size_t len;
  int64_t numbers[16];
  size_t n;
};

static int stack_text_cb(void *ctx, const struct spaa_store_stack_info *st)
{
  struct stack_text *t = ctx;
  t->len += (size_t)snprintf(t->buf + t->len, sizeof(t->buf) - t->len, "%s %s %s:", st->event,
                             st->stack_type, st->id);
  for (size_t i = 0; i < st->n_frames; i++) {
    const struct spaa_store_frame_info *f = &st->frames[i];
    t->len += (size_t)snprintf(t->buf + t->len, sizeof(t->buf) - t->len, "%s%s@%s(%s)/%s/%d",
                               i ? "<-" : " ", f->func, f->dso ? f->dso : "-",
                               f->srcline ? f->srcline : "-", f->kind, f->inline_depth);
    if (f->has_addr)
      t->len += (size_t)snprintf(t->buf + t->len, sizeof(t->buf) - t->len, "+%llx",
                                 (unsigned long long)f->addr);
  }
  t->len += (size_t)snprintf(t->buf + t->len, sizeof(t->buf) - t->len, "\n");
  if (t->n < 16)
    t->numbers[t->n++] = st->number;
  return 0;
}

static int first_stacks(void *ctx, const struct spaa_store_scan_stack *st)
{
  struct stack_text *t = ctx;
  for (size_t i = 0; i < t->n; i++)
    if (t->numbers[i] == st->stack)
      return 0;
  if (t->n < 16)
    t->numbers[t->n++] = st->stack;
  return 0;
}

/* tp_rich's stacks as any engine must give them back: content ids, frames leaf first with
 * their dso (build id, else name), an unresolved frame's dso-relative address */
static const char RICH_STACKS[] =
  "cycles unified 0x20643d0ff5d45dd8586705108476ee2a: @abcdef01(-)/user/0+2234"
  "<-main@/app/bin(main.c:10)/user/0\n"
  "cycles unified 0xa0d32fb8358bf54c2e86eb16613d00c3: memcpy@abcdef01(-)/user/0"
  "<-helper@/app/bin(util.h:3)/user/1<-main@/app/bin(main.c:10)/user/0\n"
  "cycles kernel 0x7b940390e8061949d828d1a331bef054: schedule@[kernel.kallsyms](-)/kernel/0\n"
  "cycles unified 0xdfd4a64f6be6a8af0569082378d9dec7: memcpy@abcdef01(-)/user/0"
  "<-main@/app/bin(main.c:10)/user/0\n"
  "cycles unified 0xfdc4207999af9fef141eb02f11ed928d:\n"
  "alloc unified 0xc492573fe34397f5beb70992c0f4c089: alloc_obj@abcdef01(-)/user/0"
  "<-@-(-)/unknown/0\n";

/* (a macro: the call must run before v and n are read) */
#define EXPECT_NAMES(call, want)                                                              \
  do {                                                                                        \
    int rc_ = (call);                                                                         \
    expect_names(rc_, v, n, want);                                                            \
    v = NULL;                                                                                 \
    n = 0;                                                                                    \
  } while (0)

static void expect_names(int rc, struct spaa_store_name_count *v, size_t n, const char *want)
{
  char buf[512];
  size_t len = 0;
  buf[0] = 0;
  assert_int_equal(rc, 0);
  for (size_t i = 0; i < n; i++) {
    len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s=%lld", i ? " " : "", v[i].name,
                            (long long)v[i].count);
    if (v[i].sources)
      len += (size_t)snprintf(buf + len, sizeof(buf) - len, "[%s %lld..%lld %s]", v[i].sources,
                              (long long)v[i].first_ns, (long long)v[i].last_ns,
                              v[i].events_json ? v[i].events_json : "-");
  }
  assert_string_equal(buf, want);
  spaa_store_names_free(v, n);
}

static void test_discovery(void **state)
{
  struct spaa_store *s = open_empty();
  struct spaa_profile *rich = tp_rich(SPAA_LEAF_TO_ROOT, 0), *small = tp_small(3, 0);
  struct spaa_store_name_count *v = NULL;
  struct stack_text scanned, got, one;
  struct spaa_list_query q;
  struct spaa_err err = {0};
  size_t n = 0;
  (void)state;
  put_ok(s, small, "a", "web", 10, "{\"env\":\"prod\",\"zone\":\"z1\"}", 0);
  put_ok(s, rich, "b", "web", 20, "{\"env\":\"dev\"}", 0);
  put_ok(s, small, "c", "api", 30, "{\"env\":\"prod\"}", 0);
  EXPECT_NAMES(spaa_store_services(s, &v, &n, &err),
               "api=1[otlp 30..30 {\"cpu\":[\"cpu_time\",\"samples\"]}] "
               "web=2[pprof 10..20 {\"alloc\":[\"bytes\"],\"cpu\":[\"cpu_time\",\"samples\"],"
               "\"cycles\":[\"period\",\"samples\"]}]");
  EXPECT_NAMES(spaa_store_label_keys(s, &v, &n, &err), "env=3 zone=1");
  EXPECT_NAMES(spaa_store_label_values(s, "env", &v, &n, &err), "dev=1 prod=2");
  EXPECT_NAMES(spaa_store_label_values(s, "nope", &v, &n, &err), "");
  /* the rich profile's stacks by the numbers a scan gives, in the order asked */
  memset(&q, 0, sizeof(q));
  q.service = "web";
  q.limit = 1;
  memset(&scanned, 0, sizeof(scanned));
  memset(&got, 0, sizeof(got));
  assert_int_equal(spaa_store_scan(s, &q, first_stacks, &scanned, &err), 0);
  assert_int_equal(scanned.n, rich->n_stacks);
  scanned.numbers[scanned.n++] = -5; /* names no stack: skipped */
  assert_int_equal(spaa_store_stacks(s, scanned.numbers, scanned.n, stack_text_cb, &got, &err),
                   0);
  assert_int_equal(got.n, rich->n_stacks);
  for (size_t i = 0; i < got.n; i++)
    assert_int_equal(got.numbers[i], scanned.numbers[i]);
  assert_string_equal(got.buf, RICH_STACKS);
  /* each again by its content id */
  for (const char *line = got.buf; *line; line = strchr(line, '\n') + 1) {
    char id[48];
    const char *at = strstr(line, " 0x");
    memset(&one, 0, sizeof(one));
    snprintf(id, sizeof(id), "%.34s", at + 1);
    assert_int_equal(spaa_store_stack_by_id(s, id, stack_text_cb, &one, &err), 0);
    assert_int_equal(one.n, 1);
    assert_int_equal(strncmp(one.buf, line, one.len), 0);
  }
  assert_int_equal(spaa_store_stack_by_id(s, "0x00000000000000000000000000000000", stack_text_cb,
                                          &one, &err), SPAA_E_NOT_FOUND);
  assert_int_equal(spaa_store_stack_by_id(s, "s1", stack_text_cb, &one, &err), SPAA_E_NOT_FOUND);
  spaa_profile_free(rich);
  spaa_profile_free(small);
  spaa_store_close(s);
}

/* Leadership of the upkeep: one store at a time on a shared engine, handed over when the
 * leader closes; an engine only one process writes (SQLite) always leads. */
static void test_leadership(void **state)
{
  struct spaa_store *a = open_empty(), *b, *c;
  struct spaa_err err = {0};
  int shared = shared_engine();
  (void)state;
  if (!shared) { /* the only store on its file: it leads, and no other opens */
    assert_int_equal(spaa_store_lead(a, &err), 1);
    second_refused();
    spaa_store_close(a);
    b = topen(g_loc, 64, 16); /* once closed, the file opens again */
    assert_int_equal(spaa_store_lead(b, &err), 1);
    spaa_store_close(b);
    return;
  }
  b = topen(g_loc, 64, 16);
  assert_int_equal(spaa_store_lead(a, &err), 1);
  assert_int_equal(spaa_store_lead(a, &err), 1); /* asked again: still */
  assert_int_equal(spaa_store_lead(b, &err), shared ? 0 : 1);
  spaa_store_close(a);
  assert_int_equal(spaa_store_lead(b, &err), 1);
  c = topen(g_loc, 64, 16);
  assert_int_equal(spaa_store_lead(c, &err), shared ? 0 : 1);
  assert_int_equal(spaa_store_lead(b, &err), 1);
  spaa_store_close(c);
  spaa_store_close(b);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown(test_put_get_identical, setup, teardown),
    cmocka_unit_test_setup_teardown(test_list_filters, setup, teardown),
    cmocka_unit_test_setup_teardown(test_scan, setup, teardown),
    cmocka_unit_test_setup_teardown(test_dedup_delete_sweep, setup, teardown),
    cmocka_unit_test_setup_teardown(test_put_during_sweep, setup, teardown),
    cmocka_unit_test_setup_teardown(test_concurrent_stores, setup, teardown),
    cmocka_unit_test_setup_teardown(test_grouped_puts, setup, teardown),
    cmocka_unit_test_setup_teardown(test_crossed_batches, setup, teardown),
    cmocka_unit_test_setup_teardown(test_discovery, setup, teardown),
    cmocka_unit_test_setup_teardown(test_leadership, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
