/* OTLP/JSON: decode with jansson into the same protoc-c structs the protobuf path gives,
 * driven by the message descriptors (lowerCamelCase or snake_case keys, 64-bit integers as
 * strings or numbers, trace/span/profile ids as hex, other bytes as base64). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/base64.h"
#include "base/hex.h"
#include "base/limits.h"
#include "otlp/otlp_int.h"

/* A path from the root to the value being decoded, printed only on error. */
struct jpath {
  const struct jpath *up; /* parent, NULL at the root */
  const char *key;        /* member name, or NULL for an array element */
  size_t index;           /* array index when key == NULL */
};

struct jctx {
  struct spaa_err *err;
  size_t elements;        /* array elements allocated so far */
};

static void path_print(const struct jpath *p, char *out, size_t cap)
{
  const struct jpath *chain[OTLP_MAX_DEPTH * 2 + 8];
  size_t n = 0, i, used = 0;
  for (; p && n < sizeof(chain) / sizeof(chain[0]); p = p->up)
    chain[n++] = p;
  out[0] = 0;
  for (i = n; i-- > 0 && used + 1 < cap;) {
    int k;
    if (chain[i]->key)
      k = snprintf(out + used, cap - used, "%s%s", used ? "." : "", chain[i]->key);
    else
      k = snprintf(out + used, cap - used, "[%zu]", chain[i]->index);
    if (k < 0)
      break;
    used += (size_t)k;
    if (used >= cap)
      used = cap - 1;
  }
  if (!out[0])
    snprintf(out, cap, "(root)");
}

static int jfail(struct jctx *c, const struct jpath *p, int code, const char *what)
{
  char path[160];
  path_print(p, path, sizeof(path));
  return spaa_err_set(c->err, code, 0, 0, "%s: %s", path, what);
}

/* key matches the proto field name as is (snake_case) or as its lowerCamelCase form */
static int name_matches(const char *name, const char *key)
{
  const char *n = name, *k = key;
  if (strcmp(name, key) == 0)
    return 1;
  while (*n && *k) {
    char want = *n;
    if (*n == '_' && n[1]) {
      n++;
      want = (*n >= 'a' && *n <= 'z') ? (char)(*n - 'a' + 'A') : *n;
    }
    if (*k != want)
      return 0;
    n++;
    k++;
  }
  return !*n && !*k;
}

static const ProtobufCFieldDescriptor *find_field(const ProtobufCMessageDescriptor *d,
                                                  const char *key, unsigned *idx)
{
  unsigned i;
  for (i = 0; i < d->n_fields; i++)
    if (name_matches(d->fields[i].name, key)) {
      *idx = i;
      return &d->fields[i];
    }
  return NULL;
}

/* hex (when `ids` and the text is all hex of even length) else base64 (std or url, padding
 * optional). 0 and *out malloc'd (NULL for empty), or -1. */
static int decode_bytes(const char *s, size_t n, int ids, ProtobufCBinaryData *out)
{
  size_t o = 0;
  uint8_t *b;
  out->len = 0;
  out->data = NULL;
  if (n == 0)
    return 0;
  if (!(b = malloc(n)))
    return -2;
  if (ids && spaa_hex_decode(b, s, n, 0) == 0) {
    o = n / 2;
  } else if (spaa_base64_decode(b, n, s, n, &o)) {
    free(b);
    return -1;
  }
  out->data = b;
  out->len = o;
  return 0;
}

/* Integers: a JSON integer, an integral real, or a decimal string. */
static int get_i64(const json_t *v, int64_t *out)
{
  if (json_is_integer(v)) {
    *out = (int64_t)json_integer_value(v);
    return 0;
  }
  if (json_is_real(v)) {
    double d = json_real_value(v);
    if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0) || (double)(int64_t)d != d)
      return -1;
    *out = (int64_t)d;
    return 0;
  }
  if (json_is_string(v)) {
    const char *s = json_string_value(v);
    char *e;
    long long r;
    if (!*s || *s == ' ' || *s == '+')
      return -1;
    errno = 0;
    r = strtoll(s, &e, 10);
    if (errno || *e)
      return -1;
    *out = (int64_t)r;
    return 0;
  }
  return -1;
}

