/* JSON shaping for the query API: profile metadata and list pages from storage's structs, and
 * the hex text form of list cursors (see api_json.h). */
#include "server/api_json.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hex.h"
#include "base/limits.h"
#include "base/rfc3339.h"

static json_t *int_or_null(int64_t v) { return v ? json_integer(v) : json_null(); }

static json_t *time_or_null(int64_t ns)
{
  char t[SPAA_RFC3339_SIZE];
  if (!ns)
    return json_null();
  spaa_rfc3339_format_ns(t, ns, 9);
  return json_string(t);
}

static json_t *events_json(const struct spaa_store_profile_info *pi)
{
  json_t *arr = json_array();
  size_t i, j;
  for (i = 0; arr && i < pi->n_events; i++) {
    const struct spaa_store_event *e = &pi->events[i];
    json_t *o = json_object(), *tot = json_object();
    for (j = 0; tot && j < e->n_totals; j++)
      json_object_set_new(tot, e->totals[j].metric,
                          e->totals[j].value.is_float ? json_real(e->totals[j].value.f)
                                                      : json_integer(e->totals[j].value.i));
    /* the _new calls take their value's reference even when they fail */
    if (!o || !tot || json_object_set_new(o, "name", json_string(e->name))) {
      json_decref(tot);
      json_decref(o);
      json_decref(arr);
      return NULL;
    }
    if (json_object_set_new(o, "totals", tot)) {
      json_decref(o);
      json_decref(arr);
      return NULL;
    }
    if (json_array_append_new(arr, o)) {
      json_decref(arr);
      return NULL;
    }
  }
  return arr;
}

static json_t *labels_json(const struct spaa_store_profile_info *pi)
{
  json_t *o = json_object();
  size_t i;
  for (i = 0; o && i < pi->n_labels; i++)
    if (json_object_set_new(o, pi->labels[i].key,
                            json_stringn(pi->labels[i].value, pi->labels[i].value_len))) {
      json_decref(o);
      return NULL;
    }
  return o;
}

/* The stored attrs (canonical JSON text), {} when there are none or they do not parse. */
static json_t *attrs_json(const struct spaa_store_profile_info *pi)
{
  json_error_t je;
  json_t *v = NULL;
  if (pi->attrs_json)
    v = json_loadb(pi->attrs_json, strlen(pi->attrs_json), JSON_DECODE_ANY | JSON_ALLOW_NUL,
                   &je);
  return v ? v : json_object();
}

json_t *spaa_api_profile_json(const struct spaa_store_profile_info *pi)
{
  json_t *o = json_object(), *events = events_json(pi), *labels = labels_json(pi);
  char when[SPAA_RFC3339_SIZE];
  if (!o || !events || !labels) {
    json_decref(o);
    json_decref(events);
    json_decref(labels);
    return NULL;
  }
  spaa_rfc3339_format_ns(when, pi->received_ns, 9);
  /* as before the split: a member whose value cannot be made (a string that is not UTF-8)
   * is left out rather than failing the whole answer */
  json_object_set_new(o, "id", json_string(pi->id));
  json_object_set_new(o, "service", json_string(pi->service));
  json_object_set_new(o, "source", json_string(pi->source));
  json_object_set_new(o, "received_at", json_string(when));
  json_object_set_new(o, "start", int_or_null(pi->start_ns));
  json_object_set_new(o, "end", int_or_null(pi->end_ns));
  /* the same instants exact for readers whose numbers are doubles (JavaScript, jq): a
   * nanosecond count past 2^53 loses its last digits there */
  json_object_set_new(o, "start_at", time_or_null(pi->start_ns));
  json_object_set_new(o, "end_at", time_or_null(pi->end_ns));
  json_object_set_new(o, "events", events);
  json_object_set_new(o, "samples", json_integer(pi->samples));
  json_object_set_new(o, "payload_bytes", json_integer((json_int_t)pi->payload_bytes));
  json_object_set_new(o, "labels", labels);
  json_object_set_new(o, "attrs", attrs_json(pi));
  return o;
}

int spaa_api_page_json(const struct spaa_store_page *pg, json_t **out, struct spaa_err *err)
{
  json_t *res = json_object(), *arr = json_array(), *next = NULL;
  char cur[SPAA_QUERY_MAX_CURSOR + 1];
  size_t i;
  int rc = 0;
  *out = NULL;
  if (!res || !arr) {
    json_decref(arr);
    rc = spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
    goto out;
  }
  if (json_object_set_new(res, "profiles", arr)) { /* arr went with the failure */
    rc = spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
    goto out;
  }
  for (i = 0; i < pg->n; i++)
    if (json_array_append_new(arr, spaa_api_profile_json(&pg->profiles[i]))) {
      rc = spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
      goto out;
    }
  if (pg->has_next && (rc = spaa_api_cursor_encode(&pg->next, cur, sizeof(cur)))) {
    spaa_err_set(err, rc, 0, 0, "making the next cursor");
    goto out;
  }
  if (pg->has_next && !(next = json_string(cur))) {
    rc = spaa_err_set(err, SPAA_E_NOMEM, 0, 0, "making the next cursor");
    goto out;
  }
  json_object_set_new(res, "next_cursor", next ? next : json_null());
  *out = res;
  res = NULL;
out:
  json_decref(res);
  return rc;
}

/* ---- cursors ----------------------------------------------------------------------------- */

int spaa_api_cursor_decode(const char *cur, int64_t *received, char *id, size_t cap,
                           struct spaa_err *err)
{
  char raw[SPAA_QUERY_MAX_CURSOR / 2 + 1], *colon, *end;
  size_t len = strlen(cur);
  long long v;
  if (!len || len > SPAA_QUERY_MAX_CURSOR || len % 2 || spaa_hex_decode(raw, cur, len, 1) ||
      memchr(raw, 0, len / 2))
    goto bad;
  raw[len / 2] = 0;
  colon = strchr(raw, ':');
  if (!colon || colon == raw || !colon[1] || strlen(colon + 1) >= cap)
    goto bad;
  *colon = 0;
  if (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9'))
    goto bad;
  errno = 0;
  v = strtoll(raw, &end, 10);
  if (errno || *end)
    goto bad;
  *received = (int64_t)v;
  strcpy(id, colon + 1);
  return 0;
bad:
  return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0, "malformed cursor: pass next_cursor from "
                      "a previous answer as it was");
}

int spaa_api_cursor_encode(const struct spaa_store_cursor *c, char *out, size_t cap)
{
  char raw[SPAA_QUERY_MAX_CURSOR / 2 + 32];
  int n = snprintf(raw, sizeof(raw), "%" PRId64 ":%s", c->received_ns, c->id ? c->id : "");
  if (n < 0 || (size_t)n >= sizeof(raw) || 2 * n > SPAA_QUERY_MAX_CURSOR || (size_t)(2 * n) >= cap)
    return SPAA_E_INTERNAL;
  spaa_hex_encode(out, raw, (size_t)n);
  return 0;
}
