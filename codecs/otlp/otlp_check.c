/* OTLP profiles validation: every dictionary index in range, table[0] the zero value (by
 * value), attribute keys unique per list, values/timestamps lengths, times in range. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/idmap.h"
#include "otlp/otlp_int.h"

const char *otlp__str(const OT_Dict *d, int32_t i)
{
  if (i == 0)
    return "";
  if (i < 0 || (size_t)i >= d->n_string_table)
    return NULL;
  return d->string_table[i];
}

static int zero_bytes(const ProtobufCBinaryData *b)
{
  size_t i;
  for (i = 0; i < b->len; i++)
    if (b->data[i])
      return 0;
  return 1;
}

/* an AnyValue equal to the default: unset, or a member holding its type's zero */
static int any_is_zero(const OT_AnyValue *v)
{
  if (!v)
    return 1;
  switch (v->value_case) {
  case OT_ANY(STRING_VALUE):
    return !v->string_value || !v->string_value[0];
  case OT_ANY(BOOL_VALUE):
    return !v->bool_value;
  case OT_ANY(INT_VALUE):
    return v->int_value == 0;
  case OT_ANY(DOUBLE_VALUE):
    return v->double_value == 0;
  case OT_ANY(BYTES_VALUE):
    return v->bytes_value.len == 0;
  case OT_ANY(STRING_VALUE_STRINDEX):
    return v->string_value_strindex == 0;
  case OT_ANY(ARRAY_VALUE):
    return !v->array_value || !v->array_value->n_values;
  case OT_ANY(KVLIST_VALUE):
    return !v->kvlist_value || !v->kvlist_value->n_values;
  default:
    return 1;
  }
}

#define BAD(...) (spaa_err_set(err, SPAA_E_INVALID, 0, 0, __VA_ARGS__))

static int check_str(const OT_Dict *d, int32_t i, const char *table, size_t at, const char *field,
                     struct spaa_err *err)
{
  if (!otlp__str(d, i))
    return BAD("dictionary: %s[%zu].%s references string %" PRId32 ", but there are %zu strings",
               table, at, field, i, d->n_string_table);
  return 0;
}

/* string_value_strindex and key_strindex inside a value, at any depth */
static int check_any(const OT_Dict *d, const OT_AnyValue *v, const char *where, size_t at,
                     struct spaa_err *err)
{
  size_t i;
  int rc;
  if (!v)
    return 0;
  if (v->value_case == OT_ANY(STRING_VALUE_STRINDEX))
    return check_str(d, v->string_value_strindex, where, at, "value.string_value_strindex", err);
  if (v->value_case == OT_ANY(ARRAY_VALUE) && v->array_value)
    for (i = 0; i < v->array_value->n_values; i++)
      if ((rc = check_any(d, v->array_value->values[i], where, at, err)))
        return rc;
  if (v->value_case == OT_ANY(KVLIST_VALUE) && v->kvlist_value)
    for (i = 0; i < v->kvlist_value->n_values; i++) {
      const OT_KeyValue *kv = v->kvlist_value->values[i];
      if ((rc = check_str(d, kv->key_strindex, where, at, "value.kvlist key_strindex", err)) ||
          (rc = check_any(d, kv->value, where, at, err)))
        return rc;
    }
  return 0;
}

size_t otlp__dup_key(struct otlp_dictx *x, const int32_t *idx, size_t n)
{
  size_t i;
  if (n < 2)
    return 0;
  if (++x->gen == 0) {
    memset(x->stamp, 0, x->d->n_string_table * sizeof(*x->stamp));
    x->gen = 1;
  }
  for (i = 0; i < n; i++) {
    const OT_KVU *a;
    int32_t k;
    /* out-of-range indices are reported by the range checks; here they are only skipped */
    if (idx[i] < 0 || (size_t)idx[i] >= x->d->n_attribute_table)
      continue;
    a = x->d->attribute_table[idx[i]];
    if (a->key_strindex < 0 || (size_t)a->key_strindex >= x->d->n_string_table)
      continue;
    k = a->key_strindex > 0 ? x->canon[a->key_strindex] : 0;
    if (x->stamp && (size_t)k < x->d->n_string_table) {
      if (x->stamp[k] == x->gen)
        return i + 1;
      x->stamp[k] = x->gen;
    }
  }
  return 0;
}

