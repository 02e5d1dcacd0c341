/* codecs/base/hex.c: digit values, encoding, decoding (either case, lowercase only), 64-bit
 * integers in and out, as tables with the refusals. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "base/hex.h"

static void test_digit_values(void **state)
{
  int c;
  (void)state;
  for (c = 0; c < 256; c++) {
    int any = -1, lower = -1;
    if (c >= '0' && c <= '9')
      any = lower = c - '0';
    else if (c >= 'a' && c <= 'f')
      any = lower = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F')
      any = c - 'A' + 10;
    if (spaa_hex_val((unsigned char)c) != any || spaa_hex_lower_val((unsigned char)c) != lower)
      fail_msg("byte 0x%02x: got %d/%d, wanted %d/%d", c, spaa_hex_val((unsigned char)c),
               spaa_hex_lower_val((unsigned char)c), any, lower);
  }
  assert_string_equal(spaa_hex_digits, "0123456789abcdef");
}

static void test_encode(void **state)
{
  static const uint8_t bytes[] = {0x00, 0x01, 0x7f, 0x80, 0xab, 0xff};
  char out[2 * sizeof(bytes) + 1];
  (void)state;
  memset(out, 'x', sizeof(out));
  spaa_hex_encode(out, bytes, sizeof(bytes));
  assert_string_equal(out, "00017f80abff");
  spaa_hex_encode(out, NULL, 0);
  assert_string_equal(out, "");
}

static void test_decode_table(void **state)
{
  static const struct {
    const char *in;
    int lower_only;
    int rc;
    const char *want; /* the bytes, when rc == 0 */
    size_t want_len;
  } t[] = {
      {"", 0, 0, "", 0},
      {"00ff7f", 0, 0, "\x00\xff\x7f", 3},
      {"ABcdEf", 0, 0, "\xab\xcd\xef", 3},
      {"abcdef", 1, 0, "\xab\xcd\xef", 3},
      {"ABCDEF", 1, -1, NULL, 0}, /* uppercase where only lowercase is allowed */
      {"abc", 0, -1, NULL, 0},    /* odd length */
      {"0g", 0, -1, NULL, 0},     /* not a digit */
      {"g0", 0, -1, NULL, 0},
      {"0x12", 0, -1, NULL, 0},   /* no prefix accepted */
      {" 1", 0, -1, NULL, 0},
      {"1\xff", 0, -1, NULL, 0},
  };
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
    uint8_t out[16];
    int rc = spaa_hex_decode(out, t[i].in, strlen(t[i].in), t[i].lower_only);
    if (rc != t[i].rc)
      fail_msg("case %zu (%s): rc %d, wanted %d", i, t[i].in, rc, t[i].rc);
    if (rc == 0 && memcmp(out, t[i].want, t[i].want_len) != 0)
      fail_msg("case %zu (%s): wrong bytes", i, t[i].in);
  }
}

static void test_round_trip(void **state)
{
  uint8_t all[256], back[256];
  char text[2 * sizeof(all) + 1];
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(all); i++)
    all[i] = (uint8_t)i;
  spaa_hex_encode(text, all, sizeof(all));
  assert_int_equal(strlen(text), 2 * sizeof(all));
  assert_int_equal(spaa_hex_decode(back, text, strlen(text), 1), 0);
  assert_memory_equal(all, back, sizeof(all));
}

static void test_parse_u64_table(void **state)
{
  static const struct {
    const char *in;
    int rc;
    uint64_t v;
  } t[] = {
      {"0", 0, 0},
      {"7f3A", 0, 0x7f3a},
      {"ffffffffffffffff", 0, UINT64_MAX},
      {"0000000000000001", 0, 1},
      {"", -1, 0},
      {"10000000000000000", -1, 0}, /* 17 digits */
      {"12x4", -1, 0},
      {"-1", -1, 0},
  };
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
    uint64_t v = 12345;
    int rc = spaa_hex_parse_u64(t[i].in, strlen(t[i].in), &v);
    if (rc != t[i].rc || (rc == 0 && v != t[i].v) || (rc != 0 && v != 12345))
      fail_msg("case %zu (%s): rc %d v %llx", i, t[i].in, rc, (unsigned long long)v);
  }
  /* exactly `len` bytes are read: the digits after it do not count */
  {
    uint64_t v;
    assert_int_equal(spaa_hex_parse_u64("12ab", 2, &v), 0);
    assert_int_equal(v, 0x12);
  }
}