static int get_u64(const json_t *v, uint64_t *out)
{
  if (json_is_integer(v)) {
    if (json_integer_value(v) < 0)
      return -1;
    *out = (uint64_t)json_integer_value(v);
    return 0;
  }
  if (json_is_real(v)) {
    double d = json_real_value(v);
    if (!(d >= 0 && d < 18446744073709551616.0) || (double)(uint64_t)d != d)
      return -1;
    *out = (uint64_t)d;
    return 0;
  }
  if (json_is_string(v)) {
    const char *s = json_string_value(v);
    char *e;
    unsigned long long r;
    if (*s < '0' || *s > '9')
      return -1;
    errno = 0;
    r = strtoull(s, &e, 10);
    if (errno || *e)
      return -1;
    *out = (uint64_t)r;
    return 0;
  }
  return -1;
}

static int get_double(const json_t *v, double *out)
{
  if (json_is_number(v)) {
    *out = json_number_value(v);
    return 0;
  }
  if (json_is_string(v)) {
    const char *s = json_string_value(v);
    char *e;
    if (strcmp(s, "NaN") == 0)
      *out = NAN;
    else if (strcmp(s, "Infinity") == 0)
      *out = INFINITY;
    else if (strcmp(s, "-Infinity") == 0)
      *out = -INFINITY;
    else {
      if (!*s)
        return -1;
      *out = strtod(s, &e);
      if (*e)
        return -1;
    }
    return 0;
  }
  return -1;
}

static int is_id_field(const char *name)
{
  return strcmp(name, "trace_id") == 0 || strcmp(name, "span_id") == 0 ||
         strcmp(name, "profile_id") == 0;
}

static int decode_message(struct jctx *c, const ProtobufCMessageDescriptor *d, const json_t *obj,
                          ProtobufCMessage **out, const struct jpath *path, int depth);

