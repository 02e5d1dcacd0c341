/* Sentry envelopes: header line, items as zero-copy slices, DSNs and event ids
 * (see sentry.h for the grammar). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hex.h"
#include "base/jscan.h"
#include "base/limits.h"
#include "sentry/sentry.h"
#include "sentry/sentry_int.h"

int sentry_uuid_normalize(const char *s, size_t len, char out[33])
{
  size_t i, n = 0;
  if (len >= 2 && s[0] == '{' && s[len - 1] == '}') {
    s++;
    len -= 2;
  }
  if (len == 32) {
    for (i = 0; i < 32; i++) {
      int v = spaa_hex_val((unsigned char)s[i]);
      if (v < 0)
        return SPAA_E_INVALID;
      out[n++] = spaa_hex_digits[v];
    }
  } else if (len == 36) {
    for (i = 0; i < 36; i++) {
      int v;
      if (i == 8 || i == 13 || i == 18 || i == 23) {
        if (s[i] != '-')
          return SPAA_E_INVALID;
        continue;
      }
      if ((v = spaa_hex_val((unsigned char)s[i])) < 0)
        return SPAA_E_INVALID;
      out[n++] = spaa_hex_digits[v];
    }
  } else {
    return SPAA_E_INVALID;
  }
  out[32] = 0;
  return 0;
}

/* Copy [s, s+n) into a fixed field; 0 or -1 when it does not fit. */
static int copy_field(char *dst, size_t cap, const char *s, size_t n)
{
  if (n >= cap)
    return -1;
  memcpy(dst, s, n);
  dst[n] = 0;
  return 0;
}

int sentry_dsn_parse(const char *s, size_t len, struct sentry_dsn *out, struct spaa_err *err)
{
  const char *p, *end = s + len, *at, *colon, *slash, *last;
  size_t i;
  memset(out, 0, sizeof(*out));
  p = memchr(s, ':', len);
  if (!p || end - p < 3 || p[1] != '/' || p[2] != '/')
    return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0, "dsn: missing scheme://");
  if (copy_field(out->scheme, sizeof(out->scheme), s, (size_t)(p - s)) ||
      (strcmp(out->scheme, "https") != 0 && strcmp(out->scheme, "http") != 0))
    return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0, "dsn: scheme must be http or https");
  p += 3;
  slash = memchr(p, '/', (size_t)(end - p));
  at = memchr(p, '@', (size_t)((slash ? slash : end) - p));
  if (!at)
    return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0, "dsn: missing public key before '@'");
  colon = memchr(p, ':', (size_t)(at - p));
  if (copy_field(out->public_key, sizeof(out->public_key), p, (size_t)((colon ? colon : at) - p)) ||
      !out->public_key[0])
    return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0, "dsn: empty or over-long public key");
  if (colon && copy_field(out->secret, sizeof(out->secret), colon + 1, (size_t)(at - colon - 1)))
    return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0, "dsn: over-long secret");
  p = at + 1;
  if (!slash || slash == p || copy_field(out->host, sizeof(out->host), p, (size_t)(slash - p)))
    return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0, "dsn: missing host or project id");
  /* the project id is the last path segment (one trailing slash tolerated) */
  if (end > slash + 1 && end[-1] == '/')
    end--;
  for (last = end; last > slash && last[-1] != '/'; last--)
    ;
  if (last == end || copy_field(out->project_id, sizeof(out->project_id), last, (size_t)(end - last)))
    return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0, "dsn: missing project id");
  for (i = 0; out->project_id[i]; i++)
    if (out->project_id[i] < '0' || out->project_id[i] > '9')
      return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0, "dsn: project id '%s' is not a number",
                          out->project_id);
  if (copy_field(out->path, sizeof(out->path), slash, (size_t)(last - 1 - slash)))
    return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0, "dsn: over-long path");
  return 0;
}

void sentry_envelope_free(struct sentry_envelope *env)
{
  if (!env)
    return;
  free(env->items);
  memset(env, 0, sizeof(*env));
}

