/* storage/sqlite/delete.c and sweep.c: a sweep keeps what puts take while it runs. The test
 * hook puts profiles between the sweep's scan of the blocks and its deletes: one with the
 * content of the profile just deleted (its rows look orphaned to the scan), one of a new
 * service; both read back whole afterwards, and the store holds exactly the rows a fresh
 * store given the same surviving profiles holds (no orphan left, nothing missing). */
#include "tprofiles.h"

#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "storage/sqlite/sqlite_int.h"

static struct spaa_meta tmeta(const char *id, const char *service, int64_t received)
{
  struct spaa_meta m = {0};
  m.id = id;
  m.service = service;
  m.source = "spaa";
  m.received_ns = received;
  return m;
}

static void put_ok(struct spaa_store *s, const struct spaa_profile *p, const char *id,
                   const char *service, int64_t received)
{
  struct spaa_meta m = tmeta(id, service, received);
  struct spaa_err err = {0};
  int rc = spaa_store_put(s, p, &m, &err);
  if (rc)
    fail_msg("put %s: %d %s", id, rc, err.msg);
}

static void assert_reads_as(struct spaa_store *s, const char *id, const char *want)
{
  struct spaa_profile *q = NULL;
  struct spaa_err err = {0};
  char *got;
  int rc = spaa_store_get(s, id, &q, &err);
  if (rc)
    fail_msg("get %s: %d %s", id, rc, err.msg);
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

/* What the hook puts, and whether it ran. */
struct during {
  struct spaa_store *s;
  const struct spaa_profile *again, *fresh;
  int ran;
};

static void put_during(void *ctx)
{
  struct during *d = ctx;
  put_ok(d->s, d->again, "again", "a", 3);
  put_ok(d->s, d->fresh, "fresh", "c", 4);
  d->ran++;
}

static void test_sweep_keeps_rows_put_meanwhile(void **state)
{
  struct tdir t, t2;
  struct spaa_store *s;
  struct spaa_profile *rich = tp_rich(SPAA_LEAF_TO_ROOT, 0), *small = tp_small(3, 2);
  struct spaa_profile *fresh = tp_small(5, 0);
  char *want_rich = twrite(rich), *want_small = twrite(small), *want_fresh = twrite(fresh);
  struct spaa_list_query q = {0};
  struct spaa_store_deleted d;
  struct spaa_store_counts c, ref;
  struct spaa_store_stats st0, st1;
  struct spaa_err err = {0};
  struct during dur = {0};
  (void)state;
  tdir_make(&t);
  s = topen(t.db, 8, 8);
  put_ok(s, rich, "gone", "a", 1);
  put_ok(s, small, "stay", "b", 2);
  spaa_store_stats(s, &st0);
  dur.s = s;
  dur.again = rich;
  dur.fresh = fresh;
  ((struct storage__sqlite *)s)->sweep_hook = put_during;
  ((struct storage__sqlite *)s)->sweep_hook_ctx = &dur;
  q.service = "a";
  assert_int_equal(spaa_store_delete(s, &q, &d, &err), 0);
  assert_int_equal(dur.ran, 1);
  assert_int_equal(d.profiles, 1); /* "again" came after the selection */
  /* every row of "gone" was taken again by "again", its dictionary too */
  assert_int_equal(d.stacks + d.frames + d.dsos + d.dicts, 0);
  assert_reads_as(s, "again", want_rich);
  assert_reads_as(s, "fresh", want_fresh);
  assert_reads_as(s, "stay", want_small);
  /* the dedup counters went on through the sweep's emptying of the cache */
  spaa_store_stats(s, &st1);
  assert_true(st1.cache_hits >= st0.cache_hits && st1.cache_misses >= st0.cache_misses);
  c = counts(s);
  ((struct storage__sqlite *)s)->sweep_hook = NULL;

  /* the same survivors in a fresh store: the same shared rows */
  tdir_make(&t2);
  {
    struct spaa_store *s2 = topen(t2.db, 8, 8);
    put_ok(s2, small, "stay", "b", 2);
    put_ok(s2, rich, "again", "a", 3);
    put_ok(s2, fresh, "fresh", "c", 4);
    ref = counts(s2);
    spaa_store_close(s2);
  }
  tdir_rm(&t2);
  assert_int_equal(c.profiles, 3);
  assert_int_equal(c.stacks, ref.stacks);
  assert_int_equal(c.frames, ref.frames);
  assert_int_equal(c.dsos, ref.dsos);

  /* without a put meanwhile the same delete sweeps the rows only "again" names */
  q.service = "a";
  assert_int_equal(spaa_store_delete(s, &q, &d, &err), 0);
  assert_int_equal(d.profiles, 1);
  assert_true(d.stacks > 0 && d.frames > 0 && d.dsos > 0 && d.dicts == 1);
  assert_reads_as(s, "stay", want_small);
  assert_reads_as(s, "fresh", want_fresh);
  spaa_store_close(s);
  /* after a reopen as well */
  s = topen(t.db, 8, 8);
  assert_reads_as(s, "stay", want_small);
  assert_reads_as(s, "fresh", want_fresh);
  spaa_store_close(s);
  tdir_rm(&t);
  free(want_rich);
  free(want_small);
  free(want_fresh);
  spaa_profile_free(rich);
  spaa_profile_free(small);
  spaa_profile_free(fresh);
}

/* Puts from another thread all through a delete of most of the store: each one acknowledged
 * reads back whole, and nothing is left that no profile names. */
struct putter {
  struct spaa_store *s;
  const struct spaa_profile *p;
  int stop;   /* atomic */
  int n;      /* profiles put */
};

static void *putter_main(void *arg)
{
  struct putter *pt = arg;
  while (!__atomic_load_n(&pt->stop, __ATOMIC_ACQUIRE) && pt->n < 500) {
    char id[32];
    snprintf(id, sizeof(id), "live%d", pt->n);
    put_ok(pt->s, pt->p, id, "live", 1000 + pt->n);
    pt->n++;
  }
  return NULL;
}

static void test_delete_with_puts_running(void **state)
{
  struct tdir t;
  struct spaa_store *s;
  struct spaa_profile *rich = tp_rich(SPAA_LEAF_TO_ROOT, 0), *other = tp_rich(SPAA_LEAF_TO_ROOT, 1);
  char *want = twrite(rich);
  struct spaa_list_query q = {0};
  struct spaa_store_deleted d;
  struct spaa_err err = {0};
  struct putter pt = {0};
  pthread_t th;
  char id[32];
  int i;
  (void)state;
  tdir_make(&t);
  s = topen(t.db, 8, 8);
  for (i = 0; i < 40; i++) {
    snprintf(id, sizeof(id), "old%d", i);
    put_ok(s, i % 2 ? rich : other, id, "old", 1 + i);
  }
  pt.s = s;
  pt.p = rich;
  assert_int_equal(pthread_create(&th, NULL, putter_main, &pt), 0);
  q.service = "old";
  assert_int_equal(spaa_store_delete(s, &q, &d, &err), 0);
  __atomic_store_n(&pt.stop, 1, __ATOMIC_RELEASE);
  pthread_join(th, NULL);
  assert_int_equal(d.profiles, 40);
  for (i = 0; i < pt.n; i++) {
    snprintf(id, sizeof(id), "live%d", i);
    assert_reads_as(s, id, want);
  }
  /* what is left is what one copy of `rich` needs (or nothing, when no put came in time) */
  {
    struct tdir t2;
    struct spaa_store *s2;
    struct spaa_store_counts c = counts(s), ref;
    tdir_make(&t2);
    s2 = topen(t2.db, 8, 8);
    if (pt.n)
      put_ok(s2, rich, "one", "live", 1);
    ref = counts(s2);
    spaa_store_close(s2);
    tdir_rm(&t2);
    assert_int_equal(c.profiles, pt.n);
    assert_int_equal(c.stacks, ref.stacks);
    assert_int_equal(c.frames, ref.frames);
    assert_int_equal(c.dsos, ref.dsos);
  }
  spaa_store_close(s);
  tdir_rm(&t);
  free(want);
  spaa_profile_free(rich);
  spaa_profile_free(other);
}

/* A delete killed after its profiles went and before its sweep (kill -9): the rows they
 * referenced stay, and DATABASE.sweep says a sweep is owed. The store opened again sweeps
 * at its next delete, even one that matches nothing (retention's pass makes one), and the
 * marker goes; with no marker such a delete sweeps nothing. */
static void test_owed_sweep_after_a_kill(void **state)
{
  struct tdir t;
  struct spaa_store *s;
  struct spaa_profile *rich = tp_rich(SPAA_LEAF_TO_ROOT, 0);
  struct spaa_list_query none = {0};
  struct spaa_store_deleted d;
  struct spaa_err err = {0};
  char marker[128];
  sqlite3 *db;
  FILE *f;
  (void)state;
  tdir_make(&t);
  snprintf(marker, sizeof(marker), "%s.sweep", t.db);
  s = topen(t.db, 8, 8);
  put_ok(s, rich, "gone", "x", 5);
  spaa_store_close(s);
  /* what the killed delete did: the profile deleted, the marker made, no sweep */
  assert_int_equal(sqlite3_open(t.db, &db), SQLITE_OK);
  assert_int_equal(sqlite3_exec(db, "PRAGMA foreign_keys=ON; DELETE FROM profile", NULL, NULL,
                                NULL), SQLITE_OK);
  sqlite3_close(db);
  none.received_before_ns = 1; /* received before 1970: nothing */
  s = topen(t.db, 8, 8);
  assert_int_equal(counts(s).profiles, 0);
  assert_true(counts(s).stacks > 0);
  assert_int_equal(spaa_store_delete(s, &none, &d, &err), 0); /* no marker: no sweep */
  assert_int_equal(d.stacks, 0);
  assert_true(counts(s).stacks > 0);
  spaa_store_close(s);
  assert_non_null(f = fopen(marker, "w"));
  fclose(f);
  s = topen(t.db, 8, 8);
  assert_int_equal(spaa_store_delete(s, &none, &d, &err), 0);
  assert_int_equal(d.profiles, 0);
  assert_int_equal(d.stacks, (uint64_t)rich->n_stacks);
  assert_int_equal(counts(s).stacks, 0);
  assert_int_equal(counts(s).frames, 0);
  assert_int_equal(access(marker, F_OK), -1); /* paid */
  spaa_store_close(s);
  spaa_profile_free(rich);
  tdir_rm(&t);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sweep_keeps_rows_put_meanwhile),
      cmocka_unit_test(test_delete_with_puts_running),
      cmocka_unit_test(test_owed_sweep_after_a_kill),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
