/* codecs/pprof/pprof_push.c: a PushRequest packed by protoc-c from our pprof_push.proto
 * (two series, three samples) read by the converter's own walker, its JSON form likewise,
 * the request cut at every byte (an error with nothing appended, or fewer samples), and the
 * refusals (duplicate labels, no sample, bad UTF-8, a sample that is no pprof).
 * The HTTP side: tests/e2e/push.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pprof_push.pb-c.h"
#include "pprof_testlib.h"

/* A two-series request around one small pprof (owned by the caller, as *prof). */
static uint8_t *pack_request(uint8_t **prof, size_t *prof_len, size_t *len, int dup_label)
{
  static struct tb b;
  Push__V1__LabelPair l[5] = {PUSH__V1__LABEL_PAIR__INIT, PUSH__V1__LABEL_PAIR__INIT,
                              PUSH__V1__LABEL_PAIR__INIT, PUSH__V1__LABEL_PAIR__INIT,
                              PUSH__V1__LABEL_PAIR__INIT};
  Push__V1__LabelPair *la[3] = {&l[0], &l[1], &l[2]}, *lb[2] = {&l[3], &l[4]};
  Push__V1__RawSample s[3] = {PUSH__V1__RAW_SAMPLE__INIT, PUSH__V1__RAW_SAMPLE__INIT,
                              PUSH__V1__RAW_SAMPLE__INIT};
  Push__V1__RawSample *sa[2] = {&s[0], &s[1]}, *sb[1] = {&s[2]};
  Push__V1__RawProfileSeries ser[2] = {PUSH__V1__RAW_PROFILE_SERIES__INIT,
                                       PUSH__V1__RAW_PROFILE_SERIES__INIT};
  Push__V1__RawProfileSeries *serp[2] = {&ser[0], &ser[1]};
  Push__V1__PushRequest req = PUSH__V1__PUSH_REQUEST__INIT;
  uint8_t *out;
  size_t i;
  tb_basic(&b);
  *prof = tb_pack(&b, prof_len);
  l[0].name = "__name__", l[0].value = "process_cpu";
  l[1].name = "service_name", l[1].value = "checkout";
  l[2].name = dup_label ? "__name__" : "env", l[2].value = "prod";
  l[3].name = "region", l[3].value = "eu";
  l[4].name = "service_name", l[4].value = "payments";
  for (i = 0; i < 3; i++) {
    s[i].raw_profile.data = *prof;
    s[i].raw_profile.len = *prof_len;
  }
  s[0].id = "734FD599-6865-419E-9475-932762D8F469";
  s[1].id = "not a valid id"; /* kept in attrs only */
  ser[0].n_labels = 3, ser[0].labels = la, ser[0].n_samples = 2, ser[0].samples = sa;
  ser[1].n_labels = 2, ser[1].labels = lb, ser[1].n_samples = 1, ser[1].samples = sb;
  req.n_series = 2, req.series = serp;
  *len = push__v1__push_request__get_packed_size(&req);
  out = malloc(*len);
  push__v1__push_request__pack(&req, out);
  return out;
}

static char *labels_of(const struct spaa_converted *c)
{
  return c->labels ? json_dumps(c->labels, JSON_COMPACT | JSON_SORT_KEYS) : strdup("null");
}

/* The three entries of the two-series request. */
static void expect_three(const struct spaa_conv_list *l, const char *id0)
{
  char *lab;
  assert_int_equal(l->n, 3);
  assert_string_equal(l->v[0].id, id0);
  assert_string_equal(l->v[1].id, "");
  assert_string_equal(l->v[2].id, "");
  assert_string_equal(l->v[0].service, "checkout");
  assert_string_equal(l->v[2].service, "payments");
  lab = labels_of(&l->v[1]);
  assert_string_equal(lab, "{\"__name__\":\"process_cpu\",\"env\":\"prod\"}");
  free(lab);
  lab = labels_of(&l->v[2]);
  assert_string_equal(lab, "{\"region\":\"eu\"}");
  free(lab);
  assert_string_equal(json_string_value(json_object_get(l->v[1].attrs, "pyroscope_id")),
                      "not a valid id");
  assert_null(json_object_get(l->v[2].attrs, "pyroscope_id"));
  assert_non_null(l->v[0].profile);
  assert_int_equal(l->v[0].profile->n_samples, l->v[2].profile->n_samples);
}

