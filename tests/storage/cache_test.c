/* storage/cache.c: the writer's content-id cache keeps what was committed (not what was rolled
 * back), starts small and doubles as it fills, and at its largest keeps the entries found
 * since it last made room (at most half the bound, the newest) and the open transaction's;
 * the service dictionaries it keeps are bounded in count and bytes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "base/limits.h"
#include "storage/engine_int.h"

/* A content id spread like a hash, from n. */
static struct spaa_cid cid_of(uint64_t n)
{
  struct spaa_cid c;
  uint64_t h = (n + 1) * 0x9e3779b97f4a7c15ull, l = h ^ (h >> 29) ^ (n << 7);
  memset(&c, 0, sizeof(c));
  memcpy(c.b, &h, sizeof(h));
  memcpy(c.b + 8, &l, sizeof(l));
  return c;
}

/* Entries [from, to) of kind, as one committed transaction. */
static void commit_range(struct storage__cache *c, enum storage__kind kind, uint64_t from,
                         uint64_t to)
{
  uint64_t i;
  for (i = from; i < to; i++) {
    struct spaa_cid k = cid_of(i);
    assert_int_equal(storage__cache_pending(c, kind, &k, (int64_t)i + 100), 0);
  }
  storage__cache_commit(c);
}

static int has(struct storage__cache *c, enum storage__kind kind, uint64_t n)
{
  struct spaa_cid k = cid_of(n);
  int64_t row = -1;
  if (!storage__cache_get(c, kind, &k, &row))
    return 0;
  assert_int_equal(row, (int64_t)n + 100);
  return 1;
}

static void test_commit_and_rollback(void **state)
{
  struct storage__cache c;
  struct spaa_cid k = cid_of(999);
  int64_t row;
  size_t mark;
  memset(&c, 0, sizeof(c));
  assert_false(storage__cache_get(&c, SK_FRAME, &k, &row)); /* empty: no map yet */
  commit_range(&c, SK_FRAME, 0, 10);
  assert_true(has(&c, SK_FRAME, 3));
  assert_false(has(&c, SK_STACK, 3)); /* the kind is part of the key */
  /* what a rolled-back transaction added is not kept */
  mark = c.n_pending;
  assert_int_equal(storage__cache_pending(&c, SK_STACK, &k, 1099), 0);
  storage__cache_rollback(&c, mark);
  storage__cache_commit(&c);
  assert_false(has(&c, SK_STACK, 999));
  assert_int_equal(c.n, 10);
  storage__cache_free(&c);
}

static void test_grows_then_makes_room(void **state)
{
  struct storage__cache c;
  size_t first, last = 0;
  uint64_t i, n = SPAA_STORE_CID_CACHE;
  memset(&c, 0, sizeof(c));
  commit_range(&c, SK_STACK, 0, 100);
  first = c.cap;
  assert_true(first * sizeof(*c.slots) + c.cap_ents * sizeof(*c.ents) <= 64 * 1024); /* small */
  for (i = 100; i < n; i += 10000) {
    commit_range(&c, SK_STACK, i, i + 10000 < n ? i + 10000 : n);
    assert_true(2 * c.n <= c.cap); /* never more than half full */
    assert_true(c.cap >= last);
    last = c.cap;
  }
  assert_int_equal(c.n, n);
  assert_true(last > first);
  for (i = 0; i < n; i += 997) /* every entry still found after the moves */
    assert_true(has(&c, SK_STACK, i));
  assert_true(has(&c, SK_STACK, n - 1));
  /* full at its largest: the next transaction keeps the entries found since (every 997th
   * and the last) with what it brings, and forgets the others */
  commit_range(&c, SK_DSO, 0, 5);
  assert_int_equal(c.n, (n - 1) / 997 + 1 + 1 + 5);
  assert_int_equal(c.cap, last);
  assert_true(has(&c, SK_DSO, 4));
  assert_true(has(&c, SK_STACK, 0));
  assert_true(has(&c, SK_STACK, 997 * 100));
  assert_true(has(&c, SK_STACK, n - 1));
  assert_false(has(&c, SK_STACK, 1));
  assert_false(has(&c, SK_STACK, 996));
  /* its whole size: 4 MiB (3 of entries, 1 of slots) */
  assert_true(c.cap * sizeof(*c.slots) + c.cap_ents * sizeof(*c.ents) <= (size_t)4 << 20);
  storage__cache_free(&c);
}

/* Filling up inside a transaction forgets the committed entries not found since, never the
 * transaction's: a rollback and a commit then see the pending ones where they were. */