/* Decode one scalar or message value of field f into the storage at `dst`. */
static int decode_value(struct jctx *c, const ProtobufCFieldDescriptor *f, const json_t *v,
                        void *dst, const struct jpath *path, int depth)
{
  int64_t i;
  uint64_t u;
  double x;
  switch (f->type) {
  case PROTOBUF_C_TYPE_INT32:
  case PROTOBUF_C_TYPE_SINT32:
  case PROTOBUF_C_TYPE_SFIXED32:
    if (get_i64(v, &i) || i < INT32_MIN || i > INT32_MAX)
      return jfail(c, path, SPAA_E_BAD_JSON, "expected a 32-bit integer");
    *(int32_t *)dst = (int32_t)i;
    return 0;
  case PROTOBUF_C_TYPE_ENUM: {
    if (json_is_string(v)) {
      const ProtobufCEnumValue *ev =
          protobuf_c_enum_descriptor_get_value_by_name(f->descriptor, json_string_value(v));
      char what[160];
      if (ev) {
        *(int *)dst = ev->value;
        return 0;
      }
      snprintf(what, sizeof(what), "unknown name '%.60s' for enum %s: expected one of its "
               "names or a number", json_string_value(v), ((const ProtobufCEnumDescriptor *)
                                                           f->descriptor)->short_name);
      return jfail(c, path, SPAA_E_BAD_JSON, what);
    }
    if (get_i64(v, &i) || i < INT32_MIN || i > INT32_MAX)
      return jfail(c, path, SPAA_E_BAD_JSON, "expected an enum number");
    *(int *)dst = (int)i;
    return 0;
  }
  case PROTOBUF_C_TYPE_UINT32:
  case PROTOBUF_C_TYPE_FIXED32:
    if (get_u64(v, &u) || u > UINT32_MAX)
      return jfail(c, path, SPAA_E_BAD_JSON, "expected an unsigned 32-bit integer");
    *(uint32_t *)dst = (uint32_t)u;
    return 0;
  case PROTOBUF_C_TYPE_INT64:
  case PROTOBUF_C_TYPE_SINT64:
  case PROTOBUF_C_TYPE_SFIXED64:
    if (get_i64(v, &i))
      return jfail(c, path, SPAA_E_BAD_JSON, "expected a 64-bit integer (number or decimal string)");
    *(int64_t *)dst = i;
    return 0;
  case PROTOBUF_C_TYPE_UINT64:
  case PROTOBUF_C_TYPE_FIXED64:
    if (get_u64(v, &u))
      return jfail(c, path, SPAA_E_BAD_JSON,
                   "expected an unsigned 64-bit integer (number or decimal string)");
    *(uint64_t *)dst = u;
    return 0;
  case PROTOBUF_C_TYPE_BOOL:
    if (!json_is_boolean(v))
      return jfail(c, path, SPAA_E_BAD_JSON, "expected true or false");
    *(protobuf_c_boolean *)dst = json_is_true(v);
    return 0;
  case PROTOBUF_C_TYPE_DOUBLE:
    if (get_double(v, &x))
      return jfail(c, path, SPAA_E_BAD_JSON, "expected a number");
    *(double *)dst = x;
    return 0;
  case PROTOBUF_C_TYPE_FLOAT:
    if (get_double(v, &x))
      return jfail(c, path, SPAA_E_BAD_JSON, "expected a number");
    *(float *)dst = (float)x;
    return 0;
  case PROTOBUF_C_TYPE_STRING: {
    char *s;
    if (!json_is_string(v))
      return jfail(c, path, SPAA_E_BAD_JSON, "expected a string");
    if (!(s = strdup(json_string_value(v))))
      return jfail(c, path, SPAA_E_NOMEM, "out of memory");
    *(char **)dst = s;
    return 0;
  }
  case PROTOBUF_C_TYPE_BYTES: {
    int rc;
    if (!json_is_string(v))
      return jfail(c, path, SPAA_E_BAD_JSON, "expected a string (base64, or hex for ids)");
    rc = decode_bytes(json_string_value(v), json_string_length(v), is_id_field(f->name),
                      (ProtobufCBinaryData *)dst);
    if (rc == -2)
      return jfail(c, path, SPAA_E_NOMEM, "out of memory");
    if (rc)
      return jfail(c, path, SPAA_E_BAD_JSON, is_id_field(f->name) ? "expected hex or base64"
                                                                   : "expected base64");
    return 0;
  }
  case PROTOBUF_C_TYPE_MESSAGE:
    if (!json_is_object(v))
      return jfail(c, path, SPAA_E_BAD_JSON, "expected an object");
    return decode_message(c, f->descriptor, v, (ProtobufCMessage **)dst, path, depth + 1);
  }
  return jfail(c, path, SPAA_E_INTERNAL, "unsupported field type");
}

static size_t elem_size(const ProtobufCFieldDescriptor *f)
{
  switch (f->type) {
  case PROTOBUF_C_TYPE_INT32:
  case PROTOBUF_C_TYPE_SINT32:
  case PROTOBUF_C_TYPE_SFIXED32:
  case PROTOBUF_C_TYPE_UINT32:
  case PROTOBUF_C_TYPE_FIXED32:
  case PROTOBUF_C_TYPE_FLOAT:
  case PROTOBUF_C_TYPE_ENUM:
    return 4;
  case PROTOBUF_C_TYPE_INT64:
  case PROTOBUF_C_TYPE_SINT64:
  case PROTOBUF_C_TYPE_SFIXED64:
  case PROTOBUF_C_TYPE_UINT64:
  case PROTOBUF_C_TYPE_FIXED64:
  case PROTOBUF_C_TYPE_DOUBLE:
    return 8;
  case PROTOBUF_C_TYPE_BOOL:
    return sizeof(protobuf_c_boolean);
  case PROTOBUF_C_TYPE_STRING:
  case PROTOBUF_C_TYPE_MESSAGE:
    return sizeof(void *);
  case PROTOBUF_C_TYPE_BYTES:
    return sizeof(ProtobufCBinaryData);
  }
  return 8;
}

