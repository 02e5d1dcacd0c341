/* Canonical JSON printing (see canon.h). */
#include "spaa/canon.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hex.h"

int spaa_canon_str(struct spaa_buf *b, const char *s, size_t len)
{
  size_t i, start = 0;
  int rc;
  if ((rc = spaa_buf_reserve(b, len + 2)))
    return rc;
  b->p[b->len++] = '"';
  for (i = 0; i < len; i++) {
    unsigned char c = (unsigned char)s[i];
    char esc[7];
    size_t elen = 2;
    if (c >= 0x20 && c != '"' && c != '\\')
      continue;
    esc[0] = '\\';
    switch (c) {
    case '"': esc[1] = '"'; break;
    case '\\': esc[1] = '\\'; break;
    case '\b': esc[1] = 'b'; break;
    case '\f': esc[1] = 'f'; break;
    case '\n': esc[1] = 'n'; break;
    case '\r': esc[1] = 'r'; break;
    case '\t': esc[1] = 't'; break;
    default:
      esc[1] = 'u'; esc[2] = '0'; esc[3] = '0';
      esc[4] = spaa_hex_digits[c >> 4]; esc[5] = spaa_hex_digits[c & 15];
      elen = 6;
    }
    if ((rc = spaa_buf_add(b, s + start, i - start)) || (rc = spaa_buf_add(b, esc, elen)))
      return rc;
    start = i + 1;
  }
  if ((rc = spaa_buf_add(b, s + start, len - start)))
    return rc;
  return spaa_buf_add(b, "\"", 1);
}

int spaa_canon_double(struct spaa_buf *b, double d)
{
  char tmp[40];
  int prec, n = 0;
  if (!isfinite(d))
    return spaa_buf_add(b, "null", 4);
  for (prec = 15; prec <= 17; prec++) {
    n = snprintf(tmp, sizeof(tmp), "%.*g", prec, d);
    if (strtod(tmp, NULL) == d)
      break;
  }
  if (!strpbrk(tmp, ".eEn")) {
    tmp[n++] = '.';
    tmp[n++] = '0';
    tmp[n] = 0;
  }
  return spaa_buf_add(b, tmp, (size_t)n);
}

int spaa_canon_u64(struct spaa_buf *b, uint64_t v)
{
  char tmp[20];
  size_t i = sizeof(tmp);
  do {
    tmp[--i] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  return spaa_buf_add(b, tmp + i, sizeof(tmp) - i);
}

int spaa_canon_i64(struct spaa_buf *b, int64_t v)
{
  int rc;
  if (v >= 0)
    return spaa_canon_u64(b, (uint64_t)v);
  if ((rc = spaa_buf_add(b, "-", 1)))
    return rc;
  return spaa_canon_u64(b, (uint64_t)0 - (uint64_t)v); /* INT64_MIN included */
}

int spaa_canon_num(struct spaa_buf *b, struct spaa_num n)
{
  if (n.is_float)
    return spaa_canon_double(b, n.f);
  return spaa_canon_i64(b, n.i);
}

static int cmp_keys(const void *a, const void *b)
{
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The keys of `o` in bytewise order; caller frees the array. NULL with *n = 0 if empty. */
static const char **sorted_keys(const json_t *o, size_t *n, int *rc)
{
  const char **keys;
  const char *k;
  json_t *v;
  size_t i = 0;
  *rc = 0;
  *n = json_object_size(o);
  if (!*n)
    return NULL;
  keys = malloc(*n * sizeof(*keys));
  if (!keys) {
    *rc = SPAA_E_NOMEM;
    return NULL;
  }
  json_object_foreach((json_t *)o, k, v) keys[i++] = k;
  qsort(keys, *n, sizeof(*keys), cmp_keys);
  return keys;
}

int spaa_canon_members(struct spaa_buf *b, const json_t *o, int (*skip)(const char *key))
{
  size_t n, i;
  int rc;
  const char **keys;
  if (!o || !json_is_object(o))
    return 0;
  keys = sorted_keys(o, &n, &rc);
  if (rc)
    return rc;
  for (i = 0; i < n && !rc; i++) {
    if (skip && skip(keys[i]))
      continue;
    if (!(rc = spaa_buf_add(b, ",", 1)) && !(rc = spaa_canon_str(b, keys[i], strlen(keys[i]))) &&
        !(rc = spaa_buf_add(b, ":", 1)))
      rc = spaa_canon_json(b, json_object_get(o, keys[i]));
  }
  free(keys);
  return rc;
}

int spaa_canon_json(struct spaa_buf *b, const json_t *v)
{
  size_t i, n;
  int rc = 0;
  switch (json_typeof(v)) {
  case JSON_OBJECT: {
    const char **keys = sorted_keys(v, &n, &rc);
    if (rc)
      return rc;
    rc = spaa_buf_add(b, "{", 1);
    for (i = 0; i < n && !rc; i++) {
      if (i && (rc = spaa_buf_add(b, ",", 1)))
        break;
      if (!(rc = spaa_canon_str(b, keys[i], strlen(keys[i]))) && !(rc = spaa_buf_add(b, ":", 1)))
        rc = spaa_canon_json(b, json_object_get(v, keys[i]));
    }
    free(keys);
    return rc ? rc : spaa_buf_add(b, "}", 1);
  }
  case JSON_ARRAY:
    rc = spaa_buf_add(b, "[", 1);
    for (i = 0; i < json_array_size(v) && !rc; i++) {
      if (i && (rc = spaa_buf_add(b, ",", 1)))
        break;
      rc = spaa_canon_json(b, json_array_get(v, i));
    }
    return rc ? rc : spaa_buf_add(b, "]", 1);
  case JSON_STRING:
    return spaa_canon_str(b, json_string_value(v), json_string_length(v));
  case JSON_INTEGER:
    return spaa_canon_num(b, spaa_int((int64_t)json_integer_value(v)));
  case JSON_REAL:
    return spaa_canon_double(b, json_real_value(v));
  case JSON_TRUE:
    return spaa_buf_add(b, "true", 4);
  case JSON_FALSE:
    return spaa_buf_add(b, "false", 5);
  case JSON_NULL:
  default:
    return spaa_buf_add(b, "null", 4);
  }
}
