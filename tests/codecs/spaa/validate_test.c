/* Validator tests: one invalid file per rule (rule, line and field asserted), the warnings
 * and where they must stay quiet, the spec's own examples assembled into a valid file, and
 * zstd and piecewise input. */
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

#define MAXD 64

struct seen {
  size_t n;
  struct {
    int is_error;
    size_t line;
    char rule[40];
    char field[64];
    char msg[320];
  } d[MAXD];
};

static void collect(void *ctx, const struct spaa_diag *d)
{
  struct seen *s = ctx;
  if (s->n == MAXD)
    return;
  s->d[s->n].is_error = d->is_error;
  s->d[s->n].line = d->line;
  snprintf(s->d[s->n].rule, sizeof(s->d[s->n].rule), "%s", d->rule);
  snprintf(s->d[s->n].field, sizeof(s->d[s->n].field), "%s", d->field);
  snprintf(s->d[s->n].msg, sizeof(s->d[s->n].msg), "%s", d->msg);
  s->n++;
}

static void dump(const struct seen *s)
{
  size_t i;
  for (i = 0; i < s->n; i++)
    print_message("  %zu: %s [%s] %s: %s\n", s->d[i].line, s->d[i].is_error ? "error" : "warning",
                  s->d[i].rule, s->d[i].field, s->d[i].msg);
}

/* Records used to build the cases. */
#define HDR(order)                                                                            \
  "{\"type\":\"header\",\"format\":\"spaa\",\"version\":\"1.0\",\"source_tool\":\"perf\","    \
  "\"frame_order\":\"" order "\",\"stack_id_mode\":\"content_addressable\",\"events\":["      \
  "{\"name\":\"cycles\",\"kind\":\"hardware\",\"sampling\":{\"mode\":\"period\","             \
  "\"primary_metric\":\"period\"}}]}\n"
#define H HDR("leaf_to_root")
#define D1 "{\"type\":\"dso\",\"id\":1,\"name\":\"/bin/app\",\"is_kernel\":false}\n"
#define DK "{\"type\":\"dso\",\"id\":2,\"name\":\"[kernel.kallsyms]\",\"is_kernel\":true}\n"
#define FR(id, ip)                                                                            \
  "{\"type\":\"frame\",\"id\":" #id ",\"func\":\"f" #id "\",\"dso\":1,\"ip\":\"" ip            \
  "\",\"kind\":\"user\"}\n"
#define F10 FR(10, "0x10")
#define F11 FR(11, "0x20")
#define F12 FR(12, "0x30")
#define FK "{\"type\":\"frame\",\"id\":20,\"func\":\"do_syscall\",\"dso\":2,\"kind\":\"kernel\"}\n"
#define FI(id, d)                                                                             \
  "{\"type\":\"frame\",\"id\":" #id ",\"func\":\"i" #id "\",\"dso\":1,\"ip\":\"0x99\","        \
  "\"inlined\":true,\"inline_depth\":" #d ",\"kind\":\"user\"}\n"
#define DICT D1 F10 F11 F12
#define ST(id, frames, rest)                                                                  \
  "{\"type\":\"stack\",\"id\":\"" id "\",\"frames\":[" frames "],\"context\":"               \
  "{\"event\":\"cycles\"},\"weights\":[{\"metric\":\"period\",\"value\":5}]" rest "}\n"
#define S1 ST("0xa", "10,11", "")
/* a sample of stack 0xa with the given fields (each followed by a comma) */
#define SMP(fields) "{\"type\":\"sample\"," fields "\"stack_id\":\"0xa\"}\n"

struct vcase {
  const char *name;
  const char *input;
  const char *rule;  /* expected rule */
  size_t line;       /* expected line */
  const char *field; /* expected field */
  int is_error;      /* 1: the file is invalid; 0: a warning, the file stays valid */
};

