/* codecs/base/utf8.c: the strict validator (the offset of the first bad sequence), the length
 * of one sequence, and the cleaner, as tables; and the validator against a reference
 * decoder over every 1-, 2- and 3-byte string and a sweep of 4-byte ones. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/utf8.h"

/* (moved here from tests/codecs/pprof/pprof_decode_test.c with the validator) */
static void test_check_table(void **state)
{
  static const struct {
    const char *s;
    size_t len, bad; /* bad = SIZE_MAX when valid */
  } t[] = {
      {"", 0, SIZE_MAX},
      {"plain ascii, longer than eight bytes", 36, SIZE_MAX},
      {"caf\xc3\xa9", 5, SIZE_MAX},
      {"\xe2\x82\xac euro", 8, SIZE_MAX},
      {"\xf0\x9f\x94\xa5", 4, SIZE_MAX},
      {"\xf4\x8f\xbf\xbf", 4, SIZE_MAX},          /* U+10FFFF */
      {"\xed\x9f\xbf", 3, SIZE_MAX},              /* U+D7FF, just below the surrogates */
      {"\xee\x80\x80", 3, SIZE_MAX},              /* U+E000, just above them */
      {"a\0b", 3, SIZE_MAX},                      /* NUL is U+0000 */
      {"\xc0\x80", 2, 0},                         /* overlong NUL */
      {"\xc1\xbf", 2, 0},                         /* overlong */
      {"\xe0\x80\xaf", 3, 0},                     /* overlong */
      {"\xe0\x9f\xbf", 3, 0},                     /* overlong, the largest */
      {"\xf0\x8f\xbf\xbf", 4, 0},                 /* overlong 4-byte form */
      {"abc\xed\xa0\x80", 6, 3},                  /* surrogate */
      {"\xed\xbf\xbf", 3, 0},                     /* surrogate, the last */
      {"\xf4\x90\x80\x80", 4, 0},                 /* past U+10FFFF */
      {"\xf5\x80\x80\x80", 4, 0},
      {"12345678\x80", 9, 8},                     /* lone continuation after the fast path */
      {"\xc3", 1, 0},                             /* truncated */
      {"ok\xe2\x82", 4, 2},                       /* truncated */
      {"\xf0\x9f\x94", 3, 0},                     /* truncated */
      {"\xe2\x28\xa1", 3, 0},                     /* bad second byte */
      {"\xe2\x82\x28", 3, 0},                     /* bad third byte */
      {"\xf0\x9f\x94\x28", 4, 0},                 /* bad fourth byte */
      {"\xff", 1, 0},
      {"\xfe", 1, 0},
      {"abcdefgh\xc3\xa9" "ijklmnop\xc3", 19, 18}, /* runs around a good and a bad sequence */
  };
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
    size_t r = spaa_utf8_check(t[i].s, t[i].len);
    if (r != t[i].bad)
      fail_msg("case %zu: got %zu, wanted %zu", i, r, t[i].bad);
  }
}

/* A slow, obviously right decoder: 1 when s[0..n) is exactly one valid scalar value. */
static int ref_one(const unsigned char *s, size_t n)
{
  uint32_t cp, min;
  size_t want, i;
  if (n == 0)
    return 0;
  if (s[0] < 0x80)
    return n == 1;
  if ((s[0] & 0xe0) == 0xc0)
    want = 2, cp = s[0] & 0x1f, min = 0x80;
  else if ((s[0] & 0xf0) == 0xe0)
    want = 3, cp = s[0] & 0x0f, min = 0x800;
  else if ((s[0] & 0xf8) == 0xf0)
    want = 4, cp = s[0] & 0x07, min = 0x10000;
  else
    return 0;
  if (n != want)
    return 0;
  for (i = 1; i < n; i++) {
    if ((s[i] & 0xc0) != 0x80)
      return 0;
    cp = cp << 6 | (s[i] & 0x3f);
  }
  return cp >= min && cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff);
}

