/* storage/ writer thread: concurrent puts grouped into few transactions, SPAA_E_BUSY on a
 * full queue, close draining the queue, one failing profile not poisoning its batch,
 * batches put at once (spaa_store_put_many), a large put batched alone. */
#include "tprofiles.h"

#include <pthread.h>
#include <sqlite3.h>
#include <time.h>

struct putter {
  struct spaa_store *s;
  const struct spaa_profile *p;
  char id[32];
  int rc;
  struct spaa_err err;
  pthread_t th;
};

static void *put_main(void *arg)
{
  struct putter *w = arg;
  struct spaa_meta m = {0};
  m.id = w->id;
  m.service = "svc";
  m.source = "spaa";
  m.received_ns = 1000;
  w->rc = spaa_store_put(w->s, w->p, &m, &w->err);
  return NULL;
}

static void start_putters(struct putter *w, size_t n, struct spaa_store *s,
                          const struct spaa_profile *p, const char *prefix)
{
  for (size_t i = 0; i < n; i++) {
    w[i].s = s;
    w[i].p = p;
    w[i].rc = -1;
    snprintf(w[i].id, sizeof(w[i].id), "%s%zu", prefix, i);
    assert_int_equal(pthread_create(&w[i].th, NULL, put_main, &w[i]), 0);
  }
}

/* Wait (without a deadline on correctness: only a generous guard against hanging) until
 * `n` profiles sit in the paused writer's queue. */
static void wait_queued(struct spaa_store *s, size_t n)
{
  struct timespec ts = {0, 1000000};
  struct spaa_store_stats st;
  for (int i = 0; i < 60000; i++) {
    spaa_store_stats(s, &st);
    if (st.queued == n)
      return;
    nanosleep(&ts, NULL);
  }
  fail_msg("the queue never held %zu profiles (has %zu)", n, st.queued);
}

static void test_concurrent_puts_group_commit(void **state)
{
  struct tdir t;
  struct spaa_store *s;
  struct spaa_profile *p = tp_small(20, 10);
  struct putter w[8];
  struct spaa_store_stats st;
  struct spaa_store_counts c;
  struct spaa_err err = {0};
  tdir_make(&t);
  s = topen(t.db, 16, 32);
  spaa_store__pause(s, 1);
  start_putters(w, 8, s, p, "c");
  wait_queued(s, 8);
  spaa_store__pause(s, 0);
  for (size_t i = 0; i < 8; i++) {
    pthread_join(w[i].th, NULL);
    if (w[i].rc)
      fail_msg("put %s: %d %s", w[i].id, w[i].rc, w[i].err.msg);
  }
  spaa_store_stats(s, &st);
  assert_int_equal(st.stored, 8);
  assert_true(st.transactions < 8);
  assert_int_equal(st.transactions, 1); /* all eight were queued when the writer woke */
  assert_int_equal(spaa_store_counts(s, &c, &err), 0);
  assert_int_equal(c.profiles, 8);
  assert_int_equal(c.stacks, 20);
  assert_int_equal(c.profile_stacks, 8 * 20);
  spaa_store_close(s);
  spaa_profile_free(p);
  tdir_rm(&t);
}

static void test_unpaused_concurrency(void **state)
{
  struct tdir t;
  struct spaa_store *s;
  struct spaa_profile *p = tp_small(50, 50);
  struct putter w[8];
  struct spaa_store_stats st;
  tdir_make(&t);
  s = topen(t.db, 16, 4);
  start_putters(w, 8, s, p, "u");
  for (size_t i = 0; i < 8; i++) {
    pthread_join(w[i].th, NULL);
    assert_int_equal(w[i].rc, 0);
  }
  spaa_store_stats(s, &st);
  assert_int_equal(st.stored, 8);
  assert_true(st.transactions >= 2); /* batch_max 4 */
  assert_true(st.transactions <= 8);
  spaa_store_close(s);
  spaa_profile_free(p);
  tdir_rm(&t);
}

static void test_busy_when_full(void **state)
{
  struct tdir t;
  struct spaa_store *s;
  struct spaa_profile *p = tp_small(3, 0);
  struct putter w[2];
  struct spaa_meta m = {0};
  struct spaa_err err = {0};
  struct spaa_store_stats st;
  tdir_make(&t);
  s = topen(t.db, 2, 8);
  spaa_store__pause(s, 1);
  start_putters(w, 2, s, p, "b");
  wait_queued(s, 2);
  m.id = "refused";
  m.service = "svc";
  m.source = "spaa";
  assert_int_equal(spaa_store_put(s, p, &m, &err), SPAA_E_BUSY);
  assert_int_equal(err.code, SPAA_E_BUSY);
  spaa_store_stats(s, &st);
  assert_int_equal(st.busy, 1);
  assert_int_equal(st.queued, 2);
  spaa_store__pause(s, 0);
  for (size_t i = 0; i < 2; i++) {
    pthread_join(w[i].th, NULL);
    assert_int_equal(w[i].rc, 0);
  }
  /* room again */
  assert_int_equal(spaa_store_put(s, p, &m, &err), 0);
  spaa_store_close(s);
  spaa_profile_free(p);
  tdir_rm(&t);
}

