/* storage/pack.c: every packed value reads back as written, and every truncation of a packed
 * record is caught (bad set, no overrun) at every byte. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "storage/engine_int.h"

static const uint64_t UVS[] = {0, 1, 127, 128, 255, 16383, 16384, UINT32_MAX,
                               (uint64_t)INT64_MAX, UINT64_MAX - 1, UINT64_MAX};
static const int64_t SVS[] = {0, 1, -1, 63, -64, 64, -65, INT32_MIN, INT64_MAX, INT64_MIN,
                              INT64_MIN + 1};
static const double DS[] = {0.0, -0.0, 1.5, -2.25, 1e300, -1e-300, 0.1, 1.0 / 3.0, INFINITY};

/* Pack one of everything into b. */
static void pack_all(struct spaa_buf *b)
{
  json_t *j = json_pack("{s:[i,f,n,b],s:s#}", "a", 1, 2.5, 1, "b", "x\0y", (size_t)3);
  size_t i;
  assert_non_null(j);
  for (i = 0; i < sizeof(UVS) / sizeof(UVS[0]); i++)
    assert_int_equal(storage__put_uv(b, UVS[i]), 0);
  for (i = 0; i < sizeof(SVS) / sizeof(SVS[0]); i++)
    assert_int_equal(storage__put_sv(b, SVS[i]), 0);
  for (i = 0; i < sizeof(SVS) / sizeof(SVS[0]); i++)
    assert_int_equal(storage__put_num(b, spaa_int(SVS[i])), 0);
  for (i = 0; i < sizeof(DS) / sizeof(DS[0]); i++)
    assert_int_equal(storage__put_num(b, spaa_float(DS[i])), 0);
  assert_int_equal(storage__put_str(b, NULL), 0);
  assert_int_equal(storage__put_str(b, ""), 0);
  assert_int_equal(storage__put_str(b, "caf\xc3\xa9 \"q\""), 0);
  assert_int_equal(storage__put_json(b, NULL), 0);
  assert_int_equal(storage__put_json(b, j), 0);
  json_decref(j);
}

/* Read everything back; 1 when every value matched and nothing was bad. */
static int unpack_all(const void *p, size_t len, struct spaa_profile *prof)
{
  struct storage__rd r;
  size_t i;
  int ok = 1;
  const char *s;
  json_t *j;
  storage__rd_init(&r, p, len);
  for (i = 0; i < sizeof(UVS) / sizeof(UVS[0]); i++)
    ok &= storage__get_uv(&r) == UVS[i];
  for (i = 0; i < sizeof(SVS) / sizeof(SVS[0]); i++)
    ok &= storage__get_sv(&r) == SVS[i];
  for (i = 0; i < sizeof(SVS) / sizeof(SVS[0]); i++) {
    struct spaa_num n = storage__get_num(&r);
    ok &= !n.is_float && n.i == SVS[i];
  }
  for (i = 0; i < sizeof(DS) / sizeof(DS[0]); i++) {
    struct spaa_num n = storage__get_num(&r);
    ok &= n.is_float && memcmp(&n.f, &DS[i], sizeof(double)) == 0;
  }
  ok &= storage__get_str(&r, prof) == NULL;
  s = storage__get_str(&r, prof);
  ok &= s && !strcmp(s, "");
  s = storage__get_str(&r, prof);
  ok &= s && !strcmp(s, "caf\xc3\xa9 \"q\"");
  ok &= storage__get_json(&r) == NULL;
  j = storage__get_json(&r);
  ok &= j && json_string_length(json_object_get(j, "b")) == 3 &&
        json_is_real(json_array_get(json_object_get(j, "a"), 1)) &&
        json_is_null(json_array_get(json_object_get(j, "a"), 2));
  json_decref(j);
  return ok && !r.bad && r.pos == len;
}

static void test_round_trip(void **state)
{
  struct spaa_buf b;
  struct spaa_profile *prof = spaa_profile_new();
  spaa_buf_init(&b, 0);
  pack_all(&b);
  assert_true(unpack_all(b.p, b.len, prof));
  spaa_buf_free(&b);
  spaa_profile_free(prof);
}

static void test_every_truncation_is_caught(void **state)
{
  struct spaa_buf b;
  struct spaa_profile *prof = spaa_profile_new();
  spaa_buf_init(&b, 0);
  pack_all(&b);
  for (size_t cut = 0; cut < b.len; cut++) {
    /* a copy of exactly `cut` bytes, so that a read past it is an ASan error */
    void *part = malloc(cut ? cut : 1);
    memcpy(part, b.p, cut);
    if (unpack_all(part, cut, prof))
      fail_msg("a record cut at %zu of %zu bytes read back whole", cut, b.len);
    free(part);
  }
  spaa_buf_free(&b);
  spaa_profile_free(prof);
}

static void test_malformed(void **state)
{
  /* an 11-byte varint, a bad number tag, a string longer than its record, a NUL in text */
  static const uint8_t long_varint[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                        0xff, 0x01};
  static const uint8_t bad_tag[] = {7, 1};
  static const uint8_t long_str[] = {10, 'a', 'b'};
  static const uint8_t nul_str[] = {4, 'a', 0, 'b'};
  static const uint8_t bad_json[] = {3, '{', 'x'};
  struct spaa_profile *prof = spaa_profile_new();
  struct storage__rd r;
  storage__rd_init(&r, long_varint, sizeof(long_varint));
  storage__get_uv(&r);
  assert_true(r.bad);
  storage__rd_init(&r, bad_tag, sizeof(bad_tag));
  storage__get_num(&r);
  assert_true(r.bad);
  storage__rd_init(&r, long_str, sizeof(long_str));
  assert_null(storage__get_str(&r, prof));
  assert_true(r.bad);
  storage__rd_init(&r, nul_str, sizeof(nul_str));
  assert_null(storage__get_str(&r, prof));
  assert_true(r.bad);
  storage__rd_init(&r, bad_json, sizeof(bad_json));
  assert_null(storage__get_json(&r));
  assert_true(r.bad);
  spaa_profile_free(prof);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_round_trip),
    cmocka_unit_test(test_every_truncation_is_caught),
    cmocka_unit_test(test_malformed),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
