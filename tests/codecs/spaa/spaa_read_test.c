/* Reader tests: the spec's examples field by field, plain and zstd, piecewise input, both frame
 * orders, unknown keys kept through read -> write, numbers and strings, and failures. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <zstd.h>

#include "spaa/spaa_io.h"
#include "fixture.h"
#include "spaa_testutil.h"

static struct spaa_profile *read_str(const char *s)
{
  struct spaa_profile *p = NULL;
  struct spaa_err err;
  memset(&err, 0, sizeof(err));
  if (spaa_read_buf(s, strlen(s), &p, &err))
    print_message("read failed: line %zu: %s\n", err.line, err.msg);
  return p;
}

/* Write p into a new NUL-terminated string (caller frees). */
static char *write_str(const struct spaa_profile *p, size_t *len)
{
  struct spaa_buf b;
  struct spaa_err err;
  spaa_buf_init(&b, 0);
  assert_int_equal(spaa_write_buf(p, 0, &b, &err), 0);
  assert_int_equal(spaa_buf_add(&b, "", 0), 0); /* NUL-terminate even when empty */
  return spaa_buf_steal(&b, len);
}

static void test_spec_fields(void **state)
{
  size_t len;
  char *buf = (char *)spaa_test_data("spec_examples.spaa", &len);
  struct spaa_profile *p;
  const struct spaa_header *h;
  const struct spaa_stack *s;
  (void)state;
  assert_non_null(buf);
  p = read_str(buf);
  assert_non_null(p);
  h = &p->header;
  assert_string_equal(h->source_tool, "perf");
  assert_int_equal(h->frame_order, SPAA_LEAF_TO_ROOT);
  assert_int_equal(h->id_mode, SPAA_IDS_CONTENT);
  assert_int_equal(h->n_events, 2);
  assert_string_equal(h->events[0].name, "cycles");
  assert_string_equal(h->events[0].kind, "hardware");
  assert_string_equal(h->events[0].mode, "period");
  assert_string_equal(h->events[0].primary_metric, "period");
  assert_true(h->events[0].has_sample_period);
  assert_int_equal(h->events[0].sample_period.i, 100000);
  assert_string_equal(h->events[1].primary_metric, "alloc_bytes");
  assert_non_null(json_object_get(h->events[1].extra, "allocation_tracking"));
  assert_true(h->has_time_range);
  assert_true(h->start.is_float);
  assert_true(h->start.f == 12345.0);
  assert_string_equal(h->time_unit, "seconds");
  assert_string_equal(json_string_value(json_object_get(h->source, "tool_version")), "6.1.0");
  assert_null(h->extra);

  assert_int_equal(p->n_dsos, 1);
  assert_int_equal(p->dsos[0].id, 12);
  assert_string_equal(p->dsos[0].name, "/usr/bin/myapp");
  assert_string_equal(p->dsos[0].build_id, "abcd1234567890abcdef");
  assert_false(p->dsos[0].is_kernel);
  assert_false(p->dsos[0].has_mapping);

  assert_int_equal(p->n_frames, 7);
  assert_int_equal(p->frames[0].id, 101);
  assert_true(p->frames[0].has_ip);
  assert_int_equal(p->frames[0].ip, 0x401234);
  assert_string_equal(p->frames[0].symoff, "0x54");
  assert_string_equal(p->frames[0].srcline, "src/parse.rs:214");
  assert_string_equal(p->frames[0].kind, "user");
  assert_int_equal(p->frames[0].dso, 12);
  assert_true(p->frames[1].inlined);
  assert_true(p->frames[1].has_inline_depth);
  assert_int_equal(p->frames[1].inline_depth, 2);
  assert_false(p->frames[0].has_inline_depth);

  assert_int_equal(p->n_threads, 1);
  assert_int_equal(p->threads[0].tid, 4511);
  assert_string_equal(p->threads[0].comm, "myapp");

  assert_int_equal(p->n_stacks, 2);
  s = &p->stacks[0];
  assert_string_equal(s->id, "0xdeadbeef");
  assert_int_equal(s->n_frames, 4);
  assert_int_equal(s->frames[0], 101);
  assert_int_equal(s->frames[3], 3);
  assert_string_equal(s->stack_type, "unified");
  assert_string_equal(s->event, "cycles");
  assert_null(json_object_get(s->context, "event"));
  assert_int_equal(json_integer_value(json_object_get(s->context, "cpu")), 3);
  assert_int_equal(s->weights.n, 2);
  assert_string_equal(s->weights.v[1].metric, "period");
  assert_int_equal(s->weights.v[1].value.i, 987654321);
  assert_string_equal(s->weights.v[1].unit, "events");
  assert_null(s->weights.v[0].unit);
  assert_true(s->has_exclusive);
  assert_int_equal(s->excl_frame, 101);
  assert_int_equal(s->excl_weights.v[0].value.i, 123456789);
  assert_null(p->stacks[1].stack_type);

  assert_int_equal(p->n_samples, 1);
  assert_true(p->samples[0].timestamp.is_float);
  assert_true(p->samples[0].timestamp.f == 12345.6789);
  assert_string_equal(p->samples[0].stack_id, "0xdeadbeef");
  assert_int_equal(p->samples[0].period.i, 123456);
  assert_int_equal(p->samples[0].cpu, 3);
  assert_non_null(p->samples[0].context);
  assert_int_equal(json_object_size(p->samples[0].context), 0);

  assert_int_equal(p->n_windows, 1);
  assert_string_equal(p->windows[0].id, "w1");
  assert_int_equal(json_array_size(p->windows[0].by_stack), 1);
  spaa_profile_free(p);
  free(buf);
}