static void test_close_drains(void **state)
{
  struct tdir t;
  struct spaa_store *s;
  struct spaa_profile *p = tp_small(3, 1);
  struct putter w[3];
  struct spaa_store_counts c;
  struct spaa_err err = {0};
  tdir_make(&t);
  s = topen(t.db, 8, 8);
  spaa_store__pause(s, 1);
  start_putters(w, 3, s, p, "d");
  wait_queued(s, 3);
  spaa_store_close(s); /* resumes the writer, commits all three, then closes */
  for (size_t i = 0; i < 3; i++) {
    pthread_join(w[i].th, NULL);
    assert_int_equal(w[i].rc, 0);
  }
  s = topen(t.db, 8, 8);
  assert_int_equal(spaa_store_counts(s, &c, &err), 0);
  assert_int_equal(c.profiles, 3);
  spaa_store_close(s);
  spaa_profile_free(p);
  tdir_rm(&t);
}

/* Make the database itself refuse to store profile `id`, inside the writer's transaction. */
static void poison(const char *db_path, const char *id)
{
  sqlite3 *db;
  char sql[256];
  snprintf(sql, sizeof(sql), "CREATE TRIGGER poison BEFORE INSERT ON profile_block WHEN "
                             "(SELECT id FROM profile WHERE num = NEW.profile) = '%s' "
                             "BEGIN SELECT RAISE(ABORT, 'poisoned'); END;", id);
  assert_int_equal(sqlite3_open(db_path, &db), SQLITE_OK);
  assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(db);
}

/* Let the paused writer go and wait for the three putters w: the first and the last stored,
 * the middle one refused by the poison trigger. */
static void release_three(struct spaa_store *s, struct putter *w)
{
  spaa_store__pause(s, 0);
  for (size_t i = 0; i < 3; i++)
    pthread_join(w[i].th, NULL);
  assert_int_equal(w[0].rc, 0);
  assert_int_equal(w[1].rc, SPAA_E_STORE);
  assert_non_null(strstr(w[1].err.msg, "poisoned"));
  assert_int_equal(w[2].rc, 0);
}

static void test_failure_does_not_poison_batch(void **state)
{
  struct tdir t;
  struct spaa_store *s;
  struct spaa_profile *p = tp_small(4, 2), *q = NULL;
  struct putter w[3];
  struct spaa_store_stats st;
  struct spaa_store_counts c;
  struct spaa_err err = {0};
  char *want = twrite(p);
  tdir_make(&t);
  s = topen(t.db, 8, 8);
  poison(t.db, "p1");
  spaa_store__pause(s, 1);
  start_putters(w, 3, s, p, "p");
  wait_queued(s, 3);
  release_three(s, w);
  spaa_store_stats(s, &st);
  assert_int_equal(st.transactions, 1);
  assert_int_equal(st.stored, 2);
  assert_int_equal(st.failed, 1);
  assert_int_equal(spaa_store_counts(s, &c, &err), 0);
  assert_int_equal(c.profiles, 2);
  assert_int_equal(c.profile_stacks, 8);
  assert_int_equal(c.samples, 4);
  assert_int_equal(spaa_store_get(s, "p1", &q, &err), SPAA_E_NOT_FOUND);
  assert_int_equal(spaa_store_get(s, "p2", &q, &err), 0);
  {
    char *got = twrite(q);
    assert_string_equal(got, want);
    free(got);
  }
  spaa_profile_free(q);
  spaa_store_close(s);
  free(want);
  spaa_profile_free(p);
  tdir_rm(&t);
}

/* A put of 10,000 stacks or more goes alone in its batch, without a savepoint (whose
 * in-memory sub-journal would hold a copy of every page it changes): queued between two small
 * puts it makes three transactions, and when the database refuses it, the transaction rolls
 * back whole: none of its rows stays, in the store or in the content-id cache (the same
 * profile stored again afterwards reads back whole). */
