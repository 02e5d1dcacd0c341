/* server/grpc_wire.c: the message prefix (table of cases, and every valid message fed whole
 * and cut at every byte), content-subtypes, grpc-timeout values, encodings, percent-encoding,
 * and the google.rpc.Status reader. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "server/grpc_wire.h"

struct frame_case {
  const char *what;
  const char *bytes; /* the body */
  size_t len;
  size_t max;        /* the cap */
  int rc;            /* 0, SPAA_GRPC_MORE or an SPAA_E_* */
  int compressed;    /* when rc == 0 */
  uint32_t msg_len;  /* when rc == 0 */
};

#define FC(what, lit, max, rc, comp, ml) {what, lit, sizeof(lit) - 1, max, rc, comp, ml}

static const struct frame_case frame_cases[] = {
    FC("empty body", "", 16, SPAA_GRPC_MORE, 0, 0),
    FC("flag only", "\0", 16, SPAA_GRPC_MORE, 0, 0),
    FC("prefix of an empty message", "\0\0\0\0\0", 16, 0, 0, 0),
    FC("three bytes", "\0\0\0\0\3abc", 16, 0, 0, 3),
    FC("compressed flag", "\1\0\0\0\2xy", 16, 0, 1, 2),
    FC("bad flag", "\2\0\0\0\0", 16, SPAA_E_BAD_REQUEST, 0, 0),
    FC("bad flag, alone", "\x80", 16, SPAA_E_BAD_REQUEST, 0, 0),
    FC("truncated message", "\0\0\0\0\4abc", 16, SPAA_GRPC_MORE, 0, 0),
    FC("over the cap", "\0\0\0\0\x11", 16, SPAA_E_TOO_LARGE, 0, 0),
    /* grpc-go reads the length before it looks at the flag */
    FC("over the cap, bad flag", "\2\0\0\0\x11", 16, SPAA_E_TOO_LARGE, 0, 0),
    FC("bad flag, a cut prefix", "\2\0\0", 16, SPAA_E_BAD_REQUEST, 0, 0),
    FC("4 GiB - 1 declared", "\0\xff\xff\xff\xff", 16, SPAA_E_TOO_LARGE, 0, 0),
    FC("exactly the cap", "\0\0\0\0\2ab", 2, 0, 0, 2),
    FC("a second message", "\0\0\0\0\1a\0\0\0\0\0", 16, SPAA_E_BAD_REQUEST, 0, 0),
    FC("one byte too many", "\0\0\0\0\1ab", 16, SPAA_E_BAD_REQUEST, 0, 0),
};

static void test_frame_table(void **state)
{
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(frame_cases) / sizeof(frame_cases[0]); i++) {
    const struct frame_case *c = &frame_cases[i];
    struct spaa_grpc_msg m;
    struct spaa_err err;
    int rc;
    spaa_err_clear(&err);
    rc = spaa_grpc_frame((const uint8_t *)c->bytes, c->len, c->max, &m, &err);
    if (rc != c->rc)
      fail_msg("%s: rc %d, want %d (%s)", c->what, rc, c->rc, err.msg);
    if (rc < 0 && !err.msg[0])
      fail_msg("%s: no message", c->what);
    if (rc == 0) {
      assert_int_equal(m.compressed, c->compressed);
      assert_int_equal(m.len, c->msg_len);
      assert_ptr_equal(m.data, (const uint8_t *)c->bytes + 5);
    }
  }
}

/* A valid message cut at every byte is a valid beginning (SPAA_GRPC_MORE) until whole. */
static void test_frame_split(void **state)
{
  static const char body[] = "\1\0\0\0\7message";
  size_t cut;
  (void)state;
  for (cut = 0; cut < sizeof(body) - 1; cut++) {
    struct spaa_grpc_msg m;
    struct spaa_err err;
    int rc = spaa_grpc_frame((const uint8_t *)body, cut, 64, &m, &err);
    if (rc != SPAA_GRPC_MORE)
      fail_msg("cut at %zu: rc %d, want SPAA_GRPC_MORE", cut, rc);
    if (cut >= 5)
      assert_int_equal(m.len, 7);
  }
}

static void test_prefix(void **state)
{
  uint8_t p[5];
  (void)state;
  spaa_grpc_prefix(p, 0x01020304);
  assert_memory_equal(p, "\0\1\2\3\4", 5);
}

static void test_content_subtype(void **state)
{
  static const struct {
    const char *ct;
    int rc;
    const char *sub; /* when rc == 1 */
  } cases[] = {
      {"application/grpc", 1, ""},
      {"application/grpc+proto", 1, "proto"},
      {"application/grpc+json", 1, "json"},
      {"application/grpc;charset=utf-8", 1, "charset=utf-8"},
      {"application/grpc+", 1, ""},
      {"application/grpc-web", 0, NULL},
      {"application/grpcx", 0, NULL},
      {"Application/grpc", 0, NULL}, /* grpc-go compares the prefix byte for byte */
      {"application/json", 0, NULL},
      {"application/grp", 0, NULL},
      {"", 0, NULL},
      {" application/grpc", 0, NULL},
  };
  const char *sub;
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    int rc;
    sub = NULL;
    rc = spaa_grpc_content_subtype(cases[i].ct, &sub);
    if (rc != cases[i].rc || (rc && strcmp(sub, cases[i].sub) != 0))
      fail_msg("'%s': rc %d sub '%s', want rc %d sub '%s'", cases[i].ct, rc, sub ? sub : "-",
               cases[i].rc, cases[i].sub ? cases[i].sub : "-");
  }
  assert_int_equal(spaa_grpc_content_subtype(NULL, &sub), 0);
}