static int check_attr_list(struct otlp_dictx *x, const int32_t *idx, size_t n, const char *table,
                           size_t at, struct spaa_err *err)
{
  size_t i, dup;
  for (i = 0; i < n; i++)
    if (idx[i] < 0 || (size_t)idx[i] >= x->d->n_attribute_table)
      return BAD("dictionary: %s[%zu] references attribute %" PRId32 ", but there are %zu "
                 "attributes", table, at, idx[i], x->d->n_attribute_table);
  if ((dup = otlp__dup_key(x, idx, n)))
    return BAD("dictionary: %s[%zu] repeats attribute key \"%s\"", table, at,
               otlp__str(x->d, x->d->attribute_table[idx[dup - 1]]->key_strindex));
  return 0;
}

void otlp__dict_close(struct otlp_dictx *x)
{
  if (!x)
    return;
  free(x->canon);
  free(x->stamp);
  memset(x, 0, sizeof(*x));
}

int otlp__dict_open(struct otlp_dictx *x, const OT_Dict *d, const struct otlp_cdict *cd,
                    struct spaa_err *err)
{
  struct spaa_strmap sm;
  size_t i, j, ns = d->n_string_table;
  int rc = 0;
  memset(x, 0, sizeof(*x));
  x->d = d;
  x->cd = cd;
  spaa_strmap_init(&sm);
  if (ns && (!(x->canon = malloc(ns * sizeof(*x->canon))) ||
             !(x->stamp = calloc(ns, sizeof(*x->stamp)))))
    goto nomem;
  for (i = 0; i < ns; i++) {
    size_t first;
    int r = spaa_strmap_put(&sm, d->string_table[i], strlen(d->string_table[i]), i, &first);
    if (r < 0)
      goto nomem;
    x->canon[i] = (int32_t)(r == 1 ? first : i);
  }
  /* element 0 of every present table is the zero value */
  if (ns && d->string_table[0][0]) {
    rc = BAD("dictionary: string_table[0] must be \"\"");
    goto out;
  }
#define ZERO0(cond, what)                                                                     \
  if (cond) {                                                                                 \
    rc = BAD("dictionary: %s[0] must be the zero value", what);                             \
    goto out;                                                                                 \
  }
  ZERO0(d->n_mapping_table &&
            (d->mapping_table[0]->memory_start || d->mapping_table[0]->memory_limit ||
             d->mapping_table[0]->file_offset || d->mapping_table[0]->filename_strindex ||
             d->mapping_table[0]->n_attribute_indices),
        "mapping_table");
  ZERO0(cd->n_locs && (cd->locs[0].mapping_index || cd->locs[0].address ||
                       cd->locs[0].n_lines || cd->locs[0].n_attrs),
        "location_table");
  ZERO0(d->n_function_table &&
            (d->function_table[0]->name_strindex || d->function_table[0]->system_name_strindex ||
             d->function_table[0]->filename_strindex || d->function_table[0]->start_line),
        "function_table");
  ZERO0(d->n_link_table &&
            (!zero_bytes(&d->link_table[0]->trace_id) || !zero_bytes(&d->link_table[0]->span_id)),
        "link_table");
  ZERO0(d->n_attribute_table &&
            (d->attribute_table[0]->key_strindex || d->attribute_table[0]->unit_strindex ||
             !any_is_zero(d->attribute_table[0]->value)),
        "attribute_table");
  ZERO0(cd->n_stacks && cd->stacks[0].n, "stack_table");
  /* references */
  for (i = 0; i < d->n_mapping_table; i++) {
    const OT_Mapping *m = d->mapping_table[i];
    if ((rc = check_str(d, m->filename_strindex, "mapping_table", i, "filename_strindex", err)) ||
        (rc = check_attr_list(x, m->attribute_indices, m->n_attribute_indices, "mapping_table", i,
                              err)))
      goto out;
  }
  for (i = 0; i < d->n_function_table; i++) {
    const OT_Function *f = d->function_table[i];
    if ((rc = check_str(d, f->name_strindex, "function_table", i, "name_strindex", err)) ||
        (rc = check_str(d, f->system_name_strindex, "function_table", i, "system_name_strindex",
                        err)) ||
        (rc = check_str(d, f->filename_strindex, "function_table", i, "filename_strindex", err)))
      goto out;
  }
  for (i = 0; i < cd->n_locs; i++) {
    const struct otlp_cloc *l = &cd->locs[i];
    if (l->mapping_index < 0 ||
        (l->mapping_index && (size_t)l->mapping_index >= d->n_mapping_table)) {
      rc = BAD("dictionary: location_table[%zu] references mapping %" PRId32 ", but there are %zu "
               "mappings", i, l->mapping_index, d->n_mapping_table);
      goto out;
    }
    for (j = 0; j < l->n_lines; j++) {
      int32_t f = otlp__loc_lines(cd, l)[j].function_index;
      if (f < 0 || (f && (size_t)f >= d->n_function_table)) {
        rc = BAD("dictionary: location_table[%zu].lines[%zu] references function %" PRId32
                 ", but there are %zu functions", i, j, f, d->n_function_table);
        goto out;
      }
    }
    if ((rc = check_attr_list(x, otlp__loc_attrs(cd, l), l->n_attrs, "location_table", i, err)))
      goto out;
  }
  for (i = 0; i < d->n_link_table; i++) {
    const OT_Link *l = d->link_table[i];
    if ((l->trace_id.len != 0 && l->trace_id.len != 16) ||
        (l->span_id.len != 0 && l->span_id.len != 8)) {
      rc = BAD("dictionary: link_table[%zu] has a trace_id of %zu bytes and a span_id of %zu "
               "bytes (want 16 and 8)", i, l->trace_id.len, l->span_id.len);
      goto out;
    }
  }
  for (i = 0; i < d->n_attribute_table; i++) {
    const OT_KVU *a = d->attribute_table[i];
    if ((rc = check_str(d, a->key_strindex, "attribute_table", i, "key_strindex", err)) ||
        (rc = check_str(d, a->unit_strindex, "attribute_table", i, "unit_strindex", err)) ||
        (rc = check_any(d, a->value, "attribute_table", i, err)))
      goto out;
  }
  for (i = 0; i < cd->n_stacks; i++) {
    const int32_t *s = otlp__stack_locs(cd, i);
    for (j = 0; j < cd->stacks[i].n; j++) {
      int32_t l = s[j];
      if (l < 0 || (size_t)l >= cd->n_locs) {
        rc = BAD("dictionary: stack_table[%zu] references location %" PRId32 ", but there are "
                 "%zu locations", i, l, cd->n_locs);
        goto out;
      }
    }
  }
  spaa_strmap_free(&sm);
  return 0;
nomem:
  rc = spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
out:
  spaa_strmap_free(&sm);
  otlp__dict_close(x);
  return rc;
}