static int decode_message(struct jctx *c, const ProtobufCMessageDescriptor *d, const json_t *obj,
                          ProtobufCMessage **out, const struct jpath *path, int depth)
{
  ProtobufCMessage *m;
  const char *key;
  const json_t *v;
  uint64_t seen = 0;
  if (depth > OTLP_MAX_DEPTH)
    return jfail(c, path, SPAA_E_BAD_JSON, "objects nested too deeply");
  if (!(m = malloc(d->sizeof_message)))
    return jfail(c, path, SPAA_E_NOMEM, "out of memory");
  d->message_init(m);
  *out = m; /* linked at once, so that freeing the root frees every part */
  json_object_foreach((json_t *)obj, key, v)
  {
    unsigned idx;
    const ProtobufCFieldDescriptor *f = find_field(d, key, &idx);
    struct jpath here = {path, key, 0};
    char *base = (char *)m;
    int rc;
    if (!f || json_is_null(v))
      continue; /* unknown keys are ignored; null is the default */
    if (idx < 64) {
      if (seen & ((uint64_t)1 << idx))
        return jfail(c, &here, SPAA_E_BAD_JSON, "field given twice (camelCase and snake_case)");
      seen |= (uint64_t)1 << idx;
    }
    if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
      uint32_t *qcase = (uint32_t *)(base + f->quantifier_offset);
      if (*qcase)
        return jfail(c, &here, SPAA_E_BAD_JSON, "more than one member of a oneof");
      /* set the case first: protobuf_c_message_free_unpacked frees a oneof member only
       * when the case names it, and a failing decode may already have allocated it */
      *qcase = f->id;
      if ((rc = decode_value(c, f, v, base + f->offset, &here, depth)))
        return rc;
    } else if (f->label == PROTOBUF_C_LABEL_REPEATED) {
      size_t n = json_array_size(v), i, es = elem_size(f);
      size_t *count = (size_t *)(base + f->quantifier_offset);
      void **arr = (void **)(base + f->offset);
      if (!json_is_array(v))
        return jfail(c, &here, SPAA_E_BAD_JSON, "expected an array");
      if (n == 0)
        continue;
      if (n > OTLP_MAX_JSON_ARRAY || c->elements + n > OTLP_MAX_JSON_ARRAY * 4)
        return jfail(c, &here, SPAA_E_TOO_LARGE, "array longer than the cap");
      c->elements += n;
      if (!(*arr = calloc(n, es)))
        return jfail(c, &here, SPAA_E_NOMEM, "out of memory");
      for (i = 0; i < n; i++) {
        struct jpath el = {&here, NULL, i};
        const json_t *e = json_array_get(v, i);
        if (json_is_null(e) && f->type != PROTOBUF_C_TYPE_MESSAGE)
          return jfail(c, &el, SPAA_E_BAD_JSON, "null in an array");
        if (json_is_null(e)) {
          /* an empty message */
          ProtobufCMessage *sub = malloc(((const ProtobufCMessageDescriptor *)f->descriptor)->sizeof_message);
          if (!sub)
            return jfail(c, &el, SPAA_E_NOMEM, "out of memory");
          ((const ProtobufCMessageDescriptor *)f->descriptor)->message_init(sub);
          ((ProtobufCMessage **)*arr)[i] = sub;
        } else if ((rc = decode_value(c, f, e, (char *)*arr + i * es, &el, depth))) {
          /* count what is filled so far (the element at i may be a message already linked) */
          *count = f->type == PROTOBUF_C_TYPE_MESSAGE && ((void **)*arr)[i] ? i + 1 : i;
          return rc;
        }
        *count = i + 1;
      }
    } else {
      if ((rc = decode_value(c, f, v, base + f->offset, &here, depth)))
        return rc;
      if (f->label == PROTOBUF_C_LABEL_OPTIONAL && f->quantifier_offset &&
          f->type != PROTOBUF_C_TYPE_MESSAGE && f->type != PROTOBUF_C_TYPE_STRING)
        *(protobuf_c_boolean *)(base + f->quantifier_offset) = 1;
    }
  }
  return 0;
}

