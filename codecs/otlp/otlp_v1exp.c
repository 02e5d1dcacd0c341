/* OTLP v1experimental (proto v1.3.0): translate each ProfileContainer into v1development
 * dictionaries and profiles (one per sample type), so that one converter serves both. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/idmap.h"
#include "otlp/otlp_int.h"

#define KEY_GNU "process.executable.build_id.gnu"
#define KEY_HTL "process.executable.build_id.htlhash"
#define KEY_FRAME_TYPE "profile.frame.type"

struct xb {
  OT_Dict *d;               /* the dictionary being built */
  size_t cap_str, cap_attr; /* capacities of string_table and attribute_table */
  struct spaa_strmap strs;  /* string -> index (keys borrowed from d->string_table) */
  struct spaa_err *err;
};

static void *newmsg(const ProtobufCMessageDescriptor *d)
{
  ProtobufCMessage *m = malloc(d->sizeof_message);
  if (m)
    d->message_init(m);
  return m;
}

static int own(struct otlp_request *r, void *m)
{
  if (r->n_owned == r->cap_owned) {
    size_t nc = r->cap_owned ? r->cap_owned * 2 : 8;
    ProtobufCMessage **nv = realloc(r->owned, nc * sizeof(*nv));
    if (!nv)
      return SPAA_E_NOMEM;
    r->owned = nv;
    r->cap_owned = nc;
  }
  r->owned[r->n_owned++] = m;
  return 0;
}

/* The compact tables of dictionary d (also when its translation failed part way: the
 * dictionary is still opened), owned by r. 0, SPAA_E_NOMEM or SPAA_E_TOO_LARGE. */
static int own_cdict(struct otlp_request *r, const OT_Dict *d, struct otlp_cdict **out)
{
  struct otlp_cdict *cd;
  int rc;
  if (otlp__room((void **)&r->xcdicts, r->n_xcdicts + 1, &r->cap_xcdicts, sizeof(*r->xcdicts)) ||
      !(cd = calloc(1, sizeof(*cd))))
    return SPAA_E_NOMEM;
  r->xcdicts[r->n_xcdicts++] = cd;
  if ((rc = otlp__cdict_msgs(cd, d)))
    return rc;
  *out = cd;
  return 0;
}

/* index of string s in the table, appending it when new; -1 on OOM */
static int32_t intern(struct xb *b, const char *s)
{
  size_t idx, len = strlen(s);
  char *copy;
  if (spaa_strmap_get(&b->strs, s, len, &idx))
    return (int32_t)idx;
  if (b->d->n_string_table >= INT32_MAX)
    return -1;
  if (b->d->n_string_table == b->cap_str) {
    size_t nc = b->cap_str ? b->cap_str * 2 : 16;
    char **nv = realloc(b->d->string_table, nc * sizeof(*nv));
    if (!nv)
      return -1;
    b->d->string_table = nv;
    b->cap_str = nc;
  }
  if (!(copy = strdup(s)))
    return -1;
  idx = b->d->n_string_table;
  b->d->string_table[b->d->n_string_table++] = copy;
  if (spaa_strmap_put(&b->strs, copy, len, idx, NULL) < 0)
    return -1;
  return (int32_t)idx;
}

/* append a KeyValueAndUnit (value owned by it); its index or -1 on OOM */
static int32_t add_attr(struct xb *b, int32_t key, OT_AnyValue *value, int32_t unit)
{
  OT_KVU *kv;
  if (b->d->n_attribute_table == b->cap_attr) {
    size_t nc = b->cap_attr ? b->cap_attr * 2 : 16;
    OT_KVU **nv = realloc(b->d->attribute_table, nc * sizeof(*nv));
    if (!nv)
      return -1;
    b->d->attribute_table = nv;
    b->cap_attr = nc;
  }
  if (!(kv = newmsg(&OT_KVU_DESC)))
    return -1;
  kv->key_strindex = key;
  kv->value = value;
  kv->unit_strindex = unit;
  b->d->attribute_table[b->d->n_attribute_table++] = kv;
  return (int32_t)(b->d->n_attribute_table - 1);
}

