/* Folded stacks -> SPAA: lines split as Pyroscope's /ingest splits them (the count after the
 * last space, frames at ';'), each distinct stack kept once with its counts summed, then one
 * event of the type the application name gives (folded_pyroscope.c). */
#include "folded/folded_int.h"

#include <stdlib.h>
#include <string.h>

#include "base/idmap.h"
#include "base/utf8.h"
#include "spaa/spaa_io.h"

/* A frame with an empty name: no symbol and no address (as the Sentry converter names one). */
#define NO_NAME "[unknown]"
#define DSO_ID 1 /* the one dso every frame references: folded stacks name no modules */

struct fconv {
  struct spaa_profile *p;
  const struct spaa_folded__meta *m;
  int lines;                  /* format=lines: no counts */
  const char *event;          /* the event's name (static) */
  struct spaa_strmap frames;  /* frame name (borrowed from the input) -> frame index */
  struct spaa_strmap stacks;  /* stack text (borrowed) -> stack index */
  int64_t *counts;            /* per stack: its counts summed */
  size_t *first_line;         /* per stack: the line it first came on */
  size_t cap;                 /* room in counts and first_line */
  uint64_t *fr;               /* frame ids of the stack being built, leaf first */
  size_t cap_fr;
  size_t frame_refs;          /* frame ids held by all stacks */
};

/* "line N: ..." with err->line = N. */
#define LINE_ERR(code, line, ...) (spaa_err_set(err, (code), (line), 0, __VA_ARGS__))

/* The frame named s[0..n): its id, made on first sight. 0 on OOM. */
static uint64_t frame_id(struct fconv *c, const char *s, size_t n)
{
  struct spaa_frame *f;
  size_t k;
  if (spaa_strmap_get(&c->frames, s, n, &k))
    return c->p->frames[k].id;
  if (!(f = spaa_add_frame(c->p)))
    return 0;
  f->id = c->p->n_frames;
  f->has_dso = 1;
  f->dso = DSO_ID;
  f->kind = "unknown";
  f->srcline_resolved = 0;
  if (n) {
    if (!(f->func = spaa_strndup(c->p, s, n)))
      return 0;
  } else {
    f->func = NO_NAME;
    f->func_resolved = 0;
  }
  if (spaa_strmap_put(&c->frames, s, n, c->p->n_frames - 1, NULL) < 0)
    return 0;
  return f->id;
}

/* The frames of stack text s[0..n) into c->fr, leaf first; *nf their count. A ';' that ends
 * the text ends the stack; an empty frame elsewhere is a frame (as Pyroscope's tree keeps
 * it). 0 or an error code with err set. */
static int split_frames(struct fconv *c, const char *s, size_t n, size_t line, size_t *nf,
                        struct spaa_err *err)
{
  size_t pieces = 0, i, start, k;
  for (i = 0; i < n; i++)
    pieces += s[i] == ';';
  if (n && s[n - 1] != ';')
    pieces++;
  if (pieces > SPAA_FOLDED_MAX_DEPTH)
    return LINE_ERR(SPAA_E_TOO_LARGE, line, "line %zu: the stack has more than %d frames",
                    line, SPAA_FOLDED_MAX_DEPTH);
  if (pieces > SPAA_FOLDED_MAX_FRAME_REFS - c->frame_refs)
    return LINE_ERR(SPAA_E_TOO_LARGE, line, "line %zu: the stacks hold more than %u frames "
                    "in all", line, SPAA_FOLDED_MAX_FRAME_REFS);
  c->frame_refs += pieces;
  if (pieces > c->cap_fr) {
    uint64_t *nfr = realloc(c->fr, pieces * sizeof(*nfr));
    if (!nfr)
      return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
    c->fr = nfr;
    c->cap_fr = pieces;
  }
  for (i = 0, start = 0, k = 0; k < pieces; i++) {
    if (i < n && s[i] != ';')
      continue;
    /* s[start..i) is frame k from the root: position pieces - 1 - k, leaf first */
    if (!(c->fr[pieces - 1 - k] = frame_id(c, s + start, i - start)))
      return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
    k++;
    start = i + 1;
  }
  *nf = pieces;
  return 0;
}

