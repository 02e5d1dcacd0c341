/* server/multipart.c: boundaries from Content-Type values, and bodies split into parts,
 * as tables of good and bad inputs; every proper prefix of a good body is refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "server/multipart.h"

static void test_boundary(void **state)
{
  static const struct {
    const char *ct, *want;
  } ok[] = {
      {"multipart/form-data; boundary=abc", "abc"},
      {"Multipart/Form-Data;boundary=abc", "abc"},
      {"multipart/form-data ; charset=utf-8; boundary=\"a b'()+_,-./:=?\"", "a b'()+_,-./:=?"},
      {"multipart/form-data; BOUNDARY=------------------------d74496d66958873e",
       "------------------------d74496d66958873e"},
      {"multipart/form-data; boundary=\"q\\-x\"; x=y", "q-x"}, /* a quoted-pair is its char */
  };
  static const char *const bad[] = {
      NULL,
      "",
      "application/octet-stream",
      "multipart/mixed; boundary=abc",
      "multipart/form-datax; boundary=abc",
      "multipart/form-data",
      "multipart/form-data; boundary=",
      "multipart/form-data; boundary=\"\"",
      "multipart/form-data; boundary=\"abc",
      "multipart/form-data; boundary=\"abc \"",                  /* space last */
      "multipart/form-data; boundary=a\"b",                      /* junk after a token */
      "multipart/form-data; boundary=\"a<b\"",                   /* '<' is no bchar */
      "multipart/form-data; boundary",
      "multipart/form-data; boundary=\"q\\\"x\"",                /* '"' is no bchar */
      "multipart/form-data; =abc",
      "multipart/form-data; boundary=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", /* 71 */
  };
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
    char b[SPAA_MULTIPART_MAX_BOUNDARY + 1];
    struct spaa_err err;
    spaa_err_clear(&err);
    if (spaa_multipart_boundary(ok[i].ct, b, sizeof(b), &err))
      fail_msg("'%s' should give a boundary: %s", ok[i].ct, err.msg);
    assert_string_equal(ok[i].want, b);
    assert_true(spaa_multipart_is_form(ok[i].ct));
  }
  for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    char b[SPAA_MULTIPART_MAX_BOUNDARY + 1];
    struct spaa_err err;
    spaa_err_clear(&err);
    if (spaa_multipart_boundary(bad[i], b, sizeof(b), &err) != SPAA_E_BAD_REQUEST)
      fail_msg("'%s' should be refused", bad[i] ? bad[i] : "(null)");
    assert_true(err.msg[0] != 0);
  }
}

/* A two-field body as Go's mime/multipart and curl write it. */
#define GOOD                                                                                  \
  "--XyZ\r\n"                                                                                 \
  "Content-Disposition: form-data; name=\"profile\"; filename=\"profile.pprof\"\r\n"        \
  "Content-Type: application/octet-stream\r\n"                                              \
  "\r\n"                                                                                      \
  "\x1f\x8b\r\nbin--XyZ\r\n"                                                                  \
  "\r\n--XyZ\r\n"                                                                             \
  "content-disposition: form-data; name=sample_type_config\r\n"                             \
  "\r\n"                                                                                      \
  "{\"cpu\":{}}\r\n"                                                                          \
  "--XyZ--\r\n"

static void test_parse_good(void **state)
{
  static const char good[] = GOOD;
  struct spaa_multipart m;
  struct spaa_err err;
  const struct spaa_multipart_part *p;
  (void)state;
  spaa_err_clear(&err);
  if (spaa_multipart_parse((const uint8_t *)good, sizeof(good) - 1, "XyZ", &m, &err))
    fail_msg("good body refused: %s", err.msg);
  assert_int_equal(2, m.n);
  p = spaa_multipart_get(&m, "profile");
  assert_non_null(p);
  assert_string_equal("profile.pprof", p->filename);
  assert_string_equal("application/octet-stream", p->content_type);
  /* the data keeps CRLFs and boundary-like text not preceded by CRLF */
  assert_int_equal(14, p->len);
  assert_memory_equal("\x1f\x8b\r\nbin--XyZ\r\n", p->data, 14);
  p = spaa_multipart_get(&m, "sample_type_config");
  assert_non_null(p);
  assert_string_equal("", p->filename);
  assert_int_equal(10, p->len);
  assert_memory_equal("{\"cpu\":{}}", p->data, 10);
  assert_null(spaa_multipart_get(&m, "prev_profile"));
}

