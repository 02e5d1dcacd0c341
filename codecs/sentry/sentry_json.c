/* Sentry profile payloads read without a JSON tree (see sentry_int.h): the payload checked
 * whole as jansson would parse it, a slim root of the members the rules read, and the large
 * arrays walked in place. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jscan.h"
#include "sentry/sentry_int.h"

/* jansson's JSON_PARSER_MAX_DEPTH: a value nests at most this deep (the root at depth 1). */
#define JSON_MAX_DEPTH 2048

/* The root members the rules and the builder read: the slim root holds these and no other.
 * The ones after R_PRESENCE are read for their presence only (Android's legacy metadata, a
 * trace's sampled_profile): null stands for their values, which may be large. */
static const char *const root_keys[] = {
    "profile", "event_id", "profile_id", "chunk_id", "platform", "version", "device", "os",
    "runtime", "timestamp", "release", "environment", "dist", "measurements", "debug_meta",
    "transaction", "transactions", "client_sdk", "profiler_id", "transaction_metadata",
    "transaction_tags",
    /* R_PRESENCE */
    "sampled_profile", "android_api_level", "device_cpu_frequencies", "device_is_emulator",
    "device_locale", "device_manufacturer", "device_model", "device_os_name", "device_os_version",
    "device_physical_memory_bytes", "version_code", "version_name"};
#define N_ROOT (sizeof(root_keys) / sizeof(root_keys[0]))
#define R_PROFILE 0
#define R_PRESENCE 21
_Static_assert(N_ROOT == R_PRESENCE + 12, "R_PRESENCE marks the presence-only keys");

/* The members of "profile" the decoder reads: the first three in place, the others (small
 * maps) parsed into the slim root. */
static const char *const prof_keys[] = {"samples", "stacks", "frames", "thread_metadata",
                                        "queue_metadata"};
#define N_PROF (sizeof(prof_keys) / sizeof(prof_keys[0]))
enum { P_SAMPLES, P_STACKS, P_FRAMES };

static const char *const header_keys[] = {"event_id", "dsn", "sdk", "sent_at", "trace"};

/* ---- small readers over checked bytes ----------------------------------------------------- */

static const char *skip_ws(const char *p, const char *e)
{
  while (p < e && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
    p++;
  return p;
}

/* Whitespace of a checked payload: a NUL byte there is one jansson skips (see walk_nul). */
static const char *skip_gap(const char *p, const char *e)
{
  while (p < e && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == 0))
    p++;
  return p;
}

/* p at a string's opening quote: one past its closing quote. */
static const char *str_end(const char *p, const char *e)
{
  for (p++; p < e; p++) {
    if (*p == '\\')
      p++;
    else if (*p == '"')
      return p + 1;
  }
  return e;
}

/* p at a value's first byte: one past its last. */
static const char *val_end(const char *p, const char *e)
{
  size_t depth = 0;
  switch (*p) {
  case '"':
    return str_end(p, e);
  case '{':
  case '[':
    for (; p < e; p++) {
      if (*p == '"')
        p = str_end(p, e) - 1;
      else if (*p == '{' || *p == '[')
        depth++;
      else if ((*p == '}' || *p == ']') && --depth == 0)
        return p + 1;
    }
    return e;
  default: /* a number or a literal: up to the next delimiter (or a NUL jansson skips) */
    while (p < e && *p != ',' && *p != '}' && *p != ']' && *p != ' ' && *p != '\t' &&
           *p != '\n' && *p != '\r' && *p != 0)
      p++;
    return p;
  }
}

enum sentry__jkind sentry__kind(struct sentry__span v)
{
  if (!v.p)
    return SENTRY__J_ABSENT;
  switch (v.p[0]) {
  case '{': return SENTRY__J_OBJ;
  case '[': return SENTRY__J_ARR;
  case '"': return SENTRY__J_STR;
  case 't': return SENTRY__J_TRUE;
  case 'f': return SENTRY__J_FALSE;
  case 'n': return SENTRY__J_NULL;
  default:
    /* jansson: a fraction or an exponent makes a real */
    return memchr(v.p, '.', v.n) || memchr(v.p, 'e', v.n) || memchr(v.p, 'E', v.n)
               ? SENTRY__J_REAL
               : SENTRY__J_INT;
  }
}

