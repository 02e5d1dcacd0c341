/* SPAA reader: one pass over NDJSON (plain or zstd) into a struct spaa_profile, keeping every
 * key the model has no field for in the records' extra/context JSON objects. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/idmap.h"
#include "spaa/spaa_io.h"
#include "spaa/spaa_lines.h"
#include "spaa/spaa_rec.h"

struct reader {
  struct spaa_profile *p;
  struct spaa_strmap names; /* interned short strings (metrics, units, events, kinds) */
  int have_header;
};

/* One copy per distinct string in the profile's arena. NULL stays NULL. */
static const char *intern(struct reader *rd, const char *s)
{
  size_t n, at;
  const char *c;
  if (!s)
    return NULL;
  n = strlen(s);
  if (spaa_strmap_get(&rd->names, s, n, &at))
    return (const char *)(uintptr_t)at;
  if (!(c = spaa_strndup(rd->p, s, n)) || spaa_strmap_put(&rd->names, c, n, (uintptr_t)c, NULL) < 0)
    return NULL;
  return c;
}

#define NEED(x)                                                                               \
  do {                                                                                        \
    if (!(x))                                                                                 \
      return SPAA_E_NOMEM;                                                                    \
  } while (0)

static int copy_weights(struct reader *rd, struct spaa_weights *dst, const struct spaa_weights *src)
{
  size_t i;
  dst->v = NULL;
  dst->n = dst->cap = 0;
  if (!src->n)
    return 0;
  if (spaa_weights_alloc(rd->p, dst, src->n))
    return SPAA_E_NOMEM;
  dst->n = 0; /* counted up as they are filled */
  for (i = 0; i < src->n; i++) {
    dst->v[i].value = src->v[i].value;
    NEED(dst->v[i].metric = intern(rd, src->v[i].metric));
    dst->v[i].unit = NULL;
    if (src->v[i].unit)
      NEED(dst->v[i].unit = intern(rd, src->v[i].unit));
    dst->n++;
  }
  return 0;
}

static int add_dso(struct reader *rd, struct spaa_rec *r)
{
  struct spaa_dso *d = spaa_add_dso(rd->p);
  NEED(d);
  *d = r->dso;
  r->dso.extra = NULL;
  NEED(d->name = spaa_strdup(rd->p, r->dso.name));
  if (r->dso.build_id)
    NEED(d->build_id = spaa_strdup(rd->p, r->dso.build_id));
  return 0;
}

static int add_frame(struct reader *rd, struct spaa_rec *r)
{
  struct spaa_frame *f = spaa_add_frame(rd->p);
  NEED(f);
  *f = r->frame;
  r->frame.extra = NULL;
  NEED(f->func = spaa_strdup(rd->p, r->frame.func));
  NEED(f->kind = intern(rd, r->frame.kind));
  if (r->frame.symoff)
    NEED(f->symoff = spaa_strdup(rd->p, r->frame.symoff));
  if (r->frame.srcline)
    NEED(f->srcline = spaa_strdup(rd->p, r->frame.srcline));
  return 0;
}

static int add_thread(struct reader *rd, struct spaa_rec *r)
{
  struct spaa_thread *t = spaa_add_thread(rd->p);
  NEED(t);
  *t = r->thread;
  r->thread.extra = NULL;
  if (r->thread.comm)
    NEED(t->comm = spaa_strdup(rd->p, r->thread.comm));
  return 0;
}

static int add_stack(struct reader *rd, struct spaa_rec *r)
{
  const struct spaa_stack *src = &r->stack;
  struct spaa_stack *s = spaa_add_stack(rd->p);
  size_t i;
  int rc;
  NEED(s);
  memcpy(s->id, src->id, sizeof(s->id));
  s->has_exclusive = src->has_exclusive;
  s->excl_frame = src->excl_frame;
  s->context = r->stack.context;
  s->extra = r->stack.extra;
  r->stack.context = r->stack.extra = NULL;
  if ((rc = spaa_stack_set_frames(rd->p, s, src->frames, src->n_frames)))
    return rc;
  if (src->stack_type)
    NEED(s->stack_type = intern(rd, src->stack_type));
  if (src->event)
    NEED(s->event = intern(rd, src->event));
  if (src->n_related) {
    NEED(s->related = spaa_alloc(rd->p, src->n_related * sizeof(*s->related)));
    for (i = 0; i < src->n_related; i++) {
      NEED(s->related[i] = spaa_strdup(rd->p, src->related[i]));
      s->n_related++;
    }
  }
  if ((rc = copy_weights(rd, &s->weights, &src->weights)))
    return rc;
  return copy_weights(rd, &s->excl_weights, &src->excl_weights);
}

