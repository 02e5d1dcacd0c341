/* The capped byte buffer: growth, the cap, and sizing to a length known in advance. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/buf.h"
#include "base/err.h"

static void test_cap(void **state)
{
  struct spaa_buf b;
  (void)state;
  spaa_buf_init(&b, 8);
  assert_int_equal(spaa_buf_add(&b, "12345678", 8), 0);
  assert_int_equal(spaa_buf_add(&b, "9", 1), SPAA_E_TOO_LARGE);
  assert_int_equal(b.len, 8);
  assert_string_equal(b.p, "12345678");
  spaa_buf_free(&b);
}

/* A declared length is allocated once at that size; the bytes fill it without a move;
 * more than declared still grows (a length is a promise the client may break). */
static void test_presize(void **state)
{
  struct spaa_buf b;
  char chunk[1000];
  char *at;
  size_t i;
  (void)state;
  memset(chunk, 'x', sizeof(chunk));
  spaa_buf_init(&b, 1 << 20);
  assert_int_equal(spaa_buf_presize(&b, (1 << 20) + 1), SPAA_E_TOO_LARGE);
  assert_null(b.p);
  assert_int_equal(spaa_buf_presize(&b, 100000), 0);
  assert_int_equal(b.cap, 100001);
  at = b.p;
  for (i = 0; i < 100; i++)
    assert_int_equal(spaa_buf_add(&b, chunk, sizeof(chunk)), 0);
  assert_ptr_equal(b.p, at);
  assert_int_equal(b.cap, 100001);
  assert_int_equal(b.p[b.len], 0);
  assert_int_equal(spaa_buf_presize(&b, 10), 0); /* smaller than held: left alone */
  assert_int_equal(b.len, 100000);
  assert_int_equal(spaa_buf_add(&b, "y", 1), 0);
  assert_true(b.cap > 100002);
  assert_int_equal(b.p[100000], 'y');
  spaa_buf_free(&b);
}

/* The whole pages inside a discarded range read as zeros afterwards (they went back to the
 * OS); the bytes around them, in partial pages, are kept, and so is a range too small. */
static void test_discard(void **state)
{
  const size_t total = 8u << 20, from = 1000, len = 5u << 20;
  struct spaa_buf b;
  uintptr_t lo, hi, page = (uintptr_t)sysconf(_SC_PAGESIZE);
  size_t i, zeros = 0;
  (void)state;
  spaa_buf_init(&b, 0);
  assert_int_equal(spaa_buf_presize(&b, total), 0);
  memset(b.p, 0xab, total);
  b.len = total;
  spaa_mem_discard(b.p + from, SPAA_MEM_DISCARD_MIN - 1); /* too small: nothing happens */
  for (i = 0; i < total; i++)
    assert_int_equal((unsigned char)b.p[i], 0xab);
  spaa_mem_discard(b.p + from, len);
  lo = ((uintptr_t)b.p + from + page - 1) & ~(page - 1);
  hi = ((uintptr_t)b.p + from + len) & ~(page - 1);
  for (i = 0; i < total; i++) {
    uintptr_t a = (uintptr_t)b.p + i;
    if (a < lo || a >= hi)
      assert_int_equal((unsigned char)b.p[i], 0xab); /* outside the whole pages: kept */
    else
      zeros += b.p[i] == 0;
  }
  assert_true(hi > lo);
  assert_int_equal(zeros, hi - lo); /* given back: zeros now */
  spaa_mem_discard(NULL, len);
  spaa_buf_free(&b); /* the allocation is still the allocator's to free */
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cap),
      cmocka_unit_test(test_presize),
      cmocka_unit_test(test_discard),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
