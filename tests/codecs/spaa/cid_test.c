/* Content id tests: the identity bytes, pinned vectors (the same as in docs/content-ids.md),
 * ASLR independence, and the same stack read leaf_to_root or root_to_leaf getting one id. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "spaa/cid.h"
#include "spaa/spaa_io.h"

/* The records of docs/content-ids.md. */
static struct spaa_dso dso_a(void)
{
  struct spaa_dso d;
  memset(&d, 0, sizeof(d));
  d.id = 12;
  d.name = "/usr/bin/myapp";
  d.build_id = "abcd1234567890abcdef";
  return d;
}

static struct spaa_dso dso_b(void)
{
  struct spaa_dso d;
  memset(&d, 0, sizeof(d));
  d.id = 2;
  d.name = "libfoo.so";
  d.has_mapping = 1;
  d.map_start = 0x7f0000000000;
  d.map_limit = 0x7f0000100000;
  d.map_offset = 0x1000;
  return d;
}

static struct spaa_frame frame_a(void)
{
  struct spaa_frame f;
  memset(&f, 0, sizeof(f));
  f.id = 101;
  f.func = "mycrate::parse::parse_file";
  f.func_resolved = 1;
  f.has_dso = 1;
  f.dso = 12;
  f.has_ip = 1;
  f.ip = 0x401234;
  f.srcline = "src/parse.rs:214";
  f.srcline_resolved = 1;
  f.kind = "user";
  return f;
}

static struct spaa_frame frame_b(void)
{
  struct spaa_frame f;
  memset(&f, 0, sizeof(f));
  f.id = 7;
  f.func = "0x7f0000001234";
  f.func_resolved = 0;
  f.has_dso = 1;
  f.dso = 2;
  f.has_ip = 1;
  f.ip = 0x7f0000001234;
  f.srcline_resolved = 1;
  f.kind = "user";
  return f;
}

static void hex(const struct spaa_cid *c, char *out) { spaa_cid_hex(c, out); }

static void expect_cid(const struct spaa_cid *c, const char *want)
{
  char h[SPAA_CID_HEXLEN + 1];
  hex(c, h);
  if (strcmp(h, want) != 0)
    print_message("cid %s, pinned %s\n", h, want);
  assert_string_equal(h, want);
}

static void test_identity_bytes(void **state)
{
  struct spaa_dso d = dso_a(), db = dso_b();
  struct spaa_frame f = frame_a(), fb = frame_b();
  struct spaa_buf b;
  static const char want_a[] = "\x1a\x00\x00\x00mycrate::parse::parse_file"
                               "\x16\x00\x00\x00" "b:abcd1234567890abcdef"
                               "\x10\x00\x00\x00src/parse.rs:214"
                               "\x01\x00\x00\x00" "0"
                               "\x04\x00\x00\x00user"
                               "\x00\x00\x00\x00";
  static const char want_b[] = "\x00\x00\x00\x00"
                               "\x0b\x00\x00\x00n:libfoo.so"
                               "\x00\x00\x00\x00"
                               "\x01\x00\x00\x00" "0"
                               "\x04\x00\x00\x00user"
                               "\x06\x00\x00\x00" "0x2234";
  char key[64];
  (void)state;
  spaa_buf_init(&b, 0);
  assert_int_equal(spaa_frame_identity(&b, &f, &d), 0);
  assert_int_equal(b.len, sizeof(want_a) - 1);
  assert_memory_equal(b.p, want_a, b.len);
  b.len = 0;
  assert_int_equal(spaa_frame_identity(&b, &fb, &db), 0);
  assert_int_equal(b.len, sizeof(want_b) - 1);
  assert_memory_equal(b.p, want_b, b.len);
  spaa_buf_free(&b);
  assert_int_equal(spaa_dso_key(&d, key, sizeof(key)), 22);
  assert_string_equal(key, "b:abcd1234567890abcdef");
  assert_int_equal(spaa_dso_key(&db, key, sizeof(key)), 11);
  assert_string_equal(key, "n:libfoo.so");
}

/* Pinned: these are the vectors of docs/content-ids.md. */
#define CID_DSO_A "0x1a24a1becb8d0530ca410f0bb1ad039b"
#define CID_DSO_B "0x45d56706645ec6d962e037fe8c94c187"
#define CID_FRAME_A "0x039c7dc7c6f494a61fa7cc5b1c4f9781"
#define CID_FRAME_B "0x6755297fbc8b42f149673e5b1a1d82f5"
#define CID_STACK_1 "0x30e866a741f6df2dd4d78a50229610d8"
#define CID_STACK_2 "0x18f93b9197ab2e33216a680df18069a8"