/* a string AnyValue */
static OT_AnyValue *any_str(const char *s)
{
  OT_AnyValue *v = newmsg(&OT_ANY_DESC);
  if (v && !(v->string_value = strdup(s))) {
    free(v);
    return NULL;
  }
  if (v)
    v->value_case = OT_ANY(STRING_VALUE);
  return v;
}

/* deep copy of any message through its wire form */
static void *copy_msg(const ProtobufCMessage *m)
{
  size_t n = protobuf_c_message_get_packed_size(m);
  uint8_t *tmp = malloc(n ? n : 1);
  void *c;
  if (!tmp)
    return NULL;
  protobuf_c_message_pack(m, tmp);
  c = protobuf_c_message_unpack(m->descriptor, NULL, n, tmp);
  free(tmp);
  return c;
}

/* a v1experimental string index as a v1development one */
static int sidx(struct xb *b, int64_t i, const char *what, int32_t *out)
{
  if (i < 0 || (uint64_t)i >= b->d->n_string_table)
    return spaa_err_set(b->err, SPAA_E_INVALID, 0, 0, "%s references string %" PRId64
                        ", but there are %zu strings", what, i, b->d->n_string_table);
  *out = (int32_t)i;
  return 0;
}

/* a KeyValue (key by name) as a dictionary attribute; its index or -1 */
static int32_t kv_attr(struct xb *b, const OT_KeyValue *kv, const OX_Profile *p)
{
  int32_t key = intern(b, kv->key ? kv->key : ""), unit = 0;
  OT_AnyValue *v = NULL;
  size_t i;
  if (key < 0)
    return -1;
  for (i = 0; p && i < p->n_attribute_units; i++) {
    const char *k = p->attribute_units[i]->attribute_key >= 0 &&
                            (uint64_t)p->attribute_units[i]->attribute_key < p->n_string_table
                        ? p->string_table[p->attribute_units[i]->attribute_key]
                        : NULL;
    int64_t u = p->attribute_units[i]->unit;
    if (k && strcmp(k, kv->key ? kv->key : "") == 0 && u > 0 && (uint64_t)u < p->n_string_table)
      unit = (int32_t)u;
  }
  if (kv->value && !(v = copy_msg(&kv->value->base)))
    return -1;
  return add_attr(b, key, v, unit);
}

static int nomem(struct xb *b) { return spaa_err_set(b->err, SPAA_E_NOMEM, 0, 0, NULL); }

/* The string table: the Profile's own, same indices (duplicates keep theirs), or [""] when
 * it has none. 0 or an error code (b->err filled). */
static int dict_strings(struct xb *b, const OX_Profile *p)
{
  OT_Dict *d = b->d;
  size_t i;
  if (p->n_string_table > INT32_MAX / 2)
    return spaa_err_set(b->err, SPAA_E_INVALID, 0, 0, "string_table too long");
  if (p->n_string_table && p->string_table[0][0])
    return spaa_err_set(b->err, SPAA_E_INVALID, 0, 0, "string_table[0] is not \"\"");
  if (!p->n_string_table && intern(b, "") != 0)
    return nomem(b);
  for (i = 0; i < p->n_string_table; i++) {
    /* duplicates keep their own index: append without interning */
    if (d->n_string_table == b->cap_str) {
      size_t nc = b->cap_str ? b->cap_str * 2 : 16;
      char **nv = realloc(d->string_table, nc * sizeof(*nv));
      if (!nv)
        return nomem(b);
      d->string_table = nv;
      b->cap_str = nc;
    }
    if (!(d->string_table[d->n_string_table] = strdup(p->string_table[i])))
      return nomem(b);
    d->n_string_table++;
    spaa_strmap_put(&b->strs, d->string_table[i], strlen(d->string_table[i]), i, NULL);
  }
  return 0;
}

