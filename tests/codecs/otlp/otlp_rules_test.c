/* OTLP validation rules, version sniffing and the JSON mapping, on small requests built with
 * the protoc-c structs (or written byte by byte where the wire itself is the point). */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "otlp/otlp.h"
#include "spaa/spaa_io.h"

#include "otlp_profiles_service.pb-c.h"

#define P(x) Opentelemetry__Proto__Profiles__V1development__##x
#define PI(x) opentelemetry__proto__profiles__v1development__##x##__init

/* A small valid request; tests mutate it before packing. */
struct req {
  Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesServiceRequest r;
  P(ProfilesDictionary) d;
  P(ResourceProfiles) rp, *rpp[1];
  P(ScopeProfiles) sp, *spp[1];
  P(Profile) prof[2], *profp[2];
  P(ValueType) st;
  P(Sample) s[2], *sp_[2];
  int64_t vals[4];
  uint64_t ts[4];
  int32_t sattr[4];
  P(Function) f0, f1, *fp[2];
  P(Line) ln, *lnp[1];
  P(Location) l0, l1, *lp[2];
  P(Stack) s0, s1, *stp[2];
  int32_t locs[1];
  P(KeyValueAndUnit) a0, a1, a2, *ap[3];
  Opentelemetry__Proto__Common__V1__AnyValue v1, v2, v0;
  P(Link) k0, k1, *kp[2];
  uint8_t trace[16], span[8];
  char *strs[8];
};

static void req_init(struct req *q)
{
  static char *strs[] = {"", "samples", "count", "main", "thread.name", "t1", "t2", "app.c"};
  memset(q, 0, sizeof(*q));
  opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__init(&q->r);
  PI(profiles_dictionary)(&q->d);
  PI(resource_profiles)(&q->rp);
  PI(scope_profiles)(&q->sp);
  PI(profile)(&q->prof[0]);
  PI(profile)(&q->prof[1]);
  PI(value_type)(&q->st);
  PI(sample)(&q->s[0]);
  PI(sample)(&q->s[1]);
  PI(function)(&q->f0);
  PI(function)(&q->f1);
  PI(line)(&q->ln);
  PI(location)(&q->l0);
  PI(location)(&q->l1);
  PI(stack)(&q->s0);
  PI(stack)(&q->s1);
  PI(key_value_and_unit)(&q->a0);
  PI(key_value_and_unit)(&q->a1);
  PI(key_value_and_unit)(&q->a2);
  PI(link)(&q->k0);
  PI(link)(&q->k1);
  opentelemetry__proto__common__v1__any_value__init(&q->v0);
  opentelemetry__proto__common__v1__any_value__init(&q->v1);
  opentelemetry__proto__common__v1__any_value__init(&q->v2);
  memcpy(q->strs, strs, sizeof(strs));
  q->d.string_table = q->strs;
  q->d.n_string_table = 8;
  q->f1.name_strindex = 3;
  q->f1.filename_strindex = 7;
  q->fp[0] = &q->f0;
  q->fp[1] = &q->f1;
  q->d.function_table = q->fp;
  q->d.n_function_table = 2;
  q->ln.function_index = 1;
  q->ln.line = 12;
  q->lnp[0] = &q->ln;
  q->l1.lines = q->lnp;
  q->l1.n_lines = 1;
  q->l1.address = 0x1234;
  q->lp[0] = &q->l0;
  q->lp[1] = &q->l1;
  q->d.location_table = q->lp;
  q->d.n_location_table = 2;
  q->locs[0] = 1;
  q->s1.location_indices = q->locs;
  q->s1.n_location_indices = 1;
  q->stp[0] = &q->s0;
  q->stp[1] = &q->s1;
  q->d.stack_table = q->stp;
  q->d.n_stack_table = 2;
  q->v1.value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE;
  q->v1.string_value = "t1";
  q->v2.value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE;
  q->v2.string_value = "t2";
  q->a1.key_strindex = 4;
  q->a1.value = &q->v1;
  q->a2.key_strindex = 4;
  q->a2.value = &q->v2;
  q->ap[0] = &q->a0;
  q->ap[1] = &q->a1;
  q->ap[2] = &q->a2;
  q->d.attribute_table = q->ap;
  q->d.n_attribute_table = 3;
  memset(q->trace, 0xab, 16);
  memset(q->span, 0xcd, 8);
  q->k1.trace_id.data = q->trace;
  q->k1.trace_id.len = 16;
  q->k1.span_id.data = q->span;
  q->k1.span_id.len = 8;
  q->kp[0] = &q->k0;
  q->kp[1] = &q->k1;
  q->d.link_table = q->kp;
  q->d.n_link_table = 2;
  q->st.type_strindex = 1;
  q->st.unit_strindex = 2;
  q->vals[0] = 5;
  q->s[0].stack_index = 1;
  q->s[0].values = q->vals;
  q->s[0].n_values = 1;
  q->sp_[0] = &q->s[0];
  q->sp_[1] = &q->s[1];
  q->prof[0].sample_type = &q->st;
  q->prof[0].samples = q->sp_;
  q->prof[0].n_samples = 1;
  q->prof[0].time_unix_nano = 1000;
  q->prof[0].duration_nano = 100;
  q->prof[1] = q->prof[0];
  q->profp[0] = &q->prof[0];
  q->profp[1] = &q->prof[1];
  q->sp.profiles = q->profp;
  q->sp.n_profiles = 1;
  q->spp[0] = &q->sp;
  q->rp.scope_profiles = q->spp;
  q->rp.n_scope_profiles = 1;
  q->rpp[0] = &q->rp;
  q->r.resource_profiles = q->rpp;
  q->r.n_resource_profiles = 1;
  q->r.dictionary = &q->d;
}