long sentry_envelope_find(const struct sentry_envelope *env, enum sentry_item_kind kind)
{
  size_t i;
  for (i = 0; i < env->n_items; i++)
    if (env->items[i].kind == kind)
      return (long)i;
  return -1;
}

static enum sentry_item_kind kind_of(const char *type)
{
  if (strcmp(type, "transaction") == 0)
    return SENTRY_ITEM_TRANSACTION;
  if (strcmp(type, "profile") == 0)
    return SENTRY_ITEM_PROFILE;
  if (strcmp(type, "profile_chunk") == 0 || strcmp(type, "profile_chunk_ui") == 0)
    return SENTRY_ITEM_CHUNK;
  return SENTRY_ITEM_OTHER;
}

/* Length of the line starting at buf[pos] (to the next \n or the end). */
static size_t line_len(const uint8_t *buf, size_t len, size_t pos)
{
  const uint8_t *nl = memchr(buf + pos, '\n', len - pos);
  return nl ? (size_t)(nl - (buf + pos)) : len - pos;
}

/* Parse a JSON object spanning exactly [p, p+n). NULL and err filled when it is not one. */
static json_t *parse_line(const uint8_t *p, size_t n, const char *what, size_t idx,
                          size_t offset, struct spaa_err *err)
{
  json_error_t je;
  json_t *v;
  if (n > SENTRY_MAX_HEADER_LINE) {
    spaa_err_set(err, SPAA_E_TOO_LARGE, 0, offset, "%s %zu at byte %zu: header line of %zu bytes"
                 " is over the %u byte cap", what, idx, offset, n, SENTRY_MAX_HEADER_LINE);
    return NULL;
  }
  v = json_loadb((const char *)p, n, JSON_DECODE_ANY, &je);
  if (!v) {
    spaa_err_set(err, SPAA_E_BAD_ENVELOPE, 0, offset + (size_t)(je.position > 0 ? je.position : 0),
                 "%s %zu at byte %zu: header is not valid JSON: %s", what, idx, offset, je.text);
    return NULL;
  }
  if (!json_is_object(v)) {
    json_decref(v);
    spaa_err_set(err, SPAA_E_BAD_ENVELOPE, 0, offset, "%s %zu at byte %zu: header is not a JSON object",
                 what, idx, offset);
    return NULL;
  }
  return v;
}

/* ---- header lines: the few members the parser reads -----------------------------------
 * A header line is read in one of two ways that must agree: the pull scanner (jscan.h) for
 * lines of up to SENTRY__FAST_LINE bytes, or jansson (parse_line) for longer lines and for
 * any line the scanner does not accept, so that every error is jansson's, word for word.
 * Either way the outcome is, for each key asked for, the kind and value of its last
 * occurrence (jansson keeps the last of duplicate keys). The scanner takes a line only when
 * jansson would too: its syntax is RFC 8259's, and its numbers are checked against
 * jansson's limits (an integer must fit in int64, a real must be finite). */

enum hkind {
  H_ABSENT = 0, /* the key does not occur */
  H_NULL,       /* null */
  H_STR,        /* a string: s, n */
  H_INT,        /* an integer (no fraction, no exponent) that fits in int64: i */
  H_OTHER       /* anything else: a real, true, false, an object, an array */
};

struct hfield {
  enum hkind kind; /* what the last occurrence of the key held */
  const char *s;   /* H_STR: decoded, NUL-terminated (borrowed: scratch or jansson) */
  size_t n;        /* H_STR: bytes of s */
  int64_t i;       /* H_INT: the value */
};

#define HLINE_MAX_KEYS 4 /* keys one line is read for (I_N, the item header's) */

/* One header line read: the fields asked for and what they borrow from. */
struct hline {
  struct hfield f[HLINE_MAX_KEYS];           /* per key asked for, in order */
  json_t *obj;                               /* jansson's object when the line took that path */
  char scratch[SENTRY__FAST_LINE + 1];       /* the scanner's decoded strings */
};

/* Read one value into f (NULL: check it and drop it). 0, or -1 when jansson must judge the
 * line (a scanner error, or a number jansson refuses). Recursion is bounded by the
 * scanner's SPAA_JSCAN_MAXDEPTH (obj_begin/arr_begin fail past it). */