static const struct vcase cases[] = {
    /* spec §7 MUSTs */
    {"header not first", D1 H, "header-first", 1, "type", 1},
    {"no header at all", D1, "header-missing", 1, "type", 1},
    {"two headers", H H DICT, "header-duplicate", 2, "type", 1},
    {"frame -> missing dso", H FR(10, "0x10") S1, "frame-dso-missing", 2, "dso", 1},
    {"frame without dso", H D1 "{\"type\":\"frame\",\"id\":10,\"func\":\"f\"}\n",
     "frame-dso-missing", 3, "dso", 1},
    {"stack -> missing frame", H DICT ST("0xa", "10,99", ""), "stack-frame-missing", 6,
     "frames[1]", 1},
    {"primary metric missing",
     H DICT "{\"type\":\"stack\",\"id\":\"0xa\",\"frames\":[10],\"context\":{\"event\":"
            "\"cycles\"},\"weights\":[{\"metric\":\"samples\",\"value\":5}]}\n",
     "primary-metric-missing", 6, "weights", 1},
    {"kernel frame on the root side (leaf_to_root)", H DICT DK FK ST("0xa", "10,20", ""),
     "frame-order", 8, "frames", 1},
    {"kernel frame on the root side (root_to_leaf)", HDR("root_to_leaf") DICT DK FK
     ST("0xa", "20,10", ""), "frame-order", 8, "frames", 1},
    {"inline depth ascending toward the root", H DICT FI(201, 2) FI(202, 1) FI(203, 0)
     ST("0xa", "203,202,201,11", ""), "frame-order", 9, "frames", 1},
    {"exclusive frame at the root end", H DICT ST("0xa", "10,11,12", ",\"exclusive\":{\"frame\":12}"),
     "frame-order", 6, "exclusive.frame", 1},
    /* house rules */
    {"exclusive not the leaf", H DICT ST("0xa", "10,11,12", ",\"exclusive\":{\"frame\":11}"),
     "exclusive-not-leaf", 6, "exclusive.frame", 1},
    {"duplicate dso", H D1 D1, "dso-duplicate", 3, "id", 1},
    {"duplicate frame", H DICT F10, "frame-duplicate", 6, "id", 1},
    {"duplicate thread", H "{\"type\":\"thread\",\"pid\":1,\"tid\":7}\n"
                           "{\"type\":\"thread\",\"pid\":2,\"tid\":7}\n",
     "thread-duplicate", 3, "tid", 1},
    {"duplicate stack", H DICT S1 S1, "stack-duplicate", 7, "id", 1},
    {"dso defined after its use", H F10 D1, "ref-before-def", 3, "id", 1},
    {"frame defined after its use", H D1 F10 S1 F11, "ref-before-def", 5, "id", 1},
    {"undeclared stack event",
     H DICT "{\"type\":\"stack\",\"id\":\"0xa\",\"frames\":[10],\"context\":{\"event\":"
            "\"instructions\"},\"weights\":[{\"metric\":\"period\",\"value\":5}]}\n",
     "stack-event-undeclared", 6, "context.event", 1},
    {"stack context without event",
     H DICT "{\"type\":\"stack\",\"id\":\"0xa\",\"frames\":[10],\"context\":{\"pid\":1},"
            "\"weights\":[{\"metric\":\"period\",\"value\":5}]}\n",
     "field-missing", 6, "context.event", 1},
    {"stack without weights",
     H DICT "{\"type\":\"stack\",\"id\":\"0xa\",\"frames\":[10],\"context\":{\"event\":"
            "\"cycles\"}}\n",
     "field-missing", 6, "weights", 1},
    {"sample naming an unknown stack",
     H DICT S1 "{\"type\":\"sample\",\"stack_id\":\"0xb\",\"event\":\"cycles\"}\n",
     "sample-stack-missing", 7, "stack_id", 1},
    {"related_stacks naming an unknown stack",
     H DICT ST("0xa", "10", ",\"related_stacks\":[\"0xa\",\"0xbbb\"]") S1,
     "related-stack-missing", 6, "related_stacks", 1},
    {"window naming an unknown stack",
     H DICT S1 "{\"type\":\"window\",\"id\":\"w\",\"start\":0,\"end\":1,\"by_stack\":[{"
               "\"stack_id\":\"0x0123456789abcdef0123456789abcdef\",\"weights\":[]}]}\n",
     "window-stack-missing", 7, "by_stack.stack_id", 1},
    {"sample with an undeclared event",
     H DICT S1 "{\"type\":\"sample\",\"stack_id\":\"0xa\",\"event\":\"cache-misses\"}\n",
     "sample-event-undeclared", 7, "event", 1},
    {"bad format", "{\"type\":\"header\",\"format\":\"spab\",\"version\":\"1.0\","
                   "\"frame_order\":\"leaf_to_root\"}\n",
     "header-format", 1, "format", 1},
    {"bad version", "{\"type\":\"header\",\"format\":\"spaa\",\"version\":\"2.0\","
                    "\"frame_order\":\"leaf_to_root\"}\n",
     "header-version", 1, "version", 1},
    {"bad frame_order", HDR("sideways"), "bad-enum", 1, "frame_order", 1},
    {"bad stack_id_mode",
     "{\"type\":\"header\",\"format\":\"spaa\",\"version\":\"1.0\",\"frame_order\":"
     "\"leaf_to_root\",\"stack_id_mode\":\"global\",\"events\":[]}\n",
     "bad-enum", 1, "stack_id_mode", 1},
    {"missing stack_id_mode",
     "{\"type\":\"header\",\"format\":\"spaa\",\"version\":\"1.0\",\"source_tool\":\"perf\","
     "\"frame_order\":\"leaf_to_root\",\"events\":[{\"name\":\"c\",\"kind\":\"timer\","
     "\"sampling\":{\"mode\":\"frequency\",\"primary_metric\":\"samples\"}}]}\n",
     "field-missing", 1, "stack_id_mode", 1},
    {"bad event kind",
     "{\"type\":\"header\",\"format\":\"spaa\",\"version\":\"1.0\",\"frame_order\":"
     "\"leaf_to_root\",\"stack_id_mode\":\"local\",\"events\":[{\"name\":\"c\",\"kind\":"
     "\"magic\",\"sampling\":{\"mode\":\"period\",\"primary_metric\":\"period\"}}]}\n",
     "bad-enum", 1, "events[0].kind", 1},
    {"bad sampling mode",
     "{\"type\":\"header\",\"format\":\"spaa\",\"version\":\"1.0\",\"frame_order\":"
     "\"leaf_to_root\",\"stack_id_mode\":\"local\",\"events\":[{\"name\":\"c\",\"kind\":"
     "\"timer\",\"sampling\":{\"mode\":\"sometimes\",\"primary_metric\":\"samples\"}}]}\n",
     "bad-enum", 1, "events[0].sampling.mode", 1},
    {"event without primary metric",
     "{\"type\":\"header\",\"format\":\"spaa\",\"version\":\"1.0\",\"frame_order\":"
     "\"leaf_to_root\",\"stack_id_mode\":\"local\",\"events\":[{\"name\":\"c\",\"kind\":"
     "\"timer\",\"sampling\":{\"mode\":\"frequency\"}}]}\n",
     "field-missing", 1, "events[0].sampling.primary_metric", 1},
    {"duplicate event",
     "{\"type\":\"header\",\"format\":\"spaa\",\"version\":\"1.0\",\"frame_order\":"
     "\"leaf_to_root\",\"stack_id_mode\":\"local\",\"events\":[{\"name\":\"c\",\"kind\":"
     "\"timer\",\"sampling\":{\"mode\":\"frequency\",\"primary_metric\":\"samples\"}},"
     "{\"name\":\"c\",\"kind\":\"timer\",\"sampling\":{\"mode\":\"frequency\","
     "\"primary_metric\":\"samples\"}}]}\n",
     "event-duplicate", 1, "events[1].name", 1},
    {"bad frame kind", H D1 "{\"type\":\"frame\",\"id\":10,\"func\":\"f\",\"dso\":1,\"kind\":"
                            "\"alien\"}\n",
     "bad-enum", 3, "kind", 1},
    {"bad stack_type", H DICT ST("0xa", "10", ",\"stack_type\":\"mixed\""), "bad-enum", 6,
     "stack_type", 1},
    {"malformed JSON", H "{\"type\":\"dso\",\"id\":1,\"name\":\"x\"\n", "json", 2, "", 1},
    {"trailing garbage", H D1 "{\"type\":\"dso\",\"id\":3,\"name\":\"x\"} x\n", "json", 3, "", 1},
    {"wrong type: id as string", H "{\"type\":\"dso\",\"id\":\"1\",\"name\":\"x\"}\n", "type",
     2, "id", 1},
    {"wrong type: weight value",
     H DICT "{\"type\":\"stack\",\"id\":\"0xa\",\"frames\":[10],\"context\":{\"event\":"
            "\"cycles\"},\"weights\":[{\"metric\":\"period\",\"value\":\"5\"}]}\n",
     "type", 6, "weights[0].value", 1},
    {"wrong type: frames", H DICT "{\"type\":\"stack\",\"id\":\"0xa\",\"frames\":[10,\"x\"]}\n",
     "type", 6, "frames[1]", 1},
    {"negative id", H "{\"type\":\"dso\",\"id\":-1,\"name\":\"x\"}\n", "bad-value", 2, "id", 1},
    {"record without type", H "{\"id\":1}\n", "field-missing", 2, "type", 1},
    {"frame without func", H D1 "{\"type\":\"frame\",\"id\":10,\"dso\":1}\n", "field-missing",
     3, "func", 1},
    {"dso without name", H "{\"type\":\"dso\",\"id\":1}\n", "field-missing", 2, "name", 1},
    {"thread without tid", H "{\"type\":\"thread\",\"pid\":1}\n", "field-missing", 2, "tid", 1},
    /* a key given twice: readers keeping the first or the last would disagree */
    {"key twice", H "{\"type\":\"dso\",\"id\":1,\"name\":\"x\",\"id\":2}\n", "duplicate-key", 2,
     "id", 1},
    {"type twice", H "{\"type\":\"dso\",\"type\":\"frame\",\"id\":1,\"name\":\"x\"}\n",
     "duplicate-key", 2, "type", 1},
    {"context key twice",
     H DICT "{\"type\":\"stack\",\"id\":\"0xa\",\"frames\":[10],\"context\":{\"event\":"
            "\"cycles\",\"event\":\"other\"},\"weights\":[{\"metric\":\"period\",\"value\":5}]}\n",
     "duplicate-key", 6, "context.event", 1},
    {"key twice among many",
     H "{\"type\":\"dso\",\"id\":1,\"name\":\"x\",\"x_0\":0,\"x_1\":0,\"x_2\":0,\"x_3\":0,"
       "\"x_4\":0,\"x_5\":0,\"x_6\":0,\"x_7\":0,\"x_8\":0,\"x_9\":0,\"x_a\":0,\"x_b\":0,"
       "\"x_c\":0,\"x_d\":0,\"x_e\":0,\"x_f\":0,\"x_g\":0,\"x_3\":1}\n",
     "duplicate-key", 2, "x_3", 1},
    {"header key twice",
     "{\"type\":\"header\",\"format\":\"spaa\",\"format\":\"spaa\",\"version\":\"1.0\"}\n",
     "json", 1, "", 1},
    /* SHOULDs: warnings only */
    {"unknown source_tool",
     "{\"type\":\"header\",\"format\":\"spaa\",\"version\":\"1.0\",\"source_tool\":\"mytool\","
     "\"frame_order\":\"leaf_to_root\",\"stack_id_mode\":\"local\",\"events\":[{\"name\":"
     "\"c\",\"kind\":\"timer\",\"sampling\":{\"mode\":\"frequency\",\"primary_metric\":"
     "\"samples\"}}]}\n",
     "unknown-source-tool", 1, "source_tool", 0},
    {"unknown context key",
     H DICT "{\"type\":\"stack\",\"id\":\"0xa\",\"frames\":[10],\"context\":{\"event\":"
            "\"cycles\",\"color\":\"red\",\"x_mine\":1},\"weights\":[{\"metric\":\"period\","
            "\"value\":5}]}\n",
     "unknown-context-key", 6, "context.color", 0},
    {"period = 0", H DICT S1 "{\"type\":\"sample\",\"stack_id\":\"0xa\",\"period\":0}\n",
     "suspicious-value", 7, "period", 0},
    {"zero weight",
     H DICT "{\"type\":\"stack\",\"id\":\"0xa\",\"frames\":[10],\"context\":{\"event\":"
            "\"cycles\"},\"weights\":[{\"metric\":\"period\",\"value\":0}]}\n",
     "suspicious-value", 6, "weights[0].value", 0},
    /* a sample lacking a field of the spec's §5.1 example that readers require */
    {"sample without timestamp", H DICT S1 SMP("\"pid\":1,\"tid\":2,\"cpu\":0,\"event\":\"cycles\","),
     "sample-field-missing", 7, "timestamp", 0},
    {"sample without pid", H DICT S1 SMP("\"timestamp\":1,\"tid\":2,\"cpu\":0,\"event\":\"cycles\","),
     "sample-field-missing", 7, "pid", 0},
    {"sample without tid", H DICT S1 SMP("\"timestamp\":1,\"pid\":1,\"cpu\":0,\"event\":\"cycles\","),
     "sample-field-missing", 7, "tid", 0},
    {"sample without cpu", H DICT S1 SMP("\"timestamp\":1,\"pid\":1,\"tid\":2,\"event\":\"cycles\","),
     "sample-field-missing", 7, "cpu", 0},
    {"sample without event", H DICT S1 SMP("\"timestamp\":1,\"pid\":1,\"tid\":2,\"cpu\":0,"),
     "sample-field-missing", 7, "event", 0},
    {"sample lacking fields, before its stack", H DICT SMP("\"timestamp\":5,") S1,
     "sample-field-missing", 6, "cpu", 0},
    {"unknown record type", H "{\"type\":\"annotation\",\"text\":\"hi\"}\n",
     "unknown-record-type", 2, "type", 0},
    {"stack without frames", H DICT ST("0xa", "", ""), "stack-empty", 6, "frames", 0},
    {"build_id not lowercase hex",
     H "{\"type\":\"dso\",\"id\":1,\"name\":\"x\",\"build_id\":\"AB:CD\"}\n", "build-id-format",
     2, "build_id", 0},
};