/* count more of stack text s[0..n) (line `line`): summed into its stack, else a new one. */
static int add_stack(struct fconv *c, const char *s, size_t n, int64_t count, size_t line,
                     struct spaa_err *err)
{
  struct spaa_stack *st;
  size_t k = c->p->n_stacks, nf = 0;
  int rc;
  if (spaa_strmap_get(&c->stacks, s, n, &k)) {
    if (__builtin_add_overflow(c->counts[k], count, &c->counts[k]))
      return LINE_ERR(SPAA_E_INVALID, line, "line %zu: the counts of this stack (first on line "
                      "%zu) add up past 2^63 - 1", line, c->first_line[k]);
    return 0;
  }
  if ((rc = split_frames(c, s, n, line, &nf, err)))
    return rc;
  if (k == c->cap) {
    size_t nc = c->cap ? c->cap * 2 : 256;
    int64_t *ncount = realloc(c->counts, nc * sizeof(*ncount));
    size_t *nline;
    if (!ncount)
      return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
    c->counts = ncount;
    if (!(nline = realloc(c->first_line, nc * sizeof(*nline))))
      return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
    c->first_line = nline;
    c->cap = nc;
  }
  if (!(st = spaa_add_stack(c->p)) || spaa_stack_set_frames(c->p, st, c->fr, nf) ||
      spaa_strmap_put(&c->stacks, s, n, k, NULL) < 0)
    return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
  st->event = c->event;
  if (nf) {
    st->has_exclusive = 1;
    st->excl_frame = c->fr[0];
  }
  c->counts[k] = count;
  c->first_line[k] = line;
  return 0;
}

/* The count after the last space, s[0..n) (as Go's strconv.Atoi reads it: an optional sign,
 * then decimal digits). 0, or SPAA_E_INVALID. */
static int parse_count(const char *s, size_t n, size_t line, int64_t *out, struct spaa_err *err)
{
  char shown[48];
  size_t i = 0;
  int neg = 0;
  int64_t v = 0;
  if (n && (s[0] == '+' || s[0] == '-'))
    neg = s[i++] == '-';
  if (i == n)
    goto bad;
  for (; i < n; i++) {
    if (s[i] < '0' || s[i] > '9')
      goto bad;
    if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, s[i] - '0', &v))
      return LINE_ERR(SPAA_E_INVALID, line, "line %zu: the count is past 2^63 - 1", line);
  }
  if (neg && v)
    return LINE_ERR(SPAA_E_INVALID, line, "line %zu: the count -%lld is negative", line,
                    (long long)v);
  *out = v;
  return 0;
bad:
  spaa_utf8_clean(shown, sizeof(shown), s, n);
  return LINE_ERR(SPAA_E_INVALID, line, "line %zu: '%s' is not a count: a line is "
                  "'frame;frame;...;leaf COUNT', the count a decimal integer after the last "
                  "space", line, shown);
}

/* Text of line `line` that becomes frame names: valid UTF-8, no NUL. */
static int check_text(const char *s, size_t n, size_t line, struct spaa_err *err)
{
  size_t bad = spaa_utf8_check(s, n);
  const char *nul = memchr(s, 0, n);
  if (nul && (bad == SIZE_MAX || (size_t)(nul - s) < bad))
    return LINE_ERR(SPAA_E_INVALID, line, "line %zu: byte %zu is a NUL byte", line,
                    (size_t)(nul - s) + 1);
  if (bad != SIZE_MAX)
    return LINE_ERR(SPAA_E_INVALID, line, "line %zu: byte %zu is not valid UTF-8", line,
                    bad + 1);
  return 0;
}

/* Every line of buf into c. */
static int parse(struct fconv *c, const uint8_t *buf, size_t len, struct spaa_err *err)
{
  size_t pos = 0, line = 0;
  int rc;
  while (pos < len) {
    const char *s = (const char *)buf + pos, *sp;
    const uint8_t *nl = memchr(buf + pos, '\n', len - pos);
    size_t n = nl ? (size_t)(nl - buf) - pos : len - pos, sl;
    int64_t count = 1;
    pos += n + 1;
    line++;
    if (n && s[n - 1] == '\r')
      n--;
    if (n > SPAA_FOLDED_MAX_LINE)
      return LINE_ERR(SPAA_E_TOO_LARGE, line, "line %zu is longer than %u bytes", line,
                      SPAA_FOLDED_MAX_LINE);
    if (!n)
      continue;
    sl = n;
    if (!c->lines) {
      if (!(sp = memrchr(s, ' ', n)))
        return LINE_ERR(SPAA_E_INVALID, line, "line %zu has no count: a line is "
                        "'frame;frame;...;leaf COUNT', the count after the last space", line);
      sl = (size_t)(sp - s);
      if ((rc = parse_count(sp + 1, n - sl - 1, line, &count, err)))
        return rc;
    }
    if ((rc = check_text(s, sl, line, err)))
      return rc;
    if (count && (rc = add_stack(c, s, sl, count, line, err)))
      return rc;
  }
  return 0;
}

