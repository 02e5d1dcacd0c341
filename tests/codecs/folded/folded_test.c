/* codecs/folded: folded stacks and lines as Pyroscope's /ingest reads them (the count after
 * the last space, frames split at ';', empty lines skipped, CRLF), the profile type and
 * sample rate the application name gives, the metadata applied, the refusals (each naming
 * its line) and caps, every prefix of an input, the sniff that tells text from pprof. The
 * HTTP side: tests/e2e/pyroscope_folded.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/buf.h"
#include "folded/folded.h"
#include "pprof/pprof.h"

#define NOW 1700000000000000000LL

static int cmp_str_ptr(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The stacks of p as sorted lines "root;...;leaf metric=value[unit] ...", '\n' after each;
 * an unresolved frame's name ends in '?'. */
static char *render(const struct spaa_profile *p)
{
  char **lines = calloc(p->n_stacks + 1, sizeof(*lines)), *out;
  size_t i, j, total = 1;
  struct spaa_buf b;
  for (i = 0; i < p->n_stacks; i++) {
    const struct spaa_stack *s = &p->stacks[i];
    spaa_buf_init(&b, 0);
    for (j = 0; j < s->n_frames; j++) {
      uint64_t id = s->frames[s->n_frames - 1 - j]; /* leaf first in the model */
      size_t k;
      for (k = 0; k < p->n_frames && p->frames[k].id != id; k++)
        ;
      assert_true(k < p->n_frames);
      assert_int_equal(spaa_buf_addf(&b, "%s%s%s", j ? ";" : "", p->frames[k].func,
                                     p->frames[k].func_resolved ? "" : "?"), 0);
    }
    for (j = 0; j < s->weights.n; j++)
      assert_int_equal(spaa_buf_addf(&b, " %s=%lld[%s]", s->weights.v[j].metric,
                                     (long long)s->weights.v[j].value.i,
                                     s->weights.v[j].unit ? s->weights.v[j].unit : ""), 0);
    assert_int_equal(spaa_buf_add(&b, "\n", 2), 0); /* the NUL too */
    lines[i] = b.p;
    total += strlen(b.p);
  }
  qsort(lines, p->n_stacks, sizeof(*lines), cmp_str_ptr);
  out = calloc(total, 1);
  for (i = 0; i < p->n_stacks; i++) {
    strcat(out, lines[i]);
    free(lines[i]);
  }
  free(lines);
  return out;
}

/* Convert text with the options; *out the one entry (the list owns it). */
static int convert(const char *text, size_t len, const char *name, const char *rate, int lines,
                   struct spaa_conv_list *l, struct spaa_err *err)
{
  struct spaa_pprof_opts po;
  struct spaa_folded_opts fo;
  struct spaa_convert_opts o;
  int rc;
  memset(&po, 0, sizeof(po));
  memset(&o, 0, sizeof(o));
  memset(l, 0, sizeof(*l));
  spaa_err_clear(err);
  spaa_folded_opts_init(&fo);
  fo.lines = lines;
  if (rate)
    assert_int_equal(spaa_folded_opts_sample_rate(&fo, rate, err), 0);
  if (name)
    assert_int_equal(spaa_pprof_opts_name(&po, name, err), 0);
  o.pprof = &po;
  o.folded = &fo;
  rc = spaa_convert_folded((const uint8_t *)text, len, &o, l, err);
  spaa_pprof_opts_clear(&po);
  if (!rc)
    assert_int_equal(l->n, 1);
  else
    assert_int_equal(l->n, 0);
  return rc;
}