static void same_diags(const struct seen *a, const struct seen *b)
{
  size_t i;
  if (a->n != b->n) {
    print_message("validate gave %zu diagnostics, the one-pass reader %zu\n", a->n, b->n);
    dump(a);
    dump(b);
  }
  assert_int_equal(a->n, b->n);
  for (i = 0; i < a->n; i++) {
    assert_int_equal(a->d[i].is_error, b->d[i].is_error);
    assert_int_equal(a->d[i].line, b->d[i].line);
    assert_string_equal(a->d[i].rule, b->d[i].rule);
    assert_string_equal(a->d[i].field, b->d[i].field);
    assert_string_equal(a->d[i].msg, b->d[i].msg);
  }
}

static void write_profile(const struct spaa_profile *p, struct spaa_buf *b)
{
  struct spaa_err err;
  spaa_buf_init(b, 0);
  assert_int_equal(spaa_write_buf(p, 0, b, &err), 0);
}

/* spaa_read_checked on the input of a case: the validator's diagnostics, counts and return
 * code, word for word; on an error, err names its line and rule; on none, the profile
 * spaa_read makes of the same bytes. */
static void check_one_pass(const char *input, size_t len, size_t step, size_t max_errors,
                           const struct seen *want, const struct spaa_validate_stats *want_st,
                           int want_rc)
{
  struct seen s;
  struct spaa_validate_stats st;
  struct spaa_test_src src = {input, len, 0, step};
  struct spaa_profile *p = NULL, *q = NULL;
  struct spaa_err err, err2;
  int rc;
  memset(&s, 0, sizeof(s));
  spaa_err_clear(&err);
  rc = spaa_read_checked(spaa_test_read, &src, collect, &s, max_errors, &st, &p, &err);
  assert_int_equal(rc, want_rc);
  same_diags(want, &s);
  assert_memory_equal(&st, want_st, sizeof(st));
  if (rc) {
    size_t i;
    char msg[1024];
    assert_null(p);
    assert_int_equal(err.code, rc);
    for (i = 0; i < s.n && !s.d[i].is_error; i++)
      ;
    assert_true(i < s.n);
    snprintf(msg, sizeof(msg), "line %zu: %s (rule %s%s%s)", s.d[i].line, s.d[i].msg,
             s.d[i].rule, s.d[i].field[0] ? ", field " : "", s.d[i].field);
    msg[sizeof(err.msg) - 1] = '\0'; /* the error keeps what fits, as snprintf cut it */
    if (rc == SPAA_E_INVALID)
      assert_string_equal(err.msg, msg);
    assert_int_equal(err.line, s.d[i].line);
    return;
  }
  assert_non_null(p);
  assert_int_equal(spaa_read_buf(input, len, &q, &err2), 0);
  {
    struct spaa_buf a, b;
    write_profile(p, &a);
    write_profile(q, &b);
    assert_int_equal(a.len, b.len);
    assert_memory_equal(a.p, b.p, a.len);
    spaa_buf_free(&a);
    spaa_buf_free(&b);
  }
  spaa_profile_free(p);
  spaa_profile_free(q);
}

