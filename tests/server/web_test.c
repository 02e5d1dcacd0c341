/* server/web.c and the pure part of server/api_page.c: the embedded table (sorted, every
 * name found, NUL after the bytes), media types, If-None-Match matching, and counting
 * times into timeline buckets. Serving is exercised over HTTP by tests/e2e/web_assets.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "server/api_page.h"
#include "server/web.h"

static void test_table(void **state)
{
  size_t i;
  (void)state;
  assert_true(spaa_web_n_files >= 3);
  for (i = 0; i < spaa_web_n_files; i++) {
    const struct spaa_web_file *f = &spaa_web_files[i];
    if (i && strcmp(spaa_web_files[i - 1].name, f->name) >= 0)
      fail_msg("not sorted: '%s' before '%s'", spaa_web_files[i - 1].name, f->name);
    assert_ptr_equal(spaa_web_find(f->name), f);
    assert_int_equal(f->data[f->len], 0);
    assert_int_equal(strlen(f->etag), 18);
  }
  assert_non_null(spaa_web_find("index.html"));
  assert_null(spaa_web_find("index.htm"));
  assert_null(spaa_web_find(""));
  assert_null(spaa_web_find(NULL));
  assert_null(spaa_web_find("../index.html"));
}

static void test_media(void **state)
{
  static const struct {
    const char *name, *want;
  } cases[] = {
      {"index.html", "text/html; charset=utf-8"}, {"app.js", "text/javascript; charset=utf-8"},
      {"style.css", "text/css; charset=utf-8"},   {"favicon.svg", "image/svg+xml"},
      {"shot.PNG", "image/png"},                  {"README", "application/octet-stream"},
      {"x.js.map", "application/octet-stream"},   {NULL, "application/octet-stream"},
  };
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
    assert_string_equal(spaa_web_media_type(cases[i].name), cases[i].want);
}

static void test_etag(void **state)
{
  static const struct {
    const char *inm;
    int want;
  } cases[] = {
      {"\"0123456789abcdef\"", 1},
      {"W/\"0123456789abcdef\"", 1},
      {"\"x\", \"0123456789abcdef\"", 1},
      {"\"x\",W/\"0123456789abcdef\" ,\"y\"", 1},
      {"  \"0123456789abcdef\"  ", 1},
      {"*", 1},
      {"\"0123456789abcde\"", 0},
      {"0123456789abcdef", 0},
      {"\"0123456789abcdef", 0},
      {"\"0123456789abcdefx\"", 0},
      {"w/\"0123456789abcdef\"", 0},
      {"**", 0},
      {"", 0},
      {",,", 0},
      {NULL, 0},
  };
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
    if (spaa_web_etag_match(cases[i].inm, "\"0123456789abcdef\"") != cases[i].want)
      fail_msg("If-None-Match '%s': want %d", cases[i].inm ? cases[i].inm : "(null)",
               cases[i].want);
}

static void test_timeline_count(void **state)
{
  const int64_t t[] = {100, 100, 109, 110, 119, 50, 500};
  int64_t counts[4], w;
  (void)state;
  /* [100, 119] in 2 buckets of 10: 100,100,109 | 110,119; 50 and 500 clamped to the ends */
  spaa_api_timeline_count(t, 7, 100, 119, 2, &w, counts);
  assert_int_equal(w, 10);
  assert_int_equal(counts[0], 4);
  assert_int_equal(counts[1], 3);
  /* a span that does not divide: width rounded up (7), the last bucket partly past `to`:
   * 100,100 | 109,110 | 119 */
  spaa_api_timeline_count(t, 5, 100, 119, 3, &w, counts);
  assert_int_equal(w, 7);
  assert_int_equal(counts[0], 2);
  assert_int_equal(counts[1], 2);
  assert_int_equal(counts[2], 1);
  /* one instant: width 1, everything in the first bucket */
  spaa_api_timeline_count(t, 2, 100, 100, 4, &w, counts);
  assert_int_equal(w, 1);
  assert_int_equal(counts[0], 2);
  assert_int_equal(counts[3], 0);
  /* the widest span does not overflow */
  spaa_api_timeline_count(t, 7, 0, INT64_MAX, 4, &w, counts);
  assert_int_equal(w, INT64_MAX / 4 + 1);
  assert_int_equal(counts[0], 7);
  /* nothing to count */
  spaa_api_timeline_count(NULL, 0, 0, 0, 1, &w, counts);
  assert_int_equal(counts[0], 0);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_table),
      cmocka_unit_test(test_media),
      cmocka_unit_test(test_etag),
      cmocka_unit_test(test_timeline_count),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