static int scan_value(struct spaa_jscan *s, struct hfield *f)
{
  const char *k, *a;
  size_t kl;
  struct spaa_num num;
  int r;
  if (f)
    memset(f, 0, sizeof(*f));
  switch (spaa_jscan_peek(s)) {
  case SPAA_J_STR:
    if (!f)
      return spaa_jscan_skip(s, NULL, NULL);
    f->kind = H_STR;
    return spaa_jscan_str(s, &f->s, &f->n);
  case SPAA_J_NUM:
    a = s->p;
    if (spaa_jscan_num(s, &num))
      return -1; /* malformed, over long, or a real out of range ("real number overflow") */
    if (num.is_float) {
      /* an integer token past int64 is jansson's "too big integer" */
      for (; a < s->p; a++)
        if (*a == '.' || *a == 'e' || *a == 'E')
          break;
      if (a == s->p)
        return -1;
      if (f)
        f->kind = H_OTHER;
    } else if (f) {
      f->kind = H_INT;
      f->i = num.i;
    }
    return 0;
  case SPAA_J_NULL:
    if (f)
      f->kind = H_NULL;
    return spaa_jscan_skip(s, NULL, NULL);
  case SPAA_J_TRUE:
  case SPAA_J_FALSE:
    if (f)
      f->kind = H_OTHER;
    return spaa_jscan_skip(s, NULL, NULL);
  case SPAA_J_OBJ:
    if (f)
      f->kind = H_OTHER;
    if (spaa_jscan_obj_begin(s))
      return -1;
    while ((r = spaa_jscan_obj_key(s, &k, &kl)) == 1)
      if (scan_value(s, NULL))
        return -1;
    return r;
  case SPAA_J_ARR:
    if (f)
      f->kind = H_OTHER;
    if (spaa_jscan_arr_begin(s))
      return -1;
    while ((r = spaa_jscan_arr_next(s)) == 1)
      if (scan_value(s, NULL))
        return -1;
    return r;
  default:
    return -1;
  }
}

/* The fast path: 0 with h->f filled, or -1 when jansson must read the line. */
static int scan_line(const uint8_t *p, size_t n, const char *const *keys, size_t n_keys,
                     struct hline *h)
{
  struct spaa_jscan s;
  const char *k;
  size_t kl, i;
  int r;
  if (n >= sizeof(h->scratch))
    return -1;
  spaa_jscan_init(&s, (const char *)p, n, h->scratch, sizeof(h->scratch));
  if (spaa_jscan_peek(&s) != SPAA_J_OBJ || spaa_jscan_obj_begin(&s))
    return -1;
  while ((r = spaa_jscan_obj_key(&s, &k, &kl)) == 1) {
    /* keys hold no NUL: the scanner refuses \u0000 */
    for (i = 0; i < n_keys && strcmp(k, keys[i]) != 0; i++)
      ;
    if (scan_value(&s, i < n_keys ? &h->f[i] : NULL))
      return -1;
  }
  return r < 0 || spaa_jscan_finish(&s) ? -1 : 0;
}

/* Read the line [p, p+n) into h: the value of each of keys[0..n_keys) (at most
 * HLINE_MAX_KEYS). 0, or the code of parse_line's error (err filled as parse_line does).
 * h->obj, when set, is owned by the caller (json_decref). */
static int read_line(const uint8_t *p, size_t n, const char *const *keys, size_t n_keys,
                     const char *what, size_t idx, size_t offset, struct hline *h,
                     struct spaa_err *err)
{
  size_t i;
  h->obj = NULL;
  memset(h->f, 0, sizeof(h->f));
  if (scan_line(p, n, keys, n_keys, h) == 0)
    return 0;
  memset(h->f, 0, sizeof(h->f));
  if (!(h->obj = parse_line(p, n, what, idx, offset, err)))
    return err ? err->code : SPAA_E_BAD_ENVELOPE;
  for (i = 0; i < n_keys; i++) {
    const json_t *v = json_object_get(h->obj, keys[i]);
    struct hfield *f = &h->f[i];
    if (!v) {
      f->kind = H_ABSENT;
    } else if (json_is_null(v)) {
      f->kind = H_NULL;
    } else if (json_is_string(v)) {
      f->kind = H_STR;
      f->s = json_string_value(v);
      f->n = json_string_length(v);
    } else if (json_is_integer(v)) {
      f->kind = H_INT;
      f->i = (int64_t)json_integer_value(v);
    } else {
      f->kind = H_OTHER;
    }
  }
  return 0;
}