/* spaa_utf8_seq and spaa_utf8_check agree with the reference on every short string. */
static void test_against_reference(void **state)
{
  unsigned a, b, c;
  (void)state;
  for (a = 0; a < 256; a++) {
    unsigned char s[4] = {(unsigned char)a};
    int ok = ref_one(s, 1);
    assert_int_equal(spaa_utf8_seq(s, 1), ok ? 1 : 0);
    assert_int_equal(spaa_utf8_check(s, 1) == SIZE_MAX, ok);
    for (b = 0; b < 256; b++) {
      s[1] = (unsigned char)b;
      ok = ref_one(s, 2);
      if (a >= 0x80 && (spaa_utf8_seq(s, 2) == 2) != ok)
        fail_msg("%02x %02x: seq says %zu", a, b, spaa_utf8_seq(s, 2));
      if (a >= 0xe0 && a <= 0xf4) {
        for (c = 0x70; c < 0xd0; c++) { /* continuation bytes and their neighbours */
          s[2] = (unsigned char)c;
          ok = ref_one(s, 3);
          if (a < 0xf0 && (spaa_utf8_seq(s, 3) == 3) != ok)
            fail_msg("%02x %02x %02x: seq says %zu", a, b, c, spaa_utf8_seq(s, 3));
          if (a >= 0xf0) {
            s[3] = 0x80 + (unsigned char)(c % 64);
            ok = ref_one(s, 4);
            if ((spaa_utf8_seq(s, 4) == 4) != ok || (spaa_utf8_check(s, 4) == SIZE_MAX) != ok)
              fail_msg("%02x %02x %02x %02x: seq says %zu", a, b, c, s[3],
                       spaa_utf8_seq(s, 4));
          }
        }
      }
    }
  }
}

/* The sequence at a position: its length, or 0, never reading past n. */
static void test_seq_table(void **state)
{
  static const struct {
    const char *s;
    size_t n, want;
  } t[] = {
      {"a", 1, 1},          {"\x7f", 1, 1},         {"\xc3\xa9", 2, 2},
      {"\xc3\xa9", 1, 0},   {"\xe2\x82\xac", 3, 3}, {"\xe2\x82\xac", 2, 0},
      {"\xf0\x9f\x94\xa5", 4, 4}, {"\xf0\x9f\x94\xa5", 3, 0}, {"\x80", 1, 0},
      {"\xc2\x7f", 2, 0},   {"\xed\xa0\x80", 3, 0}, {"\xf8\x80\x80\x80", 4, 0},
  };
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
    if (spaa_utf8_seq((const unsigned char *)t[i].s, t[i].n) != t[i].want)
      fail_msg("case %zu: got %zu, wanted %zu", i,
               spaa_utf8_seq((const unsigned char *)t[i].s, t[i].n), t[i].want);
}

static void test_clean_table(void **state)
{
  static const struct {
    const char *in;
    size_t cap;
    const char *want;
  } t[] = {
      {"plain", 64, "plain"},
      {"caf\xc3\xa9", 64, "caf\xc3\xa9"},
      {"bad \xff byte", 64, "bad ? byte"},
      {"\xc0\x80", 64, "??"},               /* overlong: each byte replaced */
      {"\xed\xa0\x80.", 64, "???."},        /* surrogate */
      {"cut \xe2\x82", 64, "cut ??"},       /* truncated at the end */
      {"abcdef", 4, "abc"},                 /* cut to the room */
      {"ab\xc3\xa9", 4, "ab"},              /* never half a character */
      {"ab\xc3\xa9", 5, "ab\xc3\xa9"},
      {"\xf0\x9f\x94\xa5x", 5, "\xf0\x9f\x94\xa5"},
      {"\xf0\x9f\x94\xa5x", 4, ""},
      {"anything", 1, ""},
      {"", 8, ""},
  };
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
    char out[64];
    size_t n = spaa_utf8_clean(out, t[i].cap, t[i].in, strlen(t[i].in));
    if (strcmp(out, t[i].want) != 0 || n != strlen(t[i].want))
      fail_msg("case %zu: got '%s' (%zu), wanted '%s'", i, out, n, t[i].want);
    assert_int_equal(spaa_utf8_check(out, n), SIZE_MAX);
  }
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_check_table),
      cmocka_unit_test(test_against_reference),
      cmocka_unit_test(test_seq_table),
      cmocka_unit_test(test_clean_table),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