/* pack and convert; returns the converter's code */
static int run(struct req *q, struct spaa_conv_list *l, struct spaa_err *e)
{
  size_t n = protobuf_c_message_get_packed_size(&q->r.base);
  uint8_t *b = malloc(n + 1);
  int rc;
  protobuf_c_message_pack(&q->r.base, b);
  memset(l, 0, sizeof(*l));
  spaa_err_clear(e);
  rc = spaa_convert_otlp(b, n, NULL, l, e);
  free(b);
  return rc;
}

/* expect the only profile to be rejected with `reason` and a message containing `frag` */
static void expect_reject(struct req *q, const char *reason, const char *frag)
{
  struct spaa_conv_list l;
  struct spaa_err e;
  assert_int_equal(run(q, &l, &e), 0);
  assert_int_equal(l.n, 1);
  assert_null(l.v[0].profile);
  assert_string_equal(l.v[0].reason, reason);
  if (!strstr(l.v[0].err.msg, frag))
    fail_msg("message \"%s\" lacks \"%s\"", l.v[0].err.msg, frag);
  assert_non_null(strstr(l.v[0].err.msg, "profile 0 of scope 0 of resource 0: "));
  spaa_conv_list_free(&l);
}

static void expect_whole(struct req *q, int code, const char *frag)
{
  struct spaa_conv_list l;
  struct spaa_err e;
  assert_int_equal(run(q, &l, &e), code);
  assert_int_equal(l.n, 0);
  if (!strstr(e.msg, frag))
    fail_msg("message \"%s\" lacks \"%s\"", e.msg, frag);
}

static int64_t total(const struct spaa_profile *p)
{
  int64_t t = 0;
  size_t i;
  for (i = 0; i < p->n_stacks; i++)
    t += spaa_weights_find(&p->stacks[i].weights, p->header.events[0].primary_metric)->value.i;
  return t;
}

/* x and y write the same SPAA, which holds `has`. */
static void assert_same_spaa(const struct spaa_profile *x, const struct spaa_profile *y,
                             const char *has)
{
  struct spaa_buf a, b;
  struct spaa_err e;
  assert_non_null(x);
  assert_non_null(y);
  spaa_buf_init(&a, 0);
  spaa_buf_init(&b, 0);
  assert_int_equal(spaa_write_buf(x, 0, &a, &e), 0);
  assert_int_equal(spaa_write_buf(y, 0, &b, &e), 0);
  assert_int_equal(a.len, b.len);
  assert_memory_equal(a.p, b.p, a.len);
  if (!strstr((const char *)a.p, has))
    fail_msg("the SPAA lacks %s", has);
  spaa_buf_free(&a);
  spaa_buf_free(&b);
}

/* A string of the packed request ("app.c") with one byte replaced: refused whole, named. */
static void expect_bad_string(uint8_t byte, const char *frag)
{
  struct req q;
  struct spaa_conv_list l;
  struct spaa_err e;
  size_t n, i;
  uint8_t *b;
  req_init(&q);
  n = protobuf_c_message_get_packed_size(&q.r.base);
  b = malloc(n);
  assert_non_null(b);
  protobuf_c_message_pack(&q.r.base, b);
  for (i = 0; i + 5 <= n && memcmp(b + i, "app.c", 5) != 0; i++)
    ;
  assert_true(i + 5 <= n);
  b[i + 2] = byte;
  memset(&l, 0, sizeof(l));
  spaa_err_clear(&e);
  assert_int_equal(spaa_convert_otlp(b, n, NULL, &l, &e), SPAA_E_BAD_PROTOBUF);
  assert_int_equal(l.n, 0);
  if (!strstr(e.msg, frag))
    fail_msg("message \"%s\" lacks \"%s\"", e.msg, frag);
  free(b);
}

/* protobuf-c's copy of a string ends at its first NUL: such a string is refused, not cut */
static void test_bad_strings(void **state)
{
  (void)state;
  expect_bad_string(0, "a string holds a NUL byte (U+0000)");
  expect_bad_string(0xff, "invalid UTF-8 in a string");
}

static void test_valid_base(void **state)
{
  struct req q;
  struct spaa_conv_list l;
  struct spaa_err e;
  (void)state;
  req_init(&q);
  assert_int_equal(run(&q, &l, &e), 0);
  assert_int_equal(l.n, 1);
  assert_non_null(l.v[0].profile);
  assert_int_equal(total(l.v[0].profile), 5);
  assert_string_equal(l.v[0].service, "unknown_service");
  assert_string_equal(l.v[0].id, "");
  spaa_conv_list_free(&l);
}