/* Lines as Pyroscope splits them; each case's stacks, sorted. */
static void test_parse(void **state)
{
  static const struct {
    const char *in;
    const char *name, *rate;
    int lines;
    const char *want;
  } t[] = {
      /* cpu at the default 100 Hz: 10 ms a sample, the count kept as `samples` */
      {"main;work;compute 3\nmain;idle 2\n", "app.cpu", NULL, 0,
       "main;idle cpu=20000000[nanoseconds] samples=2[count]\n"
       "main;work;compute cpu=30000000[nanoseconds] samples=3[count]\n"},
      /* the same stack twice: summed; a zero count: no stack; CRLF; empty lines */
      {"a;b 1\r\n\r\na;b 4\n\nc 0\n", "app.cpu", "0", 0, "a;b samples=5[count]\n"},
      /* the last space separates the count: spaces in names stay, as do leading ones */
      {"main;do work (x.py:10) 7\n main 1\nf  2", "app.cpu", "0", 0,
       " main samples=1[count]\nf  samples=2[count]\nmain;do work (x.py:10) samples=7[count]\n"},
      /* empty frames: kept inside, "[unknown]" unresolved; a ';' at the end ends the stack;
       * an empty stack has no frames */
      {"a;;b 1\n;x 2\ny; 3\n 4\n; 5\n", "app.cpu", "0", 0,
       " samples=4[count]\n"
       "[unknown]? samples=5[count]\n"
       "[unknown]?;x samples=2[count]\n"
       "a;[unknown]?;b samples=1[count]\n"
       "y samples=3[count]\n"},
      /* the sign Go's Atoi takes; -0 is 0 */
      {"a +3\nb -0\n", "app.cpu", "0", 0, "a samples=3[count]\n"},
      /* lines: one stack per line, each 1, spaces are part of names */
      {"a;b\na;b\r\n\nc d;e\n", "app.cpu", "0", 1,
       "a;b samples=2[count]\nc d;e samples=1[count]\n"},
      /* a rate that does not divide 1e9: whole nanoseconds, as Pyroscope */
      {"a 2\n", "app.wall", "3", 0, "a wall=666666666[nanoseconds] samples=2[count]\n"},
      /* types without a rate: the values as given, in the type's unit */
      {"a;b 4096\n", "app.alloc_space", "100", 0, "a;b alloc_space=4096[bytes]\n"},
      {"a 7\n", "app.mutex_duration", NULL, 0, "a delay=7[nanoseconds]\n"},
      /* no name: a cpu profile at 100 Hz */
      {"a 1\n", NULL, NULL, 0, "a cpu=10000000[nanoseconds] samples=1[count]\n"},
      /* nothing to weigh: no stacks */
      {"\n\n", "app.cpu", NULL, 0, ""},
  };
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
    struct spaa_conv_list l;
    struct spaa_err err;
    char *got;
    if (convert(t[i].in, strlen(t[i].in), t[i].name, t[i].rate, t[i].lines, &l, &err))
      fail_msg("case %zu should convert: %s", i, err.msg);
    got = render(l.v[0].profile);
    if (strcmp(got, t[i].want) != 0)
      fail_msg("case %zu: got\n%s\nwant\n%s", i, got, t[i].want);
    free(got);
    spaa_conv_list_free(&l);
  }
}

/* Every refusal names its line (err->line too) and stores nothing. */
static void test_bad(void **state)
{
  static const struct {
    const char *in;
    size_t len; /* 0: strlen */
    int code;
    size_t line;
    const char *msg;
  } t[] = {
      {"a;b 1\nmain;work\n", 0, SPAA_E_INVALID, 2, "line 2 has no count"},
      {"a;b 1\nx;y zz\n", 0, SPAA_E_INVALID, 2, "line 2: 'zz' is not a count"},
      {"a;b 1 \n", 0, SPAA_E_INVALID, 1, "line 1: '' is not a count"},
      {"a 1.5\n", 0, SPAA_E_INVALID, 1, "'1.5' is not a count"},
      {"a +\n", 0, SPAA_E_INVALID, 1, "'+' is not a count"},
      {"a 0x10\n", 0, SPAA_E_INVALID, 1, "'0x10' is not a count"},
      {"a 1\nb\t2\n", 0, SPAA_E_INVALID, 2, "line 2 has no count"},
      {"ok 1\nb -3\n", 0, SPAA_E_INVALID, 2, "line 2: the count -3 is negative"},
      {"a 9223372036854775808\n", 0, SPAA_E_INVALID, 1, "line 1: the count is past 2^63 - 1"},
      {"a 9223372036854775807\nb 1\na 1\n", 0, SPAA_E_INVALID, 3,
       "line 3: the counts of this stack (first on line 1) add up past 2^63 - 1"},
      {"a\xff;b 1\n", 0, SPAA_E_INVALID, 1, "line 1: byte 2 is not valid UTF-8"},
      {"x 1\na\0b 1\n", 10, SPAA_E_INVALID, 2, "line 2: byte 2 is a NUL byte"},
      {"\x1f\x8b\x08\x00", 4, SPAA_E_INVALID, 1, "gzip-compressed"},
  };
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
    struct spaa_conv_list l;
    struct spaa_err err;
    size_t len = t[i].len ? t[i].len : strlen(t[i].in);
    int rc = convert(t[i].in, len, "app.cpu", "0", 0, &l, &err);
    if (rc != t[i].code)
      fail_msg("case %zu: code %d, want %d (%s)", i, rc, t[i].code, err.msg);
    assert_int_equal(spaa_err_status(rc), 422);
    assert_int_equal(err.line, t[i].line);
    if (!strstr(err.msg, t[i].msg))
      fail_msg("case %zu: '%s' lacks '%s'", i, err.msg, t[i].msg);
    spaa_conv_list_free(&l);
  }
}