/* The function table: a zero entry, then function i at i + 1. 0 or an error code. */
static int dict_functions(struct xb *b, const OX_Profile *p)
{
  OT_Dict *d = b->d;
  size_t i;
  int rc;
  d->n_function_table = p->n_function + 1;
  if (!(d->function_table = calloc(d->n_function_table, sizeof(*d->function_table))))
    return nomem(b);
  for (i = 0; i < d->n_function_table; i++)
    if (!(d->function_table[i] = newmsg(&OT_FUNCTION_DESC))) {
      d->n_function_table = i;
      return nomem(b);
    }
  for (i = 0; i < p->n_function; i++) {
    const OX_Function *f = p->function[i];
    OT_Function *o = d->function_table[i + 1];
    if ((rc = sidx(b, f->name, "function name", &o->name_strindex)) ||
        (rc = sidx(b, f->system_name, "function system_name", &o->system_name_strindex)) ||
        (rc = sidx(b, f->filename, "function filename", &o->filename_strindex)))
      return rc;
    o->start_line = f->start_line;
  }
  return 0;
}

/* The mapping table: a zero entry, then mapping i at i + 1, its build id an attribute under
 * key k_gnu (or k_htl for an htlhash) ahead of its own attributes. 0 or an error code. */
static int dict_mappings(struct xb *b, const OX_Profile *p, int32_t k_gnu, int32_t k_htl)
{
  OT_Dict *d = b->d;
  size_t i, j;
  int rc;
  d->n_mapping_table = p->n_mapping + 1;
  if (!(d->mapping_table = calloc(d->n_mapping_table, sizeof(*d->mapping_table))))
    return nomem(b);
  for (i = 0; i < d->n_mapping_table; i++)
    if (!(d->mapping_table[i] = newmsg(&OT_MAPPING_DESC))) {
      d->n_mapping_table = i;
      return nomem(b);
    }
  for (i = 0; i < p->n_mapping; i++) {
    const OX_Mapping *m = p->mapping[i];
    OT_Mapping *o = d->mapping_table[i + 1];
    int32_t bid = 0;
    o->memory_start = m->memory_start;
    o->memory_limit = m->memory_limit;
    o->file_offset = m->file_offset;
    if ((rc = sidx(b, m->filename, "mapping filename", &o->filename_strindex)) ||
        (rc = sidx(b, m->build_id, "mapping build_id", &bid)))
      return rc;
    if (!(o->attribute_indices = calloc(m->n_attributes + 1, sizeof(int32_t))))
      return nomem(b);
    if (bid) {
      OT_AnyValue *v = any_str(d->string_table[bid]);
      int32_t a = v ? add_attr(b, m->build_id_kind == 1 ? k_htl : k_gnu, v, 0) : -1;
      if (a < 0)
        return nomem(b);
      o->attribute_indices[o->n_attribute_indices++] = a;
    }
    for (j = 0; j < m->n_attributes; j++) {
      if (m->attributes[j] >= p->n_attribute_table)
        return spaa_err_set(b->err, SPAA_E_INVALID, 0, 0, "mapping %zu references attribute %"
                            PRIu64 ", but there are %zu", i, m->attributes[j], p->n_attribute_table);
      o->attribute_indices[o->n_attribute_indices++] = (int32_t)m->attributes[j] + 1;
    }
  }
  return 0;
}

/* The lines of v1experimental location l (the i-th) into o. 0 or an error code. */
static int location_lines(struct xb *b, const OX_Profile *p, size_t i, const OX_Location *l,
                          OT_Location *o)
{
  size_t j;
  if (!l->n_line)
    return 0;
  if (!(o->lines = calloc(l->n_line, sizeof(*o->lines))))
    return nomem(b);
  for (j = 0; j < l->n_line; j++) {
    OT_Line *ln = newmsg(&OT_LINE_DESC);
    if (!ln)
      return nomem(b);
    o->lines[o->n_lines++] = ln;
    if (l->line[j]->function_index >= p->n_function)
      return spaa_err_set(b->err, SPAA_E_INVALID, 0, 0, "location %zu references function %"
                          PRIu64 ", but there are %zu", i, l->line[j]->function_index,
                          p->n_function);
    ln->function_index = (int32_t)l->line[j]->function_index + 1;
    ln->line = l->line[j]->line;
    ln->column = l->line[j]->column;
  }
  return 0;
}