static void test_full_inside_a_transaction(void **state)
{
  struct storage__cache c;
  uint64_t i, n = SPAA_STORE_CID_CACHE;
  size_t mark;
  memset(&c, 0, sizeof(c));
  commit_range(&c, SK_FRAME, 0, n - 2);
  assert_true(has(&c, SK_FRAME, 7));
  mark = c.n_pending;
  for (i = 0; i < 5; i++) {
    struct spaa_cid k = cid_of(n + i);
    assert_int_equal(storage__cache_pending(&c, SK_STACK, &k, (int64_t)(n + i) + 100), 0);
    if (i == 2) { /* the first entry past the bound: the committed ones went but the found */
      assert_true(has(&c, SK_FRAME, 7));
      assert_false(has(&c, SK_FRAME, 8));
    }
  }
  storage__cache_rollback(&c, mark + 3); /* the last two rolled back */
  storage__cache_commit(&c);
  assert_int_equal(c.n, 1 + 3);
  assert_true(has(&c, SK_FRAME, 7));
  for (i = 0; i < 3; i++)
    assert_true(has(&c, SK_STACK, n + i));
  assert_false(has(&c, SK_STACK, n + 3));
  /* a row id too large to share its word with the kind is not cached, and that is fine */
  {
    struct spaa_cid k = cid_of(1);
    int64_t row;
    assert_int_equal(storage__cache_pending(&c, SK_DSO, &k, INT64_MAX), 0);
    storage__cache_commit(&c);
    assert_false(storage__cache_get(&c, SK_DSO, &k, &row));
  }
  storage__cache_free(&c);
}

/* Every committed entry found: making room keeps the newest half of the bound, forgets the
 * older ones, and clears the marks, so that the next time only what is found again stays. */
static void test_found_keeps_newest_half(void **state)
{
  struct storage__cache c;
  uint64_t i, n = SPAA_STORE_CID_CACHE, half = SPAA_STORE_CID_CACHE / 2;
  memset(&c, 0, sizeof(c));
  commit_range(&c, SK_FRAME, 0, n);
  for (i = 0; i < n; i++)
    assert_true(has(&c, SK_FRAME, i));
  commit_range(&c, SK_STACK, 0, 1); /* full: room is made */
  assert_int_equal(c.n, half + 1);
  assert_false(has(&c, SK_FRAME, n - half - 1));
  assert_true(has(&c, SK_FRAME, n - half));
  assert_true(has(&c, SK_FRAME, n - 1));
  assert_true(has(&c, SK_STACK, 0));
  commit_range(&c, SK_DSO, 0, n - half); /* full again: the three found since stay */
  assert_int_equal(c.n, 3 + (n - half));
  assert_true(has(&c, SK_DSO, 0));
  assert_true(has(&c, SK_FRAME, n - 1));
  assert_false(has(&c, SK_FRAME, n - 2));
  storage__cache_free(&c);
}

/* Committed dictionaries: at most SPAA_STORE_DICT_CACHE, holding at most
 * SPAA_STORE_DICT_CACHE_BYTES; the oldest go first. */
static void test_dictionaries_bounded(void **state)
{
  static char big[2 << 20];
  struct storage__cache c;
  char name[32];
  size_t i, held;
  memset(&c, 0, sizeof(c));
  for (i = 0; i < 100; i++) { /* small ones: the count binds */
    snprintf(name, sizeof(name), "small%zu", i);
    assert_int_equal(storage__cache_dict_put(&c, name, (int64_t)i, "abc", 3, 0), 0);
  }
  assert_int_equal(c.n_dicts, SPAA_STORE_DICT_CACHE);
  assert_null(storage__cache_dict(&c, "small0"));
  assert_non_null(storage__cache_dict(&c, "small99"));
  assert_int_equal(storage__cache_dict(&c, "small36")->id, 36); /* the newest 64 */
  assert_null(storage__cache_dict(&c, "small35"));
  for (i = 0; i < 40; i++) { /* 2 MiB ones: the bytes bind */
    snprintf(name, sizeof(name), "big%zu", i);
    assert_int_equal(storage__cache_dict_put(&c, name, (int64_t)i, big, sizeof(big), 0), 0);
  }
  for (i = 0, held = 0; i < c.n_dicts; i++)
    held += c.dicts[i].len;
  assert_true(held <= SPAA_STORE_DICT_CACHE_BYTES);
  assert_true(held > SPAA_STORE_DICT_CACHE_BYTES - sizeof(big));
  assert_null(storage__cache_dict(&c, "small99"));
  assert_null(storage__cache_dict(&c, "big0"));
  assert_non_null(storage__cache_dict(&c, "big39"));
  storage__cache_free(&c);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_commit_and_rollback),
      cmocka_unit_test(test_grows_then_makes_room),
      cmocka_unit_test(test_full_inside_a_transaction),
      cmocka_unit_test(test_found_keeps_newest_half),
      cmocka_unit_test(test_dictionaries_bounded),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
