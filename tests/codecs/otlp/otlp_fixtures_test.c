/* OTLP codec against every vector of $SPAA_SHARED/fixtures/otlp: the .proto files re-encode
 * each .bin byte for byte; valid vectors convert with exact totals, JSON and protobuf forms
 * give byte-identical SPAA; invalid ones are rejected as SOURCES.md says; the answers match
 * the resp_* and status_* vectors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "otlp/otlp.h"
#include "spaa/spaa_io.h"

#include "fixture.h"

#include "otlp_profiles_service.pb-c.h"
#include "otlp_status.pb-c.h"
#include "otlp_v1exp_service.pb-c.h"


static const char *vectors[] = {
    "v1dev_01_cpu_basic", "v1dev_02_native_inlined_buildid", "v1dev_03_multi_resource_scope",
    "v1dev_04_attributes_links_payload", "v1dev_05_timestamps_offcpu", "v1dev_06_minimal",
    "v1dev_07_empty_request", "v1dev_90_invalid_stack_index",
    "v1dev_91_invalid_values_timestamps_mismatch", "v1exp_01_ebpf_cpu",
};

/* decode every .bin with our .proto and pack it again: the same bytes */
static void test_proto_roundtrip(void **state)
{
  size_t i;
  const char *bins[] = {"v1dev_01_cpu_basic.bin", "v1dev_02_native_inlined_buildid.bin",
                        "v1dev_03_multi_resource_scope.bin",
                        "v1dev_04_attributes_links_payload.bin",
                        "v1dev_05_timestamps_offcpu.bin", "v1dev_06_minimal.bin",
                        "v1dev_07_empty_request.bin", "v1dev_90_invalid_stack_index.bin",
                        "v1dev_91_invalid_values_timestamps_mismatch.bin", "v1exp_01_ebpf_cpu.bin",
                        "pyroscope_otel-ebpf-profile.pb.bin", "resp_partial_success.bin",
                        "resp_warning_only.bin", "status_bad_request.bin"};
  (void)state;
  for (i = 0; i < sizeof(bins) / sizeof(bins[0]); i++) {
    const ProtobufCMessageDescriptor *d =
        strncmp(bins[i], "v1exp", 5) == 0
            ? &opentelemetry__proto__collector__profiles__v1experimental__export_profiles_service_request__descriptor
        : strncmp(bins[i], "resp", 4) == 0
            ? &opentelemetry__proto__collector__profiles__v1development__export_profiles_service_response__descriptor
        : strncmp(bins[i], "status", 6) == 0
            ? &google__rpc__status__descriptor
            : &opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__descriptor;
    size_t len, n;
    uint8_t *b = spaa_test_fixture_in("otlp", bins[i], &len), *o;
    ProtobufCMessage *m;
    assert_non_null(b);
    m = protobuf_c_message_unpack(d, NULL, len, b);
    if (!m)
      fail_msg("%s does not unpack", bins[i]);
    n = protobuf_c_message_get_packed_size(m);
    o = malloc(n + 1);
    protobuf_c_message_pack(m, o);
    if (n != len || memcmp(o, b, len) != 0)
      fail_msg("%s: re-encoded %zu bytes differ from the %zu of the vector", bins[i], n, len);
    protobuf_c_message_free_unpacked(m, NULL);
    free(o);
    free(b);
  }
}

/* sum of the stack weights of the profile's (only) event metric */
static int64_t spaa_total(const struct spaa_profile *p)
{
  int64_t t = 0;
  size_t i;
  assert_int_equal(p->header.n_events, 1);
  for (i = 0; i < p->n_stacks; i++) {
    const struct spaa_weight *w =
        spaa_weights_find(&p->stacks[i].weights, p->header.events[0].primary_metric);
    assert_non_null(w);
    assert_false(w->value.is_float);
    t += w->value.i;
  }
  return t;
}