/* The location table: a zero entry, then location i at i + 1, its type an attribute under
 * ftype_key ahead of its own attributes. 0 or an error code. */
static int dict_locations(struct xb *b, const OX_Profile *p, int32_t ftype_key)
{
  OT_Dict *d = b->d;
  size_t i, j;
  int rc;
  d->n_location_table = p->n_location + 1;
  if (!(d->location_table = calloc(d->n_location_table, sizeof(*d->location_table))))
    return nomem(b);
  for (i = 0; i < d->n_location_table; i++)
    if (!(d->location_table[i] = newmsg(&OT_LOCATION_DESC))) {
      d->n_location_table = i;
      return nomem(b);
    }
  for (i = 0; i < p->n_location; i++) {
    const OX_Location *l = p->location[i];
    OT_Location *o = d->location_table[i + 1];
    int32_t ft = 0;
    if (p->n_mapping && l->mapping_index >= p->n_mapping)
      return spaa_err_set(b->err, SPAA_E_INVALID, 0, 0, "location %zu references mapping %" PRIu64
                          ", but there are %zu", i, l->mapping_index, p->n_mapping);
    o->mapping_index = p->n_mapping ? (int32_t)l->mapping_index + 1 : 0;
    o->address = l->address;
    if ((rc = sidx(b, l->type_index, "location type_index", &ft)))
      return rc;
    if (!(o->attribute_indices = calloc(l->n_attributes + 1, sizeof(int32_t))))
      return nomem(b);
    if (ft) {
      OT_AnyValue *v = any_str(d->string_table[ft]);
      int32_t a = v ? add_attr(b, ftype_key, v, 0) : -1;
      if (a < 0)
        return nomem(b);
      o->attribute_indices[o->n_attribute_indices++] = a;
    }
    for (j = 0; j < l->n_attributes; j++) {
      if (l->attributes[j] >= p->n_attribute_table)
        return spaa_err_set(b->err, SPAA_E_INVALID, 0, 0, "location %zu references attribute %"
                            PRIu64 ", but there are %zu", i, l->attributes[j], p->n_attribute_table);
      o->attribute_indices[o->n_attribute_indices++] = (int32_t)l->attributes[j] + 1;
    }
    if ((rc = location_lines(b, p, i, l, o)))
      return rc;
  }
  return 0;
}

/* The link table: a zero entry, then copies of the Profile's links. 0 or SPAA_E_NOMEM. */
static int dict_links(struct xb *b, const OX_Profile *p)
{
  OT_Dict *d = b->d;
  size_t i;
  d->n_link_table = p->n_link_table + 1;
  if (!(d->link_table = calloc(d->n_link_table, sizeof(*d->link_table))))
    return nomem(b);
  for (i = 0; i < d->n_link_table; i++) {
    if (!(d->link_table[i] = i ? copy_msg(&p->link_table[i - 1]->base) : newmsg(&OT_LINK_DESC))) {
      d->n_link_table = i;
      return nomem(b);
    }
  }
  return 0;
}

/* Location j of sample s as a v1experimental location index (UINT64_MAX for a negative
 * one): from the shared location_indices, the implicit range, or the sample's own list. */
static uint64_t sample_location(const OX_Profile *p, const OX_Sample *s, size_t j)
{
  if (s->locations_length) {
    size_t at = (size_t)s->locations_start_index + j;
    if (p->n_location_indices) {
      int64_t li = p->location_indices[at];
      return li < 0 ? UINT64_MAX : (uint64_t)li;
    }
    return at;
  }
  return s->location_index[j];
}