/* A string field into a fixed one, cut to fit; "" when it is not a string. */
static void copy_str(char *dst, size_t cap, const struct hfield *f)
{
  size_t n = f->kind == H_STR ? f->n : 0;
  if (n >= cap)
    n = cap - 1;
  if (n)
    memcpy(dst, f->s, n);
  dst[n] = 0;
}

enum { E_EVENT_ID, E_DSN, E_N };
static const char *const env_keys[E_N] = {"event_id", "dsn"};

static int parse_env_header(const uint8_t *buf, size_t n, struct sentry_envelope *env,
                            struct hline *h, struct spaa_err *err)
{
  const struct hfield *v;
  int rc;
  if (n == 0 || (n == 1 && buf[0] == '\r'))
    return spaa_err_set(err, SPAA_E_BAD_ENVELOPE, 0, 0, "envelope header at byte 0: empty header line");
  if ((rc = read_line(buf, n, env_keys, E_N, "envelope header", 0, 0, h, err)))
    return rc;
  env->header_line = buf;
  env->header_len = n;
  v = &h->f[E_EVENT_ID];
  if (v->kind != H_ABSENT && v->kind != H_NULL) {
    if (v->kind != H_STR || sentry_uuid_normalize(v->s, v->n, env->event_id))
      return spaa_err_set(err, SPAA_E_BAD_ENVELOPE, 0, 0,
                          "envelope header: event_id is not a UUID (32 hex digits, dashes allowed)");
  }
  v = &h->f[E_DSN];
  if (v->kind != H_ABSENT && v->kind != H_NULL) {
    struct spaa_err de;
    if (v->kind != H_STR)
      return spaa_err_set(err, SPAA_E_BAD_ENVELOPE, 0, 0, "envelope header: dsn is not a string");
    if (sentry_dsn_parse(v->s, v->n, &env->dsn, &de))
      return spaa_err_set(err, SPAA_E_BAD_ENVELOPE, 0, 0, "envelope header: %s", de.msg);
    env->has_dsn = 1;
  }
  return 0;
}

json_t *sentry_envelope_header(const struct sentry_envelope *env)
{
  json_t *v;
  if (!env->header_line)
    return NULL;
  v = json_loadb((const char *)env->header_line, env->header_len, JSON_DECODE_ANY, NULL);
  if (v && !json_is_object(v)) {
    json_decref(v);
    v = NULL;
  }
  return v;
}

static struct sentry_item *add_item(struct sentry_envelope *env)
{
  if (env->n_items == env->cap_items) {
    size_t nc = env->cap_items ? env->cap_items * 2 : 4;
    struct sentry_item *ni = realloc(env->items, nc * sizeof(*ni));
    if (!ni)
      return NULL;
    env->items = ni;
    env->cap_items = nc;
  }
  memset(&env->items[env->n_items], 0, sizeof(env->items[0]));
  return &env->items[env->n_items++];
}

enum { I_TYPE, I_LENGTH, I_PLATFORM, I_CONTENT_TYPE, I_N };
static const char *const item_keys[I_N] = {"type", "length", "platform", "content_type"};
_Static_assert(I_N <= HLINE_MAX_KEYS && E_N <= HLINE_MAX_KEYS, "struct hline holds the keys");

