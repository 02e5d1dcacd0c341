/* Pyroscope's push API (see pprof.h): a push.v1 PushRequest, protobuf or JSON, read without
 * copying the raw profiles, each sample converted by spaa_convert_pprof and labelled with
 * its series' labels and its own ID. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/base64.h"
#include "base/limits.h"
#include "base/pbwire.h"
#include "base/utf8.h"
#include "pprof/pprof.h"

/* ---- one series --------------------------------------------------------------------------- */

/* A series' labels: service_name apart, the others in an object. */
struct push_series {
  size_t index;       /* its position in the request */
  char *service;      /* service_name (owned), or NULL */
  json_t *labels;     /* the other labels (owned) */
};

static void series_clear(struct push_series *s)
{
  free(s->service);
  json_decref(s->labels);
  s->service = NULL;
  s->labels = NULL;
}

/* 1 when n bytes at s are UTF-8 without NUL. */
static int text_ok(const char *s, size_t n)
{
  return spaa_utf8_check(s, n) == SIZE_MAX && !memchr(s, 0, n);
}

/* Add one label (name, value: not NUL-terminated). */
static int series_label(struct push_series *s, const char *name, size_t nl, const char *value,
                        size_t vl, int json, struct spaa_err *err)
{
  char *k = NULL, *v = NULL;
  int rc = 0;
  if (!text_ok(name, nl) || !text_ok(value, vl))
    return spaa_err_set(err, json ? SPAA_E_BAD_JSON : SPAA_E_BAD_PROTOBUF, 0, 0,
                        "series %zu: a label is not valid UTF-8 (or holds a NUL byte)",
                        s->index);
  if (!nl)
    return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0, "series %zu: a label has no name",
                        s->index);
  if (json_object_size(s->labels) >= SPAA_PPROF_PUSH_MAX_LABELS)
    return spaa_err_set(err, SPAA_E_TOO_LARGE, 0, 0, "series %zu: more than %d labels",
                        s->index, SPAA_PPROF_PUSH_MAX_LABELS);
  if (!(k = strndup(name, nl)) || !(v = strndup(value, vl))) {
    rc = spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
    goto out;
  }
  if ((strcmp(k, "service_name") == 0 && s->service) || json_object_get(s->labels, k)) {
    rc = spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0, "series %zu: label '%.64s' given twice",
                      s->index, k);
    goto out;
  }
  if (strcmp(k, "service_name") == 0) {
    s->service = v;
    v = NULL;
  } else if (json_object_set_new(s->labels, k, json_string(v))) {
    rc = spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
  }
out:
  free(k);
  free(v);
  return rc;
}

/* 1 when an entry of l before the last is stored under `id`. */
static int id_taken(const struct spaa_conv_list *l, const char *id)
{
  size_t j;
  for (j = 0; j + 1 < l->n; j++)
    if (strcmp(l->v[j].id, id) == 0)
      return 1;
  return 0;
}

/* The last entry of l under its push ID, unless an earlier sample of the same push took it:
 * then ID-2, ID-3... (two profiles under one ID would have stored the first alone and
 * answered the second "already stored"). The same push sent again gives the same ids, so a
 * retry still finds them stored; an ID with no room for the suffix goes, the store then
 * names the profile. */
static void unique_id(const struct spaa_conv_list *l, struct spaa_converted *c)
{
  char base[sizeof(c->id)];
  size_t j, bl = strlen(c->id);
  unsigned n = 1, tries;
  if (!id_taken(l, c->id))
    return;
  memcpy(base, c->id, sizeof(base));
  /* start past the suffixes given already (one pass: a push holds at most 1,024 samples) */
  for (j = 0; j + 1 < l->n; j++)
    n += strncmp(l->v[j].id, base, bl) == 0 &&
         (l->v[j].id[bl] == 0 || l->v[j].id[bl] == '-');
  for (tries = 0; tries < 8; tries++, n++) {
    int w = snprintf(c->id, sizeof(c->id), "%s-%u", base, n);
    if (w < 0 || (size_t)w >= sizeof(c->id))
      break;
    if (!id_taken(l, c->id))
      return;
  }
  c->id[0] = 0;
}

