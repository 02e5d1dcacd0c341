/* Strict multipart/form-data (see multipart.h): boundary from the Content-Type, then the
 * parts of a body held in memory, each as a slice of it. Nothing is allocated. */
#include "server/multipart.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "base/limits.h"

static int is_ws(int c) { return c == ' ' || c == '\t'; }

static const char *skip_ws(const char *p)
{
  while (is_ws((unsigned char)*p))
    p++;
  return p;
}

/* RFC 2046 bchars (space allowed, but not as the last character). */
static int bchar(int c)
{
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         strchr("'()+_,-./:=? ", c) != NULL;
}

/* RFC 7230 tchar: what an unquoted parameter value may hold. */
static int tchar(int c)
{
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

/* The media type of a Content-Type value is multipart/form-data; *params set after it. */
static int form_type(const char *ct, const char **params)
{
  static const char want[] = "multipart/form-data";
  const char *p;
  if (!ct)
    return 0;
  p = skip_ws(ct);
  if (strncasecmp(p, want, sizeof(want) - 1) != 0)
    return 0;
  p = skip_ws(p + sizeof(want) - 1);
  if (*p && *p != ';')
    return 0;
  *params = p;
  return 1;
}

int spaa_multipart_is_form(const char *content_type)
{
  const char *params;
  return form_type(content_type, &params);
}

/* Read one parameter value at *pp (token or quoted-string) into out (size n): 0, or -1 when
 * malformed or too long. *pp moves past it. */
static int param_value(const char **pp, char *out, size_t n)
{
  const char *p = *pp;
  size_t k = 0;
  if (*p == '"') {
    for (p++;; p++) {
      if (*p == 0)
        return -1; /* unterminated */
      if (*p == '"')
        break;
      if (*p == '\\') {
        p++;
        if (*p == 0)
          return -1;
      }
      if ((unsigned char)*p < 0x20 && *p != '\t')
        return -1;
      if (k + 1 >= n)
        return -1;
      out[k++] = *p;
    }
    p++;
  } else {
    while (tchar((unsigned char)*p)) {
      if (k + 1 >= n)
        return -1;
      out[k++] = *p++;
    }
    if (k == 0)
      return -1;
  }
  out[k] = 0;
  *pp = p;
  return 0;
}

/* Walk `; key=value` parameters from p; for each key in keys[] (case-insensitive) copy its
 * value into vals[i] (size n each). 0, or -1 when the list is malformed. */
static int params_get(const char *p, const char *const *keys, char (*vals)[SPAA_MULTIPART_MAX_NAME],
                      size_t nkeys)
{
  char scratch[SPAA_MULTIPART_MAX_HEADER_LINE];
  for (;;) {
    const char *k;
    size_t kl, i;
    char *dst = scratch;
    size_t dn = sizeof(scratch);
    p = skip_ws(p);
    if (*p == 0)
      return 0;
    if (*p != ';')
      return -1;
    p = skip_ws(p + 1);
    if (*p == 0)
      return 0; /* a trailing ';' */
    k = p;
    while (tchar((unsigned char)*p) && *p != '=')
      p++;
    kl = (size_t)(p - k);
    p = skip_ws(p);
    if (kl == 0 || *p != '=')
      return -1;
    p = skip_ws(p + 1);
    for (i = 0; i < nkeys; i++)
      if (strlen(keys[i]) == kl && strncasecmp(keys[i], k, kl) == 0) {
        dst = vals[i];
        dn = SPAA_MULTIPART_MAX_NAME;
      }
    if (param_value(&p, dst, dn))
      return -1;
  }
}

int spaa_multipart_boundary(const char *content_type, char *out, size_t n,
                            struct spaa_err *err)
{
  static const char *const keys[] = {"boundary"};
  char vals[1][SPAA_MULTIPART_MAX_NAME];
  const char *params;
  size_t i, l;
  vals[0][0] = 0;
  if (!form_type(content_type, &params))
    return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0,
                        "Content-Type '%.80s' is not multipart/form-data",
                        content_type ? content_type : "");
  if (params_get(params, keys, vals, 1))
    return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0,
                        "malformed parameters in Content-Type '%.120s'", content_type);
  l = strlen(vals[0]);
  if (l == 0)
    return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0,
                        "multipart/form-data without a boundary parameter");
  if (l > SPAA_MULTIPART_MAX_BOUNDARY || l + 1 > n)
    return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0,
                        "the multipart boundary is %zu characters long, over the %d allowed", l,
                        SPAA_MULTIPART_MAX_BOUNDARY);
  for (i = 0; i < l; i++)
    if (!bchar((unsigned char)vals[0][i]) || (i == l - 1 && vals[0][i] == ' '))
      return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0,
                          "the multipart boundary holds a character RFC 2046 does not allow "
                          "(position %zu)", i);
  memcpy(out, vals[0], l + 1);
  return 0;
}

