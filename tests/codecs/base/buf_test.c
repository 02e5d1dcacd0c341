/* The capped byte buffer: growth, the cap, and sizing to a length known in advance. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

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

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cap),
      cmocka_unit_test(test_presize),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