/* totals computed straight from the protoc-c structs (v1development) */
static void otlp_totals(const uint8_t *b, size_t len, int64_t *out, size_t *n)
{
  Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesServiceRequest *r =
      opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__unpack(
          NULL, len, b);
  size_t ri, si, pi, k, j;
  assert_non_null(r);
  *n = 0;
  for (ri = 0; ri < r->n_resource_profiles; ri++)
    for (si = 0; si < r->resource_profiles[ri]->n_scope_profiles; si++)
      for (pi = 0; pi < r->resource_profiles[ri]->scope_profiles[si]->n_profiles; pi++) {
        const Opentelemetry__Proto__Profiles__V1development__Profile *p =
            r->resource_profiles[ri]->scope_profiles[si]->profiles[pi];
        int64_t t = 0;
        for (k = 0; k < p->n_samples; k++) {
          if (!p->samples[k]->n_values)
            t += (int64_t)p->samples[k]->n_timestamps_unix_nano;
          for (j = 0; j < p->samples[k]->n_values; j++)
            t += p->samples[k]->values[j];
        }
        out[(*n)++] = t;
      }
  opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__free_unpacked(
      r, NULL);
}

static void check_valid_spaa(const struct spaa_profile *p, const char *what)
{
  struct spaa_buf sb;
  struct spaa_err e;
  spaa_buf_init(&sb, 0);
  assert_int_equal(spaa_write_buf(p, 0, &sb, &e), 0);
  {
    struct spaa_validate_stats st;
    memset(&st, 0, sizeof(st));
    if (spaa_validate_buf(sb.p, sb.len, NULL, NULL, 0, &st) != 0)
      fail_msg("%s: the SPAA does not validate (%zu errors)", what, st.errors);
  }
  spaa_buf_free(&sb);
}

static int convert_file(const char *name, struct spaa_conv_list *l, struct spaa_err *e)
{
  size_t len;
  uint8_t *b = spaa_test_fixture_in("otlp", name, &len);
  int rc;
  assert_non_null(b);
  rc = spaa_convert_otlp(b, len, NULL, l, e);
  free(b);
  return rc;
}

static void spaa_bytes(const struct spaa_profile *p, struct spaa_buf *sb)
{
  struct spaa_err e;
  spaa_buf_init(sb, 0);
  assert_int_equal(spaa_write_buf(p, 0, sb, &e), 0);
}

/* every vector: protobuf and JSON give the same entries and byte-identical SPAA */
static void test_json_equals_binary(void **state)
{
  size_t v, i;
  (void)state;
  for (v = 0; v < sizeof(vectors) / sizeof(vectors[0]); v++) {
    char nb[128], nj[128];
    struct spaa_conv_list lb = {0}, lj = {0};
    struct spaa_err e;
    snprintf(nb, sizeof(nb), "%s.bin", vectors[v]);
    snprintf(nj, sizeof(nj), "%s.json", vectors[v]);
    if (convert_file(nb, &lb, &e))
      fail_msg("%s: %s", nb, e.msg);
    if (convert_file(nj, &lj, &e))
      fail_msg("%s: %s", nj, e.msg);
    assert_int_equal(lb.n, lj.n);
    for (i = 0; i < lb.n; i++) {
      struct spaa_buf a, b;
      assert_int_equal(!lb.v[i].profile, !lj.v[i].profile);
      assert_string_equal(lb.v[i].id, lj.v[i].id);
      assert_string_equal(lb.v[i].reason, lj.v[i].reason);
      if (!lb.v[i].profile) {
        assert_string_equal(lb.v[i].err.msg, lj.v[i].err.msg);
        continue;
      }
      spaa_bytes(lb.v[i].profile, &a);
      spaa_bytes(lj.v[i].profile, &b);
      if (a.len != b.len || memcmp(a.p, b.p, a.len) != 0)
        fail_msg("%s profile %zu: JSON and protobuf give different SPAA", vectors[v], i);
      assert_true(json_equal(lb.v[i].labels, lj.v[i].labels));
      check_valid_spaa(lb.v[i].profile, nb);
      spaa_buf_free(&a);
      spaa_buf_free(&b);
    }
    spaa_conv_list_free(&lb);
    spaa_conv_list_free(&lj);
  }
}