/* Plain, zstd, and piecewise reads all give the same profile (compared by its written form). */
static void test_plain_zstd_pieces(void **state)
{
  size_t len, zlen, outlen, l2, i, steps[] = {1, 3, 64, 100000};
  char *buf = (char *)spaa_test_data("spec_examples.spaa", &len), *z, *ref, *other;
  struct spaa_profile *p;
  struct spaa_err err;
  (void)state;
  assert_non_null(buf);
  p = read_str(buf);
  assert_non_null(p);
  ref = write_str(p, &outlen);
  spaa_profile_free(p);
  z = malloc(ZSTD_compressBound(len));
  zlen = ZSTD_compress(z, ZSTD_compressBound(len), buf, len, 5);
  assert_false(ZSTD_isError(zlen));
  assert_int_equal(spaa_read_buf(z, zlen, &p, &err), 0);
  other = write_str(p, &l2);
  assert_int_equal(l2, outlen);
  assert_memory_equal(other, ref, outlen);
  spaa_profile_free(p);
  free(other);
  for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
    struct spaa_test_src src = {z, zlen, 0, steps[i]};
    struct spaa_test_src plain = {buf, len, 0, steps[i]};
    assert_int_equal(spaa_read(spaa_test_read, &src, &p, &err), 0);
    other = write_str(p, &l2);
    assert_int_equal(l2, outlen);
    assert_memory_equal(other, ref, outlen);
    spaa_profile_free(p);
    free(other);
    assert_int_equal(spaa_read(spaa_test_read, &plain, &p, &err), 0);
    other = write_str(p, &l2);
    assert_int_equal(l2, outlen);
    assert_memory_equal(other, ref, outlen);
    spaa_profile_free(p);
    free(other);
  }
  /* truncated zstd is an error, not a short profile */
  assert_int_equal(spaa_read_buf(z, zlen - 3, &p, &err), SPAA_E_BAD_COMPRESSION);
  assert_null(p);
  free(ref);
  free(z);
  free(buf);
}

