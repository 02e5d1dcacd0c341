/* What both engines' selections share: the checks of a list query, and the labels and
 * event totals columns (canonical JSON text) turned into the structs storage.h returns. */
#include <stdlib.h>
#include <string.h>

#include "storage/engine_int.h"

int storage__check_query(const struct spaa_list_query *q, struct spaa_err *err)
{
  size_t i;
  if (q->limit > SPAA_QUERY_MAX_PAGE)
    return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0, "limit %zu is over %d", q->limit,
                        SPAA_QUERY_MAX_PAGE);
  if (q->n_labels > SPAA_QUERY_MAX_LABELS || (q->n_labels && !q->labels))
    return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0, "label filters must be an object of "
                        "at most %d strings", SPAA_QUERY_MAX_LABELS);
  for (i = 0; i < q->n_labels; i++)
    if (!q->labels[i].key || !q->labels[i].value)
      return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0, "label filter \"%.64s\" is not a "
                          "string", q->labels[i].key ? q->labels[i].key : "");
  if (q->n_attrs > SPAA_QUERY_MAX_ATTRS || (q->n_attrs && !q->attrs))
    return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0, "at most %d attribute filters",
                        SPAA_QUERY_MAX_ATTRS);
  for (i = 0; i < q->n_attrs; i++) {
    const char *k = q->attrs[i].key;
    size_t n = k ? strlen(k) : 0;
    if (!n || n >= SPAA_QUERY_MAX_ATTR_KEY ||
        strspn(k, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != n ||
        !q->attrs[i].value)
      return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0, "bad attribute filter \"%.64s\": "
                          "expected a name of letters, digits and _ and a string", k ? k : "");
  }
  if (q->after && !q->after->id)
    return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0, "malformed cursor: it names no profile");
  return 0;
}

int storage__labels_of(const char *text, size_t len, struct spaa_store_profile_info *pi)
{
  json_t *o = text ? storage__json_parse(text, len) : NULL, *v;
  const char *k;
  int rc = 0;
  if (!json_is_object(o) || !json_object_size(o))
    goto out;
  if (!(pi->labels = calloc(json_object_size(o), sizeof(*pi->labels)))) {
    rc = SPAA_E_NOMEM;
    goto out;
  }
  json_object_foreach(o, k, v) {
    struct spaa_store_label *l = &pi->labels[pi->n_labels];
    size_t n = json_string_length(v);
    if (!json_is_string(v))
      continue;
    pi->n_labels++;
    if (!(l->key = strdup(k)) || !(l->value = malloc(n + 1))) {
      rc = SPAA_E_NOMEM;
      goto out;
    }
    memcpy(l->value, json_string_value(v), n);
    l->value[n] = 0;
    l->value_len = n;
  }
out:
  json_decref(o);
  return rc;
}

int storage__totals_of(const char *text, size_t len, struct spaa_store_event *e)
{
  json_t *o = text ? storage__json_parse(text, len) : NULL, *v;
  const char *k;
  int rc = 0;
  if (!json_is_object(o) || !json_object_size(o))
    goto out;
  if (!(e->totals = calloc(json_object_size(o), sizeof(*e->totals)))) {
    rc = SPAA_E_NOMEM;
    goto out;
  }
  json_object_foreach(o, k, v) {
    struct spaa_store_total *t = &e->totals[e->n_totals];
    if (!json_is_number(v))
      continue;
    t->value = json_is_integer(v) ? spaa_int(json_integer_value(v))
                                  : spaa_float(json_real_value(v));
    e->n_totals++;
    if (!(t->metric = strdup(k))) {
      rc = SPAA_E_NOMEM;
      goto out;
    }
  }
out:
  json_decref(o);
  return rc;
}