static void test_protobuf(void **state)
{
  struct spaa_convert_opts o = {.keep_original = 1};
  struct spaa_conv_list l = {0};
  struct spaa_err err;
  uint8_t *prof, *req;
  size_t plen, len, i;
  (void)state;
  req = pack_request(&prof, &plen, &len, 0);
  if (spaa_convert_pprof_push(req, len, &o, &l, &err))
    fail_msg("%s", err.msg);
  expect_three(&l, "734FD599-6865-419E-9475-932762D8F469");
  for (i = 0; i < l.n; i++) { /* each original is its raw profile, inside the request */
    assert_true((const uint8_t *)l.v[i].original > req);
    assert_true((const uint8_t *)l.v[i].original + plen <= req + len);
    assert_int_equal(l.v[i].original_len, plen);
    assert_memory_equal(l.v[i].original, prof, plen);
  }
  spaa_conv_list_free(&l);
  free(req);
  free(prof);
}

static void b64(const uint8_t *in, size_t n, char *out)
{
  static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  size_t i, o = 0;
  for (i = 0; i < n; i += 3) {
    uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < n ? (uint32_t)in[i + 1] << 8 : 0) |
                 (i + 2 < n ? in[i + 2] : 0);
    out[o++] = a[v >> 18 & 63];
    out[o++] = a[v >> 12 & 63];
    out[o++] = i + 1 < n ? a[v >> 6 & 63] : '=';
    out[o++] = i + 2 < n ? a[v & 63] : '=';
  }
  out[o] = 0;
}

static void test_json(void **state)
{
  struct spaa_convert_opts o = {.keep_original = 1};
  struct spaa_conv_list l = {0};
  struct spaa_err err;
  uint8_t *prof, *req;
  size_t plen, len;
  char *enc, *js;
  (void)state;
  req = pack_request(&prof, &plen, &len, 0);
  enc = malloc(plen * 2 + 8);
  b64(prof, plen, enc);
  js = malloc(strlen(enc) * 3 + 1024);
  sprintf(js, " {\"series\":[{\"labels\":[{\"name\":\"__name__\",\"value\":\"process_cpu\"},"
              "{\"name\":\"service_name\",\"value\":\"checkout\"},{\"name\":\"env\",\"value\":"
              "\"prod\"}],\"samples\":[{\"rawProfile\":\"%s\",\"ID\":\"abc-1\"},{\"raw_profile\":"
              "\"%s\",\"id\":\"not a valid id\"}]},{\"labels\":[{\"name\":\"region\",\"value\":"
              "\"eu\"},{\"name\":\"service_name\",\"value\":\"payments\"}],\"samples\":["
              "{\"rawProfile\":\"%s\"}]}]}",
          enc, enc, enc);
  if (spaa_convert_pprof_push((const uint8_t *)js, strlen(js), &o, &l, &err))
    fail_msg("%s", err.msg);
  expect_three(&l, "abc-1");
  assert_null(l.v[0].original); /* decoded from base64 here: nothing to borrow */
  spaa_conv_list_free(&l);
  free(js);
  free(enc);
  free(req);
  free(prof);
}

/* One ID on several samples of a push: each profile keeps an id of its own (ID, ID-2,
 * ID-3: the store would have kept the first alone), the same for the same push again. */