/* A count that times the period passes 64 bits: refused, naming the line. */
static void test_period_overflow(void **state)
{
  struct spaa_conv_list l;
  struct spaa_err err;
  (void)state;
  assert_int_equal(convert("a 1\nb 100000000000000\n", 22, "app.cpu", "1", 0, &l, &err),
                   SPAA_E_INVALID);
  assert_int_equal(err.line, 2);
  assert_non_null(strstr(err.msg, "line 2: 100000000000000 samples at 1 Hz"));
}

/* The caps: a line's bytes, a stack's frames; the message names the line. */
static void test_caps(void **state)
{
  size_t n = SPAA_FOLDED_MAX_LINE + 16, i;
  char *big = malloc(n + 1);
  struct spaa_conv_list l;
  struct spaa_err err;
  (void)state;
  memcpy(big, "ok 1\n", 5);
  memset(big + 5, 'x', n - 5);
  memcpy(big + n - 3, " 1\n", 3);
  big[n] = 0;
  assert_int_equal(convert(big, n, "app.cpu", NULL, 0, &l, &err), SPAA_E_TOO_LARGE);
  assert_int_equal(err.line, 2);
  assert_non_null(strstr(err.msg, "line 2 is longer than"));
  /* SPAA_FOLDED_MAX_DEPTH frames pass, one more does not */
  for (i = 0; i < 2; i++) {
    size_t frames = SPAA_FOLDED_MAX_DEPTH + i, k, len = 0;
    for (k = 0; k < frames; k++) {
      big[len++] = 'f';
      big[len++] = ';';
    }
    memcpy(big + len - 1, " 1\n", 3);
    len += 2;
    if (i == 0) {
      assert_int_equal(convert(big, len, "app.cpu", NULL, 0, &l, &err), 0);
      assert_int_equal(l.v[0].profile->stacks[0].n_frames, SPAA_FOLDED_MAX_DEPTH);
      assert_int_equal(l.v[0].profile->n_frames, 1); /* one frame, many references */
    } else {
      assert_int_equal(convert(big, len, "app.cpu", NULL, 0, &l, &err), SPAA_E_TOO_LARGE);
      assert_int_equal(err.line, 1);
      assert_non_null(strstr(err.msg, "more than 16384 frames"));
    }
    spaa_conv_list_free(&l);
  }
  free(big);
}