static void test_vectors(void **state)
{
  struct spaa_dso d = dso_a(), db = dso_b();
  struct spaa_frame f = frame_a(), fb = frame_b();
  struct spaa_cid c, fr[2];
  json_t *ctx = json_pack("{s:s,s:i}", "event", "cycles", "tid", 4511);
  (void)state;
  if (getenv("SPAA_CID_PRINT")) {
    char h[40];
    spaa_dso_cid(&d, &c), hex(&c, h), print_message("dso a   %s\n", h);
    spaa_dso_cid(&db, &c), hex(&c, h), print_message("dso b   %s\n", h);
    spaa_frame_cid(&f, &d, &fr[0]), hex(&fr[0], h), print_message("frame a %s\n", h);
    spaa_frame_cid(&fb, &db, &fr[1]), hex(&fr[1], h), print_message("frame b %s\n", h);
    spaa_stack_cid("cycles", NULL, fr, 2, ctx, &c), hex(&c, h), print_message("stack 1 %s\n", h);
    spaa_stack_cid("cpu", "user", &fr[1], 1, NULL, &c), hex(&c, h), print_message("stack 2 %s\n", h);
  }
  assert_int_equal(spaa_dso_cid(&d, &c), 0);
  expect_cid(&c, CID_DSO_A);
  assert_int_equal(spaa_dso_cid(&db, &c), 0);
  expect_cid(&c, CID_DSO_B);
  assert_int_equal(spaa_frame_cid(&f, &d, &fr[0]), 0);
  expect_cid(&fr[0], CID_FRAME_A);
  assert_int_equal(spaa_frame_cid(&fb, &db, &fr[1]), 0);
  expect_cid(&fr[1], CID_FRAME_B);
  assert_int_equal(spaa_stack_cid("cycles", NULL, fr, 2, ctx, &c), 0);
  expect_cid(&c, CID_STACK_1);
  /* "unified" spelled out is the same as absent; an empty context the same as none */
  {
    json_t *only_event = json_pack("{s:s}", "event", "cpu");
    struct spaa_cid c2;
    assert_int_equal(spaa_stack_cid("cpu", "user", &fr[1], 1, NULL, &c), 0);
    expect_cid(&c, CID_STACK_2);
    assert_int_equal(spaa_stack_cid("cpu", "user", &fr[1], 1, only_event, &c2), 0);
    assert_memory_equal(&c, &c2, sizeof(c));
    assert_int_equal(spaa_stack_cid("cycles", "unified", fr, 2, ctx, &c2), 0);
    expect_cid(&c2, CID_STACK_1);
    json_decref(only_event);
  }
  json_decref(ctx);
}

static void test_what_changes_ids(void **state)
{
  struct spaa_dso d = dso_a(), db = dso_b(), db2 = dso_b();
  struct spaa_frame f = frame_a(), f2 = frame_a(), fb = frame_b(), fb2 = frame_b();
  struct spaa_cid a, b;
  (void)state;
  /* a resolved frame's ip is not part of its identity */
  f2.ip = 0x999999;
  spaa_frame_cid(&f, &d, &a);
  spaa_frame_cid(&f2, &d, &b);
  assert_memory_equal(&a, &b, sizeof(a));
  /* nor is the dso's name when it has a build id */
  d.name = "/elsewhere/myapp";
  spaa_frame_cid(&f2, &d, &b);
  assert_memory_equal(&a, &b, sizeof(a));
  /* the inline depth is */
  f2.has_inline_depth = 1;
  f2.inline_depth = 1;
  spaa_frame_cid(&f2, &d, &b);
  assert_memory_not_equal(&a, &b, sizeof(a));
  /* ASLR: another load address, the same dso-relative address, the same frame */
  db2.map_start = 0x5500000000;
  db2.map_limit = 0x5500100000;
  fb2.ip = 0x5500001234;
  spaa_frame_cid(&fb, &db, &a);
  spaa_frame_cid(&fb2, &db2, &b);
  assert_memory_equal(&a, &b, sizeof(a));
  /* without a mapping the raw ip counts */
  db2.has_mapping = 0;
  spaa_frame_cid(&fb2, &db2, &b);
  assert_memory_not_equal(&a, &b, sizeof(a));
}