/* spaa_hex_u64 / spaa_hex_addr write what printf's "%" PRIx64 writes. */
static void test_u64_out(void **state)
{
  static const uint64_t vals[] = {0,          1,          0xf,        0x10,        0xabc,
                                  0x7fffffff, 0x80000000, UINT32_MAX, 0x123456789, UINT64_MAX,
                                  1ull << 63, 0x0fffffffffffffffull};
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
    char want[32], got[SPAA_HEX_ADDR_SIZE];
    size_t n;
    snprintf(want, sizeof(want), "%llx", (unsigned long long)vals[i]);
    n = spaa_hex_u64(got, vals[i]);
    assert_string_equal(got, want);
    assert_int_equal(n, strlen(want));
    snprintf(want, sizeof(want), "0x%llx", (unsigned long long)vals[i]);
    n = spaa_hex_addr(got, vals[i]);
    assert_string_equal(got, want);
    assert_int_equal(n, strlen(want));
  }
}

/* The other forms of a profile id, in lookup order, the id itself left out; none for what is
 * no 32-digit id or dashed UUID. */
static void test_id_forms(void **state)
{
  static const struct {
    const char *in;
    const char *out[4]; /* NULL-terminated when fewer */
  } t[] = {
      {"0123456789ABCDEF0123456789abcdef",
       {"0123456789abcdef0123456789abcdef", "01234567-89ab-cdef-0123-456789abcdef",
        "01234567-89AB-CDEF-0123-456789ABCDEF", "0123456789ABCDEF0123456789ABCDEF"}},
      {"734FD599-6865-419E-9475-932762D8F469",
       {"734fd5996865419e9475932762d8f469", "734fd599-6865-419e-9475-932762d8f469",
        "734FD5996865419E9475932762D8F469", NULL}},
      {"734fd599-6865-419e-9475-932762d8f469",
       {"734fd5996865419e9475932762d8f469", "734FD599-6865-419E-9475-932762D8F469",
        "734FD5996865419E9475932762D8F469", NULL}},
      {"5d5b5b5b000040008000000000000001",
       {"5d5b5b5b-0000-4000-8000-000000000001", "5D5B5B5B-0000-4000-8000-000000000001",
        "5D5B5B5B000040008000000000000001", NULL}},
      /* no letters: the capitals are the lowercase forms */
      {"01234567890123456789012345678901", {"01234567-8901-2345-6789-012345678901", NULL}},
      {"01234567-8901-2345-6789-012345678901", {"01234567890123456789012345678901", NULL}},
      {"0123456789abcdef0123456789abcdeg", {NULL}},     /* not hex */
      {"734fd599-6865-419e-9475932762d8f4699", {NULL}}, /* a dash out of place */
      {"734fd599-6865-419e-9475-932762d8f46-", {NULL}}, /* a dash for a digit */
      {"734fd599686541", {NULL}},
      {"", {NULL}},
      {NULL, {NULL}},
  };
  size_t i, k;
  (void)state;
  for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
    char out[SPAA_HEX_ID_FORMS][37];
    int n = spaa_hex_id_forms(t[i].in, out);
    for (k = 0; k < 4 && t[i].out[k]; k++) {
      assert_true((size_t)n > k);
      assert_string_equal(out[k], t[i].out[k]);
    }
    assert_int_equal(n, (int)k);
  }
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_digit_values),    cmocka_unit_test(test_encode),
      cmocka_unit_test(test_decode_table),    cmocka_unit_test(test_round_trip),
      cmocka_unit_test(test_parse_u64_table), cmocka_unit_test(test_u64_out),
      cmocka_unit_test(test_id_forms),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