/* The application name's type: event, metrics, kind; service, labels, attrs. */
static void test_types(void **state)
{
  static const struct {
    const char *name, *rate;
    const char *service, *suffix, *event, *unit, *kind;
    int metrics;
  } t[] = {
      {"app", NULL, "app", "cpu", "cpu", "nanoseconds", "timer", 2},
      {"app.cpu", "0", "app", "cpu", "samples", "count", "timer", 1},
      {"my.app.itimer", NULL, "my.app", "itimer", "cpu", "nanoseconds", "timer", 2},
      {"app.wall", "50", "app", "wall", "wall", "nanoseconds", "timer", 2},
      {"app.seconds", NULL, "app", "seconds", "wall", "nanoseconds", "timer", 2},
      {"app.inuse_objects", NULL, "app", "inuse_objects", "inuse_objects", "count", "allocation",
       1},
      {"app.alloc_space", NULL, "app", "alloc_space", "alloc_space", "bytes", "allocation", 1},
      {"app.bytes", NULL, "app", "bytes", "samples", "bytes", "allocation", 1},
      {"app.goroutines", NULL, "app", "goroutines", "goroutines", "count", "software", 1},
      {"app.mutex_count", NULL, "app", "mutex_count", "contentions", "count", "software", 1},
      {"app.block_duration", NULL, "app", "block_duration", "delay", "nanoseconds", "software", 1},
      {"app.lock_count", NULL, "app", "lock_count", "contentions", "count", "software", 1},
      {"app.exceptions", NULL, "app", "exceptions", "samples", "count", "software", 1},
      {"a..live", NULL, "a.", "live", "live", "count", "allocation", 1},
  };
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
    struct spaa_conv_list l;
    struct spaa_err err;
    const struct spaa_converted *c;
    const struct spaa_event *e;
    if (convert("a;b 2\n", 6, t[i].name, t[i].rate, 0, &l, &err))
      fail_msg("%s: %s", t[i].name, err.msg);
    c = &l.v[0];
    assert_string_equal(c->service, t[i].service);
    assert_string_equal(json_string_value(json_object_get(c->labels, "__name__")), t[i].suffix);
    assert_string_equal(json_string_value(json_object_get(c->attrs, "profile_type")), t[i].suffix);
    assert_string_equal(json_string_value(json_object_get(c->attrs, "pyroscope_name")), t[i].name);
    assert_int_equal(c->profile->header.n_events, 1);
    e = &c->profile->header.events[0];
    assert_string_equal(e->name, t[i].event);
    assert_string_equal(e->primary_metric, t[i].event);
    assert_string_equal(e->kind, t[i].kind);
    assert_string_equal(c->profile->header.source_tool, "pyroscope");
    assert_int_equal(c->profile->stacks[0].weights.n, t[i].metrics);
    assert_string_equal(c->profile->stacks[0].weights.v[0].unit, t[i].unit);
    assert_string_equal(c->profile->stacks[0].context ? "ctx" : c->profile->stacks[0].event,
                        t[i].event);
    if (t[i].metrics == 2) { /* a rate made the counts time */
      assert_int_equal(e->has_frequency_hz, 1);
      assert_string_equal(e->mode, "frequency");
      assert_int_equal(json_integer_value(json_object_get(c->attrs, "sample_rate")),
                       t[i].rate ? atoi(t[i].rate) : 100);
    } else {
      assert_int_equal(e->has_frequency_hz, 0);
      assert_null(json_object_get(c->attrs, "sample_rate"));
    }
    spaa_conv_list_free(&l);
  }
}

/* A suffix Pyroscope knows no type for is refused, as its ingest refuses it. */
static void test_types_bad(void **state)
{
  static const struct {
    const char *name, *msg;
  } bad[] = {
      {"my.app", "'my.app' ends in no profile type known for folded stacks"},
      {"app.heap", "'app.heap' ends in no profile type known for folded stacks"},
      {"app.goroutine", "'app.goroutine' ends in no profile type known for folded stacks"},
      {"app.", "'app.' ends in no profile type known for folded stacks"},
      {"app.alloc_samples{env=x}", "'app.alloc_samples' ends in no profile type known"},
      {".foo", "'.foo' ends in no profile type known for folded stacks"},
      /* a known type with nothing before it: the application name is what is missing */
      {".cpu", "the application name before '.cpu' (the profile type) is empty"},
      {".alloc_space{service_name=billing}",
       "the application name before '.alloc_space' (the profile type) is empty"},
  };
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    struct spaa_conv_list l;
    struct spaa_err err;
    if (convert("a 1\n", 4, bad[i].name, NULL, 0, &l, &err) != SPAA_E_BAD_REQUEST)
      fail_msg("'%s' should be refused", bad[i].name);
    if (!strstr(err.msg, bad[i].msg))
      fail_msg("'%s': got '%s'", bad[i].name, err.msg);
  }
}

/* A service_name label is the service, as Pyroscope's ingest adapter makes the series: the
 * label not kept, the application name (without its type) kept as app_name unless given. */
static void test_service_name(void **state)
{
  static const struct {
    const char *name, *service, *labels;
  } t[] = {
      {"legacyapp2.cpu{service_name=billing}", "billing",
       "{\"__name__\":\"cpu\",\"app_name\":\"legacyapp2\"}"},
      {"rs.app.seconds{env=prod,service_name=billing}", "billing",
       "{\"__name__\":\"seconds\",\"app_name\":\"rs.app\",\"env\":\"prod\"}"},
      {"legacy{service_name=billing,app_name=mine}", "billing",
       "{\"__name__\":\"cpu\",\"app_name\":\"mine\"}"},
      /* an empty value is no label: the application name is the service */
      {"legacy.cpu{service_name=}", "legacy", "{\"__name__\":\"cpu\"}"},
      {"legacy.cpu{app_name=x}", "legacy", "{\"__name__\":\"cpu\",\"app_name\":\"x\"}"},
  };
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
    struct spaa_conv_list l;
    struct spaa_err err;
    char *s;
    if (convert("a 1\n", 4, t[i].name, NULL, 0, &l, &err))
      fail_msg("'%s': %s", t[i].name, err.msg);
    assert_string_equal(l.v[0].service, t[i].service);
    s = json_dumps(l.v[0].labels, JSON_COMPACT | JSON_SORT_KEYS);
    assert_string_equal(s, t[i].labels);
    free(s);
    spaa_conv_list_free(&l);
  }
}

