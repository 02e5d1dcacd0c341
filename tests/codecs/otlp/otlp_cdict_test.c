/* The dictionary's location and stack tables read off the wire (otlp_cdict.c): each request,
 * written byte by byte, is read as protoc-c unpacks it (the same tables, or a refusal), and
 * through the converter refused with the same messages as before. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "otlp/otlp.h"
#include "otlp/otlp_int.h"
#include "spaa/spaa_io.h"

#define PI(x) opentelemetry__proto__profiles__v1development__##x##__init

static const char *const MALFORMED =
    "cannot decode ExportProfilesServiceRequest (v1development): malformed protobuf";

/* ---- writing protobuf by hand --------------------------------------------------------- */

struct w {
  uint8_t b[2048];
  size_t n;
};

static void w_varint(struct w *w, uint64_t v)
{
  do {
    assert_true(w->n < sizeof(w->b));
    w->b[w->n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
    v >>= 7;
  } while (v);
}

static void w_raw(struct w *w, const void *p, size_t n)
{
  assert_true(w->n + n <= sizeof(w->b));
  memcpy(w->b + w->n, p, n);
  w->n += n;
}

static void w_tag(struct w *w, uint32_t num, int wt) { w_varint(w, (uint64_t)num << 3 | (unsigned)wt); }

static void w_var(struct w *w, uint32_t num, uint64_t v)
{
  w_tag(w, num, 0);
  w_varint(w, v);
}

static void w_msg(struct w *w, uint32_t num, const struct w *m)
{
  w_tag(w, num, 2);
  w_varint(w, m->n);
  w_raw(w, m->b, m->n);
}

/* a packed run of int32 (negative ones as 10-byte varints, as protobuf writes them) */
static void w_packed(struct w *w, uint32_t num, const int32_t *v, size_t n)
{
  struct w m = {{0}, 0};
  size_t i;
  for (i = 0; i < n; i++)
    w_varint(&m, (uint64_t)(int64_t)v[i]);
  w_msg(w, num, &m);
}

static void w_line(struct w *loc, int32_t function, int64_t line)
{
  struct w ln = {{0}, 0};
  w_var(&ln, 1, (uint64_t)(int64_t)function);
  w_var(&ln, 2, (uint64_t)line);
  w_msg(loc, 3, &ln);
}

/* ---- reading as the request path does, and as protoc-c does --------------------------- */

/* A request whose only fields are the dictionaries d[0..n) (field 2 each). */
static void request_of(struct w *req, const struct w *d, size_t n)
{
  size_t i;
  memset(req, 0, sizeof(*req));
  for (i = 0; i < n; i++)
    w_msg(req, 2, &d[i]);
}

/* The request's tables through otlp__strip_samples: 0, or its error code. The copy it
 * leaves must unpack without location and stack tables. */
static int strip(const struct w *req, struct otlp_cdict *cd)
{
  struct spaa_buf rest;
  struct otlp_wire_profile *pr = NULL;
  struct spaa_err e;
  size_t np = 0;
  int rc;
  spaa_buf_init(&rest, 0);
  spaa_err_clear(&e);
  rc = otlp__strip_samples(req->b, req->n, &rest, &pr, &np, cd, &e);
  if (rc == 0) {
    OT_Request *m = (OT_Request *)protobuf_c_message_unpack(
        &OT_REQUEST_DESC, NULL, rest.len, (const uint8_t *)(rest.p ? rest.p : ""));
    assert_non_null(m);
    assert_true(!m->dictionary ||
                (m->dictionary->n_location_table == 0 && m->dictionary->n_stack_table == 0));
    protobuf_c_message_free_unpacked(&m->base, NULL);
  } else {
    assert_int_equal(rc, SPAA_E_BAD_PROTOBUF);
    assert_string_equal(e.msg, MALFORMED);
  }
  spaa_buf_free(&rest);
  free(pr);
  return rc;
}

static void same_tables(const struct otlp_cdict *a, const struct otlp_cdict *b)
{
  size_t i;
  assert_int_equal(a->n_locs, b->n_locs);
  assert_int_equal(a->n_lines, b->n_lines);
  assert_int_equal(a->n_loc_attrs, b->n_loc_attrs);
  assert_int_equal(a->n_stacks, b->n_stacks);
  assert_int_equal(a->n_stack_locs, b->n_stack_locs);
  for (i = 0; i < a->n_locs; i++) {
    assert_int_equal(a->locs[i].address, b->locs[i].address);
    assert_int_equal(a->locs[i].mapping_index, b->locs[i].mapping_index);
    assert_int_equal(a->locs[i].line_off, b->locs[i].line_off);
    assert_int_equal(a->locs[i].n_lines, b->locs[i].n_lines);
    assert_int_equal(a->locs[i].attr_off, b->locs[i].attr_off);
    assert_int_equal(a->locs[i].n_attrs, b->locs[i].n_attrs);
  }
  for (i = 0; i < a->n_lines; i++) {
    assert_int_equal(a->lines[i].function_index, b->lines[i].function_index);
    assert_int_equal(a->lines[i].line, b->lines[i].line);
    assert_int_equal(a->lines[i].column, b->lines[i].column);
  }
  for (i = 0; i < a->n_loc_attrs; i++)
    assert_int_equal(a->loc_attrs[i], b->loc_attrs[i]);
  for (i = 0; i < a->n_stacks; i++) {
    assert_int_equal(a->stacks[i].off, b->stacks[i].off);
    assert_int_equal(a->stacks[i].n, b->stacks[i].n);
  }
  for (i = 0; i < a->n_stack_locs; i++)
    assert_int_equal(a->stack_locs[i], b->stack_locs[i]);
}

/* Read the dictionaries d[0..n) off the wire into cd and check that protoc-c unpacks the
 * same tables from the same request (or refuses it when we do). 0 or the error code. */
static int read_like_protobuf_c(const struct w *d, size_t n, struct otlp_cdict *cd)
{
  struct w req;
  struct otlp_cdict ref;
  OT_Request *m;
  int rc;
  request_of(&req, d, n);
  rc = strip(&req, cd);
  m = (OT_Request *)protobuf_c_message_unpack(&OT_REQUEST_DESC, NULL, req.n, req.b);
  if (rc) {
    assert_null(m);
    otlp__cdict_free(cd);
    return rc;
  }
  assert_non_null(m);
  if (m->dictionary) {
    assert_int_equal(otlp__cdict_msgs(&ref, m->dictionary), 0);
  } else {
    memset(&ref, 0, sizeof(ref));
  }
  same_tables(cd, &ref);
  otlp__cdict_free(&ref);
  protobuf_c_message_free_unpacked(&m->base, NULL);
  return 0;
}

static void stack_is(const struct otlp_cdict *cd, size_t i, const int32_t *v, size_t n)
{
  size_t j;
  assert_true(i < cd->n_stacks);
  assert_int_equal(cd->stacks[i].n, n);
  for (j = 0; j < n; j++)
    assert_int_equal(otlp__stack_locs(cd, i)[j], v[j]);
}

/* ---- the tests ------------------------------------------------------------------------ */

/* location_indices packed, one varint a field, or both mixed: the same stack */
static void test_packed_and_unpacked(void **state)
{
  static const int32_t want[] = {1, 2, 300, 70000};
  struct w d[3], st;
  struct otlp_cdict cd;
  size_t k, i;
  (void)state;
  memset(d, 0, sizeof(d));
  for (k = 0; k < 3; k++) {
    memset(&st, 0, sizeof(st));
    w_msg(&d[k], 7, &st); /* stack 0: empty */
    memset(&st, 0, sizeof(st));
    if (k == 0) {
      w_packed(&st, 1, want, 4);
    } else if (k == 1) {
      for (i = 0; i < 4; i++)
        w_var(&st, 1, (uint64_t)want[i]);
    } else {
      w_packed(&st, 1, want, 1);
      w_var(&st, 1, (uint64_t)want[1]);
      w_var(&st, 9, 5); /* unknown: skipped */
      w_packed(&st, 1, want + 2, 2);
    }
    w_msg(&d[k], 7, &st);
    assert_int_equal(read_like_protobuf_c(&d[k], 1, &cd), 0);
    assert_int_equal(cd.n_stacks, 2);
    assert_int_equal(cd.stacks[0].n, 0);
    stack_is(&cd, 1, want, 4);
    otlp__cdict_free(&cd);
  }
}

/* a Location whose fields repeat: lines and attributes append, the scalars' last wins */
static void test_repeated_fields(void **state)
{
  static const int32_t a1[] = {1, 2}, a2[] = {3};
  struct w d = {{0}, 0}, loc = {{0}, 0}, ln = {{0}, 0}, empty = {{0}, 0};
  struct otlp_cdict cd;
  const struct otlp_cline *lines;
  (void)state;
  w_msg(&d, 2, &empty);
  w_var(&loc, 1, 1);
  w_line(&loc, 1, 10);
  w_var(&loc, 2, 0x1000);
  w_packed(&loc, 4, a1, 2);
  w_var(&loc, 1, 2);
  w_var(&loc, 15, 99); /* unknown: skipped */
  w_var(&ln, 1, 1);
  w_var(&ln, 1, 3);    /* function_index 3 wins */
  w_var(&ln, 3, 7);
  w_var(&ln, 2, (uint64_t)(int64_t)-5);
  w_msg(&loc, 3, &ln);
  w_var(&loc, 4, (uint64_t)a2[0]);
  w_var(&loc, 2, 0x2000);
  w_msg(&d, 2, &loc);
  assert_int_equal(read_like_protobuf_c(&d, 1, &cd), 0);
  assert_int_equal(cd.n_locs, 2);
  assert_int_equal(cd.locs[1].mapping_index, 2);
  assert_int_equal(cd.locs[1].address, 0x2000);
  assert_int_equal(cd.locs[1].n_lines, 2);
  lines = otlp__loc_lines(&cd, &cd.locs[1]);
  assert_int_equal(lines[0].function_index, 1);
  assert_int_equal(lines[0].line, 10);
  assert_int_equal(lines[1].function_index, 3);
  assert_int_equal(lines[1].line, -5);
  assert_int_equal(lines[1].column, 7);
  assert_int_equal(cd.locs[1].n_attrs, 3);
  assert_int_equal(otlp__loc_attrs(&cd, &cd.locs[1])[0], 1);
  assert_int_equal(otlp__loc_attrs(&cd, &cd.locs[1])[1], 2);
  assert_int_equal(otlp__loc_attrs(&cd, &cd.locs[1])[2], 3);
  otlp__cdict_free(&cd);
}

/* the dictionary field twice: its tables concatenate in wire order */
static void test_dictionary_twice(void **state)
{
  static const int32_t s1[] = {1}, s2[] = {2, 1};
  struct w d[2], loc = {{0}, 0}, st = {{0}, 0}, empty = {{0}, 0};
  struct otlp_cdict cd;
  (void)state;
  memset(d, 0, sizeof(d));
  w_msg(&d[0], 2, &empty);
  w_var(&loc, 2, 0x10);
  w_msg(&d[0], 2, &loc);
  w_msg(&d[0], 7, &empty);
  w_packed(&st, 1, s1, 1);
  w_msg(&d[0], 7, &st);
  memset(&loc, 0, sizeof(loc));
  w_var(&loc, 2, 0x20);
  w_line(&loc, 1, 5);
  memset(&st, 0, sizeof(st));
  w_packed(&st, 1, s2, 2);
  w_msg(&d[1], 7, &st);
  w_msg(&d[1], 2, &loc);
  assert_int_equal(read_like_protobuf_c(d, 2, &cd), 0);
  assert_int_equal(cd.n_locs, 3);
  assert_int_equal(cd.locs[1].address, 0x10);
  assert_int_equal(cd.locs[2].address, 0x20);
  assert_int_equal(cd.locs[2].n_lines, 1);
  assert_int_equal(cd.n_stacks, 3);
  stack_is(&cd, 1, s1, 1);
  stack_is(&cd, 2, s2, 2);
  otlp__cdict_free(&cd);
}

/* Broken bytes inside location_table or stack_table: refused, as protoc-c refuses them. */
static void test_malformed(void **state)
{
  struct w d, m, ln;
  struct otlp_cdict cd;
  int k;
  (void)state;
  for (k = 0; k < 11; k++) {
    memset(&d, 0, sizeof(d));
    memset(&m, 0, sizeof(m));
    memset(&ln, 0, sizeof(ln));
    switch (k) {
    case 0: /* packed location_indices, the last varint cut */
      w_raw(&m, "\x0a\x02\x01\x81", 4);
      w_msg(&d, 7, &m);
      break;
    case 1: /* packed location_indices, an 11-byte varint */
      w_raw(&m, "\x0a\x0b\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 13);
      w_msg(&d, 7, &m);
      break;
    case 2: /* location_indices as a fixed32 */
      w_raw(&m, "\x0d\x01\x00\x00\x00", 5);
      w_msg(&d, 7, &m);
      break;
    case 3: /* packed attribute_indices, the last varint cut */
      w_raw(&m, "\x22\x01\x80", 3);
      w_msg(&d, 2, &m);
      break;
    case 4: /* mapping_index length-delimited */
      w_raw(&m, "\x0a\x01\x01", 3);
      w_msg(&d, 2, &m);
      break;
    case 5: /* lines as a varint */
      w_var(&m, 3, 1);
      w_msg(&d, 2, &m);
      break;
    case 6: /* a Line's line as a fixed64 */
      w_raw(&ln, "\x11\x01\x00\x00\x00\x00\x00\x00\x00", 9);
      w_msg(&m, 3, &ln);
      w_msg(&d, 2, &m);
      break;
    case 7: /* a Line longer than its Location */
      w_raw(&m, "\x1a\x05\x08\x01", 4);
      w_msg(&d, 2, &m);
      break;
    case 8: /* address cut mid-varint */
      w_raw(&m, "\x10\x80", 2);
      w_msg(&d, 2, &m);
      break;
    case 9: /* location_table as a varint */
      w_var(&d, 2, 1);
      break;
    default: /* stack_table as a fixed64 */
      w_raw(&d, "\x39\x00\x00\x00\x00\x00\x00\x00\x00", 9);
      break;
    }
    if (read_like_protobuf_c(&d, 1, &cd) != SPAA_E_BAD_PROTOBUF)
      fail_msg("case %d was not refused", k);
  }
}

/* ---- through the converter ------------------------------------------------------------ */

/* A valid request (strings, functions, one profile of one sample on stack 1) packed by
 * protoc-c with no location or stack table, followed by a second dictionary field `extra`
 * that holds them. spaa_convert_otlp's code; *l and *e as it leaves them. */
static int convert_with(const struct w *extra, struct spaa_conv_list *l, struct spaa_err *e)
{
  static char *strs[] = {"", "samples", "count", "main", "app.c"};
  OT_Request r;
  OT_Dict d;
  OT_ResourceProfiles rp, *rpp[1];
  OT_ScopeProfiles sp, *spp[1];
  OT_Profile p, *pp[1];
  OT_ValueType vt;
  OT_Sample s, *ss[1];
  OT_Function f0, f1, *fp[2];
  int64_t v = 5;
  uint8_t *b;
  size_t n;
  int rc;
  opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__init(&r);
  PI(profiles_dictionary)(&d);
  PI(resource_profiles)(&rp);
  PI(scope_profiles)(&sp);
  PI(profile)(&p);
  PI(value_type)(&vt);
  PI(sample)(&s);
  PI(function)(&f0);
  PI(function)(&f1);
  d.string_table = strs;
  d.n_string_table = 5;
  f1.name_strindex = 3;
  f1.filename_strindex = 4;
  fp[0] = &f0;
  fp[1] = &f1;
  d.function_table = fp;
  d.n_function_table = 2;
  vt.type_strindex = 1;
  vt.unit_strindex = 2;
  s.stack_index = 1;
  s.values = &v;
  s.n_values = 1;
  ss[0] = &s;
  p.sample_type = &vt;
  p.samples = ss;
  p.n_samples = 1;
  pp[0] = &p;
  sp.profiles = pp;
  sp.n_profiles = 1;
  spp[0] = &sp;
  rp.scope_profiles = spp;
  rp.n_scope_profiles = 1;
  rpp[0] = &rp;
  r.resource_profiles = rpp;
  r.n_resource_profiles = 1;
  r.dictionary = &d;
  n = protobuf_c_message_get_packed_size(&r.base);
  b = malloc(n + sizeof(extra->b) + 16);
  assert_non_null(b);
  protobuf_c_message_pack(&r.base, b);
  {
    struct w tail = {{0}, 0};
    w_msg(&tail, 2, extra);
    memcpy(b + n, tail.b, tail.n);
    n += tail.n;
  }
  memset(l, 0, sizeof(*l));
  spaa_err_clear(e);
  rc = spaa_convert_otlp(b, n, NULL, l, e);
  free(b);
  return rc;
}

/* location 1 (one line: function 1, line 12) and stacks {} and {1}, stack 1 given as
 * location_indices `stack1` (n_stack1 of them, packed or not) */
static void tables(struct w *d, const int32_t *stack1, size_t n_stack1, int packed,
                   int32_t mapping, int32_t function)
{
  struct w loc = {{0}, 0}, st = {{0}, 0}, empty = {{0}, 0};
  size_t i;
  memset(d, 0, sizeof(*d));
  w_msg(d, 2, &empty);
  if (mapping)
    w_var(&loc, 1, (uint64_t)(int64_t)mapping);
  w_var(&loc, 2, 0x1234);
  w_line(&loc, function, 12);
  w_msg(d, 2, &loc);
  w_msg(d, 7, &empty);
  if (packed)
    w_packed(&st, 1, stack1, n_stack1);
  else
    for (i = 0; i < n_stack1; i++)
      w_var(&st, 1, (uint64_t)(int64_t)stack1[i]);
  w_msg(d, 7, &st);
}

/* the tables in a second dictionary field, packed or not: one frame, main at app.c:12 */
static void test_convert_split_dictionary(void **state)
{
  static const int32_t one[] = {1};
  struct spaa_conv_list l;
  struct spaa_err e;
  struct w d;
  int packed;
  (void)state;
  for (packed = 0; packed < 2; packed++) {
    tables(&d, one, 1, packed, 0, 1);
    assert_int_equal(convert_with(&d, &l, &e), 0);
    assert_int_equal(l.n, 1);
    assert_non_null(l.v[0].profile);
    assert_int_equal(l.v[0].profile->n_frames, 1);
    assert_string_equal(l.v[0].profile->frames[0].func, "main");
    assert_string_equal(l.v[0].profile->frames[0].srcline, "app.c:12");
    assert_int_equal(l.v[0].profile->frames[0].ip, 0x1234);
    spaa_conv_list_free(&l);
  }
}

static void expect_whole(const struct w *d, int code, const char *msg)
{
  struct spaa_conv_list l;
  struct spaa_err e;
  assert_int_equal(convert_with(d, &l, &e), code);
  assert_int_equal(l.n, 0);
  assert_string_equal(e.msg, msg);
}

/* negative int32 indices (10-byte varints) read as protoc-c reads them, then refused by
 * the range checks; a varint past 32 bits gives its low 32 */
static void test_negative_indices(void **state)
{
  static const int32_t neg[] = {-1}, big[] = {1};
  struct otlp_cdict cd;
  struct w d, st = {{0}, 0};
  int packed;
  (void)state;
  for (packed = 0; packed < 2; packed++) {
    tables(&d, neg, 1, packed, 0, 1);
    assert_int_equal(read_like_protobuf_c(&d, 1, &cd), 0);
    stack_is(&cd, 1, neg, 1);
    otlp__cdict_free(&cd);
    expect_whole(&d, SPAA_E_INVALID, "dictionary: stack_table[1] references location -1, but "
                                     "there are 2 locations");
  }
  tables(&d, big, 1, 1, -2, 1);
  assert_int_equal(read_like_protobuf_c(&d, 1, &cd), 0);
  assert_int_equal(cd.locs[1].mapping_index, -2);
  otlp__cdict_free(&cd);
  expect_whole(&d, SPAA_E_INVALID, "dictionary: location_table[1] references mapping -2, but "
                                   "there are 0 mappings");
  tables(&d, big, 1, 0, 0, -3);
  expect_whole(&d, SPAA_E_INVALID, "dictionary: location_table[1].lines[0] references "
                                   "function -3, but there are 2 functions");
  /* 2^32 + 1: location 1 */
  memset(&d, 0, sizeof(d));
  w_var(&st, 1, ((uint64_t)1 << 32) + 1);
  w_msg(&d, 7, &st);
  assert_int_equal(read_like_protobuf_c(&d, 1, &cd), 0);
  stack_is(&cd, 0, big, 1);
  otlp__cdict_free(&cd);
}

/* a cut packed varint inside the stack table passes the sniffing walk (it does not read
 * packed runs) and is refused as malformed, as protoc-c refused it */
static void test_convert_malformed(void **state)
{
  struct w d = {{0}, 0}, loc = {{0}, 0}, st = {{0}, 0}, empty = {{0}, 0};
  (void)state;
  w_msg(&d, 2, &empty);
  w_var(&loc, 2, 0x1234);
  w_msg(&d, 2, &loc);
  w_msg(&d, 7, &empty);
  w_raw(&st, "\x0a\x02\x01\x81", 4);
  w_msg(&d, 7, &st);
  expect_whole(&d, SPAA_E_BAD_PROTOBUF, MALFORMED);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_packed_and_unpacked), cmocka_unit_test(test_repeated_fields),
      cmocka_unit_test(test_dictionary_twice),    cmocka_unit_test(test_malformed),
      cmocka_unit_test(test_convert_split_dictionary),
      cmocka_unit_test(test_negative_indices),    cmocka_unit_test(test_convert_malformed),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