static int add_sample(struct reader *rd, struct spaa_rec *r)
{
  struct spaa_sample *s = spaa_add_sample(rd->p);
  NEED(s);
  *s = r->sample;
  r->sample.context = r->sample.extra = NULL;
  s->weights.v = NULL;
  s->weights.n = s->weights.cap = 0;
  NEED(s->stack_id = spaa_strdup(rd->p, r->sample.stack_id));
  if (r->sample.event)
    NEED(s->event = intern(rd, r->sample.event));
  return copy_weights(rd, &s->weights, &r->sample.weights);
}

static int add_window(struct reader *rd, struct spaa_rec *r, struct spaa_fault *f)
{
  struct spaa_window *w = spaa_add_window(rd->p);
  NEED(w);
  return spaa_rec_window(r->doc, rd->p, w, f);
}

/* The reader's error for a record fault: bad_json for syntax, invalid for the rest. */
static int fault_err(struct spaa_err *err, const struct spaa_fault *f, size_t line, size_t off)
{
  int code = f->rule && strcmp(f->rule, "json") == 0 ? SPAA_E_BAD_JSON : SPAA_E_INVALID;
  if (f->field[0])
    return spaa_err_set(err, code, line, off, "line %zu: %s: %s", line, f->field, f->msg);
  return spaa_err_set(err, code, line, off, "line %zu: %s", line, f->msg);
}

/* Add one parsed record to the model: 0, or an SPAA_E_* with err set (a record fault as
 * fault_err names it). */
static int reader_add(struct reader *rd, struct spaa_rec *r, size_t line, size_t off,
                      struct spaa_err *err)
{
  struct spaa_fault f;
  int rc = 0;
  memset(&f, 0, sizeof(f));
  switch (r->type) {
  case SPAA_REC_NONE:
  case SPAA_REC_OTHER:
    break; /* blank lines, and record types this version does not know */
  case SPAA_REC_HEADER:
    if (rd->have_header)
      return spaa_err_set(err, SPAA_E_INVALID, line, off, "line %zu: a second header record",
                          line);
    rd->have_header = 1;
    rc = spaa_rec_header(r->doc, rd->p, &f);
    break;
  case SPAA_REC_DSO: rc = add_dso(rd, r); break;
  case SPAA_REC_FRAME: rc = add_frame(rd, r); break;
  case SPAA_REC_THREAD: rc = add_thread(rd, r); break;
  case SPAA_REC_STACK: rc = add_stack(rd, r); break;
  case SPAA_REC_SAMPLE: rc = add_sample(rd, r); break;
  case SPAA_REC_WINDOW: rc = add_window(rd, r, &f); break;
  }
  if (rc == -1)
    return fault_err(err, &f, line, off);
  if (rc)
    return spaa_err_set(err, SPAA_E_NOMEM, line, off, NULL);
  return 0;
}

static int reader_open(struct reader *rd, struct spaa_err *err)
{
  memset(rd, 0, sizeof(*rd));
  spaa_strmap_init(&rd->names);
  if (!(rd->p = spaa_profile_new()))
    return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
  return 0;
}

static void reader_close(struct reader *rd)
{
  spaa_profile_free(rd->p);
  rd->p = NULL;
  spaa_strmap_free(&rd->names);
}

int spaa_read(spaa_read_cb rdcb, void *rd_ctx, struct spaa_profile **out, struct spaa_err *err)
{
  struct reader rd;
  struct spaa_lines l;
  struct spaa_rec r;
  const char *line;
  size_t len, off = 0;
  int rc;

  *out = NULL;
  spaa_lines_init(&l, rdcb, rd_ctx);
  spaa_rec_init(&r, 1);
  if ((rc = reader_open(&rd, err)))
    goto out;
  while ((rc = spaa_lines_next(&l, &line, &len, err)) == 1) {
    off = l.bytes - len;
    rc = spaa_rec_parse(&r, line, len);
    if (rc == -1) {
      rc = fault_err(err, &r.fault, l.lineno, off);
      goto out;
    }
    if (rc) {
      rc = spaa_err_set(err, SPAA_E_NOMEM, l.lineno, off, NULL);
      goto out;
    }
    if ((rc = reader_add(&rd, &r, l.lineno, off, err)))
      goto out;
  }
  if (rc < 0)
    goto out;
  if (!rd.have_header) {
    rc = spaa_err_set(err, SPAA_E_INVALID, l.lineno ? l.lineno : 1, 0,
                      "no header record: not a SPAA file");
    goto out;
  }
  *out = rd.p;
  rd.p = NULL;
  rc = 0;
out:
  reader_close(&rd);
  spaa_lines_free(&l);
  spaa_rec_free(&r);
  return rc;
}