/* The name's labels, the time range, a given service, the original, the format attr. */
static void test_meta(void **state)
{
  struct spaa_pprof_opts po;
  struct spaa_folded_opts fo;
  struct spaa_convert_opts o;
  struct spaa_conv_list l;
  struct spaa_err err;
  const struct spaa_converted *c;
  static const char text[] = "a;b 1\n";
  char *s;
  (void)state;
  memset(&po, 0, sizeof(po));
  memset(&o, 0, sizeof(o));
  memset(&l, 0, sizeof(l));
  spaa_folded_opts_init(&fo);
  fo.lines = 1;
  assert_int_equal(spaa_pprof_opts_name(&po, "rs.app.cpu{env=prod,region=eu}", &err), 0);
  assert_int_equal(spaa_pprof_opts_range(&po, "1700000000", "1700000010", NOW, &err), 0);
  o.pprof = &po;
  o.folded = &fo;
  o.keep_original = 1;
  assert_int_equal(spaa_convert_folded((const uint8_t *)text, 6, &o, &l, &err), 0);
  c = &l.v[0];
  assert_string_equal(c->service, "rs.app");
  s = json_dumps(c->labels, JSON_COMPACT | JSON_SORT_KEYS);
  assert_string_equal(s, "{\"__name__\":\"cpu\",\"env\":\"prod\",\"region\":\"eu\"}");
  free(s);
  assert_string_equal(json_string_value(json_object_get(c->attrs, "folded_format")), "lines");
  assert_int_equal(json_integer_value(json_object_get(c->attrs, "from_ns")), NOW);
  assert_int_equal(json_integer_value(json_object_get(c->attrs, "until_ns")), NOW + 10000000000LL);
  assert_int_equal(c->start_ns, NOW);
  assert_int_equal(c->end_ns, NOW + 10000000000LL);
  assert_int_equal(c->profile->header.has_time_range, 1);
  assert_string_equal(c->profile->header.time_unit, "nanoseconds");
  assert_ptr_equal(c->original, text);
  assert_int_equal(c->original_len, 6);
  /* lines: "a;b 1" is one stack of frames "a" and "b 1" */
  assert_int_equal(c->profile->stacks[0].n_frames, 2);
  spaa_conv_list_free(&l);
  /* a given service wins; no options at all: no service, no labels, no time */
  o.service = "given";
  assert_int_equal(spaa_convert_folded((const uint8_t *)text, 6, &o, &l, &err), 0);
  assert_string_equal(l.v[0].service, "given");
  spaa_conv_list_free(&l);
  assert_int_equal(spaa_convert_folded((const uint8_t *)text, 6, NULL, &l, &err), 0);
  assert_null(l.v[0].service);
  assert_null(l.v[0].labels);
  assert_null(l.v[0].original);
  assert_int_equal(l.v[0].profile->header.has_time_range, 0);
  assert_string_equal(json_string_value(json_object_get(l.v[0].attrs, "folded_format")), "folded");
  spaa_conv_list_free(&l);
  spaa_pprof_opts_clear(&po);
}

/* sampleRate as Pyroscope reads it for folded stacks. */
static void test_sample_rate(void **state)
{
  static const struct {
    const char *in;
    int rc;
    int64_t rate;
  } t[] = {
      {NULL, 0, 100},   {"", 0, 100},         {"97", 0, 97},         {"+50", 0, 50},
      {"0", 0, 0},      {"-0", 0, 0},         {"fast", 0, 100},      {"10 ", 0, 100},
      {"1e3", 0, 100},  {"-", 0, 100},        {"1000000000", 0, 1000000000},
      {"-5", SPAA_E_BAD_REQUEST, 100},        {"1000000001", SPAA_E_BAD_REQUEST, 100},
      {"99999999999999999999", SPAA_E_BAD_REQUEST, 100},
  };
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
    struct spaa_folded_opts fo;
    struct spaa_err err;
    spaa_folded_opts_init(&fo);
    spaa_err_clear(&err);
    if (spaa_folded_opts_sample_rate(&fo, t[i].in, &err) != t[i].rc)
      fail_msg("'%s': want %d (%s)", t[i].in ? t[i].in : "(null)", t[i].rc, err.msg);
    assert_int_equal(fo.sample_rate, t[i].rate);
    if (t[i].rc)
      assert_non_null(strstr(err.msg, "bad sampleRate"));
  }
}

