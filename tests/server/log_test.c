/* server/log.c: the line format, escaping (one event = one line), cutting, and levels. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
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

/* log_format = json: each field a member, a bare number as a number and the rest as
 * strings; quotes, backslashes and control characters come out as JSON escapes. */
static void test_json(void **state)
{
  char line[512], js[1024];
  (void)state;
  spaa_log_format(line, sizeof(line), T0, SPAA_LOG_WARN, "request \"x\"",
                  "method=POST path=\"/a b\" status=400 detail=\"bad \\\"q\\\" \\\\ end\"");
  spaa_log_json_line(js, sizeof(js), line);
  assert_string_equal(js, "{\"time\":\"2026-11-21T12:00:00.123Z\",\"level\":\"warn\","
                          "\"msg\":\"request \\\"x\\\"\",\"method\":\"POST\","
                          "\"path\":\"/a b\",\"status\":400,"
                          "\"detail\":\"bad \\\"q\\\" \\\\ end\"}\n");
  spaa_log_format(line, sizeof(line), T0, SPAA_LOG_INFO, "numbers",
                  "ms=0.398 neg=-3 zero=0 lead=007 big=1234567890123456 ver=0.1.0 hex=1e5 "
                  "dot=5. q=\"12\"");
  spaa_log_json_line(js, sizeof(js), line);
  assert_string_equal(js, "{\"time\":\"2026-11-21T12:00:00.123Z\",\"level\":\"info\","
                          "\"msg\":\"numbers\",\"ms\":0.398,\"neg\":-3,\"zero\":0,"
                          "\"lead\":\"007\",\"big\":\"1234567890123456\",\"ver\":\"0.1.0\","
                          "\"hex\":\"1e5\",\"dot\":\"5.\",\"q\":\"12\"}\n");
  spaa_log_format(line, sizeof(line), T0, SPAA_LOG_INFO, "tab\there", NULL);
  spaa_log_json_line(js, sizeof(js), line);
  assert_string_equal(js, "{\"time\":\"2026-11-21T12:00:00.123Z\",\"level\":\"info\","
                          "\"msg\":\"tab\\\\there\"}\n");
}

/* 1 when s[0..len) is well-formed UTF-8 (RFC 3629). */
static int valid_utf8(const char *str, size_t len)
{
  const unsigned char *s = (const unsigned char *)str;
  size_t i = 0, k, j;
  while (i < len) {
    unsigned char c = s[i], lo = 0x80, hi = 0xbf;
    if (c < 0x80) {
      i++;
      continue;
    }
    if (c >= 0xc2 && c <= 0xdf)
      k = 2;
    else if (c >= 0xe0 && c <= 0xef)
      k = 3, lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
    else if (c >= 0xf0 && c <= 0xf4)
      k = 4, lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
    else
      return 0;
    if (i + k > len || s[i + 1] < lo || s[i + 1] > hi)
      return 0;
    for (j = 2; j < k; j++)
      if ((s[i + j] & 0xc0) != 0x80)
        return 0;
    i += k;
  }
  return 1;
}

/* Bytes that are not valid UTF-8 (a protobuf error body in answer=, a cut, overlong or
 * surrogate sequence) come out as \xNN in text and "\\xNN" in JSON; valid multi-byte
 * characters are kept as they are. Both lines are valid UTF-8. */