/* The header: one event of the type, its weights on every stack. */
static int finish(struct fconv *c, struct spaa_err *err)
{
  const struct spaa_folded__meta *m = c->m;
  struct spaa_header *h = &c->p->header;
  struct spaa_event *e;
  struct spaa_dso *d;
  size_t i;
  h->source_tool = "pyroscope"; /* the format is its /ingest's; the profiler is unknown */
  h->frame_order = SPAA_LEAF_TO_ROOT;
  h->id_mode = SPAA_IDS_CONTENT;
  if (!(e = spaa_add_event(c->p)))
    return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
  e->name = e->primary_metric = c->event;
  e->kind = m->type->kind;
  e->mode = "period";
  if (m->period) {
    e->mode = "frequency";
    e->has_frequency_hz = 1;
    e->frequency_hz = spaa_int(m->sample_rate);
  }
  if (c->p->n_frames) {
    if (!(d = spaa_add_dso(c->p)))
      return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
    d->id = DSO_ID;
    d->name = "[unknown]";
  }
  for (i = 0; i < c->p->n_stacks; i++) {
    struct spaa_stack *st = &c->p->stacks[i];
    int64_t v = c->counts[i], t = 0;
    size_t nw = m->period ? 2 : 1;
    if (m->period && __builtin_mul_overflow(v, m->period, &t))
      return LINE_ERR(SPAA_E_INVALID, c->first_line[i], "line %zu: %lld samples at %lld Hz "
                      "are more nanoseconds than 2^63 - 1", c->first_line[i], (long long)v,
                      (long long)m->sample_rate);
    if (spaa_weights_alloc(c->p, &st->weights, nw) ||
        (st->has_exclusive && spaa_weights_alloc(c->p, &st->excl_weights, nw)))
      return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
    if (m->period) {
      st->weights.v[0].metric = c->event;
      st->weights.v[0].value = spaa_int(t);
      st->weights.v[0].unit = "nanoseconds";
      st->weights.v[1].metric = "samples";
      st->weights.v[1].value = spaa_int(v);
      st->weights.v[1].unit = "count";
    } else {
      st->weights.v[0].metric = c->event;
      st->weights.v[0].value = spaa_int(v);
      st->weights.v[0].unit = m->type->unit;
    }
    if (st->has_exclusive)
      memcpy(st->excl_weights.v, st->weights.v, nw * sizeof(st->weights.v[0]));
  }
  return 0;
}

int spaa_convert_folded(const uint8_t *buf, size_t len, const struct spaa_convert_opts *o,
                        struct spaa_conv_list *out, struct spaa_err *err)
{
  struct spaa_folded__meta m;
  struct spaa_converted c, *slot;
  struct fconv fc;
  int rc;

  memset(&c, 0, sizeof(c));
  memset(&fc, 0, sizeof(fc));
  spaa_strmap_init(&fc.frames);
  spaa_strmap_init(&fc.stacks);
  if ((rc = spaa_folded__meta(o, &m, err)))
    goto out;
  if (len >= 2 && buf[0] == 0x1f && buf[1] == 0x8b) {
    rc = LINE_ERR(SPAA_E_INVALID, 1, "line 1: the body is gzip-compressed: send folded stacks "
                  "as text, with Content-Encoding: gzip when compressed");
    goto out;
  }
  fc.m = &m;
  fc.lines = o && o->folded && o->folded->lines;
  fc.event = m.period ? m.type->timer : m.type->type;
  if (!(fc.p = spaa_profile_new_metered(o ? o->meter : NULL))) {
    rc = spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
    goto out;
  }
  if ((rc = parse(&fc, buf, len, err)) || (rc = finish(&fc, err)))
    goto out;
  spaa_strmap_free(&fc.frames); /* what normalize needs memory for */
  spaa_strmap_free(&fc.stacks);
  c.profile = fc.p;
  fc.p = NULL;
  if ((rc = spaa_normalize(c.profile, err)) || (rc = spaa_folded__apply(o, &m, &c, err)))
    goto out;
  if (o && o->keep_original) {
    c.original = buf;
    c.original_len = len;
  }
  if (!(slot = spaa_conv_add(out))) {
    rc = spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
    goto out;
  }
  *slot = c;
  memset(&c, 0, sizeof(c));
out:
  spaa_profile_free(fc.p);
  spaa_strmap_free(&fc.frames);
  spaa_strmap_free(&fc.stacks);
  free(fc.counts);
  free(fc.first_line);
  free(fc.fr);
  spaa_profile_free(c.profile);
  free(c.service);
  json_decref(c.labels);
  json_decref(c.attrs);
  return rc;
}