int64_t sentry__int(struct sentry__span v)
{
  uint64_t mag = 0;
  size_t i = v.p[0] == '-';
  for (; i < v.n; i++)
    mag = mag * 10 + (uint64_t)(v.p[i] - '0');
  /* the check kept it within int64: -2^63 is the one magnitude past INT64_MAX */
  return v.p[0] == '-' ? (int64_t)(0 - mag) : (int64_t)mag;
}

double sentry__real(struct sentry__span v)
{
  char tmp[64];
  if (v.n < sizeof(tmp)) {
    memcpy(tmp, v.p, v.n);
    tmp[v.n] = 0;
    return strtod(tmp, NULL);
  }
  /* a long token read in place: strtod stops at the byte after it, a delimiter the check
   * found there (a number is never a root value, so one always follows) */
  return strtod(v.p, NULL);
}

void sentry__iter_init(struct sentry__iter *it, struct sentry__span v)
{
  it->p = v.p + 1;
  it->end = v.p + v.n - 1; /* the closing bracket */
  it->first = 1;
}

/* Before the next element or member: 0 at the end, else 1 with it->p at it. */
static int iter_step(struct sentry__iter *it)
{
  const char *p = skip_gap(it->p, it->end);
  if (p >= it->end)
    return 0;
  if (!it->first)
    p = skip_gap(p + 1, it->end); /* the comma */
  it->first = 0;
  it->p = p;
  return 1;
}

int sentry__iter_next(struct sentry__iter *it, struct sentry__span *e)
{
  const char *q;
  if (!iter_step(it))
    return 0;
  q = val_end(it->p, it->end);
  e->p = it->p;
  e->n = (size_t)(q - it->p);
  it->p = q;
  return 1;
}

int sentry__iter_member(struct sentry__iter *it, struct sentry__span *key, struct sentry__span *val)
{
  const char *q;
  if (!iter_step(it))
    return 0;
  q = str_end(it->p, it->end);
  key->p = it->p;
  key->n = (size_t)(q - it->p);
  q = skip_gap(skip_gap(q, it->end) + 1, it->end); /* the colon */
  val->p = q;
  it->p = val_end(q, it->end);
  val->n = (size_t)(it->p - q);
  return 1;
}

/* The longest escaped key that can name one of ours: 6 bytes per character. */
#define KEY_RAW_MAX 256

int sentry__key_index(struct sentry__span key, const char *const *keys, size_t n)
{
  const char *s = key.p + 1;
  size_t len = key.n - 2, i;
  char buf[KEY_RAW_MAX + 1];
  if (memchr(s, '\\', len)) { /* escaped: decoded first ("\u0070rofile" is "profile") */
    struct spaa_jscan js;
    if (key.n > KEY_RAW_MAX)
      return -1;
    spaa_jscan_init(&js, key.p, key.n, buf, sizeof(buf));
    if (spaa_jscan_str(&js, &s, &len))
      return -1;
  }
  for (i = 0; i < n; i++)
    if (keys[i][0] == s[0] && strlen(keys[i]) == len && memcmp(keys[i], s, len) == 0)
      return (int)i;
  return -1;
}

void sentry__fields(struct sentry__span obj, const char *const *keys, size_t n,
                    struct sentry__span *out)
{
  struct sentry__iter it;
  struct sentry__span k, v;
  int i;
  memset(out, 0, n * sizeof(*out));
  sentry__iter_init(&it, obj);
  while (sentry__iter_member(&it, &k, &v))
    if ((i = sentry__key_index(k, keys, n)) >= 0)
      out[i] = v; /* the last one, as jansson keeps it */
}

int sentry__str(struct sentry__span v, struct sentry__scratch *sc, const char **s, size_t *n)
{
  struct spaa_jscan js;
  if (!memchr(v.p + 1, '\\', v.n - 2)) {
    *s = v.p + 1;
    *n = v.n - 2;
    return 0;
  }
  if (sc->cap < v.n + 1) {
    char *np = realloc(sc->p, v.n + 1);
    if (!np)
      return SPAA_E_NOMEM;
    sc->p = np;
    sc->cap = v.n + 1;
  }
  spaa_jscan_init(&js, v.p, v.n, sc->p, sc->cap);
  return spaa_jscan_str(&js, s, n) ? SPAA_E_INTERNAL : 0;
}