/* Two samples of stack 1 on two threads (thread.name t1 and t2): two SPAA stacks. */
static void two_threads(struct req *q)
{
  q->s[1].stack_index = 1;
  q->sattr[0] = 1;
  q->sattr[1] = 2;
  q->s[0].attribute_indices = &q->sattr[0];
  q->s[0].n_attribute_indices = 1;
  q->s[1].attribute_indices = &q->sattr[1];
  q->s[1].n_attribute_indices = 1;
  q->prof[0].n_samples = 2;
}

/* Samples of one stack entry with different thread attributes are stacks of their own, with
 * equal frames: one list, shared; the next profile makes its own (its model is another). */
static void test_shared_frame_lists(void **state)
{
  struct req q;
  struct spaa_conv_list l;
  struct spaa_err e;
  const struct spaa_profile *p, *p2;
  (void)state;
  req_init(&q);
  two_threads(&q);
  q.vals[1] = 7;
  q.s[1].values = &q.vals[1];
  q.s[1].n_values = 1;
  q.prof[1] = q.prof[0];
  q.sp.n_profiles = 2;
  assert_int_equal(run(&q, &l, &e), 0);
  assert_int_equal(l.n, 2);
  p = l.v[0].profile;
  p2 = l.v[1].profile;
  assert_non_null(p);
  assert_non_null(p2);
  assert_int_equal(p->n_stacks, 2);
  assert_int_equal(total(p), 12);
  assert_string_not_equal(p->stacks[0].id, p->stacks[1].id);
  assert_int_equal(p->stacks[0].n_frames, 1);
  assert_int_equal(p->stacks[1].n_frames, 1);
  assert_ptr_equal(p->stacks[0].frames, p->stacks[1].frames);
  assert_int_equal(p2->n_stacks, 2);
  assert_ptr_equal(p2->stacks[0].frames, p2->stacks[1].frames);
  assert_ptr_not_equal(p2->stacks[0].frames, p->stacks[0].frames);
  assert_int_equal(p2->stacks[0].frames[0], p->stacks[0].frames[0]);
  spaa_conv_list_free(&l);
}

/* The ingest flow asks for compact samples: the same profile, the same SPAA text, with 4
 * compact samples (one with a weight per timestamp, one with none) and no sample record. */
static void test_compact_samples(void **state)
{
  struct req q;
  struct spaa_convert_opts o;
  struct spaa_conv_list la, lb;
  struct spaa_err e;
  size_t n;
  uint8_t *buf;
  (void)state;
  req_init(&q);
  q.vals[0] = 5;
  q.vals[1] = 6;
  q.ts[0] = 1010;
  q.ts[1] = 1020;
  q.ts[2] = 1030;
  q.ts[3] = 1040;
  q.s[0].values = q.vals;
  q.s[0].n_values = 2;
  q.s[0].timestamps_unix_nano = q.ts;
  q.s[0].n_timestamps_unix_nano = 2;
  q.s[1].timestamps_unix_nano = &q.ts[2];
  q.s[1].n_timestamps_unix_nano = 2;
  two_threads(&q);
  n = protobuf_c_message_get_packed_size(&q.r.base);
  buf = malloc(n);
  assert_non_null(buf);
  protobuf_c_message_pack(&q.r.base, buf);
  memset(&o, 0, sizeof(o));
  o.compact_samples = 1;
  memset(&la, 0, sizeof(la));
  memset(&lb, 0, sizeof(lb));
  assert_int_equal(spaa_convert_otlp(buf, n, &o, &la, &e), 0);
  assert_int_equal(spaa_convert_otlp(buf, n, NULL, &lb, &e), 0);
  free(buf);
  assert_non_null(la.v[0].profile);
  assert_non_null(lb.v[0].profile);
  assert_int_equal(la.v[0].profile->n_samples, 0);
  assert_int_equal(la.v[0].profile->n_csamples, 4);
  assert_int_equal(lb.v[0].profile->n_samples, 4);
  assert_int_equal(lb.v[0].profile->n_csamples, 0);
  assert_same_spaa(la.v[0].profile, lb.v[0].profile, "\"timestamp\":1040");
  spaa_conv_list_free(&la);
  spaa_conv_list_free(&lb);
}

/* Pages of [p, p + len) mapped in this process now (/proc/self/pagemap: bit 63 = present). */
static size_t present_pages(const void *p, size_t len)
{
  size_t page = (size_t)sysconf(_SC_PAGESIZE), n = 0, i;
  uintptr_t from = (uintptr_t)p & ~(uintptr_t)(page - 1);
  size_t count = ((uintptr_t)p + len - from + page - 1) / page;
  uint64_t *v = malloc(count * sizeof(*v));
  int fd = open("/proc/self/pagemap", O_RDONLY);
  assert_non_null(v);
  assert_true(fd >= 0);
  assert_int_equal(pread(fd, v, count * sizeof(*v), (off_t)(from / page * sizeof(*v))),
                   (ssize_t)(count * sizeof(*v)));
  close(fd);
  for (i = 0; i < count; i++)
    n += (size_t)(v[i] >> 63);
  free(v);
  return n;
}