static void test_large_put_alone(void **state)
{
  struct tdir t;
  struct spaa_store *s;
  struct spaa_profile *small = tp_small(3, 2), *big = tp_small(10000, 4), *q = NULL;
  struct putter w[3];
  struct spaa_store_stats st0, st;
  struct spaa_store_counts c;
  struct spaa_err err = {0};
  char *want = twrite(big);
  (void)state;
  tdir_make(&t);
  s = topen(t.db, 8, 8);
  poison(t.db, "b0");
  spaa_store_stats(s, &st0);
  spaa_store__pause(s, 1);
  start_putters(w, 1, s, small, "a");
  wait_queued(s, 1);
  start_putters(w + 1, 1, s, big, "b");
  wait_queued(s, 2);
  start_putters(w + 2, 1, s, small, "c");
  wait_queued(s, 3);
  release_three(s, w);
  spaa_store_stats(s, &st);
  assert_int_equal(st.transactions - st0.transactions, 2); /* a0, c0: b0's rolled back */
  assert_int_equal(spaa_store_counts(s, &c, &err), 0);
  assert_int_equal(c.profiles, 2);
  assert_int_equal(c.stacks, 3);
  assert_int_equal(spaa_store_get(s, "b0", &q, &err), SPAA_E_NOT_FOUND);
  /* the rows b0 made were rolled back: the cache must not name them */
  start_putters(w, 1, s, big, "d");
  pthread_join(w[0].th, NULL);
  assert_int_equal(w[0].rc, 0);
  assert_int_equal(spaa_store_get(s, "d0", &q, &err), 0);
  {
    char *got = twrite(q);
    assert_string_equal(got, want);
    free(got);
  }
  assert_int_equal(spaa_store_counts(s, &c, &err), 0);
  assert_int_equal(c.stacks, 10000); /* small's three stacks are among big's */
  spaa_profile_free(q);
  spaa_store_close(s);
  free(want);
  spaa_profile_free(small);
  spaa_profile_free(big);
  tdir_rm(&t);
}

/* spaa_store_put_many: a batch shares one transaction, each profile gets its own outcome
 * (stored, already stored, refused in preparation), and a batch larger than half the queue
 * goes in pieces without BUSY. */
static void test_put_many(void **state)
{
  struct tdir t;
  struct spaa_store *s;
  struct spaa_profile *p = tp_small(5, 2), *bad = tp_small(2, 0);
  const struct spaa_profile *ps[4];
  struct spaa_meta m[4];
  int rcs[4];
  struct spaa_err errs[4];
  struct spaa_store_stats st0, st1;
  struct spaa_store_counts c;
  struct spaa_err err = {0};
  static const char *const ids[4] = {"m0", "m1", "m2", "m0"};
  (void)state;
  tdir_make(&t);
  s = topen(t.db, 8, 8);
  /* a stack id that is not its content id: refused by the preparation, not by SQLite */
  snprintf(bad->stacks[0].id, sizeof(bad->stacks[0].id), "0x%032d", 7);
  memset(m, 0, sizeof(m));
  for (size_t i = 0; i < 4; i++) {
    ps[i] = i == 1 ? bad : p;
    m[i].id = ids[i];
    m[i].service = "svc";
    m[i].source = "spaa";
    m[i].received_ns = 1000 + (int64_t)i;
  }
  spaa_store_stats(s, &st0);
  assert_int_equal(spaa_store_put_many(s, 3, ps, m, rcs, errs), 0);
  assert_int_equal(rcs[0], 0);
  assert_int_equal(rcs[1], SPAA_E_INVALID);
  assert_true(errs[1].msg[0] != 0);
  assert_int_equal(rcs[2], 0);
  spaa_store_stats(s, &st1);
  assert_int_equal(st1.transactions - st0.transactions, 1);
  /* again with the first id once more: already stored, nothing written */
  assert_int_equal(spaa_store_put_many(s, 1, ps + 3, m + 3, rcs + 3, errs + 3), 0);
  assert_int_equal(rcs[3], 1);
  assert_int_equal(spaa_store_counts(s, &c, &err), 0);
  assert_int_equal(c.profiles, 2);
  spaa_store_close(s);

  /* queue depth 2: a batch of 3 goes in pieces of 1 and every profile is stored */
  s = topen(t.db, 2, 8);
  for (size_t i = 0; i < 3; i++)
    m[i].id = i == 0 ? "n0" : i == 1 ? "n1" : "n2";
  ps[1] = p;
  assert_int_equal(spaa_store_put_many(s, 3, ps, m, rcs, errs), 0);
  for (size_t i = 0; i < 3; i++)
    assert_int_equal(rcs[i], 0);
  assert_int_equal(spaa_store_counts(s, &c, &err), 0);
  assert_int_equal(c.profiles, 5);
  spaa_store_close(s);
  spaa_profile_free(p);
  spaa_profile_free(bad);
  tdir_rm(&t);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_concurrent_puts_group_commit),
    cmocka_unit_test(test_unpaused_concurrency),
    cmocka_unit_test(test_busy_when_full),
    cmocka_unit_test(test_close_drains),
    cmocka_unit_test(test_failure_does_not_poison_batch),
    cmocka_unit_test(test_put_many),
    cmocka_unit_test(test_large_put_alone),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