/* Every record type carries keys the model has no field for: they survive read -> write. */
static const char unknown_keys[] =
    "{\"type\":\"header\",\"format\":\"spaa\",\"version\":\"1.0\",\"source_tool\":\"perf\","
    "\"frame_order\":\"root_to_leaf\",\"stack_id_mode\":\"local\",\"x_hdr\":{\"b\":[1,2.5,null]},"
    "\"events\":[{\"name\":\"cycles\",\"kind\":\"hardware\",\"x_ev\":true,\"sampling\":{\"mode\":"
    "\"frequency\",\"primary_metric\":\"samples\",\"frequency_hz\":99,\"x_samp\":\"s\"}}]}\n"
    "{\"type\":\"dso\",\"id\":1,\"name\":\"a.so\",\"is_kernel\":false,\"x_mapping\":{\"start\":"
    "\"0x1000\",\"limit\":\"0x9000\",\"offset\":\"0x0\"},\"x_dso\":\"d\"}\n"
    "{\"type\":\"frame\",\"id\":5,\"func\":\"0x1234\",\"func_resolved\":false,\"dso\":1,\"ip\":"
    "\"0x1234\",\"srcline_resolved\":false,\"inlined\":false,\"kind\":\"user\",\"x_fr\":[]}\n"
    "{\"type\":\"frame\",\"id\":6,\"func\":\"main\",\"dso\":1,\"kind\":\"user\"}\n"
    "{\"type\":\"thread\",\"pid\":1,\"tid\":2,\"x_th\":{}}\n"
    "{\"type\":\"stack\",\"id\":\"s1\",\"frames\":[6,5],\"related_stacks\":[\"s2\"],\"context\":{"
    "\"event\":\"cycles\",\"x_label\":{\"k\":\"v\"},\"probe\":{\"name\":\"entry\"}},\"weights\":["
    "{\"metric\":\"samples\",\"value\":4}],\"x_st\":1}\n"
    "{\"type\":\"sample\",\"stack_id\":\"s1\",\"x_weights\":[{\"metric\":\"cpu_ns\",\"value\":"
    "10,\"unit\":\"nanoseconds\"}],\"context\":{\"x_trace\":\"abc\"},\"x_sm\":false}\n"
    "{\"type\":\"window\",\"id\":\"w\",\"start\":0,\"end\":1,\"by_stack\":[],\"x_win\":7}\n"
    "{\"type\":\"annotation\",\"dropped\":true}\n";

static void test_unknown_keys_roundtrip(void **state)
{
  struct spaa_profile *p = read_str(unknown_keys), *q;
  size_t l1, l2, i;
  char *a, *b;
  static const char *const expect[] = {
      "\"x_hdr\":{\"b\":[1,2.5,null]}", "\"x_ev\":true", "\"x_samp\":\"s\"",
      "\"frequency_hz\":99",
      ("\"x_mapping\":{\"start\":\"0x1000\",\"limit\":\"0x9000\",\"offset\":\"0x0\"}"), "\"x_dso\":\"d\"", "\"x_fr\":[]", "\"srcline_resolved\":false",
      "\"func_resolved\":false", "\"x_th\":{}", "\"related_stacks\":[\"s2\"]",
      "\"x_label\":{\"k\":\"v\"}", "\"probe\":{\"name\":\"entry\"}", "\"x_st\":1",
      "\"x_weights\":[{\"metric\":\"cpu_ns\",\"value\":10,\"unit\":\"nanoseconds\"}]",
      "\"context\":{\"x_trace\":\"abc\"}", "\"x_sm\":false", "\"x_win\":7",
      "\"frame_order\":\"root_to_leaf\"", "\"stack_id_mode\":\"local\"", "\"frames\":[6,5]"};
  (void)state;
  assert_non_null(p);
  assert_true(p->dsos[0].has_mapping);
  assert_int_equal(p->dsos[0].map_start, 0x1000);
  assert_int_equal(p->dsos[0].map_limit, 0x9000);
  assert_int_equal(p->samples[0].weights.n, 1);
  assert_string_equal(p->samples[0].weights.v[0].metric, "cpu_ns");
  assert_int_equal(p->header.frame_order, SPAA_ROOT_TO_LEAF);
  assert_int_equal(p->stacks[0].frames[0], 6); /* kept in the file's order */
  a = write_str(p, &l1);
  for (i = 0; i < sizeof(expect) / sizeof(expect[0]); i++) {
    if (!strstr(a, expect[i]))
      print_message("missing %s in\n%s", expect[i], a);
    assert_non_null(strstr(a, expect[i]));
  }
  assert_null(strstr(a, "annotation")); /* unknown record types have no place in the model */
  /* read(write(p)) writes the same bytes */
  q = read_str(a);
  assert_non_null(q);
  b = write_str(q, &l2);
  assert_int_equal(l1, l2);
  assert_memory_equal(a, b, l1);
  spaa_profile_free(p);
  spaa_profile_free(q);
  free(a);
  free(b);
}

