/* Tests of the zero-copy JSON scanner (tables of valid and invalid documents, strings, numbers)
 * and of the chunked line splitter (every chunk size, CRLF, no final newline, long lines). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "base/jscan.h"
#include "spaa/spaa_lines.h"
#include "spaa_testutil.h"

static int check_doc(const char *doc)
{
  struct spaa_jscan s;
  size_t n = strlen(doc);
  char *scratch = malloc(n + 1);
  int rc;
  spaa_jscan_init(&s, doc, n, scratch, n + 1);
  rc = spaa_jscan_skip(&s, NULL, NULL) || spaa_jscan_finish(&s) ? -1 : 0;
  free(scratch);
  return rc;
}

static void test_syntax_table(void **state)
{
  static const char *const good[] = {
      "{}", "[]", " { \"a\" : [ 1 , -2.5e+3 , true , false , null , \"\" ] } ", "0", "-0",
      "1E9", "\"\\u00e9\\ud83d\\ude00\\\"\\\\\\/\\b\\f\\n\\r\\t\"", "\"caf\xc3\xa9\"",
      "\"\xf0\x9f\x98\x80\"", "[[[[[[[[[[]]]]]]]]]]", "{\"a\":{\"b\":{\"c\":[{}]}}}", "\t[1]\r",
  };
  static const char *const bad[] = {
      "", "{", "}", "[1,]", "{\"a\":1,}", "{\"a\" 1}", "{a:1}", "[1 2]", "01", "1.", ".5",
      "1e", "-", "+1", "tru", "nul", "\"abc", "\"a\x01\"", "\"\\x\"", "\"\\u12\"",
      "\"\\ud800\"", "\"\\udc00\"", "\"\\u0000\"", "\"\xff\"", "\"\xc0\xaf\"",
      "\"\xed\xa0\x80\"", "\"\xf4\x90\x80\x80\"", "\"\xe2\x82\"", "{} {}", "[1]x", "{\"a\":}",
      "[,1]", "NaN", "Infinity",
  };
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
    if (check_doc(good[i]))
      print_message("should pass: %s\n", good[i]);
    assert_int_equal(check_doc(good[i]), 0);
  }
  for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    if (!check_doc(bad[i]))
      print_message("should fail: %s\n", bad[i]);
    assert_int_equal(check_doc(bad[i]), -1);
  }
}

static void test_pull_api(void **state)
{
  static const char doc[] = "{\"s\":\"a\\nb\\u00e9\",\"n\":[1,-9223372036854775808,1.5,18446744073709551615],"
                            "\"b\":true,\"skip\":{\"x\":[1,{}]},\"k\\u0065y\":null}";
  char scratch[sizeof(doc)];
  struct spaa_jscan s;
  const char *k, *v;
  size_t kl, vl;
  struct spaa_num num;
  uint64_t u;
  int b;
  (void)state;
  spaa_jscan_init(&s, doc, strlen(doc), scratch, sizeof(scratch));
  assert_int_equal(spaa_jscan_obj_begin(&s), 0);
  assert_int_equal(spaa_jscan_obj_key(&s, &k, &kl), 1);
  assert_string_equal(k, "s");
  assert_int_equal(spaa_jscan_str(&s, &v, &vl), 0);
  assert_string_equal(v, "a\nb\xc3\xa9");
  assert_int_equal(vl, 5);
  assert_int_equal(spaa_jscan_obj_key(&s, &k, &kl), 1);
  assert_int_equal(spaa_jscan_arr_begin(&s), 0);
  assert_int_equal(spaa_jscan_arr_next(&s), 1);
  assert_int_equal(spaa_jscan_num(&s, &num), 0);
  assert_false(num.is_float);
  assert_int_equal(num.i, 1);
  assert_int_equal(spaa_jscan_arr_next(&s), 1);
  assert_int_equal(spaa_jscan_num(&s, &num), 0);
  assert_true(num.i == INT64_MIN);
  assert_int_equal(spaa_jscan_arr_next(&s), 1);
  assert_int_equal(spaa_jscan_num(&s, &num), 0);
  assert_true(num.is_float && num.f == 1.5);
  assert_int_equal(spaa_jscan_arr_next(&s), 1);
  assert_int_equal(spaa_jscan_u64(&s, &u), 0);
  assert_true(u == UINT64_MAX);
  assert_int_equal(spaa_jscan_arr_next(&s), 0);
  assert_int_equal(spaa_jscan_obj_key(&s, &k, &kl), 1);
  assert_int_equal(spaa_jscan_bool(&s, &b), 0);
  assert_int_equal(b, 1);
  assert_int_equal(spaa_jscan_obj_key(&s, &k, &kl), 1);
  assert_int_equal(spaa_jscan_peek(&s), SPAA_J_OBJ);
  assert_int_equal(spaa_jscan_skip(&s, &v, NULL), 0);
  assert_memory_equal(v, "{\"x\":[1,{}]}", 12);
  assert_int_equal(spaa_jscan_obj_key(&s, &k, &kl), 1);
  assert_string_equal(k, "key");
  assert_int_equal(spaa_jscan_peek(&s), SPAA_J_NULL);
  assert_int_equal(spaa_jscan_skip(&s, NULL, NULL), 0);
  assert_int_equal(spaa_jscan_obj_key(&s, &k, &kl), 0);
  assert_int_equal(spaa_jscan_finish(&s), 0);
  /* type mismatches fail and say so */
  spaa_jscan_init(&s, "\"x\"", 3, scratch, sizeof(scratch));
  assert_int_equal(spaa_jscan_u64(&s, &u), -1);
  assert_non_null(s.err);
  spaa_jscan_init(&s, "-1", 2, scratch, sizeof(scratch));
  assert_int_equal(spaa_jscan_u64(&s, &u), -1);
  spaa_jscan_init(&s, "18446744073709551616", 20, scratch, sizeof(scratch));
  assert_int_equal(spaa_jscan_u64(&s, &u), -1);
  spaa_jscan_init(&s, "1e400", 5, scratch, sizeof(scratch));
  assert_int_equal(spaa_jscan_num(&s, &num), -1);
  assert_string_equal(s.err, "number out of range");
}