int spaa_read_buf(const void *buf, size_t len, struct spaa_profile **out, struct spaa_err *err)
{
  struct spaa_mem_src m = {buf, len, 0};
  return spaa_read(spaa_mem_read, &m, out, err);
}

/* ---- the reader behind the validator ------------------------------------------------------ */

struct checked {
  struct reader rd;
  const struct spaa_validate_stats *st; /* the validator's counts, read after each record */
  int building;                         /* no error yet: records still go into the model */
  int failed;                           /* the reader refused a record the validator passed */
  struct spaa_err *err;
  spaa_diag_cb cb;                      /* the caller's, may be NULL */
  void *cb_ctx;
  int seen;                             /* the first error below was reported */
  size_t first_line;
  char first[200];                      /* its message, rule and field */
};

static void checked_diag(void *ctx, const struct spaa_diag *d)
{
  struct checked *c = ctx;
  if (d->is_error && !c->seen) {
    c->seen = 1;
    c->first_line = d->line;
    snprintf(c->first, sizeof(c->first), "%s (rule %s%s%s)", d->msg, d->rule,
             d->field && *d->field ? ", field " : "", d->field ? d->field : "");
  }
  if (c->cb)
    c->cb(c->cb_ctx, d);
}

/* spaa__rec_cb: the record into the model while the validator has found no error; after the
 * first, the model is dropped and the validator goes on alone (for its counts and messages). */
static int checked_add(void *ctx, struct spaa_rec *r, size_t line, size_t off)
{
  struct checked *c = ctx;
  int rc;
  if (!c->building)
    return 0;
  if (c->st->errors) {
    c->building = 0;
    reader_close(&c->rd);
    return 0;
  }
  rc = reader_add(&c->rd, r, line, off, c->err);
  if (rc == SPAA_E_NOMEM)
    return rc;
  if (rc) { /* the validator refuses whatever the reader does: not expected */
    c->failed = rc;
    c->building = 0;
    reader_close(&c->rd);
  }
  return 0;
}

int spaa_read_checked(spaa_read_cb rdcb, void *rd_ctx, spaa_diag_cb cb, void *cb_ctx,
                      size_t max_errors, struct spaa_validate_stats *st, struct spaa_profile **out,
                      struct spaa_err *err)
{
  struct spaa_validate_stats local;
  struct checked c;
  int rc;

  *out = NULL;
  if (!st)
    st = &local;
  memset(&c, 0, sizeof(c));
  if ((rc = reader_open(&c.rd, err)))
    return rc;
  c.st = st;
  c.building = 1;
  c.err = err;
  c.cb = cb;
  c.cb_ctx = cb_ctx;
  rc = spaa__validate_each(rdcb, rd_ctx, checked_diag, &c, max_errors, st, 1, checked_add, &c);
  if (rc == SPAA_E_INVALID)
    spaa_err_set(err, rc, c.first_line, 0, "line %zu: %s", c.first_line, c.first);
  else if (rc && c.seen)
    spaa_err_set(err, rc, c.first_line, 0, "%s", c.first);
  else if (rc && err && !err->code)
    spaa_err_set(err, rc, 0, 0, NULL);
  else if (!rc && c.failed)
    rc = c.failed; /* err holds the reader's message */
  if (!rc) {
    *out = c.rd.p;
    c.rd.p = NULL;
  }
  reader_close(&c.rd);
  return rc;
}

int spaa_read_checked_buf(const void *buf, size_t len, spaa_diag_cb cb, void *cb_ctx,
                          size_t max_errors, struct spaa_validate_stats *st,
                          struct spaa_profile **out, struct spaa_err *err)
{
  struct spaa_mem_src m = {buf, len, 0};
  return spaa_read_checked(spaa_mem_read, &m, cb, cb_ctx, max_errors, st, out, err);
}