static void set_reason(char *reason, size_t cap, const char *r)
{
  if (cap)
    snprintf(reason, cap, "%s", r);
}

int otlp__check_profile(struct otlp_dictx *x, const struct otlp_unit *u, size_t *n_stamps,
                        char *reason, size_t reason_cap, size_t *n_warn, char *warn,
                        size_t warn_cap, struct spaa_err *err)
{
  const OT_Dict *d = x->d;
  const OT_Profile *p = u->profile;
  size_t i, j, dup, ns = x->cd->n_stacks, na = d->n_attribute_table, nl = d->n_link_table;
  uint64_t t0 = p->time_unix_nano, t1;
  struct otlp_samples it;
  const OT_Sample *s;
  int rc;
  memset(&it, 0, sizeof(it));
  *n_warn = 0;
  *n_stamps = 0;
  if (warn_cap)
    warn[0] = 0;
#define FAIL(r, ...)                                                                          \
  do {                                                                                        \
    set_reason(reason, reason_cap, r);                                                        \
    rc = BAD(__VA_ARGS__); /* before the scratch sample the message may read is freed */      \
    otlp__samples_close(&it);                                                                 \
    return rc;                                                                                \
  } while (0)
  if (p->sample_type && (!otlp__str(d, p->sample_type->type_strindex) ||
                         !otlp__str(d, p->sample_type->unit_strindex)))
    FAIL("invalid_index", "sample_type references strings %" PRId32 " (type) and %" PRId32
         " (unit), but there are %zu strings", p->sample_type->type_strindex,
         p->sample_type->unit_strindex, d->n_string_table);
  if (p->period_type && (!otlp__str(d, p->period_type->type_strindex) ||
                         !otlp__str(d, p->period_type->unit_strindex)))
    FAIL("invalid_index", "period_type references strings %" PRId32 " (type) and %" PRId32
         " (unit), but there are %zu strings", p->period_type->type_strindex,
         p->period_type->unit_strindex, d->n_string_table);
  if (p->profile_id.len != 0 && p->profile_id.len != 16)
    FAIL("bad_profile_id", "profile_id has %zu bytes, want 16", p->profile_id.len);
  if (t0 > INT64_MAX || p->duration_nano > (uint64_t)INT64_MAX - t0)
    FAIL("bad_time", "time_unix_nano %" PRIu64 " + duration_nano %" PRIu64 " passes year 2262",
         t0, p->duration_nano);
  t1 = t0 + p->duration_nano;
  for (i = 0; i < p->n_attribute_indices; i++)
    if (p->attribute_indices[i] < 0 || (size_t)p->attribute_indices[i] >= na)
      FAIL("invalid_index", "attribute_indices[%zu] references attribute %" PRId32 ", but there "
           "are %zu attributes", i, p->attribute_indices[i], na);
  if ((dup = otlp__dup_key(x, p->attribute_indices, p->n_attribute_indices)))
    FAIL("duplicate_attribute", "attribute_indices repeat the key \"%s\"",
         otlp__str(d, d->attribute_table[p->attribute_indices[dup - 1]]->key_strindex));
  otlp__samples_open(&it, u);
  for (i = 0; (rc = otlp__samples_next(&it, &s)) == 1; i++) {
    if (s->stack_index < 0 || ((size_t)s->stack_index >= ns && !(s->stack_index == 0 && !ns)))
      FAIL("invalid_index", "sample %zu references stack %" PRId32 ", but there are %zu stacks",
           i, s->stack_index, ns);
    for (j = 0; j < s->n_attribute_indices; j++)
      if (s->attribute_indices[j] < 0 || (size_t)s->attribute_indices[j] >= na)
        FAIL("invalid_index", "sample %zu references attribute %" PRId32 ", but there are %zu "
             "attributes%s", i, s->attribute_indices[j], na,
             s->n_values ? "" : " (a v1.9 sender's values read as attribute indices?)");
    if ((dup = otlp__dup_key(x, s->attribute_indices, s->n_attribute_indices)))
      FAIL("duplicate_attribute", "sample %zu repeats the attribute key \"%s\"", i,
           otlp__str(d, d->attribute_table[s->attribute_indices[dup - 1]]->key_strindex));
    if (s->link_index < 0 || (s->link_index && (size_t)s->link_index >= nl))
      FAIL("invalid_index", "sample %zu references link %" PRId32 ", but there are %zu links", i,
           s->link_index, nl);
    if (!s->n_values && !s->n_timestamps_unix_nano)
      FAIL("empty_sample", "sample %zu has neither values nor timestamps", i);
    if (s->n_values && s->n_timestamps_unix_nano && s->n_values != s->n_timestamps_unix_nano &&
        !u->loose_timestamps)
      FAIL("length_mismatch", "sample %zu has %zu values but %zu timestamps (they must be the "
           "same length)", i, s->n_values, s->n_timestamps_unix_nano);
    *n_stamps += s->n_timestamps_unix_nano; /* each is at least a byte of the request */
    for (j = 0; j < s->n_timestamps_unix_nano; j++) {
      uint64_t ts = s->timestamps_unix_nano[j];
      if (ts > INT64_MAX)
        FAIL("bad_time", "sample %zu timestamp %zu (%" PRIu64 ") passes year 2262", i, j, ts);
      if (t0 && (ts < t0 || (p->duration_nano && (u->closed_window ? ts > t1 : ts >= t1))) &&
          (*n_warn)++ == 0 && warn_cap)
        snprintf(warn, warn_cap, "sample %zu timestamp %" PRIu64 " lies outside the profile "
                 "window [%" PRIu64 ", %" PRIu64 "%c", i, ts, t0, t1,
                 u->closed_window ? ']' : ')');
    }
  }
  otlp__samples_close(&it);
  if (rc)
    return spaa_err_set(err, rc, 0, 0, "sample %zu: %s", i, spaa_err_default(rc));
  return 0;
#undef FAIL
}