static void check_case(const struct vcase *c, const char *input, size_t len, size_t step)
{
  struct seen s;
  struct spaa_validate_stats st;
  struct spaa_test_src src = {input, len, 0, step};
  size_t i;
  int rc, found = 0;
  memset(&s, 0, sizeof(s));
  rc = spaa_validate(spaa_test_read, &src, collect, &s, 0, &st);
  for (i = 0; i < s.n; i++)
    if (strcmp(s.d[i].rule, c->rule) == 0 && s.d[i].line == c->line &&
        strcmp(s.d[i].field, c->field) == 0 && s.d[i].is_error == c->is_error && s.d[i].msg[0])
      found = 1;
  if (!found || rc != (c->is_error ? SPAA_E_INVALID : 0)) {
    print_message("case '%s' (step %zu): want %s [%s] line %zu field '%s', rc %d; got:\n",
                  c->name, step, c->is_error ? "error" : "warning", c->rule, c->line, c->field, rc);
    dump(&s);
  }
  assert_true(found);
  assert_int_equal(rc, c->is_error ? SPAA_E_INVALID : 0);
  assert_int_equal(st.errors + st.warnings >= 1, 1);
  if (!c->is_error)
    assert_int_equal(st.errors, 0);
  check_one_pass(input, len, step, 0, &s, &st, rc);
}