static void test_invalid_utf8(void **state)
{
  char line[512], js[1024];
  (void)state;
  spaa_log_format(line, sizeof(line), T0, SPAA_LOG_WARN, "r\xff",
                  "answer=\"\x08\x03\x12\x88\x01ok\" name=caf\xc3\xa9-\xe2\x82\xac-\xf0\x9f\x94\xa5 "
                  "bad=\xc3(\xe2\x82 over=\xc0\xaf sur=\xed\xa0\x80 big=\xf4\x90\x80\x80 cut=\xe2\x82");
  assert_string_equal(line, "2026-11-21T12:00:00.123Z level=warn msg=\"r\\xff\" "
                            "answer=\"\\x08\\x03\\x12\\x88\\x01ok\" "
                            "name=caf\xc3\xa9-\xe2\x82\xac-\xf0\x9f\x94\xa5 "
                            "bad=\\xc3(\\xe2\\x82 over=\\xc0\\xaf sur=\\xed\\xa0\\x80 "
                            "big=\\xf4\\x90\\x80\\x80 cut=\\xe2\\x82\n");
  assert_true(valid_utf8(line, strlen(line)));
  spaa_log_json_line(js, sizeof(js), line);
  assert_string_equal(js, "{\"time\":\"2026-11-21T12:00:00.123Z\",\"level\":\"warn\","
                          "\"msg\":\"r\\\\xff\","
                          "\"answer\":\"\\\\x08\\\\x03\\\\x12\\\\x88\\\\x01ok\","
                          "\"name\":\"caf\xc3\xa9-\xe2\x82\xac-\xf0\x9f\x94\xa5\","
                          "\"bad\":\"\\\\xc3(\\\\xe2\\\\x82\",\"over\":\"\\\\xc0\\\\xaf\","
                          "\"sur\":\"\\\\xed\\\\xa0\\\\x80\",\"big\":\"\\\\xf4\\\\x90\\\\x80\\\\x80\","
                          "\"cut\":\"\\\\xe2\\\\x82\"}\n");
  assert_true(valid_utf8(js, strlen(js)));
  /* a line given to the JSON writer with raw bytes still makes valid UTF-8 */
  spaa_log_json_line(js, sizeof(js), "T level=info msg=\"a\x88\" k=\xe2\x82\xac\x80");
  assert_string_equal(js, "{\"time\":\"T\",\"level\":\"info\",\"msg\":\"a\\\\x88\","
                          "\"k\":\"\xe2\x82\xac\\\\x80\"}\n");
}

/* A cut never splits a UTF-8 sequence: the line ends on a whole character. */
static void test_cut_utf8(void **state)
{
  char big[3000], line[200];
  size_t i, n, at;
  (void)state;
  for (at = 0; at < 4; at++) { /* every offset of the 4-byte character against the cut */
    memset(big, 'k', at);
    for (i = at; i + 4 < sizeof(big); i += 4)
      memcpy(big + i, "\xf0\x9f\x94\xa5", 4);
    big[i] = 0;
    n = spaa_log_format(line, sizeof(line), T0, SPAA_LOG_INFO, "m", big);
    assert_int_equal(line[n - 1], '\n');
    assert_true(valid_utf8(line, n));
    assert_null(strstr(line, "\\x"));
  }
}

/* The last field of a JSON line is its value only (the text line's newline is not in it). */
static void test_json_last_bare(void **state)
{
  char line[512], js[1024];
  (void)state;
  spaa_log_format(line, sizeof(line), T0, SPAA_LOG_INFO, "profile stored", "id=ab samples=7");
  spaa_log_json_line(js, sizeof(js), line);
  assert_string_equal(js, "{\"time\":\"2026-11-21T12:00:00.123Z\",\"level\":\"info\","
                          "\"msg\":\"profile stored\",\"id\":\"ab\",\"samples\":7}\n");
}

/* A value a client chose, through spaa_log_q inside quotes, stays one value: its quotes and
 * backslashes cannot end it and start fields of their own (a service named
 * `my service id=42 "q"` made a second id= before); the JSON line gives it back whole. */
static void test_client_value(void **state)
{
  char q[64], kv[160], line[512], js[1024], small[8];
  (void)state;
  snprintf(kv, sizeof(kv), "id=abc service=\"%s\" stacks=1",
           spaa_log_q(q, sizeof(q), "my service id=42 \"q\" \\"));
  assert_string_equal(q, "my service id=42 \\\"q\\\" \\\\");
  spaa_log_format(line, sizeof(line), T0, SPAA_LOG_INFO, "profile stored", kv);
  spaa_log_json_line(js, sizeof(js), line);
  assert_string_equal(js, "{\"time\":\"2026-11-21T12:00:00.123Z\",\"level\":\"info\","
                          "\"msg\":\"profile stored\",\"id\":\"abc\","
                          "\"service\":\"my service id=42 \\\"q\\\" \\\\\",\"stacks\":1}\n");
  /* cut: never half an escape, never half a character */
  assert_string_equal(spaa_log_q(small, sizeof(small), "ab\"cd"), "ab\\\"c");
  assert_string_equal(spaa_log_q(small, sizeof(small), "abc\xe2\x82\xac"), "abc");
  assert_string_equal(spaa_log_q(small, sizeof(small), NULL), "");
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_format),
      cmocka_unit_test(test_escaping),
      cmocka_unit_test(test_cut),
      cmocka_unit_test(test_levels),
      cmocka_unit_test(test_json),
      cmocka_unit_test(test_invalid_utf8),
      cmocka_unit_test(test_cut_utf8),
      cmocka_unit_test(test_json_last_bare),
      cmocka_unit_test(test_client_value),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