/* The stack table: a zero entry, then one stack per sample (sample i's at i + 1). 0 or an
 * error code. */
static int dict_stacks(struct xb *b, const OX_Profile *p)
{
  OT_Dict *d = b->d;
  size_t i, j;
  d->n_stack_table = p->n_sample + 1;
  if (!(d->stack_table = calloc(d->n_stack_table, sizeof(*d->stack_table))))
    return nomem(b);
  for (i = 0; i < d->n_stack_table; i++)
    if (!(d->stack_table[i] = newmsg(&OT_STACK_DESC))) {
      d->n_stack_table = i;
      return nomem(b);
    }
  for (i = 0; i < p->n_sample; i++) {
    const OX_Sample *s = p->sample[i];
    OT_Stack *st = d->stack_table[i + 1];
    size_t n = s->locations_length ? (size_t)s->locations_length : s->n_location_index;
    size_t limit = p->n_location_indices ? p->n_location_indices : p->n_location;
    if (s->locations_length &&
        (s->locations_start_index > limit || s->locations_length > limit - s->locations_start_index))
      return spaa_err_set(b->err, SPAA_E_INVALID, 0, 0, "sample %zu: locations [%" PRIu64 ", +%"
                          PRIu64 ") out of range (%zu)", i, s->locations_start_index,
                          s->locations_length, limit);
    if (n && !(st->location_indices = calloc(n, sizeof(int32_t))))
      return nomem(b);
    for (j = 0; j < n; j++) {
      uint64_t loc = sample_location(p, s, j);
      if (loc >= p->n_location)
        return spaa_err_set(b->err, SPAA_E_INVALID, 0, 0, "sample %zu references location %"
                            PRIu64 ", but there are %zu", i, loc, p->n_location);
      st->location_indices[st->n_location_indices++] = (int32_t)loc + 1;
    }
  }
  return 0;
}

/* Build the dictionary of one v1experimental Profile; the index maps are implicit: every
 * table i of v1experimental becomes i + 1 (0 is the new zero entry). Attribute indices
 * 1..n_attribute_table are the Profile's attribute_table; added ones follow. */
static int build_dict(struct xb *b, const OX_Profile *p, int32_t *ftype_key)
{
  size_t i;
  int32_t k_gnu, k_htl;
  int rc;
  if ((rc = dict_strings(b, p)))
    return rc;
  /* attributes: zero, then the Profile's table in order */
  if (add_attr(b, 0, NULL, 0) < 0)
    return nomem(b);
  for (i = 0; i < p->n_attribute_table; i++)
    if (kv_attr(b, p->attribute_table[i], p) < 0)
      return nomem(b);
  if ((k_gnu = intern(b, KEY_GNU)) < 0 || (k_htl = intern(b, KEY_HTL)) < 0 ||
      (*ftype_key = intern(b, KEY_FRAME_TYPE)) < 0)
    return nomem(b);
  if ((rc = dict_functions(b, p)) || (rc = dict_mappings(b, p, k_gnu, k_htl)) ||
      (rc = dict_locations(b, p, *ftype_key)) || (rc = dict_links(b, p)) ||
      (rc = dict_stacks(b, p)))
    return rc;
  return 0;
}

