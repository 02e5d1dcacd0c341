/* server/retention.c: the figures /metrics shows (spaa_retention_stats) follow a pass as it
 * goes, not only when it ends. A SQLite store of 12 profiles over a 1-byte cap: the thread's
 * first pass deletes them one step (one profile) at a time; the store's sweep hook, run inside
 * each step's delete on the retention thread, reads the published figures mid-pass. */
#include "tprofiles.h"

#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "server/retention.h"
#include "storage/sqlite/sqlite_int.h"

#define N_PROFILES 12

struct seen {
  struct spaa_retention *r;             /* set once spaa_retention_start returned (atomic) */
  int calls;                            /* sweeps so far */
  struct spaa_retention_stats at[N_PROFILES + 1]; /* the figures at each sweep, from 1 */
};

/* Inside step k's delete (its sweep): what /metrics would show now. */
static void during_sweep(void *ctx)
{
  struct seen *w = ctx;
  struct spaa_retention *r;
  while (!(r = __atomic_load_n(&w->r, __ATOMIC_ACQUIRE)))
    usleep(1000);
  if (++w->calls <= N_PROFILES)
    spaa_retention_stats(r, &w->at[w->calls]);
}

static void test_stats_follow_the_pass(void **state)
{
  struct spaa_profile *p = tp_small(3, 0);
  struct spaa_retention_opts o = {.keep_s = 0, .max_bytes = 1, .every_s = 3600};
  struct spaa_retention_stats st;
  struct spaa_retention *r = NULL;
  struct spaa_store *s;
  struct seen w;
  struct tdir t;
  int i;
  (void)state;
  memset(&w, 0, sizeof(w));
  tdir_make(&t);
  s = topen(t.db, 64, 16);
  for (i = 0; i < N_PROFILES; i++) {
    struct spaa_meta m = {0};
    struct spaa_err err = {0};
    char id[16];
    snprintf(id, sizeof(id), "p%02d", i);
    m.id = id;
    m.service = "svc";
    m.source = "spaa";
    m.received_ns = 1000 + i; /* the oldest first: one step deletes one */
    if (spaa_store_put(s, p, &m, &err))
      fail_msg("put %s: %s", id, err.msg);
  }
  ((struct storage__sqlite *)s)->sweep_hook = during_sweep;
  ((struct storage__sqlite *)s)->sweep_hook_ctx = &w;
  assert_int_equal(spaa_retention_start(s, &o, &r), 0);
  assert_non_null(r);
  __atomic_store_n(&w.r, r, __ATOMIC_RELEASE);
  for (i = 0; i < 3000; i++) { /* the pass: 12 steps, then under the cap (no profile left) */
    spaa_retention_stats(r, &st);
    if (st.deleted_size == N_PROFILES)
      break;
    usleep(10000);
  }
  spaa_retention_stop(r);
  ((struct storage__sqlite *)s)->sweep_hook = NULL;
  assert_int_equal(st.deleted_size, N_PROFILES);
  assert_int_equal(st.passes, 1);
  assert_int_equal(st.failures, 0);
  assert_int_equal(w.calls, N_PROFILES);
  /* the pass was counted when it began, and each step's deletions when that step ended */
  for (i = 1; i <= N_PROFILES; i++) {
    assert_int_equal(w.at[i].passes, 1);
    assert_int_equal(w.at[i].deleted_size, (uint64_t)(i - 1));
    assert_int_equal(w.at[i].deleted_age, 0);
  }
  spaa_store_close(s);
  spaa_profile_free(p);
  tdir_rm(&t);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_stats_follow_the_pass),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