static void test_repeated_id(void **state)
{
  struct spaa_conv_list l = {0};
  struct spaa_err err;
  uint8_t *prof, *req;
  size_t plen, len, round;
  char *enc, *js;
  (void)state;
  req = pack_request(&prof, &plen, &len, 0);
  enc = malloc(plen * 2 + 8);
  b64(prof, plen, enc);
  js = malloc(strlen(enc) * 4 + 1024);
  sprintf(js, "{\"series\":[{\"labels\":[{\"name\":\"service_name\",\"value\":\"b\"}],"
              "\"samples\":[{\"rawProfile\":\"%s\",\"ID\":\"same\"},{\"rawProfile\":\"%s\","
              "\"ID\":\"same\"},{\"rawProfile\":\"%s\",\"ID\":\"other\"},{\"rawProfile\":\"%s\","
              "\"ID\":\"same\"}]}]}",
          enc, enc, enc, enc);
  for (round = 0; round < 2; round++) {
    if (spaa_convert_pprof_push((const uint8_t *)js, strlen(js), NULL, &l, &err))
      fail_msg("%s", err.msg);
    assert_int_equal(l.n, 4);
    assert_string_equal(l.v[0].id, "same");
    assert_string_equal(l.v[1].id, "same-2");
    assert_string_equal(l.v[2].id, "other");
    assert_string_equal(l.v[3].id, "same-3");
    spaa_conv_list_free(&l);
    memset(&l, 0, sizeof(l));
  }
  free(js);
  free(enc);
  free(req);
  free(prof);
}

/* Cut anywhere: an error with nothing appended, or a shorter valid request. */
static void test_cut_everywhere(void **state)
{
  struct spaa_conv_list l = {0};
  struct spaa_err err;
  uint8_t *prof, *req;
  size_t plen, len, cut;
  (void)state;
  req = pack_request(&prof, &plen, &len, 0);
  for (cut = 0; cut < len; cut++) {
    int rc = spaa_convert_pprof_push(req, cut, NULL, &l, &err);
    if (rc) {
      assert_int_equal(l.n, 0);
      assert_true(err.msg[0] != 0);
    } else {
      assert_true(l.n >= 1 && l.n < 3);
    }
    spaa_conv_list_free(&l);
  }
  free(req);
  free(prof);
}

static void test_refusals(void **state)
{
  static const struct {
    const char *what, *body;
    int rc;
    const char *needle;
  } cases[] = {
      {"no series", "{\"series\":[]}", SPAA_E_BAD_REQUEST, "no sample"},
      {"empty protobuf", "", SPAA_E_BAD_REQUEST, "no sample"},
      {"series not an array", "{\"series\":{}}", SPAA_E_BAD_JSON, "array"},
      {"bad base64", "{\"series\":[{\"samples\":[{\"rawProfile\":\"@@\"}]}]}", SPAA_E_BAD_JSON,
       "series 0 sample 0"},
      {"empty raw profile", "{\"series\":[{\"samples\":[{\"rawProfile\":\"\"}]}]}",
       SPAA_E_BAD_REQUEST, "empty"},
      {"no pprof", "{\"series\":[{\"samples\":[{\"rawProfile\":\"aGVsbG8=\"}]}]}",
       SPAA_E_BAD_PROTOBUF, "series 0 sample 0: "},
      {"label name empty", "{\"series\":[{\"labels\":[{\"value\":\"x\"}]}]}",
       SPAA_E_BAD_REQUEST, "no name"},
      {"service_name twice", "{\"series\":[{\"labels\":[{\"name\":\"service_name\",\"value\":"
       "\"a\"},{\"name\":\"service_name\",\"value\":\"b\"}]}]}", SPAA_E_BAD_REQUEST, "twice"},
      {"truncated varint", "\x0a\x80", SPAA_E_BAD_PROTOBUF, "malformed"},
      {"label with a bad UTF-8 name", "\x0a\x06\x0a\x04\x0a\x02\xc3\x28", SPAA_E_BAD_PROTOBUF,
       "UTF-8"},
  };
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    struct spaa_conv_list l = {0};
    struct spaa_err err;
    int rc;
    spaa_err_clear(&err);
    rc = spaa_convert_pprof_push((const uint8_t *)cases[i].body, strlen(cases[i].body), NULL,
                                 &l, &err);
    if (rc != cases[i].rc || !strstr(err.msg, cases[i].needle))
      fail_msg("%s: rc %d (%s), want %d with '%s'", cases[i].what, rc, err.msg, cases[i].rc,
               cases[i].needle);
    assert_int_equal(l.n, 0);
    spaa_conv_list_free(&l);
  }
}

