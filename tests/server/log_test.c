/* server/log.c: the line format, escaping (one event = one line), cutting, and levels. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "server/log.h"

#define T0 1795262400123456789LL /* 2026-11-21T12:00:00.123456789Z */

static void test_format(void **state)
{
  char line[512];
  size_t n = spaa_log_format(line, sizeof(line), T0, SPAA_LOG_INFO, "listening on 1.2.3.4:5",
                             "port=5");
  assert_string_equal(line,
                      "2026-11-21T12:00:00.123Z level=info msg=\"listening on 1.2.3.4:5\" port=5\n");
  assert_int_equal(n, strlen(line));
  spaa_log_format(line, sizeof(line), 0, SPAA_LOG_WARN, "x", NULL);
  assert_string_equal(line, "1970-01-01T00:00:00.000Z level=warn msg=\"x\"\n");
  spaa_log_format(line, sizeof(line), T0, SPAA_LOG_ERROR, "e", "");
  assert_string_equal(line, "2026-11-21T12:00:00.123Z level=error msg=\"e\"\n");
}

static void test_escaping(void **state)
{
  char line[512];
  spaa_log_format(line, sizeof(line), T0, SPAA_LOG_DEBUG, "say \"hi\"\\\n",
                  "path=\"/a\nb\" ctl=\x01\x7f");
  assert_string_equal(line, "2026-11-21T12:00:00.123Z level=debug msg=\"say \\\"hi\\\"\\\\\\n\" "
                            "path=\"/a\\nb\" ctl=\\x01\\x7f\n");
  assert_ptr_equal(strchr(line, '\n'), line + strlen(line) - 1); /* one line */
}

static void test_cut(void **state)
{
  char big[3000], line[200];
  size_t n;
  memset(big, 'k', sizeof(big) - 1);
  big[sizeof(big) - 1] = 0;
  n = spaa_log_format(line, sizeof(line), T0, SPAA_LOG_INFO, "m", big);
  assert_true(n < sizeof(line));
  assert_int_equal(line[n - 1], '\n');
  assert_int_equal(line[n], 0);
  assert_null(memchr(line, '\n', n - 1));
}

static void test_levels(void **state)
{
  spaa_log_set_level(SPAA_LOG_WARN);
  assert_false(spaa_log_enabled(SPAA_LOG_DEBUG));
  assert_false(spaa_log_enabled(SPAA_LOG_INFO));
  assert_true(spaa_log_enabled(SPAA_LOG_WARN));
  assert_true(spaa_log_enabled(SPAA_LOG_ERROR));
  spaa_log_set_level(SPAA_LOG_DEBUG);
  assert_true(spaa_log_enabled(SPAA_LOG_DEBUG));
  spaa_log_set_level(SPAA_LOG_INFO);
}

/* log_format = json: each field a string member; quotes, backslashes and control
 * characters come out as JSON escapes. */
static void test_json(void **state)
{
  char line[512], js[1024];
  (void)state;
  spaa_log_format(line, sizeof(line), T0, SPAA_LOG_WARN, "request \"x\"",
                  "method=POST path=\"/a b\" status=400 detail=\"bad \\\"q\\\" \\\\ end\"");
  spaa_log_json_line(js, sizeof(js), line);
  assert_string_equal(js, "{\"time\":\"2026-11-21T12:00:00.123Z\",\"level\":\"warn\","
                          "\"msg\":\"request \\\"x\\\"\",\"method\":\"POST\","
                          "\"path\":\"/a b\",\"status\":\"400\","
                          "\"detail\":\"bad \\\"q\\\" \\\\ end\"}\n");
  spaa_log_format(line, sizeof(line), T0, SPAA_LOG_INFO, "tab\there", NULL);
  spaa_log_json_line(js, sizeof(js), line);
  assert_string_equal(js, "{\"time\":\"2026-11-21T12:00:00.123Z\",\"level\":\"info\","
                          "\"msg\":\"tab\\\\there\"}\n");
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_format),
      cmocka_unit_test(test_escaping),
      cmocka_unit_test(test_cut),
      cmocka_unit_test(test_levels),
      cmocka_unit_test(test_json),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