/* totals per profile survive exactly */
static void test_totals(void **state)
{
  size_t v, i;
  (void)state;
  for (v = 0; v < sizeof(vectors) / sizeof(vectors[0]); v++) {
    char nb[128];
    struct spaa_conv_list l = {0};
    struct spaa_err e;
    int64_t want[16];
    size_t n, len;
    uint8_t *b;
    if (strncmp(vectors[v], "v1dev_0", 7) != 0)
      continue;
    snprintf(nb, sizeof(nb), "%s.bin", vectors[v]);
    b = spaa_test_fixture_in("otlp", nb, &len);
    assert_non_null(b);
    otlp_totals(b, len, want, &n);
    assert_int_equal(spaa_convert_otlp(b, len, NULL, &l, &e), 0);
    assert_int_equal(l.n, n);
    for (i = 0; i < n; i++) {
      assert_non_null(l.v[i].profile);
      assert_int_equal(spaa_total(l.v[i].profile), want[i]);
    }
    spaa_conv_list_free(&l);
    free(b);
  }
}

static void test_vector_details(void **state)
{
  struct spaa_conv_list l = {0};
  struct spaa_err e;
  struct spaa_buf sb;
  const struct spaa_profile *p;
  size_t i, inl = 0, kern = 0;
  (void)state;
  /* 01: service, id, time range, total */
  assert_int_equal(convert_file("v1dev_01_cpu_basic.bin", &l, &e), 0);
  assert_int_equal(l.n, 1);
  assert_string_equal(l.v[0].service, "checkout");
  assert_string_equal(l.v[0].id, "0a1b2c3d4e5f60718293a4b5c6d7e8f9");
  assert_int_equal(l.v[0].start_ns, 1767225600000000000LL);
  assert_int_equal(l.v[0].end_ns, 1767225610000000000LL);
  assert_int_equal(spaa_total(l.v[0].profile), 200000000);
  spaa_conv_list_free(&l);
  /* 02: inlined frames with depth, build ids, kernel frames */
  assert_int_equal(convert_file("v1dev_02_native_inlined_buildid.json", &l, &e), 0);
  p = l.v[0].profile;
  assert_int_equal(spaa_total(p), 13);
  assert_string_equal(l.v[0].service, "nginx");
  for (i = 0; i < p->n_frames; i++) {
    if (p->frames[i].inlined)
      inl++;
    if (strcmp(p->frames[i].kind, "kernel") == 0)
      kern++;
  }
  assert_int_equal(inl, 2);
  assert_int_equal(kern, 4);
  for (i = 0; i < p->n_dsos; i++)
    if (strcmp(p->dsos[i].name, "/usr/sbin/nginx") == 0)
      assert_string_equal(p->dsos[i].build_id, "3c8f2d6a1b9e4f7d8a2c5e6b7f9a0d1e2b3c4d5e");
  for (i = 0; i < p->n_stacks; i++) {
    const struct spaa_frame *leaf = NULL;
    size_t k;
    for (k = 0; k < p->n_frames; k++)
      if (p->frames[k].id == p->stacks[i].frames[0])
        leaf = &p->frames[k];
    if (leaf && strcmp(leaf->func, "ngx_strlow") == 0)
      assert_int_equal(leaf->inline_depth, 2); /* deepest inline first */
  }
  spaa_conv_list_free(&l);
  /* 03: four profiles, service by reference (key_strindex + string_value_strindex) */
  assert_int_equal(convert_file("v1dev_03_multi_resource_scope.bin", &l, &e), 0);
  assert_int_equal(l.n, 4);
  assert_string_equal(l.v[3].service, "payments");
  spaa_conv_list_free(&l);
  /* 04: links and attributes in the context; original payload format kept */
  assert_int_equal(convert_file("v1dev_04_attributes_links_payload.bin", &l, &e), 0);
  p = l.v[0].profile;
  spaa_bytes(p, &sb);
  assert_non_null(strstr(sb.p, "\"x_otel_trace_id\":\"5b8efff798038103d269b633813fc60c\""));
  assert_non_null(strstr(sb.p, "\"x_otel_span_id\":\"eee19b7ec3c1b174\""));
  assert_non_null(strstr(sb.p, "\"x_otel_original_payload_format\":\"pprof\""));
  assert_non_null(strstr(sb.p, "\"x_otel_unit_request.body.size\":\"By\""));
  spaa_buf_free(&sb);
  assert_int_equal(spaa_total(p), 210000000);
  spaa_conv_list_free(&l);
  /* 05: timestamps-only count 1 each; sample records carry the timestamps */
  assert_int_equal(convert_file("v1dev_05_timestamps_offcpu.bin", &l, &e), 0);
  assert_int_equal(l.n, 2);
  assert_int_equal(spaa_total(l.v[0].profile), 7);
  assert_int_equal(l.v[0].profile->n_samples, 7);
  assert_int_equal(spaa_total(l.v[1].profile), 412000000);
  assert_int_equal(l.v[1].profile->n_samples, 4);
  assert_int_equal(l.v[1].profile->samples[0].weights.n, 1);
  spaa_conv_list_free(&l);
  /* 07: empty request: success, nothing */
  assert_int_equal(convert_file("v1dev_07_empty_request.bin", &l, &e), 0);
  assert_int_equal(l.n, 0);
  assert_int_equal(convert_file("v1dev_07_empty_request.json", &l, &e), 0);
  assert_int_equal(l.n, 0);
}