static void test_rules(void **state)
{
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    check_case(&cases[i], cases[i].input, strlen(cases[i].input), SIZE_MAX);
    check_case(&cases[i], cases[i].input, strlen(cases[i].input), 1); /* a byte at a time */
  }
}

/* The same file with the header's frame_order flipped: valid both ways when the frames are. */
static void test_valid_orders(void **state)
{
  static const char l2r[] = H DICT DK FK FI(201, 2) FI(202, 1) FI(203, 0)
      ST("0xa", "20,201,202,203,11",
         ",\"exclusive\":{\"frame\":20,\"weights\":[]},\"related_stacks\":[\"0xb\"]")
          "{\"type\":\"sample\",\"stack_id\":\"0xb\",\"period\":3}\n"
      ST("0xb", "10,11", "");
  static const char r2l[] = HDR("root_to_leaf") DICT DK FK FI(201, 2) FI(202, 1) FI(203, 0)
      ST("0xa", "11,203,202,201,20", ",\"exclusive\":{\"frame\":20,\"weights\":[]}")
      ST("0xb", "11,10", "");
  struct seen s;
  struct spaa_validate_stats st;
  (void)state;
  memset(&s, 0, sizeof(s));
  assert_int_equal(spaa_validate_buf(l2r, strlen(l2r), collect, &s, 0, &st), 0);
  if (s.n)
    dump(&s);
  assert_int_equal(st.errors, 0);
  assert_int_equal(st.stacks, 2);
  assert_int_equal(st.samples, 1);
  check_one_pass(l2r, strlen(l2r), SIZE_MAX, 0, &s, &st, 0);
  memset(&s, 0, sizeof(s));
  assert_int_equal(spaa_validate_buf(r2l, strlen(r2l), collect, &s, 0, &st), 0);
  if (s.n)
    dump(&s);
  assert_int_equal(st.errors, 0);
}