/* The v1development profile for sample type t of container c. */
static int build_profile(struct xb *b, const OX_Container *c, size_t t, OT_Profile *o)
{
  const OX_Profile *p = c->profile;
  OT_ValueType *vt = NULL;
  size_t i, j;
  int rc;
  int count_unit = 0;
  if (p && t < p->n_sample_type) {
    int32_t ty = 0, un = 0;
    if ((rc = sidx(b, p->sample_type[t]->type, "sample_type", &ty)) ||
        (rc = sidx(b, p->sample_type[t]->unit, "sample_type unit", &un)))
      return rc;
    if (!(vt = newmsg(&OT_VALUETYPE_DESC)))
      return nomem(b);
    vt->type_strindex = ty;
    vt->unit_strindex = un;
    o->sample_type = vt;
    count_unit = strcmp(b->d->string_table[un], "count") == 0;
  }
  if (p && p->period_type) {
    if (!(vt = newmsg(&OT_VALUETYPE_DESC)))
      return nomem(b);
    o->period_type = vt;
    if ((rc = sidx(b, p->period_type->type, "period_type", &vt->type_strindex)) ||
        (rc = sidx(b, p->period_type->unit, "period_type unit", &vt->unit_strindex)))
      return rc;
  }
  o->period = p ? p->period : 0;
  if (c->start_time_unix_nano) {
    o->time_unix_nano = c->start_time_unix_nano;
    o->duration_nano = c->end_time_unix_nano > c->start_time_unix_nano
                           ? c->end_time_unix_nano - c->start_time_unix_nano
                           : 0;
  } else if (p && p->time_nanos > 0) {
    o->time_unix_nano = (uint64_t)p->time_nanos;
    o->duration_nano = p->duration_nanos > 0 ? (uint64_t)p->duration_nanos : 0;
  }
  if (t == 0 && c->profile_id.len) {
    if (!(o->profile_id.data = malloc(c->profile_id.len)))
      return nomem(b);
    memcpy(o->profile_id.data, c->profile_id.data, c->profile_id.len);
    o->profile_id.len = c->profile_id.len;
  }
  o->dropped_attributes_count = c->dropped_attributes_count;
  if (c->n_attributes) {
    if (!(o->attribute_indices = calloc(c->n_attributes, sizeof(int32_t))))
      return nomem(b);
    for (i = 0; i < c->n_attributes; i++) {
      int32_t a = kv_attr(b, c->attributes[i], p);
      if (a < 0)
        return nomem(b);
      o->attribute_indices[o->n_attribute_indices++] = a;
    }
  }
  if (!p || !p->n_sample)
    return 0;
  if (!(o->samples = calloc(p->n_sample, sizeof(*o->samples))))
    return nomem(b);
  for (i = 0; i < p->n_sample; i++) {
    const OX_Sample *s = p->sample[i];
    OT_Sample *so = newmsg(&OT_SAMPLE_DESC);
    if (!so)
      return nomem(b);
    o->samples[o->n_samples++] = so;
    so->stack_index = (int32_t)i + 1;
    if (s->n_attributes && !(so->attribute_indices = calloc(s->n_attributes, sizeof(int32_t))))
      return nomem(b);
    for (j = 0; j < s->n_attributes; j++) {
      if (s->attributes[j] >= p->n_attribute_table)
        return spaa_err_set(b->err, SPAA_E_INVALID, 0, 0, "sample %zu references attribute %"
                            PRIu64 ", but there are %zu", i, s->attributes[j], p->n_attribute_table);
      so->attribute_indices[so->n_attribute_indices++] = (int32_t)s->attributes[j] + 1;
    }
    if (s->link >= p->n_link_table && !(s->link == 0 && p->n_link_table == 0))
      return spaa_err_set(b->err, SPAA_E_INVALID, 0, 0, "sample %zu references link %" PRIu64
                          ", but there are %zu", i, s->link, p->n_link_table);
    so->link_index = p->n_link_table ? (int32_t)s->link + 1 : 0;
    if (s->n_timestamps_unix_nano) {
      if (!(so->timestamps_unix_nano = malloc(s->n_timestamps_unix_nano * sizeof(uint64_t))))
        return nomem(b);
      memcpy(so->timestamps_unix_nano, s->timestamps_unix_nano,
             s->n_timestamps_unix_nano * sizeof(uint64_t));
      so->n_timestamps_unix_nano = s->n_timestamps_unix_nano;
    }
    /* values: one per sample type; with several timestamps a "count" value is the
     * placeholder ebpf-profiler wrote (1): the timestamps count the events */
    if (t < s->n_value && !(count_unit && s->n_timestamps_unix_nano > 1)) {
      if (!(so->values = malloc(sizeof(int64_t))))
        return nomem(b);
      so->values[0] = s->value[t];
      so->n_values = 1;
    }
  }
  return 0;
}