void sentry__scratch_free(struct sentry__scratch *sc)
{
  free(sc->p);
  sc->p = NULL;
  sc->cap = 0;
}

/* ---- strings that never move ------------------------------------------------------------ */

struct sentry__strblk {
  struct sentry__strblk *next; /* older blocks */
  size_t used, cap;            /* bytes of b in use, and there */
  char b[];
};

const char *sentry__strs_put(struct sentry__strs *st, const char *s, size_t n)
{
  struct sentry__strblk *b = st->head;
  char *r;
  if (!b || b->cap - b->used < n + 1) {
    size_t cap = n + 1 > 4096 ? n + 1 : 4096;
    if (!(b = malloc(sizeof(*b) + cap)))
      return NULL;
    b->used = 0;
    b->cap = cap;
    b->next = st->head;
    st->head = b;
  }
  r = b->b + b->used;
  memcpy(r, s, n);
  r[n] = 0;
  b->used += n + 1;
  return r;
}

void sentry__strs_free(struct sentry__strs *st)
{
  while (st->head) {
    struct sentry__strblk *next = st->head->next;
    free(st->head);
    st->head = next;
  }
}

/* ---- the check: what jansson accepts, and the members we read ---------------------------- */

struct walk {
  const char *p, *end;
  struct spaa_jscan js;          /* strings and literals (the project's checks, jansson's rules) */
  size_t open;                   /* containers open */
  unsigned char is_obj[JSON_MAX_DEPTH + 1]; /* per open container (by depth): 1 an object */
  int root_obj;                  /* the root is an object: its members are recorded */
  int rkey;                      /* the root member being read: index in root_keys, or -1 */
  const char *rval;              /* its value's first byte */
  int in_prof;                   /* inside a root "profile" object */
  int pkey;                      /* its member being read: index in prof_keys, or -1 */
  const char *pval;              /* its value's first byte */
  size_t n, n_inner;             /* that value's elements, and theirs */
  struct sentry__arr cur[N_PROF];/* the members of the "profile" object being read */
  struct sentry__span root_v[N_ROOT]; /* the last occurrence of each root key */
  struct sentry__arr prof[N_PROF];    /* the members of the last "profile", if an object */
  int has_prof_obj;              /* the last "profile" was an object */
  int only_header_keys;          /* every root key is an envelope header key */
};

/* A number where jansson takes it: RFC 8259's grammar, an integer within int64, a real that
 * strtod does not overflow. 0 or -1. */
static int walk_number(struct walk *w)
{
  const char *a = w->p, *p = a, *e = w->end;
  uint64_t mag = 0;
  int neg = 0, is_int = 1, over = 0;
  if (*p == '-') {
    neg = 1;
    p++;
  }
  if (p >= e || *p < '0' || *p > '9')
    return -1;
  if (*p == '0') {
    p++;
  } else {
    for (; p < e && *p >= '0' && *p <= '9'; p++) {
      unsigned d = (unsigned)(*p - '0');
      if (mag > (UINT64_MAX - d) / 10)
        over = 1;
      else
        mag = mag * 10 + d;
    }
  }
  if (p < e && *p == '.') {
    is_int = 0;
    if (++p >= e || *p < '0' || *p > '9')
      return -1;
    while (p < e && *p >= '0' && *p <= '9')
      p++;
  }
  if (p < e && (*p == 'e' || *p == 'E')) {
    is_int = 0;
    if (++p < e && (*p == '+' || *p == '-'))
      p++;
    if (p >= e || *p < '0' || *p > '9')
      return -1;
    while (p < e && *p >= '0' && *p <= '9')
      p++;
  }
  w->p = p;
  if (is_int) /* "too big integer", "too big negative integer" */
    return over || mag > (uint64_t)INT64_MAX + (uint64_t)neg ? -1 : 0;
  if (p >= e)
    return -1; /* a number cannot end the input (and strtod must not read past it) */
  {
    struct sentry__span v = {a, (size_t)(p - a)};
    return isinf(sentry__real(v)) ? -1 : 0; /* "real number overflow" */
  }
}