static void test_invalid_vectors(void **state)
{
  struct spaa_conv_list l = {0};
  struct spaa_err e;
  char msg[512];
  (void)state;
  assert_int_equal(convert_file("v1dev_90_invalid_stack_index.bin", &l, &e), 0);
  assert_int_equal(l.n, 1);
  assert_null(l.v[0].profile);
  assert_string_equal(l.v[0].reason, "invalid_index");
  assert_string_equal(l.v[0].err.msg, "profile 0 of scope 0 of resource 0: sample 1 references "
                                      "stack 7, but there are 2 stacks");
  assert_int_equal(otlp_summarize(&l, 0, l.n, msg, sizeof(msg)), 1);
  assert_string_equal(msg, l.v[0].err.msg);
  spaa_conv_list_free(&l);
  assert_int_equal(convert_file("v1dev_91_invalid_values_timestamps_mismatch.json", &l, &e), 0);
  assert_int_equal(l.n, 1);
  assert_null(l.v[0].profile);
  assert_string_equal(l.v[0].reason, "length_mismatch");
  assert_non_null(strstr(l.v[0].err.msg, "2 values but 3 timestamps"));
  spaa_conv_list_free(&l);
}

/* A consumer of entries as the converter makes them: takes the even ones' models, stops
 * the conversion at call `stop_at` (0: never). */
struct each_log {
  size_t calls, ks[8], stop_at;
};

static int take_even(void *ctx, struct spaa_conv_list *l, size_t k, struct spaa_err *err)
{
  struct each_log *g = ctx;
  assert_true(g->calls < 8);
  g->ks[g->calls++] = k;
  assert_int_equal(k + 1, l->n);
  if (k % 2 == 0 && l->v[k].profile) {
    spaa_profile_free(l->v[k].profile);
    l->v[k].profile = NULL;
    l->v[k].taken = 1;
  }
  if (g->calls == g->stop_at)
    return spaa_err_set(err, SPAA_E_BUSY, 0, 0, "stop at %zu", k);
  return 0;
}

static void test_each(void **state)
{
  struct spaa_convert_opts o = {0};
  struct spaa_conv_list l = {0};
  struct each_log g = {0};
  struct spaa_err e;
  size_t len, i;
  char msg[256];
  uint8_t *b = spaa_test_fixture_in("otlp", "v1dev_03_multi_resource_scope.bin", &len);
  (void)state;
  assert_non_null(b);
  o.each = take_even;
  o.each_ctx = &g;
  /* called once per profile, in order; taken entries stay converted */
  assert_int_equal(spaa_convert_otlp(b, len, &o, &l, &e), 0);
  assert_int_equal(l.n, 4);
  assert_int_equal(g.calls, 4);
  for (i = 0; i < 4; i++) {
    assert_int_equal(g.ks[i], i);
    assert_true(spaa_converted_ok(&l.v[i]));
    assert_int_equal(l.v[i].taken, i % 2 == 0);
    assert_true((l.v[i].profile != NULL) == (i % 2 == 1));
  }
  assert_int_equal(otlp_summarize(&l, 0, l.n, msg, sizeof(msg)), 0);
  spaa_conv_list_free(&l);
  /* the consumer's error stops the conversion; the entries made so far stay in the list */
  memset(&g, 0, sizeof(g));
  g.stop_at = 2;
  spaa_err_clear(&e);
  assert_int_equal(spaa_convert_otlp(b, len, &o, &l, &e), SPAA_E_BUSY);
  assert_string_equal(e.msg, "stop at 1");
  assert_int_equal(g.calls, 2);
  assert_int_equal(l.n, 2);
  assert_true(l.v[0].taken && !l.v[0].profile);
  assert_non_null(l.v[1].profile);
  spaa_conv_list_free(&l);
  free(b);
}