#define HDR "{\"type\":\"header\",\"format\":\"spaa\",\"version\":\"1.0\",\"frame_order\":\"leaf_to_root\"}"

static void test_numbers_strings(void **state)
{
  static const char in[] =
      HDR "\r\n\n   \n"
      "{\"type\":\"sample\",\"stack_id\":12,\"timestamp\":9223372036854775807,\"pid\":"
      "-9223372036854775808,\"period\":1.0}\n"
      "{\"type\":\"sample\",\"stack_id\":\"x\",\"timestamp\":1e3,\"period\":18446744073709551616}\n"
      "{\"type\":\"dso\",\"id\":18446744073709551615,\"name\":\"caf\\u00e9 \\ud83d\\ude00 "
      "\\\"q\\\" \\\\ \\/ \\t\\n\"}\n"
      "{\"name\":\"k\\u0065y order\",\"id\":3,\"type\":\"dso\"}";
  struct spaa_profile *p = read_str(in);
  char *out;
  size_t len;
  (void)state;
  assert_non_null(p);
  assert_int_equal(p->n_samples, 2);
  assert_string_equal(p->samples[0].stack_id, "12");
  assert_false(p->samples[0].timestamp.is_float);
  assert_true(p->samples[0].timestamp.i == INT64_MAX);
  assert_true(p->samples[0].pid == INT64_MIN);
  assert_true(p->samples[0].period.is_float);
  assert_true(p->samples[1].timestamp.is_float);
  assert_true(p->samples[1].timestamp.f == 1000.0);
  assert_true(p->samples[1].period.is_float); /* past 64 bits: kept as a double */
  assert_int_equal(p->n_dsos, 2);
  assert_true(p->dsos[0].id == UINT64_MAX);
  assert_string_equal(p->dsos[0].name, "caf\xc3\xa9 \xf0\x9f\x98\x80 \"q\" \\ / \t\n");
  assert_int_equal(p->dsos[1].id, 3);
  assert_string_equal(p->dsos[1].name, "key order");
  out = write_str(p, &len);
  assert_non_null(strstr(out, "\"period\":1.0,"));
  assert_non_null(strstr(out, "\"timestamp\":1000.0,"));
  assert_non_null(strstr(out, "\"name\":\"caf\xc3\xa9 \xf0\x9f\x98\x80 \\\"q\\\" \\\\ / \\t\\n\""));
  free(out);
  spaa_profile_free(p);
}

struct bad {
  const char *input;
  int code;
  size_t line;
  const char *needle; /* in err.msg */
};