/* A body that is a file's mapping (input_refetch): once the request is converted, the pages
 * of its Profiles' samples are no longer mapped, though each Profile holds less than 1 MiB
 * of them (they stayed, a Profile's worth each, while spaa_mem_discard's floor was 1 MiB);
 * the models are those of the same bytes converted from memory. The partial pages at a
 * Profile's edges stay, and a read fault on one maps the neighbours the page cache holds
 * (the kernel's fault-around, 16 pages): a few dozen of the body's 440 pages may be mapped. */
static void test_refetch_gives_back(void **state)
{
  enum { N = 100000 };
  struct req q;
  P(Sample) *s = calloc(N, sizeof(*s)), **sp = calloc(N, sizeof(*sp));
  int64_t *vals = calloc(N, sizeof(*vals));
  struct spaa_convert_opts o;
  struct spaa_conv_list la, lb;
  struct spaa_err e;
  char path[] = "/tmp/otlp-refetch-XXXXXX";
  size_t n, i, k, page = (size_t)sysconf(_SC_PAGESIZE);
  uint8_t *buf, *map;
  int fd;
  (void)state;
  assert_true(s && sp && vals);
  req_init(&q);
  for (i = 0; i < N; i++) {
    PI(sample)(&s[i]);
    vals[i] = (int64_t)(i % 1000) + 100000; /* 3 bytes each on the wire */
    s[i].stack_index = 1;
    s[i].values = &vals[i];
    s[i].n_values = 1;
    sp[i] = &s[i];
  }
  for (k = 0; k < 2; k++) {
    q.prof[k].samples = sp;
    q.prof[k].n_samples = N;
  }
  q.sp.n_profiles = 2;
  n = protobuf_c_message_get_packed_size(&q.r.base);
  assert_true(n > 2 * N * 8 && n < ((size_t)2 << 20)); /* each Profile's samples < 1 MiB */
  buf = malloc(n);
  assert_non_null(buf);
  protobuf_c_message_pack(&q.r.base, buf);
  fd = mkstemp(path);
  assert_true(fd >= 0);
  unlink(path);
  /* a page at a time, as a body arrives in pieces: a single large write may leave the file
   * in large folios, and a fault on any page of one maps all of it */
  for (i = 0; i < n; i += k) {
    k = n - i < page ? n - i : page;
    assert_int_equal(write(fd, buf + i, k), (ssize_t)k);
  }
  map = mmap(NULL, n, PROT_READ, MAP_PRIVATE, fd, 0);
  assert_true(map != MAP_FAILED);
  close(fd);
  memset(&o, 0, sizeof(o));
  o.input_refetch = 1;
  memset(&la, 0, sizeof(la));
  memset(&lb, 0, sizeof(lb));
  assert_int_equal(spaa_convert_otlp(map, n, &o, &la, &e), 0);
  k = present_pages(map, n);
  if (k > (n + page - 1) / page / 5)
    fail_msg("%zu of %zu pages of the body still mapped", k, (n + page - 1) / page);
  assert_int_equal(spaa_convert_otlp(buf, n, NULL, &lb, &e), 0);
  assert_int_equal(la.n, 2);
  assert_int_equal(lb.n, 2);
  for (k = 0; k < 2; k++)
    assert_same_spaa(la.v[k].profile, lb.v[k].profile, "10049950000"); /* every sample */
  spaa_conv_list_free(&la);
  spaa_conv_list_free(&lb);
  munmap(map, n);
  free(buf);
  free(s);
  free(sp);
  free(vals);
}

static void test_index_rules(void **state)
{
  struct req q;
  (void)state;
  req_init(&q);
  q.s[0].stack_index = 9;
  expect_reject(&q, "invalid_index", "sample 0 references stack 9, but there are 2 stacks");
  req_init(&q);
  q.sattr[0] = 7;
  q.s[0].attribute_indices = q.sattr;
  q.s[0].n_attribute_indices = 1;
  expect_reject(&q, "invalid_index", "references attribute 7, but there are 3 attributes");
  req_init(&q);
  q.s[0].link_index = 5;
  expect_reject(&q, "invalid_index", "references link 5, but there are 2 links");
  req_init(&q);
  q.st.type_strindex = 40;
  expect_reject(&q, "invalid_index", "sample_type references strings 40 (type)");
  req_init(&q);
  q.sattr[0] = -1;
  q.prof[0].attribute_indices = q.sattr;
  q.prof[0].n_attribute_indices = 1;
  expect_reject(&q, "invalid_index", "attribute_indices[0] references attribute -1");
}

static void test_sample_rules(void **state)
{
  struct req q;
  (void)state;
  /* attribute keys unique per list (thread.name twice) */
  req_init(&q);
  q.sattr[0] = 1;
  q.sattr[1] = 2;
  q.s[0].attribute_indices = q.sattr;
  q.s[0].n_attribute_indices = 2;
  expect_reject(&q, "duplicate_attribute", "repeats the attribute key \"thread.name\"");
  /* values and timestamps of different lengths */
  req_init(&q);
  q.vals[1] = 1;
  q.s[0].n_values = 2;
  q.ts[0] = q.ts[1] = q.ts[2] = 1010;
  q.s[0].timestamps_unix_nano = q.ts;
  q.s[0].n_timestamps_unix_nano = 3;
  expect_reject(&q, "length_mismatch", "2 values but 3 timestamps");
  /* neither values nor timestamps */
  req_init(&q);
  q.s[0].n_values = 0;
  expect_reject(&q, "empty_sample", "neither values nor timestamps");
  /* a profile_id of the wrong size */
  req_init(&q);
  q.prof[0].profile_id.data = q.trace;
  q.prof[0].profile_id.len = 5;
  expect_reject(&q, "bad_profile_id", "5 bytes");
  /* timestamps past int64 nanoseconds */
  req_init(&q);
  q.ts[0] = UINT64_MAX;
  q.s[0].timestamps_unix_nano = q.ts;
  q.s[0].n_timestamps_unix_nano = 1;
  expect_reject(&q, "bad_time", "passes year 2262");
}