static void test_v1exp(void **state)
{
  struct spaa_conv_list l = {0};
  struct spaa_err e;
  struct otlp_request *r;
  size_t len, i;
  uint8_t *b = spaa_test_fixture_in("otlp", "v1exp_01_ebpf_cpu.bin", &len);
  const struct spaa_profile *p;
  (void)state;
  assert_non_null(b);
  assert_int_equal(otlp_decode(b, len, &r, &e), 0);
  assert_int_equal(otlp_request_version(r), OTLP_V1EXPERIMENTAL);
  assert_int_equal(otlp_request_count(r), 1);
  assert_int_equal(otlp_convert(r, NULL, &l, &e), 0);
  p = l.v[0].profile;
  assert_non_null(p);
  assert_string_equal(l.v[0].id, "112233445566778899aabbccddeeff01");
  /* sample 0: 1 timestamp, value 1; sample 1: 2 timestamps, placeholder value 1 -> 2 */
  assert_int_equal(spaa_total(p), 3);
  assert_int_equal(p->n_samples, 3);
  for (i = 0; i < p->n_dsos; i++)
    if (strcmp(p->dsos[i].name, "/usr/bin/python3.11") == 0)
      assert_null(p->dsos[i].build_id); /* the FileID is not hex: kept as an attribute */
  /* the dummy mapping serves the kernel leaf and the Python frames: not a kernel dso */
  for (i = 0; i < p->n_dsos; i++)
    if (strcmp(p->dsos[i].name, "DUMMY") == 0)
      assert_false(p->dsos[i].is_kernel);
  for (i = 0; i < p->n_frames; i++)
    if (strcmp(p->frames[i].func, "do_sys_poll") == 0)
      assert_string_equal(p->frames[i].kind, "kernel");
  check_valid_spaa(p, "v1exp_01");
  spaa_conv_list_free(&l);
  otlp_request_free(r);
  free(b);
}

/* the genuine ebpf-profiler capture: 82 profiles, exact totals, JSON twin identical */
static void test_ebpf_capture(void **state)
{
  struct spaa_conv_list lb = {0}, lj = {0};
  struct spaa_err e;
  int64_t want[128];
  size_t n, len, i, offcpu = 0, cpu = 0;
  uint8_t *b = spaa_test_fixture_in("otlp", "pyroscope_otel-ebpf-profile.pb.bin", &len);
  (void)state;
  assert_non_null(b);
  otlp_totals(b, len, want, &n);
  assert_int_equal(n, 82);
  assert_int_equal(spaa_convert_otlp(b, len, NULL, &lb, &e), 0);
  assert_int_equal(lb.n, 82);
  assert_int_equal(convert_file("pyroscope_otel-ebpf-profile.pb.json", &lj, &e), 0);
  assert_int_equal(lj.n, 82);
  for (i = 0; i < 82; i++) {
    struct spaa_buf x, y;
    const struct spaa_profile *p = lb.v[i].profile;
    if (!p)
      fail_msg("ebpf profile %zu rejected: %s", i, lb.v[i].err.msg);
    assert_int_equal(spaa_total(p), want[i]);
    if (strcmp(p->header.events[0].name, "off_cpu") == 0)
      offcpu++;
    if (strcmp(p->header.events[0].name, "samples") == 0) {
      cpu++;
      assert_int_equal(p->header.events[0].sample_period.i, 50000000);
    }
    spaa_bytes(p, &x);
    spaa_bytes(lj.v[i].profile, &y);
    if (x.len != y.len || memcmp(x.p, y.p, x.len))
      fail_msg("ebpf profile %zu: JSON and protobuf give different SPAA", i);
    spaa_buf_free(&x);
    spaa_buf_free(&y);
    check_valid_spaa(p, "ebpf");
  }
  assert_int_equal(offcpu, 77);
  assert_int_equal(cpu, 5);
  spaa_conv_list_free(&lb);
  spaa_conv_list_free(&lj);
  free(b);
}