static void test_hex_parse(void **state)
{
  struct spaa_cid c, d;
  char h[SPAA_CID_HEXLEN + 1];
  size_t i;
  static const char *const bad[] = {"", "0x", "deadbeef", "0x0123456789abcdef0123456789abcde",
                                    "0x0123456789abcdef0123456789abcdefa",
                                    "0x0123456789abcdef0123456789abcdeg", "1x0123456789abcdef0123456789abcdef"};
  (void)state;
  for (i = 0; i < 16; i++)
    c.b[i] = (uint8_t)(i * 17);
  spaa_cid_hex(&c, h);
  assert_string_equal(h, "0x00112233445566778899aabbccddeeff");
  assert_int_equal(spaa_cid_parse(h, &d), 0);
  assert_memory_equal(&c, &d, sizeof(c));
  assert_int_equal(spaa_cid_parse("0X00112233445566778899AABBCCDDEEFF", &d), 0);
  assert_memory_equal(&c, &d, sizeof(c));
  for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
    assert_int_equal(spaa_cid_parse(bad[i], &d), SPAA_E_INVALID);
  assert_int_equal(spaa_cid_parse(NULL, &d), SPAA_E_INVALID);
}

#define HEADER(order)                                                                         \
  "{\"type\":\"header\",\"format\":\"spaa\",\"version\":\"1.0\",\"frame_order\":\"" order     \
  "\",\"stack_id_mode\":\"local\",\"events\":[{\"name\":\"cycles\",\"kind\":\"hardware\","    \
  "\"sampling\":{\"mode\":\"period\",\"primary_metric\":\"period\"}}]}\n"                      \
  "{\"type\":\"dso\",\"id\":1,\"name\":\"/bin/app\"}\n"                                         \
  "{\"type\":\"frame\",\"id\":1,\"func\":\"leaf\",\"dso\":1}\n"                                 \
  "{\"type\":\"frame\",\"id\":2,\"func\":\"mid\",\"dso\":1}\n"                                  \
  "{\"type\":\"frame\",\"id\":3,\"func\":\"root\",\"dso\":1}\n"

/* The same stack, frames written in either order (and with other local ids): one content id. */
static void test_order_independent(void **state)
{
  static const char l2r[] = HEADER("leaf_to_root")
      "{\"type\":\"stack\",\"id\":\"a\",\"frames\":[1,2,3],\"context\":{\"event\":\"cycles\"},"
      "\"weights\":[{\"metric\":\"period\",\"value\":1}]}\n";
  static const char r2l[] = HEADER("root_to_leaf")
      "{\"type\":\"stack\",\"id\":\"zz\",\"frames\":[3,2,1],\"context\":{\"event\":\"cycles\"},"
      "\"weights\":[{\"metric\":\"period\",\"value\":9}]}\n";
  static const char other[] = HEADER("root_to_leaf")
      "{\"type\":\"stack\",\"id\":\"zz\",\"frames\":[1,2,3],\"context\":{\"event\":\"cycles\"},"
      "\"weights\":[{\"metric\":\"period\",\"value\":9}]}\n";
  struct spaa_profile *a = NULL, *b = NULL, *c = NULL;
  struct spaa_err err;
  (void)state;
  assert_int_equal(spaa_read_buf(l2r, strlen(l2r), &a, &err), 0);
  assert_int_equal(spaa_read_buf(r2l, strlen(r2l), &b, &err), 0);
  assert_int_equal(spaa_read_buf(other, strlen(other), &c, &err), 0);
  assert_int_equal(spaa_normalize(a, &err), 0);
  assert_int_equal(spaa_normalize(b, &err), 0);
  assert_int_equal(spaa_normalize(c, &err), 0);
  assert_int_equal(strlen(a->stacks[0].id), SPAA_CID_HEXLEN);
  assert_string_equal(a->stacks[0].id, b->stacks[0].id);
  assert_string_not_equal(a->stacks[0].id, c->stacks[0].id); /* reversed stack: another id */
  assert_int_equal(b->header.id_mode, SPAA_IDS_CONTENT);
  spaa_profile_free(a);
  spaa_profile_free(b);
  spaa_profile_free(c);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_identity_bytes),    cmocka_unit_test(test_vectors),
      cmocka_unit_test(test_what_changes_ids),  cmocka_unit_test(test_hex_parse),
      cmocka_unit_test(test_order_independent),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