/* The spec's own example records, assembled into tests/data/spec_examples.spaa. */
static void test_spec_examples(void **state)
{
  size_t len = 0, steps[] = {SIZE_MAX, 1, 7, 4096}, i;
  char *buf;
  (void)state;
  buf = (char *)spaa_test_data("spec_examples.spaa", &len);
  assert_non_null(buf);
  for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
    struct seen s;
    struct spaa_validate_stats st;
    struct spaa_test_src src = {buf, len, 0, steps[i]};
    memset(&s, 0, sizeof(s));
    assert_int_equal(spaa_validate(spaa_test_read, &src, collect, &s, 0, &st), 0);
    if (s.n)
      dump(&s);
    assert_int_equal(s.n, 0);
    assert_int_equal(st.lines, 14);
    assert_int_equal(st.dsos, 1);
    assert_int_equal(st.frames, 7);
    assert_int_equal(st.threads, 1);
    assert_int_equal(st.stacks, 2);
    assert_int_equal(st.samples, 1);
    assert_int_equal(st.windows, 1);
    assert_int_equal(st.bytes, len);
    check_one_pass(buf, len, steps[i], 0, &s, &st, 0);
  }
  free(buf);
}

static void test_zstd(void **state)
{
  size_t len = 0, zcap, zlen;
  char *buf, *z;
  struct seen s;
  struct spaa_validate_stats st;
  (void)state;
  buf = (char *)spaa_test_data("spec_examples.spaa", &len);
  assert_non_null(buf);
  zcap = ZSTD_compressBound(len);
  z = malloc(zcap);
  zlen = ZSTD_compress(z, zcap, buf, len, 3);
  assert_false(ZSTD_isError(zlen));
  memset(&s, 0, sizeof(s));
  assert_int_equal(spaa_validate_buf(z, zlen, collect, &s, 0, &st), 0);
  assert_int_equal(st.stacks, 2);
  assert_int_equal(st.bytes, len);
  check_one_pass(z, zlen, SIZE_MAX, 0, &s, &st, 0);
  /* cut short: a compression error, reported as such */
  memset(&s, 0, sizeof(s));
  assert_int_equal(spaa_validate_buf(z, zlen - 5, collect, &s, 0, &st), SPAA_E_BAD_COMPRESSION);
  assert_true(s.n >= 1);
  assert_string_equal(s.d[s.n - 1].rule, "compression");
  check_one_pass(z, zlen - 5, SIZE_MAX, 0, &s, &st, SPAA_E_BAD_COMPRESSION);
  /* garbage after the magic number */
  memcpy(z + 4, "garbage!", 8);
  assert_int_equal(spaa_validate_buf(z, zlen, NULL, NULL, 0, &st), SPAA_E_BAD_COMPRESSION);
  free(z);
  free(buf);
}