/* A string (the project's string check: escapes, UTF-8, no control characters, no \u0000,
 * as jansson) or a literal, through the scanner. 0 or -1. */
static int walk_scalar(struct walk *w)
{
  w->js.p = w->p;
  if (spaa_jscan_skip(&w->js, NULL, NULL))
    return -1;
  w->p = w->js.p;
  return 0;
}

/* After a number or a literal: one NUL byte there is not seen by jansson (it reads one
 * character past such a token and puts it back, and a NUL put back reads as the end of its
 * buffer, so the next byte is read instead), so it is skipped here too. */
static void walk_nul(struct walk *w)
{
  if (w->p < w->end && *w->p == 0)
    w->p++;
}

/* An object key and its colon; records which member it is. 0 or -1. */
static int walk_key(struct walk *w)
{
  struct sentry__span k;
  if (w->p >= w->end || *w->p != '"')
    return -1;
  k.p = w->p;
  if (walk_scalar(w))
    return -1;
  k.n = (size_t)(w->p - k.p);
  w->p = skip_ws(w->p, w->end);
  if (w->p >= w->end || *w->p != ':')
    return -1;
  w->p = skip_ws(w->p + 1, w->end);
  if (w->open == 1 && w->root_obj) {
    w->rkey = sentry__key_index(k, root_keys, N_ROOT);
    if (sentry__key_index(k, header_keys, sizeof(header_keys) / sizeof(header_keys[0])) < 0)
      w->only_header_keys = 0;
  } else if (w->open == 2 && w->in_prof) {
    w->pkey = sentry__key_index(k, prof_keys, N_PROF);
    w->n = w->n_inner = 0;
  }
  return 0;
}

/* A value starts at w->p (w->open containers around it). */
static void value_start(struct walk *w)
{
  if (w->open == 1 && w->root_obj) {
    w->rval = w->p;
    if (w->rkey == R_PROFILE && *w->p == '{') {
      w->in_prof = 1;
      memset(w->cur, 0, sizeof(w->cur));
    }
  } else if (w->in_prof && w->pkey >= 0) {
    if (w->open == 2)
      w->pval = w->p;
    else if (w->open == 3)
      w->n++;
    else if (w->open == 4)
      w->n_inner++;
  }
}

/* A value ended at w->p (w->open containers around it). */
static void value_end(struct walk *w)
{
  if (w->open == 1 && w->root_obj) {
    if (w->rkey < 0)
      return;
    w->root_v[w->rkey].p = w->rval;
    w->root_v[w->rkey].n = (size_t)(w->p - w->rval);
    if (w->rkey == R_PROFILE) { /* the last "profile" is the one jansson keeps */
      w->has_prof_obj = w->in_prof;
      if (w->in_prof)
        memcpy(w->prof, w->cur, sizeof(w->prof));
      else
        memset(w->prof, 0, sizeof(w->prof));
      w->in_prof = 0;
    }
  } else if (w->open == 2 && w->in_prof && w->pkey >= 0) {
    struct sentry__arr *a = &w->cur[w->pkey];
    a->v.p = w->pval;
    a->v.n = (size_t)(w->p - w->pval);
    a->n = w->n;
    a->n_inner = w->n_inner;
  }
}

/* The whole input: 0 when jansson would parse it (flags 0: an object or an array, nothing
 * after it but whitespace), -1 at the first byte it would refuse. */