static void test_dictionary_rules(void **state)
{
  struct req q;
  Opentelemetry__Proto__Common__V1__AnyValue v;
  (void)state;
  req_init(&q);
  q.l1.mapping_index = 3;
  expect_whole(&q, SPAA_E_INVALID, "location_table[1] references mapping 3, but there are 0");
  req_init(&q);
  q.f1.name_strindex = 99;
  expect_whole(&q, SPAA_E_INVALID, "function_table[1].name_strindex references string 99");
  req_init(&q);
  q.ln.function_index = 2;
  expect_whole(&q, SPAA_E_INVALID, "references function 2, but there are 2 functions");
  req_init(&q);
  q.locs[0] = 5;
  expect_whole(&q, SPAA_E_INVALID, "stack_table[1] references location 5");
  req_init(&q);
  q.a0.key_strindex = 4;
  expect_whole(&q, SPAA_E_INVALID, "attribute_table[0] must be the zero value");
  req_init(&q);
  q.strs[0] = "x";
  expect_whole(&q, SPAA_E_INVALID, "string_table[0] must be \"\"");
  req_init(&q);
  q.k0.trace_id.data = q.trace;
  q.k0.trace_id.len = 16;
  expect_whole(&q, SPAA_E_INVALID, "link_table[0] must be the zero value");
  req_init(&q);
  q.k1.span_id.len = 3;
  expect_whole(&q, SPAA_E_INVALID, "link_table[1] has a trace_id of 16 bytes and a span_id of 3");
  /* string_value_strindex resolved */
  req_init(&q);
  opentelemetry__proto__common__v1__any_value__init(&v);
  v.value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE_STRINDEX;
  v.string_value_strindex = 77;
  q.a2.value = &v;
  expect_whole(&q, SPAA_E_INVALID, "attribute_table[2].value.string_value_strindex");
  req_init(&q);
  q.a1.key_strindex = 50;
  expect_whole(&q, SPAA_E_INVALID, "attribute_table[1].key_strindex references string 50");
  /* duplicate keys in a location's list */
  req_init(&q);
  q.sattr[0] = 1;
  q.sattr[1] = 2;
  q.l1.attribute_indices = q.sattr;
  q.l1.n_attribute_indices = 2;
  expect_whole(&q, SPAA_E_INVALID, "location_table[1] repeats attribute key \"thread.name\"");
}

/* table[0] compared by value: `12 00` (an empty AnyValue) is the zero attribute */
static void test_zero_by_value(void **state)
{
  struct req q;
  struct spaa_conv_list l;
  struct spaa_err e;
  (void)state;
  req_init(&q);
  q.a0.value = &q.v0; /* packs as 12 00 */
  assert_int_equal(run(&q, &l, &e), 0);
  assert_int_equal(l.n, 1);
  assert_non_null(l.v[0].profile);
  spaa_conv_list_free(&l);
  req_init(&q);
  memset(q.trace, 0, 16); /* 16 zero bytes, as the OTLP comments suggest */
  q.k0.trace_id.data = q.trace;
  q.k0.trace_id.len = 16;
  assert_int_equal(run(&q, &l, &e), 0); /* all-zero bytes are zero by value */
  assert_non_null(l.v[0].profile);
  spaa_conv_list_free(&l);
}

static void test_partial_and_warning(void **state)
{
  struct req q;
  struct spaa_conv_list l;
  struct spaa_err e;
  char msg[512];
  (void)state;
  /* two profiles, the second invalid: rejected alone */
  req_init(&q);
  q.sp.n_profiles = 2;
  q.s[1].stack_index = 4;
  q.s[1].values = q.vals;
  q.s[1].n_values = 1;
  q.prof[1].samples = &q.sp_[1];
  assert_int_equal(run(&q, &l, &e), 0);
  assert_int_equal(l.n, 2);
  assert_non_null(l.v[0].profile);
  assert_null(l.v[1].profile);
  assert_int_equal(otlp_summarize(&l, 0, 2, msg, sizeof(msg)), 1);
  assert_string_equal(msg, "profile 1 of scope 0 of resource 0: sample 0 references stack 4, "
                           "but there are 2 stacks");
  spaa_conv_list_free(&l);
  /* a timestamp outside the window is a warning, not a rejection */
  req_init(&q);
  q.ts[0] = 5000;
  q.s[0].timestamps_unix_nano = q.ts;
  q.s[0].n_timestamps_unix_nano = 1;
  assert_int_equal(run(&q, &l, &e), 0);
  assert_non_null(l.v[0].profile);
  assert_int_equal(otlp_summarize(&l, 0, 1, msg, sizeof(msg)), 0);
  assert_non_null(strstr(msg, "timestamp 5000 lies outside the profile window [1000, 1100)"));
  spaa_conv_list_free(&l);
}