/* After a delimiter at p (end e): skip transport padding, then CRLF (returns 1, *next after
 * it) or "--" (returns 2: the close delimiter), else 0 (malformed). */
static int after_delim(const uint8_t *p, const uint8_t *e, const uint8_t **next)
{
  if (e - p >= 2 && p[0] == '-' && p[1] == '-') {
    *next = p + 2;
    return 2;
  }
  while (p < e && is_ws(*p))
    p++;
  if (e - p >= 2 && p[0] == '\r' && p[1] == '\n') {
    *next = p + 2;
    return 1;
  }
  return 0;
}

/* Parse the Content-Disposition value into the part. 0 or -1. */
static int disposition(const char *v, struct spaa_multipart_part *part)
{
  static const char *const keys[] = {"name", "filename"};
  char vals[2][SPAA_MULTIPART_MAX_NAME];
  const char *p = skip_ws(v);
  vals[0][0] = vals[1][0] = 0;
  if (strncasecmp(p, "form-data", 9) != 0)
    return -1;
  p += 9;
  if (*p && *p != ';' && !is_ws((unsigned char)*p))
    return -1;
  if (params_get(p, keys, vals, 2) || vals[0][0] == 0)
    return -1;
  memcpy(part->name, vals[0], sizeof(part->name));
  memcpy(part->filename, vals[1], sizeof(part->filename));
  return 0;
}

/* The header block of part `idx` from p; *body set to the first byte after the blank line. */
static int part_headers(const uint8_t *p, const uint8_t *e, size_t idx,
                        struct spaa_multipart_part *part, const uint8_t **body,
                        struct spaa_err *err)
{
  size_t nh = 0;
  int have_cd = 0;
  for (;;) {
    const uint8_t *eol = NULL, *q;
    char line[SPAA_MULTIPART_MAX_HEADER_LINE];
    char *colon, *val;
    size_t l;
    for (q = p; q + 1 < e && q - p < SPAA_MULTIPART_MAX_HEADER_LINE; q++)
      if (q[0] == '\r' && q[1] == '\n') {
        eol = q;
        break;
      }
    if (!eol) {
      if (q + 1 >= e)
        return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0,
                            "multipart part %zu: the body ends inside its headers", idx);
      return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0,
                          "multipart part %zu: a header line is longer than %d bytes", idx,
                          SPAA_MULTIPART_MAX_HEADER_LINE);
    }
    l = (size_t)(eol - p);
    if (l == 0) {
      *body = eol + 2;
      break;
    }
    if (++nh > SPAA_MULTIPART_MAX_HEADERS)
      return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0,
                          "multipart part %zu has more than %d header lines", idx,
                          SPAA_MULTIPART_MAX_HEADERS);
    if (is_ws(*p))
      return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0,
                          "multipart part %zu: folded header lines are not allowed", idx);
    memcpy(line, p, l);
    line[l] = 0;
    if (memchr(line, 0, l))
      return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0,
                          "multipart part %zu: a header line holds a NUL byte", idx);
    colon = strchr(line, ':');
    if (!colon || colon == line)
      return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0,
                          "multipart part %zu: header line '%.60s' has no name and ':'", idx,
                          line);
    *colon = 0;
    val = (char *)skip_ws(colon + 1);
    {
      size_t vl = strlen(val);
      while (vl && is_ws((unsigned char)val[vl - 1]))
        val[--vl] = 0;
    }
    if (strcasecmp(line, "Content-Disposition") == 0) {
      if (have_cd || disposition(val, part))
        return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0,
                            "multipart part %zu: Content-Disposition must be given once, as "
                            "form-data; name=\"...\" (got '%.80s')", idx, val);
      have_cd = 1;
    } else if (strcasecmp(line, "Content-Type") == 0) {
      if (strlen(val) >= sizeof(part->content_type))
        return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0,
                            "multipart part %zu: Content-Type is longer than %zu bytes", idx,
                            sizeof(part->content_type) - 1);
      strcpy(part->content_type, val);
    }
    p = eol + 2;
  }
  if (!have_cd)
    return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0,
                        "multipart part %zu has no Content-Disposition header", idx);
  return 0;
}