static void test_failures(void **state)
{
  static const struct bad bad[] = {
      {"", SPAA_E_INVALID, 1, "no header"},
      {"{\"type\":\"dso\",\"id\":1,\"name\":\"a\"}\n", SPAA_E_INVALID, 1, "no header"},
      {HDR "\n" HDR "\n", SPAA_E_INVALID, 2, "second header"},
      {HDR "\n{\"type\":\"dso\",\"id\":1,\"name\":\"a\"\n", SPAA_E_BAD_JSON, 2, "column"},
      {HDR "\n[1,2]\n", SPAA_E_BAD_JSON, 2, "object"},
      {HDR "\n{\"type\":\"dso\",\"id\":1,\"name\":\"a\\x\"}\n", SPAA_E_BAD_JSON, 2, "escape"},
      {HDR "\n{\"type\":\"dso\",\"id\":1,\"name\":\"\xff\"}\n", SPAA_E_BAD_JSON, 2, "UTF-8"},
      {HDR "\n{\"type\":\"dso\",\"id\":1,\"name\":\"a\\u0000\"}\n", SPAA_E_BAD_JSON, 2, "u0000"},
      {HDR "\n{\"type\":\"dso\",\"id\":1,\"name\":\"\\ud800\"}\n", SPAA_E_BAD_JSON, 2,
       "surrogate"},
      {HDR "\n{\"type\":\"dso\",\"id\":01,\"name\":\"a\"}\n", SPAA_E_BAD_JSON, 2, "column"},
      {HDR "\n{\"type\":\"dso\",\"id\":1,\"name\":\"a\",}\n", SPAA_E_BAD_JSON, 2, "key"},
      {HDR "\n{\"type\":\"dso\",\"id\":1.5,\"name\":\"a\"}\n", SPAA_E_INVALID, 2, "id"},
      {HDR "\n{\"type\":\"dso\",\"id\":1,\"x_big\":-1e400}\n", SPAA_E_BAD_JSON, 2, "range"},
      {HDR "\n{\"type\":\"sample\",\"stack_id\":\"a\",\"period\":1e999}\n", SPAA_E_BAD_JSON, 2,
       "range"},
      {HDR "\n{\"type\":\"dso\",\"name\":\"a\"}\n", SPAA_E_INVALID, 2, "id"},
      {HDR "\n{\"type\":\"frame\",\"id\":1,\"ip\":\"401234\"}\n", SPAA_E_INVALID, 2, "ip"},
      {HDR "\n{\"type\":\"frame\",\"id\":1,\"inline_depth\":4294967296}\n", SPAA_E_INVALID, 2,
       "inline_depth"},
      {HDR "\n{\"type\":\"stack\",\"id\":\"0123456789012345678901234567890123456789012345678\","
           "\"frames\":[]}\n",
       SPAA_E_INVALID, 2, "longer"},
      {HDR "\n{\"type\":\"stack\",\"id\":\"a\",\"weights\":[{\"value\":1}]}\n", SPAA_E_INVALID,
       2, "weights[0].metric"},
      {HDR "\n{\"type\":\"stack\",\"id\":\"a\",\"exclusive\":{\"weights\":[]}}\n",
       SPAA_E_INVALID, 2, "exclusive.frame"},
      {HDR "\n{\"type\":\"dso\",\"id\":1,\"x_mapping\":{\"start\":\"0x1\"}}\n", SPAA_E_INVALID, 2,
       "x_mapping"},
      {"{\"type\":\"header\",\"format\":\"spaa\",\"version\":\"1.0\",\"frame_order\":\"up\"}",
       SPAA_E_INVALID, 1, "frame_order"},
      {"{\"type\":\"header\",\"format\":\"spaa\",\"version\":\"1.0\"}", SPAA_E_INVALID, 1,
       "frame_order"},
      {"{\"type\":\"header\",\"format\":\"json\",\"version\":\"1.0\"}", SPAA_E_INVALID, 1,
       "format"},
  };
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    struct spaa_profile *p = (struct spaa_profile *)1;
    struct spaa_err err;
    int rc;
    memset(&err, 0, sizeof(err));
    rc = spaa_read_buf(bad[i].input, strlen(bad[i].input), &p, &err);
    if (rc != bad[i].code || err.line != bad[i].line || !strstr(err.msg, bad[i].needle))
      print_message("case %zu: rc %d line %zu msg '%s'\n", i, rc, err.line, err.msg);
    assert_int_equal(rc, bad[i].code);
    assert_int_equal(err.code, bad[i].code);
    assert_int_equal(err.line, bad[i].line);
    assert_non_null(strstr(err.msg, bad[i].needle));
    assert_null(p);
  }
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_spec_fields),
      cmocka_unit_test(test_plain_zstd_pieces),
      cmocka_unit_test(test_unknown_keys_roundtrip),
      cmocka_unit_test(test_numbers_strings),
      cmocka_unit_test(test_failures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