int otlp__v1exp_units(struct otlp_request *r)
{
  const OX_Request *req = (const OX_Request *)r->msg;
  size_t ri, si, pi, t, total = 0;
  for (ri = 0; ri < req->n_resource_profiles; ri++)
    for (si = 0; si < req->resource_profiles[ri]->n_scope_profiles; si++)
      for (pi = 0; pi < req->resource_profiles[ri]->scope_profiles[si]->n_profiles; pi++) {
        const OX_Container *c = req->resource_profiles[ri]->scope_profiles[si]->profiles[pi];
        total += c->profile && c->profile->n_sample_type > 1 ? c->profile->n_sample_type : 1;
      }
  if (total && !(r->units = calloc(total, sizeof(*r->units))))
    return SPAA_E_NOMEM;
  for (ri = 0; ri < req->n_resource_profiles; ri++) {
    const OX_ResourceProfiles *rp = req->resource_profiles[ri];
    for (si = 0; si < rp->n_scope_profiles; si++) {
      const OX_ScopeProfiles *sp = rp->scope_profiles[si];
      for (pi = 0; pi < sp->n_profiles; pi++) {
        const OX_Container *c = sp->profiles[pi];
        size_t k = c->profile && c->profile->n_sample_type > 1 ? c->profile->n_sample_type : 1;
        struct spaa_err e;
        struct xb b;
        OT_Dict *d = newmsg(&OT_DICT_DESC);
        struct otlp_cdict *cd = NULL;
        int32_t ftk = 0;
        int rc, dict_rc;
        memset(&b, 0, sizeof(b));
        spaa_err_clear(&e);
        spaa_strmap_init(&b.strs);
        b.d = d;
        b.err = &e;
        if (!d || own(r, d)) {
          free(d);
          spaa_strmap_free(&b.strs);
          return SPAA_E_NOMEM;
        }
        dict_rc = c->profile ? build_dict(&b, c->profile, &ftk) : (intern(&b, "") < 0 ? nomem(&b) : 0);
        if (dict_rc != SPAA_E_NOMEM && (rc = own_cdict(r, d, &cd))) {
          spaa_strmap_free(&b.strs);
          return rc;
        }
        for (t = 0; t < k; t++) {
          struct otlp_unit *u = &r->units[r->n_units++];
          OT_Profile *o = NULL;
          u->dict = d;
          u->cdict = cd;
          u->resource = rp->resource;
          u->resource_schema = rp->schema_url ? rp->schema_url : "";
          u->scope = sp->scope;
          u->scope_schema = sp->schema_url ? sp->schema_url : "";
          u->origin.resource = ri;
          u->origin.scope = si;
          u->origin.profile = pi;
          u->origin.sample_type = t;
          u->origin.payload = c->original_payload.len ? c->original_payload.data : NULL;
          u->origin.payload_len = c->original_payload.len;
          u->origin.payload_format = c->original_payload_format ? c->original_payload_format : "";
          u->loose_timestamps = 1;
          u->closed_window = 1;
          rc = dict_rc;
          if (!rc) {
            if (!(o = newmsg(&OT_PROFILE_DESC)) || own(r, o)) {
              free(o);
              spaa_strmap_free(&b.strs);
              return SPAA_E_NOMEM;
            }
            rc = build_profile(&b, c, t, o);
          }
          if (rc == SPAA_E_NOMEM) {
            spaa_strmap_free(&b.strs);
            return rc;
          }
          if (rc)
            u->xerr = e;
          else
            u->profile = o;
        }
        spaa_strmap_free(&b.strs);
      }
    }
  }
  return 0;
}