static void compare_json(const char *fixture, const struct spaa_buf *got)
{
  size_t len;
  uint8_t *b = spaa_test_fixture_in("otlp", fixture, &len);
  json_error_t je;
  json_t *want, *have;
  assert_non_null(b);
  want = json_loadb((const char *)b, len, 0, &je);
  have = json_loadb(got->p, got->len, 0, &je);
  assert_non_null(want);
  assert_non_null(have);
  if (!json_equal(want, have))
    fail_msg("%s: got %.*s", fixture, (int)got->len, got->p);
  json_decref(want);
  json_decref(have);
  free(b);
}

static void compare_bin(const char *fixture, const struct spaa_buf *got)
{
  size_t len;
  uint8_t *b = spaa_test_fixture_in("otlp", fixture, &len);
  assert_non_null(b);
  if (got->len != len || memcmp(got->p, b, len))
    fail_msg("%s: %zu bytes, want %zu", fixture, got->len, len);
  free(b);
}

static void test_responses(void **state)
{
  const char *partial = "profile 0 of scope 0 of resource 0: sample 1 references stack 7, but "
                        "there are 2 stacks";
  const char *warn = "2 attributes were dropped: attribute keys longer than 256 bytes";
  const char *status = "cannot decode ExportProfilesServiceRequest: proto: cannot parse invalid "
                       "wire-format data";
  struct spaa_buf b;
  struct spaa_err e;
  (void)state;
  spaa_buf_init(&b, 0);
  assert_int_equal(otlp_encode_response(0, 1, partial, &b, &e), 0);
  compare_bin("resp_partial_success.bin", &b);
  b.len = 0;
  assert_int_equal(otlp_encode_response(1, 1, partial, &b, &e), 0);
  compare_json("resp_partial_success.json", &b);
  b.len = 0;
  assert_int_equal(otlp_encode_response(0, 0, warn, &b, &e), 0);
  compare_bin("resp_warning_only.bin", &b);
  b.len = 0;
  assert_int_equal(otlp_encode_response(1, 0, warn, &b, &e), 0);
  compare_json("resp_warning_only.json", &b);
  b.len = 0;
  assert_int_equal(otlp_encode_status(0, 3, status, &b, &e), 0);
  compare_bin("status_bad_request.bin", &b);
  b.len = 0;
  assert_int_equal(otlp_encode_status(1, 3, status, &b, &e), 0);
  compare_json("status_bad_request.json", &b);
  /* full success: an empty message */
  b.len = 0;
  assert_int_equal(otlp_encode_response(0, 0, NULL, &b, &e), 0);
  assert_int_equal(b.len, 0);
  assert_int_equal(otlp_encode_response(1, 0, "", &b, &e), 0);
  assert_string_equal(b.p, "{}");
  spaa_buf_free(&b);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_proto_roundtrip), cmocka_unit_test(test_json_equals_binary),
      cmocka_unit_test(test_totals),          cmocka_unit_test(test_vector_details),
      cmocka_unit_test(test_invalid_vectors), cmocka_unit_test(test_each),
      cmocka_unit_test(test_v1exp),
      cmocka_unit_test(test_ebpf_capture),    cmocka_unit_test(test_responses),
  };
  if (!spaa_test_have_fixtures("otlp", "the OTLP fixture tests"))
    return SPAA_TEST_SKIP;
  return cmocka_run_group_tests(tests, NULL, NULL);
}