static void test_max_errors(void **state)
{
  static const char in[] = H "{\"type\":\"dso\",\"id\":\"a\"}\n{\"type\":\"dso\",\"id\":\"b\"}\n"
                             "{\"type\":\"dso\",\"id\":\"c\"}\n";
  struct seen s;
  struct spaa_validate_stats st;
  (void)state;
  memset(&s, 0, sizeof(s));
  assert_int_equal(spaa_validate_buf(in, strlen(in), collect, &s, 2, &st), SPAA_E_INVALID);
  assert_int_equal(s.n, 2);      /* reported */
  assert_int_equal(st.errors, 3); /* counted */
  check_one_pass(in, strlen(in), SIZE_MAX, 2, &s, &st, SPAA_E_INVALID);
  /* empty input: no header */
  memset(&s, 0, sizeof(s));
  assert_int_equal(spaa_validate_buf("", 0, collect, &s, 0, &st), SPAA_E_INVALID);
  assert_string_equal(s.d[0].rule, "header-missing");
}

/* Cases that must give no warning of a rule, and counts: a sample with the six fields is
 * clean; a field missing from many samples is reported once; a zero weight beside a
 * nonzero metric is a measurement, not suspicious (an all-zero list still is). */
static void test_quiet(void **state)
{
  static const char full[] =
      H DICT S1 SMP("\"timestamp\":1,\"pid\":0,\"tid\":2,\"cpu\":0,\"event\":\"cycles\",");
  static const char repeated[] = H DICT S1 SMP("\"timestamp\":1,\"tid\":2,\"event\":\"cycles\",")
      SMP("\"timestamp\":2,\"tid\":2,\"event\":\"cycles\",")
      SMP("\"timestamp\":3,\"tid\":2,\"event\":\"cycles\",");
  static const char zero_beside[] = H DICT
      "{\"type\":\"stack\",\"id\":\"0xa\",\"frames\":[10],\"context\":{\"event\":\"cycles\"},"
      "\"weights\":[{\"metric\":\"period\",\"value\":0},{\"metric\":\"samples\",\"value\":3}],"
      "\"exclusive\":{\"frame\":10,\"weights\":[{\"metric\":\"period\",\"value\":0},"
      "{\"metric\":\"samples\",\"value\":3}]}}\n";
  static const char all_zero[] = H DICT
      "{\"type\":\"stack\",\"id\":\"0xa\",\"frames\":[10],\"context\":{\"event\":\"cycles\"},"
      "\"weights\":[{\"metric\":\"period\",\"value\":0},{\"metric\":\"samples\",\"value\":0}]}\n";
  struct seen s;
  struct spaa_validate_stats st;
  size_t i;
  (void)state;
  memset(&s, 0, sizeof(s));
  assert_int_equal(spaa_validate_buf(full, strlen(full), collect, &s, 0, &st), 0);
  if (s.n)
    dump(&s);
  assert_int_equal(st.warnings, 0);
  assert_int_equal(st.samples, 1);
  memset(&s, 0, sizeof(s));
  assert_int_equal(spaa_validate_buf(repeated, strlen(repeated), collect, &s, 0, &st), 0);
  assert_int_equal(st.warnings, 2); /* pid and cpu, once each, on the first sample */
  for (i = 0; i < s.n; i++) {
    assert_string_equal(s.d[i].rule, "sample-field-missing");
    assert_int_equal(s.d[i].line, 7);
  }
  assert_string_equal(s.d[0].field, "pid");
  assert_string_equal(s.d[1].field, "cpu");
  memset(&s, 0, sizeof(s));
  assert_int_equal(spaa_validate_buf(zero_beside, strlen(zero_beside), collect, &s, 0, &st), 0);
  if (s.n)
    dump(&s);
  assert_int_equal(st.warnings, 0);
  memset(&s, 0, sizeof(s));
  assert_int_equal(spaa_validate_buf(all_zero, strlen(all_zero), collect, &s, 0, &st), 0);
  assert_int_equal(st.warnings, 1);
  assert_string_equal(s.d[0].rule, "suspicious-value");
  assert_string_equal(s.d[0].field, "weights[0].value");
}