int spaa_multipart_parse(const uint8_t *body, size_t len, const char *boundary,
                         struct spaa_multipart *out, struct spaa_err *err)
{
  char delim[SPAA_MULTIPART_MAX_BOUNDARY + 5]; /* CRLF "--" boundary */
  size_t bl = boundary ? strlen(boundary) : 0, dl, i;
  const uint8_t *e = body + len, *p, *next;
  int k;
  memset(out, 0, sizeof(*out));
  if (bl == 0 || bl > SPAA_MULTIPART_MAX_BOUNDARY)
    return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0, "bad multipart boundary");
  dl = (size_t)snprintf(delim, sizeof(delim), "\r\n--%s", boundary);
  /* The first delimiter: at the very start, or after a preamble line. */
  if (len >= dl - 2 && memcmp(body, delim + 2, dl - 2) == 0)
    p = body + dl - 2;
  else {
    p = memmem(body, len, delim, dl);
    if (!p)
      return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0,
                          "the multipart body does not contain its boundary '%s'", boundary);
    p += dl;
  }
  for (;;) {
    struct spaa_multipart_part *part;
    const uint8_t *data, *end;
    k = after_delim(p, e, &next);
    if (k == 0)
      return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, (size_t)(p - body),
                          "multipart: the boundary at offset %zu is followed by neither CRLF "
                          "nor '--'", (size_t)(p - body));
    if (k == 2)
      return 0; /* the close delimiter; the epilogue is ignored */
    if (out->n >= SPAA_MULTIPART_MAX_PARTS)
      return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0,
                          "the multipart body has more than %d parts", SPAA_MULTIPART_MAX_PARTS);
    part = &out->parts[out->n];
    if ((k = part_headers(next, e, out->n, part, &data, err)))
      return k;
    end = memmem(data, (size_t)(e - data), delim, dl);
    if (!end)
      return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, len,
                          "multipart part %zu ('%s') is not closed by a boundary: the body is "
                          "truncated", out->n, part->name);
    for (i = 0; i < out->n; i++)
      if (strcmp(out->parts[i].name, part->name) == 0)
        return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0,
                            "multipart field '%s' is given twice (parts %zu and %zu)",
                            part->name, i, out->n);
    part->data = data;
    part->len = (size_t)(end - data);
    out->n++;
    p = end + dl;
  }
}

const struct spaa_multipart_part *spaa_multipart_get(const struct spaa_multipart *m,
                                                     const char *name)
{
  size_t i;
  for (i = 0; i < m->n; i++)
    if (strcmp(m->parts[i].name, name) == 0)
      return &m->parts[i];
  return NULL;
}