/* Convert one sample and label the entry it appended. */
static int push_sample(const struct push_series *s, size_t k, const uint8_t *raw, size_t len,
                       const char *id, size_t id_len, int borrow,
                       const struct spaa_convert_opts *o, struct spaa_conv_list *out,
                       struct spaa_err *err)
{
  struct spaa_convert_opts sub;
  struct spaa_converted *c;
  size_t i;
  int rc, id_ok = id_len > 0 && id_len < sizeof(c->id);
  memset(&sub, 0, sizeof(sub));
  sub.keep_original = o && o->keep_original && borrow;
  sub.meter = o ? o->meter : NULL;
  if (!len)
    return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0, "series %zu sample %zu: rawProfile is "
                        "empty", s->index, k);
  if ((rc = spaa_convert_pprof(raw, len, &sub, out, err))) {
    char head[64]; /* the message prefixed with where it comes from, cut to fit */
    int w = snprintf(head, sizeof(head), "series %zu sample %zu: ", s->index, k);
    size_t hl = w > 0 && (size_t)w < sizeof(head) ? (size_t)w : 0;
    size_t ml = strnlen(err->msg, sizeof(err->msg) - 1 - hl);
    memmove(err->msg + hl, err->msg, ml);
    memcpy(err->msg, head, hl);
    err->msg[hl + ml] = 0;
    return rc;
  }
  c = &out->v[out->n - 1];
  for (i = 0; id_ok && i < id_len; i++)
    id_ok = (id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'z') ||
            (id[i] >= 'A' && id[i] <= 'Z') || id[i] == '-' || id[i] == '_';
  if (id_ok) {
    memcpy(c->id, id, id_len);
    c->id[id_len] = 0;
    unique_id(out, c);
  }
  if ((s->service && !(c->service = strdup(s->service))) ||
      (json_object_size(s->labels) && !(c->labels = json_deep_copy(s->labels))) ||
      (id_len && text_ok(id, id_len) &&
       json_object_set_new(c->attrs, "pyroscope_id", json_stringn(id, id_len))))
    return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
  return 0;
}

/* A protobuf RawProfileSeries: labels first (wherever they are), then each sample. */
static int pb_series(struct push_series *s, const uint8_t *p, size_t n, size_t *count,
                     const struct spaa_convert_opts *o, struct spaa_conv_list *out,
                     struct spaa_err *err)
{
  struct spaa_pb_field f, g;
  size_t pos = 0, k = 0;
  int more, rc;
  while ((more = spaa_pb_next(p, n, &pos, &f)) == 1) {
    const char *name = "", *value = "";
    size_t nl = 0, vl = 0, q = 0;
    if (f.num != 1 || f.wt != 2)
      continue;
    while ((more = spaa_pb_next(f.data, f.len, &q, &g)) == 1) {
      if (g.wt == 2 && g.num == 1)
        name = (const char *)g.data, nl = g.len;
      else if (g.wt == 2 && g.num == 2)
        value = (const char *)g.data, vl = g.len;
    }
    if (more < 0 || (rc = series_label(s, name, nl, value, vl, 0, err)))
      return more < 0 ? spaa_err_set(err, SPAA_E_BAD_PROTOBUF, 0, 0, "series %zu: a label is "
                                     "malformed protobuf", s->index) : rc;
  }
  if (more < 0)
    return spaa_err_set(err, SPAA_E_BAD_PROTOBUF, 0, 0, "series %zu is malformed protobuf",
                        s->index);
  for (pos = 0; spaa_pb_next(p, n, &pos, &f) == 1;) {
    const uint8_t *raw = NULL;
    const char *id = "";
    size_t rl = 0, il = 0, q = 0;
    if (f.num != 2 || f.wt != 2)
      continue;
    if (++*count > SPAA_PPROF_PUSH_MAX_SAMPLES)
      return spaa_err_set(err, SPAA_E_TOO_LARGE, 0, 0, "more than %d samples in one push",
                          SPAA_PPROF_PUSH_MAX_SAMPLES);
    while ((more = spaa_pb_next(f.data, f.len, &q, &g)) == 1) {
      if (g.wt == 2 && g.num == 1)
        raw = g.data, rl = g.len;
      else if (g.wt == 2 && g.num == 2)
        id = (const char *)g.data, il = g.len;
    }
    if (more < 0)
      return spaa_err_set(err, SPAA_E_BAD_PROTOBUF, 0, 0, "series %zu sample %zu is malformed "
                          "protobuf", s->index, k);
    if ((rc = push_sample(s, k++, raw, rl, id, il, 1, o, out, err)))
      return rc;
  }
  return 0;
}

