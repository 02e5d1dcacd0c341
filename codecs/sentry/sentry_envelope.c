/* Sentry envelopes: header line, items as zero-copy slices, DSNs and event ids
 * (see sentry.h for the grammar). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hex.h"
#include "base/limits.h"
#include "sentry/sentry.h"

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
  size_t i;
  if (!env)
    return;
  json_decref(env->header);
  for (i = 0; i < env->n_items; i++)
    json_decref(env->items[i].header);
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

static void copy_str(char *dst, size_t cap, const json_t *v)
{
  const char *s = json_string_value(v);
  size_t n = s ? json_string_length(v) : 0;
  if (n >= cap)
    n = cap - 1;
  if (n)
    memcpy(dst, s, n);
  dst[n] = 0;
}

static int parse_env_header(const uint8_t *buf, size_t n, struct sentry_envelope *env,
                            struct spaa_err *err)
{
  json_t *v;
  if (n == 0 || (n == 1 && buf[0] == '\r'))
    return spaa_err_set(err, SPAA_E_BAD_ENVELOPE, 0, 0, "envelope header at byte 0: empty header line");
  if (!(env->header = parse_line(buf, n, "envelope header", 0, 0, err)))
    return err ? err->code : SPAA_E_BAD_ENVELOPE;
  v = json_object_get(env->header, "event_id");
  if (v && !json_is_null(v)) {
    if (!json_is_string(v) ||
        sentry_uuid_normalize(json_string_value(v), json_string_length(v), env->event_id))
      return spaa_err_set(err, SPAA_E_BAD_ENVELOPE, 0, 0,
                          "envelope header: event_id is not a UUID (32 hex digits, dashes allowed)");
  }
  v = json_object_get(env->header, "dsn");
  if (v && !json_is_null(v)) {
    struct spaa_err de;
    if (!json_is_string(v))
      return spaa_err_set(err, SPAA_E_BAD_ENVELOPE, 0, 0, "envelope header: dsn is not a string");
    if (sentry_dsn_parse(json_string_value(v), json_string_length(v), &env->dsn, &de))
      return spaa_err_set(err, SPAA_E_BAD_ENVELOPE, 0, 0, "envelope header: %s", de.msg);
    env->has_dsn = 1;
  }
  return 0;
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

int sentry_envelope_parse(const uint8_t *buf, size_t len, struct sentry_envelope *env,
                          struct spaa_err *err)
{
  size_t pos, n;
  int rc;
  memset(env, 0, sizeof(*env));
  if (len == 0)
    return spaa_err_set(err, SPAA_E_BAD_ENVELOPE, 0, 0, "empty envelope");
  n = line_len(buf, len, 0);
  if ((rc = parse_env_header(buf, n, env, err)))
    return rc;
  pos = n < len ? n + 1 : n;
  for (;;) {
    struct sentry_item *it;
    size_t idx = env->n_items, start;
    json_t *h, *v;
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
    if (!(h = parse_line(buf + pos, n, "item", idx, pos, err)))
      return err ? err->code : SPAA_E_BAD_ENVELOPE;
    if (!(it = add_item(env))) {
      json_decref(h);
      return spaa_err_set(err, SPAA_E_NOMEM, 0, pos, NULL);
    }
    it->header = h;
    it->offset = start;
    v = json_object_get(h, "type");
    if (!json_is_string(v) || json_string_length(v) == 0)
      return spaa_err_set(err, SPAA_E_BAD_ENVELOPE, 0, start,
                          "item %zu at byte %zu: item header has no \"type\"", idx, start);
    copy_str(it->type, sizeof(it->type), v);
    it->kind = json_string_length(v) < sizeof(it->type) ? kind_of(it->type) : SENTRY_ITEM_OTHER;
    copy_str(it->platform, sizeof(it->platform), json_object_get(h, "platform"));
    copy_str(it->content_type, sizeof(it->content_type), json_object_get(h, "content_type"));
    v = json_object_get(h, "length");
    if (v && !json_is_null(v)) {
      if (!json_is_integer(v) || json_integer_value(v) < 0)
        return spaa_err_set(err, SPAA_E_BAD_ENVELOPE, 0, start,
                            "item %zu at byte %zu: \"length\" is not a non-negative integer", idx,
                            start);
      it->has_length = 1;
      it->length = (uint64_t)json_integer_value(v);
    }
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