/* ---- wire sniffing --------------------------------------------------------------------- */

struct w {
  uint8_t b[512];
  size_t n;
};

static void put_varint(struct w *w, uint64_t v)
{
  while (v >= 0x80) {
    w->b[w->n++] = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  w->b[w->n++] = (uint8_t)v;
}

static void put_len(struct w *w, uint32_t field, const struct w *body)
{
  put_varint(w, (uint64_t)field << 3 | 2);
  put_varint(w, body->n);
  memcpy(w->b + w->n, body->b, body->n);
  w->n += body->n;
}

/* request { resource_profiles { scope_profiles { profiles { <profile> } } } } */
static void wrap(const struct w *profile, struct w *out)
{
  struct w s = {{0}, 0}, r = {{0}, 0};
  put_len(&s, 2, profile);
  put_len(&r, 2, &s);
  out->n = 0;
  put_len(out, 1, &r);
}

static void expect_decode(const struct w *req, int code, const char *frag)
{
  struct otlp_request *r = NULL;
  struct spaa_err e;
  spaa_err_clear(&e);
  assert_int_equal(otlp_decode(req->b, req->n, &r, &e), code);
  if (code == 0) {
    otlp_request_free(r);
    return;
  }
  assert_null(r);
  if (!strstr(e.msg, frag))
    fail_msg("message \"%s\" lacks \"%s\"", e.msg, frag);
}

static void test_sniff_v19(void **state)
{
  struct w sample = {{0}, 0}, prof = {{0}, 0}, req, packed = {{0}, 0};
  (void)state;
  /* v1.9 Sample: stack_index 1, values=2 [5], attribute_indices=3 [1] (LEN) */
  put_varint(&sample, 1 << 3 | 0);
  put_varint(&sample, 1);
  put_varint(&packed, 5);
  put_len(&sample, 2, &packed);
  put_len(&sample, 3, &packed);
  put_len(&prof, 2, &sample);
  wrap(&prof, &req);
  expect_decode(&req, SPAA_E_UNSUPPORTED, "v1.9.0");
  expect_decode(&req, SPAA_E_UNSUPPORTED, "v0.140-v0.147");
  /* v1.9 Sample with a link only: field 4 as a varint */
  sample.n = prof.n = 0;
  put_varint(&sample, 1 << 3 | 0);
  put_varint(&sample, 1);
  put_varint(&sample, 4 << 3 | 0);
  put_varint(&sample, 1);
  put_len(&prof, 2, &sample);
  wrap(&prof, &req);
  expect_decode(&req, SPAA_E_UNSUPPORTED, "v1.9.0");
  /* v1.10 Sample: the same fields in their own numbers decode */
  sample.n = prof.n = 0;
  put_varint(&sample, 1 << 3 | 0);
  put_varint(&sample, 1);
  put_len(&sample, 2, &packed);
  put_varint(&sample, 3 << 3 | 0);
  put_varint(&sample, 1);
  put_len(&sample, 4, &packed);
  put_len(&prof, 2, &sample);
  wrap(&prof, &req);
  expect_decode(&req, 0, "");
}

static void test_sniff_v18_and_garbage(void **state)
{
  struct w prof = {{0}, 0}, req, id = {{0}, 0}, deep = {{0}, 0}, tmp;
  int i;
  (void)state;
  /* v1.8 Profile: profile_id = 8 (LEN), dropped_attributes_count = 9 (varint) */
  memset(id.b, 0x11, 16);
  id.n = 16;
  put_len(&prof, 8, &id);
  put_varint(&prof, 9 << 3 | 0);
  put_varint(&prof, 2);
  wrap(&prof, &req);
  expect_decode(&req, SPAA_E_UNSUPPORTED, "v1.8.0");
  /* truncated */
  req.n -= 3;
  expect_decode(&req, SPAA_E_BAD_PROTOBUF, "malformed protobuf");
  /* AnyValue arrays nested far past the cap: refused before protobuf-c recurses */
  deep.n = 0;
  for (i = 0; i < 100; i++) {
    tmp = deep;
    deep.n = 0;
    {
      struct w arr = {{0}, 0};
      put_len(&arr, 1, &tmp);   /* ArrayValue.values = AnyValue */
      put_len(&deep, 5, &arr);  /* AnyValue.array_value */
    }
    if (deep.n > 400)
      break;
  }
  {
    struct w kv = {{0}, 0}, res = {{0}, 0}, rp = {{0}, 0};
    put_len(&kv, 2, &deep);     /* KeyValue.value */
    put_len(&res, 1, &kv);      /* Resource.attributes */
    put_len(&rp, 1, &res);      /* ResourceProfiles.resource */
    req.n = 0;
    put_len(&req, 1, &rp);
  }
  expect_decode(&req, SPAA_E_BAD_PROTOBUF, "nested deeper");
}

/* ---- JSON mapping ---------------------------------------------------------------------- */

static const char *json_camel =
    "{\"resourceProfiles\":[{\"scopeProfiles\":[{\"profiles\":[{\"sampleType\":{\"typeStrindex\":1,"
    "\"unitStrindex\":2},\"samples\":[{\"stackIndex\":1,\"values\":[\"5\"],\"linkIndex\":1}],"
    "\"timeUnixNano\":\"1000\",\"durationNano\":\"100\",\"profileId\":"
    "\"0102030405060708090a0b0c0d0e0f10\"}]}]}],\"dictionary\":{\"stringTable\":[\"\",\"samples\","
    "\"count\",\"main\"],\"functionTable\":[{},{\"nameStrindex\":3}],\"locationTable\":[{},{\"lines\":"
    "[{\"functionIndex\":1}]}],\"stackTable\":[{},{\"locationIndices\":[1]}],\"linkTable\":[{},"
    "{\"traceId\":\"ABABABABABABABABABABABABABABABAB\",\"spanId\":\"cdcdcdcdcdcdcdcd\"}]}}";

/* the same in snake_case, 64-bit numbers as numbers, ids in base64, unknown keys */
static const char *json_snake =
    "{\"resource_profiles\":[{\"scope_profiles\":[{\"profiles\":[{\"sample_type\":{\"type_strindex\":1,"
    "\"unit_strindex\":2},\"samples\":[{\"stack_index\":1,\"values\":[5],\"link_index\":1,\"x\":[1]}],"
    "\"time_unix_nano\":1000,\"duration_nano\":100,\"profile_id\":\"AQIDBAUGBwgJCgsMDQ4PEA==\"}]}]}],"
    "\"dictionary\":{\"string_table\":[\"\",\"samples\",\"count\",\"main\"],\"function_table\":[{},"
    "{\"name_strindex\":3}],\"location_table\":[{},{\"lines\":[{\"function_index\":1}]}],"
    "\"stack_table\":[{},{\"location_indices\":[1]}],\"link_table\":[{},{\"trace_id\":"
    "\"q6urq6urq6urq6urq6urqw==\",\"span_id\":\"zc3Nzc3Nzc0=\"}],\"future_table\":{\"a\":1}}}";

static void spaa_text(const char *json, struct spaa_buf *sb, struct spaa_conv_list *l)
{
  struct spaa_err e;
  memset(l, 0, sizeof(*l));
  if (spaa_convert_otlp((const uint8_t *)json, strlen(json), NULL, l, &e))
    fail_msg("%s", e.msg);
  assert_int_equal(l->n, 1);
  assert_non_null(l->v[0].profile);
  spaa_buf_init(sb, 0);
  assert_int_equal(spaa_write_buf(l->v[0].profile, 0, sb, &e), 0);
}

static void test_json_mapping(void **state)
{
  struct spaa_buf a, b;
  struct spaa_conv_list la, lb;
  (void)state;
  spaa_text(json_camel, &a, &la);
  spaa_text(json_snake, &b, &lb);
  assert_int_equal(a.len, b.len);
  assert_memory_equal(a.p, b.p, a.len);
  assert_string_equal(la.v[0].id, "0102030405060708090a0b0c0d0e0f10");
  assert_string_equal(lb.v[0].id, "0102030405060708090a0b0c0d0e0f10");
  assert_non_null(strstr(a.p, "\"x_otel_trace_id\":\"abababababababababababababababab\""));
  spaa_buf_free(&a);
  spaa_buf_free(&b);
  spaa_conv_list_free(&la);
  spaa_conv_list_free(&lb);
}

/* A line whose function has no file keeps its line as ":LINE", so two call lines of one
 * function are two frames and two stacks; a file without a line is "file"; neither: no
 * srcline, srcline_resolved false. The same rule as the pprof and Sentry converters. */
static const char *json_lines =
    "{\"resourceProfiles\":[{\"scopeProfiles\":[{\"profiles\":[{\"sampleType\":{\"typeStrindex\":1,"
    "\"unitStrindex\":2},\"samples\":[{\"stackIndex\":1,\"values\":[\"1\"]},{\"stackIndex\":2,"
    "\"values\":[\"2\"]},{\"stackIndex\":3,\"values\":[\"3\"]},{\"stackIndex\":4,\"values\":[\"4\"]}],"
    "\"timeUnixNano\":\"1000\",\"durationNano\":\"100\"}]}]}],\"dictionary\":{\"stringTable\":[\"\","
    "\"samples\",\"count\",\"work\",\"main\",\"main.js\"],\"functionTable\":[{},{\"nameStrindex\":3},"
    "{\"nameStrindex\":4,\"filenameStrindex\":5}],\"locationTable\":[{},"
    "{\"lines\":[{\"functionIndex\":1,\"line\":135}]},{\"lines\":[{\"functionIndex\":1,\"line\":140}]},"
    "{\"lines\":[{\"functionIndex\":1}]},{\"lines\":[{\"functionIndex\":2,\"line\":7}]},"
    "{\"lines\":[{\"functionIndex\":2}]}],\"stackTable\":[{},{\"locationIndices\":[1,4]},"
    "{\"locationIndices\":[2,4]},{\"locationIndices\":[3,4]},{\"locationIndices\":[5]}]}}";

static const struct spaa_frame *frame_of(const struct spaa_profile *p, uint64_t id)
{
  size_t i;
  for (i = 0; i < p->n_frames; i++)
    if (p->frames[i].id == id)
      return &p->frames[i];
  fail_msg("no frame %" PRIu64, id);
  return NULL;
}

static void test_line_without_file(void **state)
{
  struct spaa_conv_list l;
  struct spaa_err e;
  const struct spaa_profile *p;
  const struct spaa_frame *f;
  size_t i;
  (void)state;
  memset(&l, 0, sizeof(l));
  if (spaa_convert_otlp((const uint8_t *)json_lines, strlen(json_lines), NULL, &l, &e))
    fail_msg("%s", e.msg);
  assert_int_equal(l.n, 1);
  p = l.v[0].profile;
  assert_int_equal(p->n_stacks, 4); /* by weight: 4, 3, 2, 1 */
  for (i = 0; i + 1 < p->n_stacks; i++)
    assert_string_not_equal(p->stacks[i].id, p->stacks[i + 1].id);
  f = frame_of(p, p->stacks[0].frames[0]); /* main, a file and no line */
  assert_string_equal(f->srcline, "main.js");
  assert_true(f->srcline_resolved);
  f = frame_of(p, p->stacks[1].frames[0]); /* work, neither */
  assert_string_equal(f->func, "work");
  assert_null(f->srcline);
  assert_false(f->srcline_resolved);
  f = frame_of(p, p->stacks[2].frames[0]);
  assert_string_equal(f->func, "work");
  assert_string_equal(f->srcline, ":140");
  assert_true(f->srcline_resolved);
  assert_string_equal(frame_of(p, p->stacks[2].frames[1])->srcline, "main.js:7");
  f = frame_of(p, p->stacks[3].frames[0]);
  assert_string_equal(f->srcline, ":135");
  assert_true(f->srcline_resolved);
  assert_int_not_equal(p->stacks[2].frames[0], p->stacks[3].frames[0]);
  spaa_conv_list_free(&l);
}

static void test_json_errors(void **state)
{
  static const struct {
    const char *json;
    int code;
    const char *frag;
  } cases[] = {
      {"{\"resourceProfiles\":[{\"scopeProfiles\":[{\"profiles\":[{\"period\":\"12x\"}]}]}]}",
       SPAA_E_BAD_JSON, "resourceProfiles[0].scopeProfiles[0].profiles[0].period: expected a 64-bit"},
      {"{\"dictionary\":{\"stringTable\":[\"\"],\"string_table\":[\"\"]}}", SPAA_E_BAD_JSON,
       "field given twice"},
      {"{\"dictionary\":{\"stackTable\":[{\"locationIndices\":[3000000000]}]}}", SPAA_E_BAD_JSON,
       "expected a 32-bit integer"},
      {"{\"dictionary\":{\"linkTable\":[{\"traceId\":\"zz!\"}]}}", SPAA_E_BAD_JSON,
       "expected hex or base64"},
      {"{\"dictionary\":{\"attributeTable\":[{\"value\":{\"stringValue\":\"a\",\"intValue\":1}}]}}",
       SPAA_E_BAD_JSON, "more than one member of a oneof"},
      {"{\"resourceProfiles\":[{\"scopeProfiles\":[{\"profiles\":[{\"sample\":[]}]}]}]}",
       SPAA_E_UNSUPPORTED, "v1.8 or older"},
      {"{\"resourceProfiles\":[", SPAA_E_BAD_JSON, "OTLP/JSON"},
      {"  {\"resourceProfiles\":[]}", 0, ""},
      {" []", SPAA_E_BAD_JSON, "is an object ({\"resourceProfiles\": [...]}), not an array"},
      {"{\"resourceProfiles\":[{\"scopeProfiles\":[{\"profiles\":[{\"profile\":{\"sampleType\":"
       "[{\"aggregationTemporality\":\"BOGUS\"}]}}]}]}]}",
       SPAA_E_BAD_JSON, "unknown name 'BOGUS' for enum AggregationTemporality"},
  };
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    struct spaa_conv_list l = {0};
    struct spaa_err e;
    int rc;
    spaa_err_clear(&e);
    rc = spaa_convert_otlp((const uint8_t *)cases[i].json, strlen(cases[i].json), NULL, &l, &e);
    if (rc != cases[i].code || !strstr(e.msg, cases[i].frag))
      fail_msg("case %zu: rc %d msg \"%s\"", i, rc, e.msg);
    spaa_conv_list_free(&l);
  }
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_valid_base),       cmocka_unit_test(test_shared_frame_lists),
      cmocka_unit_test(test_compact_samples),  cmocka_unit_test(test_index_rules),
      cmocka_unit_test(test_sample_rules),     cmocka_unit_test(test_dictionary_rules),
      cmocka_unit_test(test_zero_by_value),    cmocka_unit_test(test_partial_and_warning),
      cmocka_unit_test(test_sniff_v19),        cmocka_unit_test(test_sniff_v18_and_garbage),
      cmocka_unit_test(test_json_mapping),     cmocka_unit_test(test_json_errors),
      cmocka_unit_test(test_line_without_file), cmocka_unit_test(test_bad_strings),
      cmocka_unit_test(test_refetch_gives_back),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