/* Text or not: what /ingest takes for folded stacks when no format is given, and why not. */
static void test_is_text(void **state)
{
  static const struct {
    const char *in;
    size_t len;
    enum spaa_folded_sniff sniff;
    size_t at;
  } t[] = {
      {"main;work 1\n", 0, SPAA_FOLDED_TEXT, 0},
      {"caf\xc3\xa9;x 1\r\n\tz 2", 0, SPAA_FOLDED_TEXT, 0},
      {"", 0, SPAA_FOLDED_TEXT, 0},
      {"\x1f\x8b\x08", 3, SPAA_FOLDED_GZIP, 0},
      {"\x0a\x04\x08\x01\x10\x02", 6, SPAA_FOLDED_CONTROL, 1}, /* a pprof's first bytes */
      {"a\x7f", 0, SPAA_FOLDED_CONTROL, 1},
      {"main;a\x01" "b 3\n", 0, SPAA_FOLDED_CONTROL, 6},
      {"a\xff b", 0, SPAA_FOLDED_NOT_UTF8, 1},
      {"main;caf\xe9 3\n", 0, SPAA_FOLDED_NOT_UTF8, 8},      /* Latin-1 */
      {"a\xc3", 0, SPAA_FOLDED_NOT_UTF8, 1}, /* cut at the end of the body: not text */
  };
  size_t i;
  char *big;
  (void)state;
  for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
    size_t len = t[i].len ? t[i].len : strlen(t[i].in), at = 99;
    enum spaa_folded_sniff got = spaa_folded_sniff((const uint8_t *)t[i].in, len, &at);
    if (got != t[i].sniff || at != t[i].at)
      fail_msg("case %zu: want %d at %zu, got %d at %zu", i, (int)t[i].sniff, t[i].at,
               (int)got, at);
    assert_int_equal(spaa_folded_is_text((const uint8_t *)t[i].in, len),
                     t[i].sniff == SPAA_FOLDED_TEXT);
  }
  /* only the first SPAA_FOLDED_SNIFF bytes are looked at; a sequence cut there is text */
  big = malloc(SPAA_FOLDED_SNIFF + 8);
  memset(big, 'a', SPAA_FOLDED_SNIFF + 8);
  big[SPAA_FOLDED_SNIFF + 2] = 0x01;
  assert_int_equal(spaa_folded_is_text((const uint8_t *)big, SPAA_FOLDED_SNIFF + 8), 1);
  big[SPAA_FOLDED_SNIFF - 1] = (char)0xc3;
  big[SPAA_FOLDED_SNIFF] = (char)0xa9;
  assert_int_equal(spaa_folded_is_text((const uint8_t *)big, SPAA_FOLDED_SNIFF + 8), 1);
  big[SPAA_FOLDED_SNIFF - 2] = 0x02;
  assert_int_equal(spaa_folded_sniff((const uint8_t *)big, SPAA_FOLDED_SNIFF + 8, NULL),
                   SPAA_FOLDED_CONTROL);
  free(big);
}

/* Every prefix of an input converts or is refused with a message, never anything else. */
static void test_prefixes(void **state)
{
  static const char in[] = "main;work;comp 3\r\n;x;; 2\n\nmain;work 1\n a  b;c\xc3\xa9 4";
  size_t n;
  (void)state;
  for (n = 0; n <= sizeof(in) - 1; n++) {
    struct spaa_conv_list l;
    struct spaa_err err;
    int lines;
    for (lines = 0; lines < 2; lines++) {
      int rc = convert(in, n, "app.cpu", NULL, lines, &l, &err);
      if (rc)
        assert_true(err.msg[0] && err.line > 0);
      spaa_conv_list_free(&l);
    }
  }
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parse),       cmocka_unit_test(test_bad),
      cmocka_unit_test(test_period_overflow), cmocka_unit_test(test_caps),
      cmocka_unit_test(test_types),       cmocka_unit_test(test_types_bad),
      cmocka_unit_test(test_service_name),
      cmocka_unit_test(test_meta),        cmocka_unit_test(test_sample_rate),
      cmocka_unit_test(test_is_text),     cmocka_unit_test(test_prefixes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