static int walk(struct walk *w)
{
  int want_value = 1;
  w->p = skip_ws(w->p, w->end);
  if (w->p >= w->end || (*w->p != '{' && *w->p != '['))
    return -1;
  w->root_obj = *w->p == '{';
  for (;;) {
    char c;
    if (want_value) {
      if (w->open + 1 > JSON_MAX_DEPTH) /* "maximum parsing depth reached" */
        return -1;
      if (w->p >= w->end)
        return -1;
      value_start(w);
      c = *w->p;
      if (c == '{' || c == '[') {
        w->is_obj[++w->open] = c == '{';
        w->p = skip_ws(w->p + 1, w->end);
        if (w->p < w->end && *w->p == (c == '{' ? '}' : ']')) { /* empty */
          w->p++;
          w->open--;
          value_end(w);
          want_value = 0;
        } else if (c == '{' && walk_key(w)) {
          return -1;
        }
        continue;
      }
      if (c == '"' || c == 't' || c == 'f' || c == 'n') {
        if (walk_scalar(w))
          return -1;
      } else if (c == '-' || (c >= '0' && c <= '9')) {
        if (walk_number(w))
          return -1;
      } else {
        return -1;
      }
      value_end(w);
      if (c != '"')
        walk_nul(w);
      want_value = 0;
      continue;
    }
    /* after a value */
    if (w->open == 0)
      return skip_ws(w->p, w->end) == w->end ? 0 : -1;
    w->p = skip_ws(w->p, w->end);
    if (w->p >= w->end)
      return -1;
    c = *w->p;
    if (c == ',') {
      w->p = skip_ws(w->p + 1, w->end);
      if (w->is_obj[w->open] && walk_key(w))
        return -1;
      want_value = 1;
    } else if (c == (w->is_obj[w->open] ? '}' : ']')) {
      w->p++;
      w->open--;
      value_end(w);
    } else {
      return -1;
    }
  }
}

/* The slim "profile" object: its small maps parsed, its arrays left in place. NULL on OOM. */
static json_t *slim_profile(const struct walk *w)
{
  json_t *o = json_object();
  size_t i;
  for (i = P_FRAMES + 1; o && i < N_PROF; i++) {
    json_t *v;
    if (!w->prof[i].v.p)
      continue;
    v = json_loadb(w->prof[i].v.p, w->prof[i].v.n, JSON_DECODE_ANY, NULL);
    if (!v || json_object_set_new(o, prof_keys[i], v)) {
      json_decref(o);
      return NULL;
    }
  }
  return o;
}

static json_t *slim_root(const struct walk *w)
{
  json_t *root = json_object();
  size_t i;
  for (i = 0; root && i < N_ROOT; i++) {
    const struct sentry__span *s = &w->root_v[i];
    json_t *v;
    if (!s->p)
      continue;
    if (i >= R_PRESENCE)
      v = json_null();
    else if (i == R_PROFILE && w->has_prof_obj)
      v = slim_profile(w);
    else
      v = json_loadb(s->p, s->n, JSON_DECODE_ANY, NULL);
    if (!v || json_object_set_new(root, root_keys[i], v)) {
      json_decref(root);
      return NULL;
    }
  }
  return root;
}

int sentry__doc_load(const uint8_t *buf, size_t len, struct sentry__doc *d, json_error_t *je)
{
  struct walk *w = calloc(1, sizeof(*w));
  int rc = 0;
  memset(d, 0, sizeof(*d));
  if (!w)
    return SPAA_E_NOMEM;
  w->p = (const char *)buf;
  w->end = (const char *)buf + len;
  spaa_jscan_init(&w->js, w->p, len, NULL, 0);
  w->rkey = w->pkey = -1;
  w->only_header_keys = 1;
  if (walk(w)) {
    /* jansson's own words for it (jansson refuses what the walk refuses) */
    json_error_t mine;
    json_t *v;
    if (!je)
      je = &mine;
    v = json_loadb((const char *)buf, len, 0, je);
    rc = SPAA_E_BAD_JSON;
    if (v) { /* never expected: both follow RFC 8259 and jansson's limits */
      json_decref(v);
      memset(je, 0, sizeof(*je));
      je->position = (int)(w->p - (const char *)buf);
      snprintf(je->text, sizeof(je->text), "byte %d refused", je->position);
    }
    goto out;
  }
  d->only_header_keys = w->only_header_keys;
  if (!w->root_obj) { /* refused by the caller, which only asks what it is */
    if (!(d->root = json_array()))
      rc = SPAA_E_NOMEM;
    goto out;
  }
  if (!(d->root = slim_root(w))) {
    rc = SPAA_E_NOMEM;
    goto out;
  }
  d->has_profile_obj = w->has_prof_obj;
  d->samples = w->prof[P_SAMPLES];
  d->stacks = w->prof[P_STACKS];
  d->frames = w->prof[P_FRAMES];
out:
  free(w);
  return rc;
}

void sentry__doc_free(struct sentry__doc *d)
{
  json_decref(d->root);
  memset(d, 0, sizeof(*d));
}