/* Split a text into lines with every chunk size from 1 to 70, plain and zstd. */
static void test_lines_every_chunk(void **state)
{
  static const char text[] = "first\r\n\nthird line\n{\"x\":1}\nlast without newline";
  static const char *const want[] = {"first\r", "", "third line", "{\"x\":1}",
                                     "last without newline"};
  size_t zcap = ZSTD_compressBound(sizeof(text)), zlen, step, i;
  char *z = malloc(zcap);
  (void)state;
  zlen = ZSTD_compress(z, zcap, text, strlen(text), 1);
  assert_false(ZSTD_isError(zlen));
  for (step = 1; step <= 70; step++) {
    int pass;
    for (pass = 0; pass < 2; pass++) {
      struct spaa_test_src src = {pass ? z : text, pass ? zlen : strlen(text), 0, step};
      struct spaa_lines l;
      struct spaa_err err;
      const char *line;
      size_t len;
      spaa_lines_init(&l, spaa_test_read, &src);
      for (i = 0; i < 5; i++) {
        assert_int_equal(spaa_lines_next(&l, &line, &len, &err), 1);
        assert_int_equal(len, strlen(want[i]));
        assert_memory_equal(line, want[i], len);
        assert_int_equal(l.lineno, i + 1);
      }
      assert_int_equal(spaa_lines_next(&l, &line, &len, &err), 0);
      assert_int_equal(l.bytes, strlen(text));
      spaa_lines_free(&l);
    }
  }
  free(z);
}

/* A line longer than the window grows it; one longer than the cap is refused. */
static void test_lines_long(void **state)
{
  size_t n = 3 * SPAA_LINES_CHUNK, len;
  char *big = malloc(n + 3);
  struct spaa_mem_src m;
  struct spaa_lines l;
  struct spaa_err err;
  const char *line;
  (void)state;
  memset(big, 'a', n);
  memcpy(big + n, "\nb", 2);
  m.p = big;
  m.len = n + 2;
  m.pos = 0;
  spaa_lines_init(&l, spaa_mem_read, &m);
  assert_int_equal(spaa_lines_next(&l, &line, &len, &err), 1);
  assert_int_equal(len, n);
  assert_int_equal(spaa_lines_next(&l, &line, &len, &err), 1);
  assert_int_equal(len, 1);
  assert_int_equal(spaa_lines_next(&l, &line, &len, &err), 0);
  spaa_lines_free(&l);
  m.pos = 0;
  spaa_lines_init(&l, spaa_mem_read, &m);
  l.max_line = SPAA_LINES_CHUNK; /* a smaller cap for the test */
  memset(&err, 0, sizeof(err));
  assert_int_equal(spaa_lines_next(&l, &line, &len, &err), SPAA_E_TOO_LARGE);
  assert_int_equal(err.line, 1);
  spaa_lines_free(&l);
  free(big);
}

static ssize_t failing_read(void *ctx, void *buf, size_t cap)
{
  (void)ctx;
  (void)buf;
  (void)cap;
  return -1;
}

static void test_lines_io_error(void **state)
{
  struct spaa_lines l;
  struct spaa_err err;
  const char *line;
  size_t len;
  (void)state;
  spaa_lines_init(&l, failing_read, NULL);
  assert_int_equal(spaa_lines_next(&l, &line, &len, &err), SPAA_E_IO);
  spaa_lines_free(&l);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_syntax_table),      cmocka_unit_test(test_pull_api),
      cmocka_unit_test(test_lines_every_chunk), cmocka_unit_test(test_lines_long),
      cmocka_unit_test(test_lines_io_error),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