/* The one place the one-pass reader is stricter than spaa_validate: a value in an unknown key
 * that the model keeps as JSON and jansson cannot hold is a json error (the reader refused
 * it when it read apart; validate skips such values unread). */
static void test_one_pass_json_value(void **state)
{
  static const char in[] = H DICT
      "{\"type\":\"stack\",\"id\":\"0xa\",\"frames\":[10],\"context\":{\"event\":\"cycles\"},"
      "\"x_k\":1e400,\"weights\":[{\"metric\":\"period\",\"value\":5}]}\n";
  struct seen s;
  struct spaa_validate_stats st;
  struct spaa_profile *p = NULL;
  struct spaa_err err;
  (void)state;
  memset(&s, 0, sizeof(s));
  assert_int_equal(spaa_validate_buf(in, strlen(in), collect, &s, 0, &st), 0);
  assert_int_equal(spaa_read_buf(in, strlen(in), &p, &err), SPAA_E_BAD_JSON);
  assert_null(p);
  memset(&s, 0, sizeof(s));
  assert_int_equal(spaa_read_checked_buf(in, strlen(in), collect, &s, 0, &st, &p, &err),
                   SPAA_E_INVALID);
  assert_null(p);
  assert_int_equal(s.n, 1);
  assert_string_equal(s.d[0].rule, "json");
  assert_int_equal(s.d[0].line, 6);
  assert_int_equal(err.line, 6);
  assert_non_null(strstr(err.msg, "(rule json"));
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rules),         cmocka_unit_test(test_valid_orders),
      cmocka_unit_test(test_spec_examples), cmocka_unit_test(test_zstd),
      cmocka_unit_test(test_max_errors),    cmocka_unit_test(test_quiet),
      cmocka_unit_test(test_one_pass_json_value),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