static int pb_request(const uint8_t *buf, size_t len, const struct spaa_convert_opts *o,
                      struct spaa_conv_list *out, struct spaa_err *err)
{
  struct push_series s;
  struct spaa_pb_field f;
  size_t pos = 0, count = 0, index = 0;
  int more, rc = 0;
  while ((more = spaa_pb_next(buf, len, &pos, &f)) == 1) {
    if (f.num != 1 || f.wt != 2)
      continue;
    memset(&s, 0, sizeof(s));
    s.index = index++;
    if (!(s.labels = json_object()))
      return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
    rc = pb_series(&s, f.data, f.len, &count, o, out, err);
    series_clear(&s);
    if (rc)
      return rc;
  }
  if (more < 0)
    return spaa_err_set(err, SPAA_E_BAD_PROTOBUF, pos, 0, "the PushRequest is malformed "
                        "protobuf near byte %zu", pos);
  return count ? 0 : spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0, "the push carries no sample");
}

/* ---- JSON ------------------------------------------------------------------------------------ */

/* A string member under either of two names (protobuf's JSON name and the field's own). */
static json_t *member(json_t *o, const char *a, const char *b)
{
  json_t *v = json_object_get(o, a);
  return v ? v : json_object_get(o, b);
}

static int js_series(struct push_series *s, json_t *js, size_t *count,
                     const struct spaa_convert_opts *o, struct spaa_conv_list *out,
                     struct spaa_err *err)
{
  json_t *labels = member(js, "labels", "labels"), *samples = member(js, "samples", "samples");
  json_t *v;
  size_t i;
  int rc;
  if (!json_is_object(js) || (labels && !json_is_array(labels)) ||
      (samples && !json_is_array(samples)))
    return spaa_err_set(err, SPAA_E_BAD_JSON, 0, 0, "series %zu: expected an object with "
                        "arrays 'labels' and 'samples'", s->index);
  json_array_foreach(labels, i, v) {
    json_t *n = json_object_get(v, "name"), *val = json_object_get(v, "value");
    if ((n && !json_is_string(n)) || (val && !json_is_string(val)))
      return spaa_err_set(err, SPAA_E_BAD_JSON, 0, 0, "series %zu label %zu: expected "
                          "{\"name\": string, \"value\": string}", s->index, i);
    if ((rc = series_label(s, n ? json_string_value(n) : "", n ? json_string_length(n) : 0,
                           val ? json_string_value(val) : "", val ? json_string_length(val) : 0,
                           1, err)))
      return rc;
  }
  json_array_foreach(samples, i, v) {
    json_t *raw = member(v, "rawProfile", "raw_profile"), *id = member(v, "ID", "id");
    const char *b64 = raw && json_is_string(raw) ? json_string_value(raw) : "";
    size_t b64_len = raw && json_is_string(raw) ? json_string_length(raw) : 0, got = 0;
    uint8_t *bytes;
    if (++*count > SPAA_PPROF_PUSH_MAX_SAMPLES)
      return spaa_err_set(err, SPAA_E_TOO_LARGE, 0, 0, "more than %d samples in one push",
                          SPAA_PPROF_PUSH_MAX_SAMPLES);
    if ((raw && !json_is_string(raw)) || (id && !json_is_string(id)))
      return spaa_err_set(err, SPAA_E_BAD_JSON, 0, 0, "series %zu sample %zu: rawProfile and "
                          "ID must be strings", s->index, i);
    if (!(bytes = malloc(spaa_base64_max(b64_len))))
      return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
    if (spaa_base64_decode(bytes, spaa_base64_max(b64_len), b64, b64_len, &got)) {
      free(bytes);
      return spaa_err_set(err, SPAA_E_BAD_JSON, 0, 0, "series %zu sample %zu: rawProfile is "
                          "not base64", s->index, i);
    }
    rc = push_sample(s, i, bytes, got, id ? json_string_value(id) : "",
                     id ? json_string_length(id) : 0, 0, o, out, err);
    free(bytes);
    if (rc)
      return rc;
  }
  return 0;
}