static void test_timeout(void **state)
{
  static const struct {
    const char *v;
    int rc;
    int64_t ns;
  } cases[] = {
      {"1n", 0, 1},           {"5u", 0, 5000},       {"250m", 0, 250000000},
      {"30S", 0, 30000000000LL}, {"2M", 0, 120000000000LL}, {"1H", 0, 3600000000000LL},
      {"99999999H", 0, INT64_MAX}, {"123456789S", -1, 0},
      {"", -1, 0},            {"S", -1, 0},          {"10", -1, 0},  {"10s", -1, 0},
      {"-1S", -1, 0},         {"1S ", -1, 0},        {"1 S", -1, 0},
  };
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    int64_t ns = 0;
    int rc = spaa_grpc_timeout(cases[i].v, &ns);
    if (rc != cases[i].rc || (rc == 0 && ns != cases[i].ns))
      fail_msg("'%s': rc %d ns %lld, want rc %d ns %lld", cases[i].v, rc, (long long)ns,
               cases[i].rc, (long long)cases[i].ns);
  }
  assert_int_equal(spaa_grpc_timeout(NULL, NULL), -1);
}

static void test_coding(void **state)
{
  (void)state;
  assert_int_equal(spaa_grpc_coding(NULL), SPAA_GRPC_IDENTITY);
  assert_int_equal(spaa_grpc_coding(""), SPAA_GRPC_IDENTITY);
  assert_int_equal(spaa_grpc_coding("identity"), SPAA_GRPC_IDENTITY);
  assert_int_equal(spaa_grpc_coding("gzip"), SPAA_GRPC_GZIP);
  assert_int_equal(spaa_grpc_coding("deflate"), SPAA_GRPC_DEFLATE);
  assert_int_equal(spaa_grpc_coding("zstd"), SPAA_GRPC_ZSTD);
  assert_int_equal(spaa_grpc_coding("snappy"), SPAA_GRPC_SNAPPY);
  assert_int_equal(spaa_grpc_coding("lz4"), -1);
  assert_int_equal(spaa_grpc_coding("GZIP"), -1);
}

static void test_pct(void **state)
{
  char out[64];
  (void)state;
  assert_int_equal(spaa_grpc_pct_encode(out, sizeof(out), "a b%c\n\xc3\xa9"), 16);
  assert_string_equal(out, "a b%25c%0A%C3%A9");
  /* a %XX is never cut */
  spaa_grpc_pct_encode(out, 6, "ab\n");
  assert_string_equal(out, "ab%0A");
  spaa_grpc_pct_encode(out, 5, "ab\n");
  assert_string_equal(out, "ab");
  spaa_grpc_pct_encode(out, sizeof(out), NULL);
  assert_string_equal(out, "");
}

static void test_status(void **state)
{
  /* code 3, message "bad", an unknown fixed64 field 5 and a details field 3 */
  static const uint8_t st[] = {0x08, 0x03, 0x12, 0x03, 'b', 'a', 'd', 0x29, 1, 2, 3, 4,
                               5,    6,    7,    8,    0x1a, 0x01, 0x00};
  static const uint8_t bad[] = {0x12, 0x05, 'b'};
  char msg[8];
  int32_t code;
  (void)state;
  assert_int_equal(spaa_grpc_status_read(st, sizeof(st), &code, msg, sizeof(msg)), 0);
  assert_int_equal(code, 3);
  assert_string_equal(msg, "bad");
  assert_int_equal(spaa_grpc_status_read(st, 2, &code, msg, sizeof(msg)), 0);
  assert_int_equal(code, 3);
  assert_int_equal(spaa_grpc_status_read(bad, sizeof(bad), &code, msg, sizeof(msg)), -1);
  assert_int_equal(spaa_grpc_status_read(st, 0, &code, msg, 2), 0);
  assert_int_equal(code, 0);
  assert_string_equal(msg, "");
  assert_string_equal(spaa_grpc_status_name(16), "UNAUTHENTICATED");
  assert_string_equal(spaa_grpc_status_name(99), "UNKNOWN");
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_frame_table), cmocka_unit_test(test_frame_split),
      cmocka_unit_test(test_prefix),      cmocka_unit_test(test_timeout),
      cmocka_unit_test(test_coding),      cmocka_unit_test(test_pct),
      cmocka_unit_test(test_status),      cmocka_unit_test(test_content_subtype),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