/* A protobuf request whose first series is 123 bytes starts "\n{", as JSON does: read as
 * protobuf all the same. */
static void test_protobuf_brace(void **state)
{
  static char pad[200];
  Push__V1__LabelPair l[2] = {PUSH__V1__LABEL_PAIR__INIT, PUSH__V1__LABEL_PAIR__INIT};
  Push__V1__LabelPair *la[2] = {&l[0], &l[1]};
  Push__V1__RawSample s = PUSH__V1__RAW_SAMPLE__INIT, *sa[1] = {&s};
  Push__V1__RawProfileSeries ser = PUSH__V1__RAW_PROFILE_SERIES__INIT, *serp[1] = {&ser};
  Push__V1__PushRequest req = PUSH__V1__PUSH_REQUEST__INIT;
  struct spaa_conv_list list = {0};
  struct spaa_err err;
  struct tb b;
  uint8_t *prof, *out;
  size_t plen, len, n;
  uint64_t f, loc;
  int64_t v = 1;
  (void)state;
  tb_init(&b); /* one sample of one frame: small enough for a 123-byte series */
  tb_type(&b, "samples", "count");
  f = tb_fn(&b, "f", "");
  loc = tb_loc(&b, 0, 0x10, 1, &f);
  tb_sample(&b, 1, &loc, &v);
  prof = tb_pack(&b, &plen);
  s.raw_profile.data = prof;
  s.raw_profile.len = plen;
  l[0].name = "service_name", l[0].value = "brace";
  l[1].name = "pad", l[1].value = pad;
  ser.n_labels = 2, ser.labels = la, ser.n_samples = 1, ser.samples = sa;
  req.n_series = 1, req.series = serp;
  for (n = 0; n < sizeof(pad) - 1; n++) { /* the pad that makes the series 123 bytes */
    memset(pad, 'x', n);
    pad[n] = 0;
    if (push__v1__raw_profile_series__get_packed_size(&ser) == 123)
      break;
  }
  assert_int_equal(push__v1__raw_profile_series__get_packed_size(&ser), 123);
  len = push__v1__push_request__get_packed_size(&req);
  out = malloc(len);
  push__v1__push_request__pack(&req, out);
  assert_memory_equal(out, "\n{", 2);
  if (spaa_convert_pprof_push(out, len, NULL, &list, &err))
    fail_msg("%s", err.msg);
  assert_int_equal(list.n, 1);
  assert_string_equal(list.v[0].service, "brace");
  spaa_conv_list_free(&list);
  free(out);
  free(prof);
}

/* A label repeated inside a series: refused, nothing appended. */
static void test_duplicate_label(void **state)
{
  struct spaa_conv_list l = {0};
  struct spaa_err err;
  uint8_t *prof, *req;
  size_t plen, len;
  (void)state;
  req = pack_request(&prof, &plen, &len, 1);
  assert_int_equal(spaa_convert_pprof_push(req, len, NULL, &l, &err), SPAA_E_BAD_REQUEST);
  assert_non_null(strstr(err.msg, "'__name__' given twice"));
  assert_int_equal(l.n, 0);
  free(req);
  free(prof);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_protobuf),   cmocka_unit_test(test_json),
      cmocka_unit_test(test_protobuf_brace),
      cmocka_unit_test(test_cut_everywhere), cmocka_unit_test(test_refusals),
      cmocka_unit_test(test_duplicate_label), cmocka_unit_test(test_repeated_id),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