static const json_t *jget(const json_t *o, const char *camel, const char *snake)
{
  const json_t *v = json_object_get(o, camel);
  return v ? v : json_object_get(o, snake);
}

/* Look at the profiles' keys: 2 = v1experimental, 1 = v1development, or an error for layouts
 * of older v1development protos that JSON would silently misread. */
static int json_version(const json_t *root, struct spaa_err *err)
{
  const json_t *rps = jget(root, "resourceProfiles", "resource_profiles");
  size_t i, j, k;
  for (i = 0; i < json_array_size(rps); i++) {
    const json_t *sps = jget(json_array_get(rps, i), "scopeProfiles", "scope_profiles");
    for (j = 0; j < json_array_size(sps); j++) {
      const json_t *ps = json_object_get(json_array_get(sps, j), "profiles");
      for (k = 0; k < json_array_size(ps); k++) {
        const json_t *p = json_array_get(ps, k);
        if (json_object_get(p, "profile") || jget(p, "startTimeUnixNano", "start_time_unix_nano") ||
            jget(p, "endTimeUnixNano", "end_time_unix_nano"))
          return OTLP_V1EXPERIMENTAL;
        if (jget(p, "stringTable", "string_table") || jget(p, "locationTable", "location_table"))
          return spaa_err_set(err, SPAA_E_UNSUPPORTED, 0, 0,
                              "OTLP profiles JSON of proto v1.4-v1.6 (tables inside Profile), "
                              "sent by OpenTelemetry Collector v0.115-v0.126: this server "
                              "speaks v1development as of proto v1.10.0/v1.11.0 (Collector "
                              "v0.148.0 and later); upgrade the sender");
        if (json_object_get(p, "sample") || jget(p, "commentStrindices", "comment_strindices"))
          return spaa_err_set(err, SPAA_E_UNSUPPORTED, 0, 0,
                              "OTLP profiles JSON of proto v1.8 or older (\"sample\", "
                              "\"commentStrindices\"), sent by OpenTelemetry Collector before "
                              "v0.140: this server speaks v1development as of proto "
                              "v1.10.0/v1.11.0 (Collector v0.148.0 and later); upgrade the "
                              "sender");
      }
    }
  }
  return OTLP_V1DEVELOPMENT;
}

int otlp__json_decode(const uint8_t *buf, size_t len, ProtobufCMessage **out, int *version,
                      struct spaa_err *err)
{
  json_error_t je;
  json_t *root;
  struct jctx c = {err, 0};
  int rc, v;
  *out = NULL;
  root = json_loadb((const char *)buf, len, JSON_REJECT_DUPLICATES, &je);
  if (!root)
    return spaa_err_set(err, SPAA_E_BAD_JSON, (size_t)(je.line > 0 ? je.line : 0),
                        je.position > 0 ? (size_t)je.position : 0, "OTLP/JSON: %s", je.text);
  if (!json_is_object(root)) {
    json_decref(root);
    return spaa_err_set(err, SPAA_E_BAD_JSON, 0, 0, "OTLP/JSON: the body is not an object");
  }
  if ((v = json_version(root, err)) < 0) {
    json_decref(root);
    return v;
  }
  rc = decode_message(&c, v == OTLP_V1EXPERIMENTAL ? &OX_REQUEST_DESC : &OT_REQUEST_DESC, root,
                      out, NULL, 0);
  json_decref(root);
  if (rc) {
    if (*out)
      protobuf_c_message_free_unpacked(*out, NULL);
    *out = NULL;
    return rc;
  }
  *version = v;
  return 0;
}