static void test_parse_variants(void **state)
{
  static const struct {
    const char *body;
    size_t parts;
    size_t len0; /* bytes in part 0 */
  } ok[] = {
      {"preamble\r\n--b\r\nContent-Disposition: form-data; name=a\r\n\r\nx\r\n--b--", 1, 1},
      {"--b  \t\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n\r\n--b--epilogue", 1, 0},
      {"--b\r\nContent-Disposition:form-data;name=\"a\"  \r\nX-Other: 1\r\n\r\nxy\r\n--b--\r\n",
       1, 2},
      {"--b--\r\n", 0, 0},
      {"--b\r\nContent-Disposition: form-data; name=\"a\\\"q\"\r\n\r\n1\r\n--b\r\n"
       "Content-Disposition: form-data; name=\"c\"\r\n\r\n\r\n--b--",
       2, 1},
  };
  static const struct {
    const char *body, *msg;
  } bad[] = {
      {"", "does not contain its boundary"},
      {"no boundary here", "does not contain its boundary"},
      {"--bX\r\n", "neither CRLF"},
      {"--b\n Content-Disposition: form-data; name=a\r\n\r\nx\r\n--b--", "neither CRLF"},
      {"--b\r\nContent-Disposition: form-data; name=a\r\n\r\nx", "truncated"},
      {"--b\r\nContent-Disposition: form-data; name=a\r\n\r\nx\r\n--b", "neither CRLF"},
      {"--b\r\nContent-Disposition: form-data; name=a\r\n", "ends inside its headers"},
      {"--b\r\n\r\nx\r\n--b--", "no Content-Disposition"},
      {"--b\r\nContent-Type: text/plain\r\n\r\nx\r\n--b--", "no Content-Disposition"},
      {"--b\r\nContent-Disposition: attachment; name=a\r\n\r\nx\r\n--b--", "form-data"},
      {"--b\r\nContent-Disposition: form-data\r\n\r\nx\r\n--b--", "form-data"},
      {"--b\r\nContent-Disposition: form-data; name=\"\"\r\n\r\nx\r\n--b--", "form-data"},
      {"--b\r\nContent-Disposition: form-data; name=\"a\r\n\r\nx\r\n--b--", "form-data"},
      {"--b\r\nContent-Disposition: form-data; name=a\r\nContent-Disposition: form-data; "
       "name=b\r\n\r\nx\r\n--b--",
       "given once"},
      {"--b\r\nContent-Disposition: form-data; name=a\r\n folded\r\n\r\nx\r\n--b--", "folded"},
      {"--b\r\nno colon\r\n\r\nx\r\n--b--", "has no name and ':'"},
      {"--b\r\n: empty name\r\n\r\nx\r\n--b--", "has no name and ':'"},
      {"--b\r\nContent-Disposition: form-data; name=a\r\n\r\n1\r\n--b\r\n"
       "Content-Disposition: form-data; name=a\r\n\r\n2\r\n--b--",
       "given twice"},
  };
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
    struct spaa_multipart m;
    struct spaa_err err;
    spaa_err_clear(&err);
    if (spaa_multipart_parse((const uint8_t *)ok[i].body, strlen(ok[i].body), "b", &m, &err))
      fail_msg("ok[%zu] refused: %s", i, err.msg);
    assert_int_equal(ok[i].parts, m.n);
    if (m.n)
      assert_int_equal(ok[i].len0, m.parts[0].len);
  }
  for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    struct spaa_multipart m;
    struct spaa_err err;
    spaa_err_clear(&err);
    if (spaa_multipart_parse((const uint8_t *)bad[i].body, strlen(bad[i].body), "b", &m, &err) !=
        SPAA_E_BAD_REQUEST)
      fail_msg("bad[%zu] accepted", i);
    if (!strstr(err.msg, bad[i].msg))
      fail_msg("bad[%zu]: '%s' does not say '%s'", i, err.msg, bad[i].msg);
  }
}

/* Caps: a header line over the cap, too many headers, too many parts. */
static void test_caps(void **state)
{
  char *body = malloc(64 * 1024);
  size_t n, i;
  struct spaa_multipart m;
  struct spaa_err err;
  (void)state;
  assert_non_null(body);
  n = (size_t)sprintf(body, "--b\r\nContent-Disposition: form-data; name=a\r\nX-Long: ");
  memset(body + n, 'x', SPAA_MULTIPART_MAX_HEADER_LINE);
  n += SPAA_MULTIPART_MAX_HEADER_LINE;
  n += (size_t)sprintf(body + n, "\r\n\r\nx\r\n--b--");
  assert_int_equal(SPAA_E_BAD_REQUEST, spaa_multipart_parse((uint8_t *)body, n, "b", &m, &err));
  assert_non_null(strstr(err.msg, "longer than"));

  n = (size_t)sprintf(body, "--b\r\nContent-Disposition: form-data; name=a\r\n");
  for (i = 0; i < SPAA_MULTIPART_MAX_HEADERS; i++)
    n += (size_t)sprintf(body + n, "X-H%zu: 1\r\n", i);
  n += (size_t)sprintf(body + n, "\r\nx\r\n--b--");
  assert_int_equal(SPAA_E_BAD_REQUEST, spaa_multipart_parse((uint8_t *)body, n, "b", &m, &err));
  assert_non_null(strstr(err.msg, "header lines"));

  n = 0;
  for (i = 0; i <= SPAA_MULTIPART_MAX_PARTS; i++)
    n += (size_t)sprintf(body + n, "--b\r\nContent-Disposition: form-data; name=f%zu\r\n\r\n"
                         "v\r\n", i);
  n += (size_t)sprintf(body + n, "--b--");
  assert_int_equal(SPAA_E_BAD_REQUEST, spaa_multipart_parse((uint8_t *)body, n, "b", &m, &err));
  assert_non_null(strstr(err.msg, "more than"));
  free(body);
}

/* Every proper prefix of a good body is refused (the close delimiter is required), and the
 * parser never reads past the length it is given: each prefix is copied to a buffer of
 * exactly that size, so AddressSanitizer catches an over-read. */
static void test_prefixes(void **state)
{
  static const char good[] = GOOD;
  size_t len = sizeof(good) - 1, cut;
  (void)state;
  for (cut = 0; cut < len - 2; cut++) { /* the final CRLF is epilogue: optional */
    uint8_t *b = malloc(cut ? cut : 1);
    struct spaa_multipart m;
    struct spaa_err err;
    int rc;
    assert_non_null(b);
    memcpy(b, good, cut);
    spaa_err_clear(&err);
    rc = spaa_multipart_parse(b, cut, "XyZ", &m, &err);
    free(b);
    if (rc != SPAA_E_BAD_REQUEST)
      fail_msg("the first %zu of %zu bytes were accepted", cut, len);
  }
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_boundary),
      cmocka_unit_test(test_parse_good),
      cmocka_unit_test(test_parse_variants),
      cmocka_unit_test(test_caps),
      cmocka_unit_test(test_prefixes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
