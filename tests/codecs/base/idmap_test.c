/* codecs/base/idmap.c: id -> position lookups (spaa_idlookup), direct over consecutive ids
 * and through a map otherwise, with an id given twice reported. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "base/err.h"
#include "base/idmap.h"

struct rec {
  char pad[5];
  uint64_t id;
};

static void fill(struct rec *r, const uint64_t *ids, size_t n)
{
  memset(r, 0, n * sizeof(*r));
  for (size_t i = 0; i < n; i++)
    r[i].id = ids[i];
}

/* consecutive ids: found directly, no map made; ids outside the run are not found */
static void test_dense(void **state)
{
  struct rec r[4];
  struct spaa_idlookup l;
  size_t k = 99;
  (void)state;
  fill(r, (const uint64_t[]){7, 8, 9, 10}, 4);
  assert_int_equal(spaa_idlookup_build(&l, r, 4, sizeof(*r), offsetof(struct rec, id), NULL), 0);
  assert_true(l.dense);
  assert_int_equal(spaa_idmap_bytes(&l.map), 0);
  for (size_t i = 0; i < 4; i++) {
    assert_int_equal(spaa_idlookup_get(&l, 7 + i, &k), 1);
    assert_int_equal(k, i);
  }
  assert_int_equal(spaa_idlookup_get(&l, 6, &k), 0);
  assert_int_equal(spaa_idlookup_get(&l, 11, &k), 0);
  assert_int_equal(spaa_idlookup_get(&l, UINT64_MAX, &k), 0);
  spaa_idlookup_free(&l);
  /* none at all */
  assert_int_equal(spaa_idlookup_build(&l, r, 0, sizeof(*r), offsetof(struct rec, id), NULL), 0);
  assert_int_equal(spaa_idlookup_get(&l, 7, &k), 0);
  spaa_idlookup_free(&l);
}

/* ids in any order, or running past 2^64 - 1: through the map, every one found */
static void test_sparse_and_wrapping(void **state)
{
  static const uint64_t sparse[] = {40, 3, 17, 4};
  static const uint64_t wraps[] = {UINT64_MAX - 1, UINT64_MAX, 0, 1};
  const uint64_t *sets[] = {sparse, wraps};
  struct rec r[4];
  struct spaa_idlookup l;
  size_t k;
  (void)state;
  for (size_t s = 0; s < 2; s++) {
    fill(r, sets[s], 4);
    assert_int_equal(spaa_idlookup_build(&l, r, 4, sizeof(*r), offsetof(struct rec, id), NULL),
                     0);
    assert_false(l.dense);
    for (size_t i = 0; i < 4; i++) {
      assert_int_equal(spaa_idlookup_get(&l, sets[s][i], &k), 1);
      assert_int_equal(k, i);
    }
    assert_int_equal(spaa_idlookup_get(&l, 5, &k), 0);
    spaa_idlookup_free(&l);
  }
}

/* an id there twice: 1 and that id, the first of the two found */
static void test_twice(void **state)
{
  struct rec r[5];
  struct spaa_idlookup l;
  uint64_t dup = 0;
  size_t k;
  (void)state;
  fill(r, (const uint64_t[]){5, 9, 2, 9, 2}, 5);
  assert_int_equal(spaa_idlookup_build(&l, r, 5, sizeof(*r), offsetof(struct rec, id), &dup), 1);
  assert_int_equal(dup, 9);
  assert_int_equal(spaa_idlookup_get(&l, 9, &k), 1);
  assert_int_equal(k, 1);
  assert_int_equal(spaa_idlookup_get(&l, 2, &k), 1);
  assert_int_equal(k, 2);
  spaa_idlookup_free(&l);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dense),
      cmocka_unit_test(test_sparse_and_wrapping),
      cmocka_unit_test(test_twice),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