int sentry_envelope_parse(const uint8_t *buf, size_t len, struct sentry_envelope *env,
                          struct spaa_err *err)
{
  struct hline h;
  size_t pos, n;
  int rc;
  memset(env, 0, sizeof(*env));
  h.obj = NULL;
  if (len == 0)
    return spaa_err_set(err, SPAA_E_BAD_ENVELOPE, 0, 0, "empty envelope");
  n = line_len(buf, len, 0);
  rc = parse_env_header(buf, n, env, &h, err);
  json_decref(h.obj);
  if (rc)
    return rc;
  pos = n < len ? n + 1 : n;
  for (;;) {
    struct sentry_item *it;
    size_t idx = env->n_items, start;
    const struct hfield *v;
    /* blank lines between items and after the last one are skipped */
    while (pos < len && (buf[pos] == '\n' || buf[pos] == '\r' || buf[pos] == ' ' || buf[pos] == '\t'))
      pos++;
    if (pos >= len)
      break;
    if (env->n_items >= SENTRY_MAX_ITEMS)
      return spaa_err_set(err, SPAA_E_TOO_LARGE, 0, pos, "item %zu at byte %zu: more than %d items",
                          idx, pos, SENTRY_MAX_ITEMS);
    start = pos;
    n = line_len(buf, len, pos);
    if ((rc = read_line(buf + pos, n, item_keys, I_N, "item", idx, pos, &h, err)))
      return rc;
    rc = 0;
    if (!(it = add_item(env))) {
      rc = spaa_err_set(err, SPAA_E_NOMEM, 0, pos, NULL);
      goto next;
    }
    it->offset = start;
    v = &h.f[I_TYPE];
    if (v->kind != H_STR || v->n == 0) {
      rc = spaa_err_set(err, SPAA_E_BAD_ENVELOPE, 0, start,
                        "item %zu at byte %zu: item header has no \"type\"", idx, start);
      goto next;
    }
    copy_str(it->type, sizeof(it->type), v);
    it->kind = v->n < sizeof(it->type) ? kind_of(it->type) : SENTRY_ITEM_OTHER;
    copy_str(it->platform, sizeof(it->platform), &h.f[I_PLATFORM]);
    copy_str(it->content_type, sizeof(it->content_type), &h.f[I_CONTENT_TYPE]);
    v = &h.f[I_LENGTH];
    if (v->kind != H_ABSENT && v->kind != H_NULL) {
      if (v->kind != H_INT || v->i < 0) {
        rc = spaa_err_set(err, SPAA_E_BAD_ENVELOPE, 0, start,
                          "item %zu at byte %zu: \"length\" is not a non-negative integer", idx,
                          start);
        goto next;
      }
      it->has_length = 1;
      it->length = (uint64_t)v->i;
    }
  next:
    json_decref(h.obj);
    if (rc)
      return rc;
    pos += n;
    if (pos >= len) {
      /* header at EOF: an empty payload, unless a length promised bytes */
      if (it->has_length && it->length > 0)
        return spaa_err_set(err, SPAA_E_BAD_ENVELOPE, 0, pos,
                            "item %zu (%s) at byte %zu: truncated: header promises %llu bytes, "
                            "the envelope ends at byte %zu", idx, it->type, start,
                            (unsigned long long)it->length, len);
      it->payload_offset = pos;
      break;
    }
    pos++; /* the header's \n */
    it->payload_offset = pos;
    if (it->has_length) {
      if (it->length > len - pos)
        return spaa_err_set(err, SPAA_E_BAD_ENVELOPE, 0, pos,
                            "item %zu (%s) at byte %zu: truncated: length %llu but only %zu bytes "
                            "left after byte %zu", idx, it->type, start,
                            (unsigned long long)it->length, len - pos, pos);
      it->payload_len = (size_t)it->length;
      it->payload = it->payload_len ? buf + pos : NULL;
      pos += it->payload_len;
      if (pos < len) {
        if (buf[pos] != '\n')
          return spaa_err_set(err, SPAA_E_BAD_ENVELOPE, 0, pos,
                              "item %zu (%s) at byte %zu: payload of length %llu is not followed "
                              "by a newline (byte %zu)", idx, it->type, start,
                              (unsigned long long)it->length, pos);
        pos++;
      }
    } else {
      n = line_len(buf, len, pos);
      it->payload_len = n;
      it->payload = n ? buf + pos : NULL;
      pos += n;
      if (pos < len)
        pos++;
    }
  }
  return 0;
}
