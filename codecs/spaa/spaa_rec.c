/* Parsing one SPAA record into the model's structs (see spaa_rec.h). */
#include "spaa/spaa_rec.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hex.h"
#include "base/jscan.h"

#define KEY(lit) (klen == sizeof(lit) - 1 && memcmp(key, lit, sizeof(lit) - 1) == 0)

static int faultf(struct spaa_fault *f, const char *rule, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int faultf(struct spaa_fault *f, const char *rule, const char *field, const char *fmt, ...)
{
  va_list ap;
  f->rule = rule;
  snprintf(f->field, sizeof(f->field), "%s", field ? field : "");
  va_start(ap, fmt);
  vsnprintf(f->msg, sizeof(f->msg), fmt, ap);
  va_end(ap);
  return -1;
}

/* 0 when `key` is new in ks (and now in it), 1 when it was there, SPAA_E_NOMEM. */
static int key_once(struct spaa_keyset *ks, const char *key, size_t klen)
{
  size_t i;
  int rc;
  if (ks->n < SPAA_REC_FEW_KEYS) {
    for (i = 0; i < ks->n; i++)
      if (ks->len[i] == klen && memcmp(ks->k[i], key, klen) == 0)
        return 1;
    ks->k[ks->n] = key;
    ks->len[ks->n++] = klen;
    return 0;
  }
  if (ks->n == SPAA_REC_FEW_KEYS)
    for (i = 0; i < SPAA_REC_FEW_KEYS; i++)
      if (spaa_strmap_put(&ks->many, ks->k[i], ks->len[i], 0, NULL) < 0)
        return SPAA_E_NOMEM;
  rc = spaa_strmap_put(&ks->many, key, klen, 0, NULL);
  if (rc == 0)
    ks->n++;
  return rc < 0 ? SPAA_E_NOMEM : rc;
}

static void keys_reset(struct spaa_keyset *ks)
{
  if (ks->n > SPAA_REC_FEW_KEYS)
    spaa_strmap_free(&ks->many);
  ks->n = 0;
}

/* The key check of one member: 0, -1 with the fault set, or SPAA_E_NOMEM. */
static int dup_fault(struct spaa_rec *r, struct spaa_keyset *ks, const char *where,
                     const char *key, size_t klen)
{
  char field[64];
  int rc = key_once(ks, key, klen);
  if (rc <= 0)
    return rc;
  snprintf(field, sizeof(field), "%s%.*s", where, (int)(klen < 48 ? klen : 48), key);
  return faultf(&r->fault, "duplicate-key", field, "the key \"%s\" is given twice", field);
}

/* A syntax error from the scanner. */
static int jfault(struct spaa_rec *r, struct spaa_jscan *s)
{
  return faultf(&r->fault, "json", "", "%s at column %zu",
                s->err ? s->err : "malformed JSON", s->err_off + 1);
}

static const char *jtype_name(enum spaa_jtype t)
{
  switch (t) {
  case SPAA_J_OBJ: return "an object";
  case SPAA_J_ARR: return "an array";
  case SPAA_J_STR: return "a string";
  case SPAA_J_NUM: return "a number";
  case SPAA_J_TRUE: case SPAA_J_FALSE: return "a boolean";
  case SPAA_J_NULL: return "null";
  default: return "no value";
  }
}

/* Check the next value's kind; a mismatch is a "type" fault (a syntax error a "json" one). */
static int want(struct spaa_rec *r, struct spaa_jscan *s, enum spaa_jtype t, const char *field,
                const char *what)
{
  enum spaa_jtype got = spaa_jscan_peek(s);
  if (got == t || (t == SPAA_J_TRUE && got == SPAA_J_FALSE))
    return 0;
  if (got == SPAA_J_BAD)
    return faultf(&r->fault, "json", field, "value expected at column %zu",
                  (size_t)(s->p - s->base) + 1);
  return faultf(&r->fault, "type", field, "expected %s, got %s", what, jtype_name(got));
}

static int f_str(struct spaa_rec *r, struct spaa_jscan *s, const char *field, const char **v)
{
  size_t n;
  if (want(r, s, SPAA_J_STR, field, "a string"))
    return -1;
  return spaa_jscan_str(s, v, &n) ? jfault(r, s) : 0;
}

static int f_bool(struct spaa_rec *r, struct spaa_jscan *s, const char *field, int *v)
{
  if (want(r, s, SPAA_J_TRUE, field, "true or false"))
    return -1;
  return spaa_jscan_bool(s, v) ? jfault(r, s) : 0;
}

/* f_bool into a one-byte flag of a record */
static int f_flag(struct spaa_rec *r, struct spaa_jscan *s, const char *field, unsigned char *v)
{
  int b = 0, rc = f_bool(r, s, field, &b);
  *v = (unsigned char)(b != 0);
  return rc;
}

static int f_num(struct spaa_rec *r, struct spaa_jscan *s, const char *field, struct spaa_num *v)
{
  if (want(r, s, SPAA_J_NUM, field, "a number"))
    return -1;
  return spaa_jscan_num(s, v) ? jfault(r, s) : 0;
}

static int f_i64(struct spaa_rec *r, struct spaa_jscan *s, const char *field, int64_t *v)
{
  struct spaa_num n;
  if (f_num(r, s, field, &n))
    return -1;
  if (n.is_float)
    return faultf(&r->fault, "type", field, "expected an integer, got a fraction or exponent");
  *v = n.i;
  return 0;
}

static int f_u64(struct spaa_rec *r, struct spaa_jscan *s, const char *field, uint64_t *v)
{
  struct spaa_num n;
  const char *at;
  if (want(r, s, SPAA_J_NUM, field, "an integer"))
    return -1;
  at = s->p;
  if (!spaa_jscan_u64(s, v))
    return 0;
  /* say whether it was a syntax error or a value out of range */
  s->err = NULL;
  s->p = at;
  if (spaa_jscan_num(s, &n))
    return jfault(r, s);
  return faultf(&r->fault, "bad-value", field, "expected a non-negative integer below 2^64");
}

/* "0x1a2b" (1-16 hex digits) or a plain integer. */
static int f_hex(struct spaa_rec *r, struct spaa_jscan *s, const char *field, uint64_t *v)
{
  const char *str;
  size_t n;
  if (spaa_jscan_peek(s) == SPAA_J_NUM)
    return f_u64(r, s, field, v);
  if (f_str(r, s, field, &str))
    return -1;
  n = strlen(str);
  if (n < 3 || str[0] != '0' || (str[1] != 'x' && str[1] != 'X') ||
      spaa_hex_parse_u64(str + 2, n - 2, v))
    return faultf(&r->fault, "bad-value", field, "expected \"0x\" and 1 to 16 hex digits");
  return 0;
}

/* The value at the cursor as a new JSON value (NULL with the fault set). */
static json_t *f_json(struct spaa_rec *r, struct spaa_jscan *s, const char *field)
{
  const char *a, *b, *str;
  size_t n;
  struct spaa_num num;
  json_error_t e;
  json_t *v;
  switch (spaa_jscan_peek(s)) {
  case SPAA_J_STR:
    if (spaa_jscan_str(s, &str, &n))
      break;
    if (!(v = json_stringn(str, n)))
      faultf(&r->fault, "bad-value", field, "string is not valid UTF-8");
    return v;
  case SPAA_J_NUM:
    if (spaa_jscan_num(s, &num))
      break;
    if (!(v = num.is_float ? json_real(num.f) : json_integer(num.i)))
      faultf(&r->fault, "bad-value", field, "number cannot be represented");
    return v;
  case SPAA_J_TRUE:
  case SPAA_J_FALSE:
  case SPAA_J_NULL:
  case SPAA_J_OBJ:
  case SPAA_J_ARR:
    if (spaa_jscan_skip(s, &a, &b))
      break;
    v = json_loadb(a, (size_t)(b - a), JSON_DECODE_ANY, &e);
    if (!v)
      faultf(&r->fault, "json", field, "%s", e.text);
    return v;
  default:
    break;
  }
  jfault(r, s);
  return NULL;
}

/* Unknown member `key`: into *obj when keeping JSON, else skipped. */
static int f_extra(struct spaa_rec *r, struct spaa_jscan *s, json_t **obj, const char *key)
{
  json_t *v;
  if (!r->want_json)
    return spaa_jscan_skip(s, NULL, NULL) ? jfault(r, s) : 0;
  if (!(v = f_json(r, s, key)))
    return -1;
  if (!*obj && !(*obj = json_object())) {
    json_decref(v);
    return SPAA_E_NOMEM;
  }
  if (json_object_set_new(*obj, key, v))
    return SPAA_E_NOMEM;
  return 0;
}

/* Prefix the fault's field with "<field>[i]." (paths are only built when something failed). */
static int wfault(struct spaa_rec *r, const char *field, size_t i)
{
  char path[2 * sizeof(r->fault.field) + 32];
  size_t n;
  snprintf(path, sizeof(path), "%s[%zu]%s%s", field, i, r->fault.field[0] ? "." : "",
           r->fault.field);
  n = strlen(path);
  if (n >= sizeof(r->fault.field))
    n = sizeof(r->fault.field) - 1;
  memcpy(r->fault.field, path, n);
  r->fault.field[n] = 0;
  return -1;
}

/* [{"metric":..,"value":..,"unit":..},...] into w (strings in the scratch). */
static int f_weights(struct spaa_rec *r, struct spaa_jscan *s, const char *field,
                     struct spaa_weights *w)
{
  const char *key;
  size_t klen;
  int k, more;
  w->n = 0;
  if (want(r, s, SPAA_J_ARR, field, "an array of weights") || spaa_jscan_arr_begin(s))
    return r->fault.rule ? -1 : jfault(r, s);
  while ((more = spaa_jscan_arr_next(s)) == 1) {
    struct spaa_weight *e;
    int has_metric = 0, has_value = 0;
    if (w->n == w->cap) {
      size_t nc = w->cap ? (size_t)w->cap * 2 : 4;
      struct spaa_weight *nv = nc <= UINT32_MAX ? realloc(w->v, nc * sizeof(*nv)) : NULL;
      if (!nv)
        return SPAA_E_NOMEM;
      w->v = nv;
      w->cap = (uint32_t)nc;
    }
    e = &w->v[w->n];
    memset(e, 0, sizeof(*e));
    if (want(r, s, SPAA_J_OBJ, "", "a weight object") || spaa_jscan_obj_begin(s))
      return r->fault.rule ? wfault(r, field, w->n) : jfault(r, s);
    while ((k = spaa_jscan_obj_key(s, &key, &klen)) == 1) {
      int rc = 0;
      if (KEY("metric")) {
        rc = f_str(r, s, "metric", &e->metric);
        has_metric = 1;
      } else if (KEY("value")) {
        rc = f_num(r, s, "value", &e->value);
        has_value = 1;
      } else if (KEY("unit")) {
        rc = f_str(r, s, "unit", &e->unit);
      } else if (spaa_jscan_skip(s, NULL, NULL)) {
        return jfault(r, s);
      }
      if (rc)
        return wfault(r, field, w->n);
    }
    if (k < 0)
      return jfault(r, s);
    if (!has_metric || !has_value) {
      faultf(&r->fault, "field-missing", has_metric ? "value" : "metric",
             "a weight needs a metric and a value");
      return wfault(r, field, w->n);
    }
    w->n++;
  }
  return more < 0 ? jfault(r, s) : 0;
}

int spaa_ctx_key_known(const char *key, size_t klen)
{
  if (klen >= 2 && key[0] == 'x' && key[1] == '_')
    return 1;
  switch (klen) {
  case 3: return KEY("pid") || KEY("tid") || KEY("cpu") || KEY("uid");
  case 4: return KEY("comm");
  case 5: return KEY("event") || KEY("probe");
  case 8: return KEY("execname") || KEY("zonename");
  case 12: return KEY("trace_fields");
  default: return 0;
  }
}

/* A context object: "event" into *event, the rest into *ctx (when keeping JSON). */
static int f_context(struct spaa_rec *r, struct spaa_jscan *s, const char **event, json_t **ctx)
{
  const char *key;
  size_t klen;
  int k, rc;
  if (want(r, s, SPAA_J_OBJ, "context", "an object") || spaa_jscan_obj_begin(s))
    return r->fault.rule ? -1 : jfault(r, s);
  while ((k = spaa_jscan_obj_key(s, &key, &klen)) == 1) {
    if ((rc = dup_fault(r, &r->ctx_keys, "context.", key, klen)))
      return rc;
    if (event && KEY("event")) {
      if (f_str(r, s, "context.event", event))
        return -1;
      continue;
    }
    if (!spaa_ctx_key_known(key, klen)) {
      if (!r->unknown_ctx)
        r->unknown_ctx = key;
      r->n_unknown_ctx++;
    }
    if (!r->want_json) {
      if (spaa_jscan_skip(s, NULL, NULL))
        return jfault(r, s);
    } else if ((rc = f_extra(r, s, ctx, key))) {
      return rc;
    }
  }
  if (k < 0)
    return jfault(r, s);
  if (r->want_json && !*ctx && !event && !(*ctx = json_object()))
    return SPAA_E_NOMEM; /* a sample's {} context stays an object */
  return 0;
}

static int dso_key(struct spaa_rec *r, struct spaa_jscan *s, const char *key, size_t klen)
{
  struct spaa_dso *d = &r->dso;
  if (KEY("id")) {
    r->present |= SPAA_HAS_ID;
    return f_u64(r, s, "id", &d->id);
  }
  if (KEY("name")) {
    r->present |= SPAA_HAS_NAME;
    return f_str(r, s, "name", &d->name);
  }
  if (KEY("build_id"))
    return f_str(r, s, "build_id", &d->build_id);
  if (KEY("is_kernel"))
    return f_bool(r, s, "is_kernel", &d->is_kernel);
  if (KEY("x_mapping")) {
    int k, got = 0;
    if (want(r, s, SPAA_J_OBJ, "x_mapping", "an object") || spaa_jscan_obj_begin(s))
      return r->fault.rule ? -1 : jfault(r, s);
    while ((k = spaa_jscan_obj_key(s, &key, &klen)) == 1) {
      int rc;
      if (KEY("start"))
        rc = f_hex(r, s, "x_mapping.start", &d->map_start), got |= 1;
      else if (KEY("limit"))
        rc = f_hex(r, s, "x_mapping.limit", &d->map_limit), got |= 2;
      else if (KEY("offset"))
        rc = f_hex(r, s, "x_mapping.offset", &d->map_offset), got |= 4;
      else
        rc = spaa_jscan_skip(s, NULL, NULL) ? jfault(r, s) : 0;
      if (rc)
        return rc;
    }
    if (k < 0)
      return jfault(r, s);
    if (got != 7)
      return faultf(&r->fault, "field-missing", "x_mapping",
                    "x_mapping needs start, limit and offset");
    d->has_mapping = 1;
    return 0;
  }
  return f_extra(r, s, &d->extra, key);
}

static int frame_key(struct spaa_rec *r, struct spaa_jscan *s, const char *key, size_t klen)
{
  struct spaa_frame *f = &r->frame;
  switch (klen) {
  case 2:
    if (KEY("id")) {
      r->present |= SPAA_HAS_ID;
      return f_u64(r, s, "id", &f->id);
    }
    if (KEY("ip")) {
      f->has_ip = 1;
      return f_hex(r, s, "ip", &f->ip);
    }
    break;
  case 3:
    if (KEY("dso")) {
      f->has_dso = 1;
      return f_u64(r, s, "dso", &f->dso);
    }
    break;
  case 4:
    if (KEY("func")) {
      r->present |= SPAA_HAS_FUNC;
      return f_str(r, s, "func", &f->func);
    }
    if (KEY("kind")) {
      r->present |= SPAA_HAS_KIND;
      return f_str(r, s, "kind", &f->kind);
    }
    break;
  case 6:
    if (KEY("symoff"))
      return f_str(r, s, "symoff", &f->symoff);
    break;
  case 7:
    if (KEY("srcline"))
      return f_str(r, s, "srcline", &f->srcline);
    if (KEY("inlined"))
      return f_flag(r, s, "inlined", &f->inlined);
    break;
  case 12:
    if (KEY("inline_depth")) {
      uint64_t v;
      if (f_u64(r, s, "inline_depth", &v))
        return -1;
      if (v > UINT32_MAX)
        return faultf(&r->fault, "bad-value", "inline_depth", "inline_depth is too large");
      f->has_inline_depth = 1;
      f->inline_depth = (uint32_t)v;
      return 0;
    }
    break;
  case 13:
    if (KEY("func_resolved"))
      return f_flag(r, s, "func_resolved", &f->func_resolved);
    break;
  case 16:
    if (KEY("srcline_resolved"))
      return f_flag(r, s, "srcline_resolved", &f->srcline_resolved);
    break;
  }
  return f_extra(r, s, &f->extra, key);
}

static int thread_key(struct spaa_rec *r, struct spaa_jscan *s, const char *key, size_t klen)
{
  struct spaa_thread *t = &r->thread;
  if (KEY("pid")) {
    r->present |= SPAA_HAS_PID;
    return f_i64(r, s, "pid", &t->pid);
  }
  if (KEY("tid")) {
    r->present |= SPAA_HAS_TID;
    return f_i64(r, s, "tid", &t->tid);
  }
  if (KEY("comm"))
    return f_str(r, s, "comm", &t->comm);
  return f_extra(r, s, &t->extra, key);
}

/* A stack id: a string of at most 47 bytes, or a non-negative integer (as decimal text). */
static int f_stack_id(struct spaa_rec *r, struct spaa_jscan *s, const char *field, char *out,
                      size_t cap)
{
  const char *v;
  if (spaa_jscan_peek(s) == SPAA_J_NUM) {
    uint64_t n;
    if (f_u64(r, s, field, &n))
      return -1;
    snprintf(out, cap, "%" PRIu64, n);
    return 0;
  }
  if (f_str(r, s, field, &v))
    return -1;
  if (strlen(v) >= cap)
    return faultf(&r->fault, "bad-value", field, "stack id longer than %zu bytes", cap - 1);
  if (!v[0])
    return faultf(&r->fault, "bad-value", field, "stack id is empty");
  memcpy(out, v, strlen(v) + 1);
  return 0;
}

static int stack_frames(struct spaa_rec *r, struct spaa_jscan *s)
{
  struct spaa_stack *st = &r->stack;
  int more;
  char fb[48];
  st->n_frames = 0;
  if (want(r, s, SPAA_J_ARR, "frames", "an array of frame ids") || spaa_jscan_arr_begin(s))
    return r->fault.rule ? -1 : jfault(r, s);
  while ((more = spaa_jscan_arr_next(s)) == 1) {
    if (st->n_frames == r->cap_frames) {
      size_t nc = r->cap_frames ? r->cap_frames * 2 : 64;
      uint64_t *nf = realloc(st->frames, nc * sizeof(*nf));
      if (!nf)
        return SPAA_E_NOMEM;
      st->frames = nf;
      r->cap_frames = nc;
    }
    if (spaa_jscan_peek(s) == SPAA_J_NUM) {
      const char *at = s->p;
      if (!spaa_jscan_u64(s, &st->frames[st->n_frames])) {
        st->n_frames++;
        continue;
      }
      s->err = NULL;
      s->p = at;
    }
    /* not a frame id: let f_u64 say why */
    snprintf(fb, sizeof(fb), "frames[%zu]", st->n_frames);
    f_u64(r, s, fb, &st->frames[st->n_frames]);
    return -1;
    st->n_frames++;
  }
  r->present |= SPAA_HAS_FRAMES;
  return more < 0 ? jfault(r, s) : 0;
}

static int stack_key(struct spaa_rec *r, struct spaa_jscan *s, const char *key, size_t klen)
{
  struct spaa_stack *st = &r->stack;
  int k, more, rc;
  if (KEY("id")) {
    r->present |= SPAA_HAS_ID;
    return f_stack_id(r, s, "id", st->id, sizeof(st->id));
  }
  if (KEY("frames"))
    return stack_frames(r, s);
  if (KEY("weights")) {
    r->present |= SPAA_HAS_WEIGHTS;
    return f_weights(r, s, "weights", &st->weights);
  }
  if (KEY("context")) {
    r->present |= SPAA_HAS_CONTEXT;
    return f_context(r, s, &st->event, &st->context);
  }
  if (KEY("stack_type"))
    return f_str(r, s, "stack_type", &st->stack_type);
  if (KEY("exclusive")) {
    if (want(r, s, SPAA_J_OBJ, "exclusive", "an object") || spaa_jscan_obj_begin(s))
      return r->fault.rule ? -1 : jfault(r, s);
    while ((k = spaa_jscan_obj_key(s, &key, &klen)) == 1) {
      if (KEY("frame")) {
        if (f_u64(r, s, "exclusive.frame", &st->excl_frame))
          return -1;
        st->has_exclusive = 1;
      } else if (KEY("weights")) {
        r->present |= SPAA_HAS_EXCL_W;
        if ((rc = f_weights(r, s, "exclusive.weights", &st->excl_weights)))
          return rc;
      } else if (spaa_jscan_skip(s, NULL, NULL)) {
        return jfault(r, s);
      }
    }
    if (k < 0)
      return jfault(r, s);
    if (!st->has_exclusive)
      return faultf(&r->fault, "field-missing", "exclusive.frame", "exclusive needs a frame");
    return 0;
  }
  if (KEY("related_stacks")) {
    st->n_related = 0;
    if (want(r, s, SPAA_J_ARR, "related_stacks", "an array") || spaa_jscan_arr_begin(s))
      return r->fault.rule ? -1 : jfault(r, s);
    while ((more = spaa_jscan_arr_next(s)) == 1) {
      if (st->n_related == r->cap_related) {
        size_t nc = r->cap_related ? r->cap_related * 2 : 4;
        const char **nr = realloc(st->related, nc * sizeof(*nr));
        if (!nr)
          return SPAA_E_NOMEM;
        st->related = nr;
        r->cap_related = nc;
      }
      if (f_str(r, s, "", &st->related[st->n_related]))
        return wfault(r, "related_stacks", st->n_related);
      st->n_related++;
    }
    return more < 0 ? jfault(r, s) : 0;
  }
  return f_extra(r, s, &st->extra, key);
}

static int sample_key(struct spaa_rec *r, struct spaa_jscan *s, const char *key, size_t klen)
{
  struct spaa_sample *sm = &r->sample;
  if (KEY("stack_id")) {
    r->present |= SPAA_HAS_ID;
    if (spaa_jscan_peek(s) == SPAA_J_NUM) {
      uint64_t n;
      if (f_u64(r, s, "stack_id", &n))
        return -1;
      snprintf(r->sid, sizeof(r->sid), "%" PRIu64, n);
      sm->stack_id = r->sid;
      return 0;
    }
    return f_str(r, s, "stack_id", &sm->stack_id);
  }
  if (KEY("timestamp")) {
    sm->has_timestamp = 1;
    return f_num(r, s, "timestamp", &sm->timestamp);
  }
  if (KEY("pid")) {
    sm->has_pid = 1;
    return f_i64(r, s, "pid", &sm->pid);
  }
  if (KEY("tid")) {
    sm->has_tid = 1;
    return f_i64(r, s, "tid", &sm->tid);
  }
  if (KEY("cpu")) {
    sm->has_cpu = 1;
    return f_i64(r, s, "cpu", &sm->cpu);
  }
  if (KEY("event"))
    return f_str(r, s, "event", &sm->event);
  if (KEY("period")) {
    sm->has_period = 1;
    return f_num(r, s, "period", &sm->period);
  }
  if (KEY("x_weights"))
    return f_weights(r, s, "x_weights", &sm->weights);
  if (KEY("context"))
    return f_context(r, s, NULL, &sm->context);
  return f_extra(r, s, &sm->extra, key);
}

void spaa_rec_init(struct spaa_rec *r, int want_json)
{
  memset(r, 0, sizeof(*r));
  r->want_json = want_json;
}

/* Drop what the last record left (JSON not taken), keep the arrays. */
static void rec_reset(struct spaa_rec *r)
{
  struct spaa_stack *st = &r->stack;
  uint64_t *frames = st->frames;
  const char **related = st->related;
  struct spaa_weights w = st->weights, xw = st->excl_weights, sw = r->sample.weights;
  json_decref(r->doc);
  json_decref(r->dso.extra);
  json_decref(r->frame.extra);
  json_decref(r->thread.extra);
  json_decref(st->context);
  json_decref(st->extra);
  json_decref(r->sample.context);
  json_decref(r->sample.extra);
  r->doc = NULL;
  memset(&r->dso, 0, sizeof(r->dso));
  memset(&r->frame, 0, sizeof(r->frame));
  memset(&r->thread, 0, sizeof(r->thread));
  memset(st, 0, sizeof(*st));
  memset(&r->sample, 0, sizeof(r->sample));
  st->frames = frames;
  st->related = related;
  st->weights = w;
  st->excl_weights = xw;
  r->sample.weights = sw;
  st->weights.n = st->excl_weights.n = r->sample.weights.n = 0;
  r->dso.name = "";
  r->frame.func = "";
  r->frame.func_resolved = 1;
  r->frame.srcline_resolved = 1;
  r->frame.kind = "unknown";
  r->sample.stack_id = "";
  r->type = SPAA_REC_NONE;
  r->type_name[0] = 0;
  r->present = 0;
  r->unknown_ctx = NULL;
  r->n_unknown_ctx = 0;
  r->sid[0] = 0;
  keys_reset(&r->keys);
  keys_reset(&r->ctx_keys);
  r->fault.rule = NULL;
  r->fault.field[0] = 0;
  r->fault.msg[0] = 0;
}

void spaa_rec_free(struct spaa_rec *r)
{
  if (!r)
    return;
  rec_reset(r);
  free(r->stack.frames);
  free(r->stack.related);
  free(r->stack.weights.v);
  free(r->stack.excl_weights.v);
  free(r->sample.weights.v);
  free(r->scratch);
  memset(r, 0, sizeof(*r));
}

static const struct {
  const char *name;
  int type;
} rtypes[] = {
    {"stack", SPAA_REC_STACK},   {"frame", SPAA_REC_FRAME},   {"sample", SPAA_REC_SAMPLE},
    {"dso", SPAA_REC_DSO},       {"thread", SPAA_REC_THREAD}, {"window", SPAA_REC_WINDOW},
    {"header", SPAA_REC_HEADER},
};

static void set_type(struct spaa_rec *r, const char *t, size_t n)
{
  size_t i;
  r->type = SPAA_REC_OTHER;
  snprintf(r->type_name, sizeof(r->type_name), "%.*s", (int)n, t);
  for (i = 0; i < sizeof(rtypes) / sizeof(rtypes[0]); i++)
    if (strlen(rtypes[i].name) == n && memcmp(rtypes[i].name, t, n) == 0) {
      r->type = rtypes[i].type;
      return;
    }
}

/* Find "type": fast when it is the first key without escapes, else by a first pass. */
static int find_type(struct spaa_rec *r, const char *line, size_t len)
{
  struct spaa_jscan s;
  const char *key, *v;
  size_t klen, vlen, i;
  int k;
  if (len > 10 && memcmp(line, "{\"type\":\"", 9) == 0) {
    for (i = 9; i < len && i < 9 + 16; i++) {
      if (line[i] == '\\')
        break;
      if (line[i] == '"') {
        set_type(r, line + 9, i - 9);
        return 0;
      }
    }
  }
  spaa_jscan_init(&s, line, len, r->scratch, r->scratch_cap);
  if (spaa_jscan_peek(&s) != SPAA_J_OBJ)
    return s.p == s.end ? (r->type = SPAA_REC_NONE, 0)
                        : faultf(&r->fault, "json", "", "a record must be a JSON object");
  if (spaa_jscan_obj_begin(&s))
    return jfault(r, &s);
  while ((k = spaa_jscan_obj_key(&s, &key, &klen)) == 1) {
    if (KEY("type")) {
      if (want(r, &s, SPAA_J_STR, "type", "a string"))
        return -1;
      if (spaa_jscan_str(&s, &v, &vlen))
        return jfault(r, &s);
      set_type(r, v, vlen);
      return 0;
    }
    if (spaa_jscan_skip(&s, NULL, NULL))
      return jfault(r, &s);
  }
  if (k < 0)
    return jfault(r, &s);
  return faultf(&r->fault, "field-missing", "type", "every record needs a \"type\"");
}

typedef int (*key_fn)(struct spaa_rec *r, struct spaa_jscan *s, const char *key, size_t klen);

int spaa_rec_parse(struct spaa_rec *r, const char *line, size_t len)
{
  struct spaa_jscan s;
  const char *key;
  size_t klen;
  key_fn fn;
  int k, rc;
  rec_reset(r);
  if (len + 1 > r->scratch_cap) {
    size_t nc = r->scratch_cap ? r->scratch_cap : 4096;
    char *ns;
    while (nc < len + 1)
      nc *= 2;
    if (!(ns = realloc(r->scratch, nc)))
      return SPAA_E_NOMEM;
    r->scratch = ns;
    r->scratch_cap = nc;
  }
  if ((rc = find_type(r, line, len)))
    return rc;
  switch (r->type) {
  case SPAA_REC_NONE:
    return 0;
  case SPAA_REC_HEADER:
  case SPAA_REC_WINDOW: {
    json_error_t e;
    if (!(r->doc = json_loadb(line, len, JSON_REJECT_DUPLICATES, &e)))
      return faultf(&r->fault, "json", "", "%s at column %d", e.text, e.column);
    return 0;
  }
  case SPAA_REC_DSO: fn = dso_key; break;
  case SPAA_REC_FRAME: fn = frame_key; break;
  case SPAA_REC_THREAD: fn = thread_key; r->present |= SPAA_HAS_ID; break;
  case SPAA_REC_STACK: fn = stack_key; break;
  case SPAA_REC_SAMPLE: fn = sample_key; break;
  default: {
    /* unknown type: only check the syntax */
    spaa_jscan_init(&s, line, len, r->scratch, r->scratch_cap);
    if (spaa_jscan_skip(&s, NULL, NULL) || spaa_jscan_finish(&s))
      return jfault(r, &s);
    return 0;
  }
  }
  spaa_jscan_init(&s, line, len, r->scratch, r->scratch_cap);
  if (spaa_jscan_obj_begin(&s))
    return jfault(r, &s);
  while ((k = spaa_jscan_obj_key(&s, &key, &klen)) == 1) {
    if ((rc = dup_fault(r, &r->keys, "", key, klen)))
      return rc;
    if (KEY("type")) {
      if (spaa_jscan_skip(&s, NULL, NULL))
        return jfault(r, &s);
      continue;
    }
    if ((rc = fn(r, &s, key, klen)))
      return rc;
  }
  if (k < 0 || spaa_jscan_finish(&s))
    return jfault(r, &s);
  /* the fields a record cannot be placed without */
  if (r->type == SPAA_REC_THREAD && (r->present & (SPAA_HAS_PID | SPAA_HAS_TID)) !=
                                        (SPAA_HAS_PID | SPAA_HAS_TID))
    return faultf(&r->fault, "field-missing", r->present & SPAA_HAS_PID ? "tid" : "pid",
                  "a thread record needs a pid and a tid");
  if (!(r->present & SPAA_HAS_ID))
    return faultf(&r->fault, "field-missing", r->type == SPAA_REC_SAMPLE ? "stack_id" : "id",
                  "a %s record needs %s", r->type_name,
                  r->type == SPAA_REC_SAMPLE ? "a stack_id" : "an id");
  return 0;
}

/* ---- header and window, from jansson documents -------------------------------------- */

static int jnum(const json_t *v, struct spaa_num *n)
{
  if (json_is_integer(v))
    *n = spaa_int((int64_t)json_integer_value(v));
  else if (json_is_real(v))
    *n = spaa_float(json_real_value(v));
  else
    return -1;
  return 0;
}

/* A string member into the profile's arena; "type" fault when it is not a string. */
static int jstr(struct spaa_profile *p, const json_t *v, const char **out, struct spaa_fault *f,
                const char *field)
{
  if (!json_is_string(v))
    return faultf(f, "type", field, "expected a string");
  if (!(*out = spaa_strndup(p, json_string_value(v), json_string_length(v))))
    return SPAA_E_NOMEM;
  return 0;
}

static int jextra(json_t **obj, const char *k, json_t *v)
{
  if (!*obj && !(*obj = json_object()))
    return SPAA_E_NOMEM;
  return json_object_set(*obj, k, v) ? SPAA_E_NOMEM : 0;
}

static int header_event(const json_t *ev, size_t i, struct spaa_profile *p, struct spaa_fault *f)
{
  struct spaa_event *e;
  const char *k, *sk;
  json_t *v, *sv;
  char fb[64];
  int rc;
  snprintf(fb, sizeof(fb), "events[%zu]", i);
  if (!json_is_object(ev))
    return faultf(f, "type", fb, "expected an event object");
  if (!(e = spaa_add_event(p)))
    return SPAA_E_NOMEM;
  json_object_foreach((json_t *)ev, k, v) {
    if (strcmp(k, "name") == 0 || strcmp(k, "kind") == 0) {
      snprintf(fb, sizeof(fb), "events[%zu].%s", i, k);
      if ((rc = jstr(p, v, k[0] == 'n' ? &e->name : &e->kind, f, fb)))
        return rc;
    } else if (strcmp(k, "sampling") == 0) {
      snprintf(fb, sizeof(fb), "events[%zu].sampling", i);
      if (!json_is_object(v))
        return faultf(f, "type", fb, "expected an object");
      json_object_foreach(v, sk, sv) {
        snprintf(fb, sizeof(fb), "events[%zu].sampling.%s", i, sk);
        if (strcmp(sk, "mode") == 0) {
          if ((rc = jstr(p, sv, &e->mode, f, fb)))
            return rc;
        } else if (strcmp(sk, "primary_metric") == 0) {
          if ((rc = jstr(p, sv, &e->primary_metric, f, fb)))
            return rc;
        } else if (strcmp(sk, "sample_period") == 0) {
          if (jnum(sv, &e->sample_period))
            return faultf(f, "type", fb, "expected a number");
          e->has_sample_period = 1;
        } else if (strcmp(sk, "frequency_hz") == 0) {
          if (jnum(sv, &e->frequency_hz))
            return faultf(f, "type", fb, "expected a number");
          e->has_frequency_hz = 1;
        } else if ((rc = jextra(&e->sampling_extra, sk, sv))) {
          return rc;
        }
      }
    } else if ((rc = jextra(&e->extra, k, v))) {
      return rc;
    }
  }
  if (!e->name) {
    snprintf(fb, sizeof(fb), "events[%zu].name", i);
    return faultf(f, "field-missing", fb, "every event needs a name");
  }
  return 0;
}

int spaa_rec_header(const json_t *doc, struct spaa_profile *p, struct spaa_fault *f)
{
  struct spaa_header *h = &p->header;
  const char *k, *str;
  json_t *v;
  size_t i;
  int rc, seen_order = 0;
  if (!json_is_object(doc))
    return faultf(f, "json", "", "a record must be a JSON object");
  v = json_object_get(doc, "format");
  if (!json_is_string(v) || strcmp(json_string_value(v), "spaa") != 0)
    return faultf(f, "header-format", "format", "format must be \"spaa\"");
  v = json_object_get(doc, "version");
  if (!json_is_string(v) || strncmp(json_string_value(v), "1.", 2) != 0)
    return faultf(f, "header-version", "version", "version must be a string \"1.x\" (\"1.0\")");
  json_object_foreach((json_t *)doc, k, v) {
    if (!strcmp(k, "type") || !strcmp(k, "format") || !strcmp(k, "version"))
      continue;
    if (!strcmp(k, "source_tool")) {
      if ((rc = jstr(p, v, &h->source_tool, f, k)))
        return rc;
    } else if (!strcmp(k, "frame_order")) {
      if (!json_is_string(v))
        return faultf(f, "type", k, "expected a string");
      str = json_string_value(v);
      if (!strcmp(str, "leaf_to_root"))
        h->frame_order = SPAA_LEAF_TO_ROOT;
      else if (!strcmp(str, "root_to_leaf"))
        h->frame_order = SPAA_ROOT_TO_LEAF;
      else
        return faultf(f, "bad-enum", k, "frame_order must be leaf_to_root or root_to_leaf");
      seen_order = 1;
    } else if (!strcmp(k, "stack_id_mode")) {
      if (!json_is_string(v))
        return faultf(f, "type", k, "expected a string");
      str = json_string_value(v);
      if (!strcmp(str, "content_addressable"))
        h->id_mode = SPAA_IDS_CONTENT;
      else if (!strcmp(str, "local"))
        h->id_mode = SPAA_IDS_LOCAL;
      else
        return faultf(f, "bad-enum", k, "stack_id_mode must be content_addressable or local");
    } else if (!strcmp(k, "events")) {
      if (!json_is_array(v))
        return faultf(f, "type", k, "expected an array of events");
      for (i = 0; i < json_array_size(v); i++)
        if ((rc = header_event(json_array_get(v, i), i, p, f)))
          return rc;
    } else if (!strcmp(k, "time_range")) {
      json_t *a = json_object_get(v, "start"), *b = json_object_get(v, "end"),
             *u = json_object_get(v, "unit");
      if (!json_is_object(v))
        return faultf(f, "type", k, "expected an object");
      if (jnum(a, &h->start))
        return faultf(f, a ? "type" : "field-missing", "time_range.start", "expected a number");
      if (jnum(b, &h->end))
        return faultf(f, b ? "type" : "field-missing", "time_range.end", "expected a number");
      if (u && (rc = jstr(p, u, &h->time_unit, f, "time_range.unit")))
        return rc;
      h->has_time_range = 1;
    } else if (!strcmp(k, "source")) {
      json_decref(h->source);
      h->source = json_incref(v);
    } else if ((rc = jextra(&h->extra, k, v))) {
      return rc;
    }
  }
  if (!seen_order)
    return faultf(f, "field-missing", "frame_order", "the header must declare frame_order");
  return 0;
}

int spaa_rec_window(const json_t *doc, struct spaa_profile *p, struct spaa_window *w,
                    struct spaa_fault *f)
{
  const char *k;
  json_t *v;
  int rc;
  char num[24];
  if (!json_is_object(doc))
    return faultf(f, "json", "", "a record must be a JSON object");
  json_object_foreach((json_t *)doc, k, v) {
    if (!strcmp(k, "type"))
      continue;
    if (!strcmp(k, "id")) {
      if (json_is_integer(v) && json_integer_value(v) >= 0) {
        snprintf(num, sizeof(num), "%" PRId64, (int64_t)json_integer_value(v));
        if (!(w->id = spaa_strdup(p, num)))
          return SPAA_E_NOMEM;
      } else if ((rc = jstr(p, v, &w->id, f, k))) {
        return rc;
      }
    } else if (!strcmp(k, "start") || !strcmp(k, "end")) {
      if (jnum(v, k[0] == 's' ? &w->start : &w->end))
        return faultf(f, "type", k, "expected a number");
    } else if (!strcmp(k, "unit")) {
      if ((rc = jstr(p, v, &w->unit, f, k)))
        return rc;
    } else if (!strcmp(k, "by_stack")) {
      if (!json_is_array(v))
        return faultf(f, "type", k, "expected an array");
      json_decref(w->by_stack);
      w->by_stack = json_incref(v);
    } else if ((rc = jextra(&w->extra, k, v))) {
      return rc;
    }
  }
  return 0;
}