static int js_request(const uint8_t *buf, size_t len, const struct spaa_convert_opts *o,
                      struct spaa_conv_list *out, struct spaa_err *err)
{
  json_error_t je;
  json_t *root = json_loadb((const char *)buf, len, JSON_REJECT_DUPLICATES, &je), *series, *js;
  struct push_series s;
  size_t i, count = 0;
  int rc = 0;
  if (!root)
    return spaa_err_set(err, SPAA_E_BAD_JSON, (size_t)je.position, 0, "the PushRequest is "
                        "malformed JSON at byte %d: %.80s", je.position, je.text);
  series = json_object_get(root, "series");
  if (series && !json_is_array(series)) {
    json_decref(root);
    return spaa_err_set(err, SPAA_E_BAD_JSON, 0, 0, "'series' must be an array");
  }
  json_array_foreach(series, i, js) {
    memset(&s, 0, sizeof(s));
    s.index = i;
    if (!(s.labels = json_object()))
      rc = spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
    else
      rc = js_series(&s, js, &count, o, out, err);
    series_clear(&s);
    if (rc)
      break;
  }
  json_decref(root);
  if (!rc && !count)
    rc = spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0, "the push carries no sample");
  return rc;
}

/* ---- the converter ---------------------------------------------------------------------------- */

/* Drop what a request appended to out past its first `first` entries. */
static void drop_from(struct spaa_conv_list *out, size_t first)
{
  size_t i;
  for (i = first; i < out->n; i++) {
    spaa_profile_free(out->v[i].profile);
    free(out->v[i].service);
    json_decref(out->v[i].labels);
    json_decref(out->v[i].attrs);
  }
  out->n = first;
}

int spaa_convert_pprof_push(const uint8_t *buf, size_t len, const struct spaa_convert_opts *o,
                            struct spaa_conv_list *out, struct spaa_err *err)
{
  size_t first = out->n, i = 0;
  int rc;
  while (i < len && (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\r' || buf[i] == '\n'))
    i++;
  if (i < len && buf[i] == '{') {
    rc = js_request(buf, len, o, out, err);
    /* "\n{" also opens a PushRequest in protobuf: field 1 (a series) of 123 bytes */
    if (rc == SPAA_E_BAD_JSON && len >= 2 && buf[0] == '\n' && buf[1] == '{') {
      struct spaa_err perr;
      drop_from(out, first);
      spaa_err_clear(&perr);
      if (!pb_request(buf, len, o, out, &perr))
        rc = 0;
    }
  } else {
    rc = pb_request(buf, len, o, out, err);
  }
  if (rc) /* all or nothing */
    drop_from(out, first);
  return rc;
}
