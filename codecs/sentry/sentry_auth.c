/* Sentry credentials: the "Sentry k=v, ..." header grammar (X-Sentry-Auth, Authorization)
 * and the query-string form; the project id a request names. Pure: the server decides which
 * source wins. */
#include <string.h>
#include <strings.h>

#include "base/hex.h"
#include "base/limits.h"
#include "sentry/sentry.h"

static int is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

static void trim(const char **s, size_t *n)
{
  while (*n && is_blank(**s)) {
    (*s)++;
    (*n)--;
  }
  while (*n && is_blank((*s)[*n - 1]))
    (*n)--;
}

static int key_is(const char *k, size_t kn, const char *name)
{
  return strlen(name) == kn && memcmp(k, name, kn) == 0;
}

/* Store one key/value pair. 0, or SPAA_E_BAD_REQUEST for a bad version. */
static int set_pair(struct sentry_auth *out, const char *k, size_t kn, const char *v, size_t vn,
                    struct spaa_err *err)
{
  char *dst = NULL;
  size_t cap = 0;
  if (key_is(k, kn, "sentry_key")) {
    dst = out->key;
    cap = sizeof(out->key);
  } else if (key_is(k, kn, "sentry_secret")) {
    dst = out->secret;
    cap = sizeof(out->secret);
  } else if (key_is(k, kn, "sentry_client")) {
    dst = out->client;
    cap = sizeof(out->client);
  } else if (key_is(k, kn, "sentry_version")) {
    /* as Relay: the part before the first '.' is the version ("7.0" is 7), a u16 */
    const char *dot = memchr(v, '.', vn);
    size_t i, major = dot ? (size_t)(dot - v) : vn;
    long ver = 0;
    for (i = 0; i < major && i < 6 && v[i] >= '0' && v[i] <= '9'; i++)
      ver = ver * 10 + (v[i] - '0');
    if (major == 0 || i < major || ver > 65535)
      return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0, "sentry_version '%.*s' is not a number",
                          (int)(vn > 32 ? 32 : vn), v);
    out->version = (int)ver;
    return 0;
  } else {
    return 0; /* sentry_timestamp and anything else: ignored */
  }
  if (vn >= cap)
    return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0, "%.*s is longer than %zu bytes", (int)kn, k,
                        cap - 1);
  memcpy(dst, v, vn);
  dst[vn] = 0;
  return 0;
}

int sentry_auth_parse_header(const char *value, size_t len, struct sentry_auth *out,
                             struct spaa_err *err)
{
  const char *p = value, *end;
  size_t n = len;
  int rc;
  memset(out, 0, sizeof(*out));
  if (len > SENTRY_MAX_AUTH_VALUE)
    return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0, "auth header longer than %d bytes",
                        SENTRY_MAX_AUTH_VALUE);
  trim(&p, &n);
  /* the scheme: "Sentry" followed by a blank, case-insensitive */
  if (n < 7 || strncasecmp(p, "sentry", 6) != 0 || !is_blank(p[6]))
    return 0;
  p += 7;
  n -= 7;
  end = p + n;
  while (p < end) {
    const char *comma = memchr(p, ',', (size_t)(end - p));
    const char *item_end = comma ? comma : end, *eq, *k, *v;
    size_t kn, vn;
    eq = memchr(p, '=', (size_t)(item_end - p));
    if (eq) {
      k = p;
      kn = (size_t)(eq - p);
      v = eq + 1;
      vn = (size_t)(item_end - v);
      trim(&k, &kn);
      trim(&v, &vn);
      if ((rc = set_pair(out, k, kn, v, vn, err)))
        return rc;
    }
    p = comma ? comma + 1 : end;
  }
  return out->key[0] ? 1 : 0;
}

/* Percent-decode [s, s+n) into dst (cap bytes with NUL); '+' is a space. The length, or -1
 * when it does not fit or an escape is malformed. */
static long pct_decode(const char *s, size_t n, char *dst, size_t cap)
{
  size_t i, o = 0;
  for (i = 0; i < n; i++) {
    char c = s[i];
    if (c == '%') {
      int hi, lo;
      if (i + 2 >= n)
        return -1;
      hi = spaa_hex_val((unsigned char)s[i + 1]);
      lo = spaa_hex_val((unsigned char)s[i + 2]);
      if (hi < 0 || lo < 0)
        return -1;
      c = (char)(hi << 4 | lo);
      i += 2;
    } else if (c == '+') {
      c = ' ';
    }
    if (o + 1 >= cap)
      return -1;
    dst[o++] = c;
  }
  dst[o] = 0;
  return (long)o;
}

int sentry_auth_parse_query(const char *qs, size_t len, struct sentry_auth *out,
                            struct spaa_err *err)
{
  const char *p = qs, *end = qs + len;
  char k[64], v[256];
  int rc;
  memset(out, 0, sizeof(*out));
  if (len > SENTRY_MAX_AUTH_VALUE)
    return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0, "query string longer than %d bytes",
                        SENTRY_MAX_AUTH_VALUE);
  if (p < end && *p == '?')
    p++;
  while (p < end) {
    const char *amp = memchr(p, '&', (size_t)(end - p));
    const char *pe = amp ? amp : end, *eq = memchr(p, '=', (size_t)(pe - p));
    long kn, vn;
    if (eq) {
      kn = pct_decode(p, (size_t)(eq - p), k, sizeof(k));
      if (kn > 0 && strncmp(k, "sentry_", 7) == 0) {
        vn = pct_decode(eq + 1, (size_t)(pe - eq - 1), v, sizeof(v));
        if (vn < 0)
          return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0,
                              "query parameter %s: bad percent-encoding or over-long value", k);
        if ((rc = set_pair(out, k, (size_t)kn, v, (size_t)vn, err)))
          return rc;
      }
    }
    p = amp ? amp + 1 : end;
  }
  return out->key[0] ? 1 : 0;
}

int sentry_project_id_normalize(const char *s, size_t len, char out[SENTRY_MAX_PROJECT + 1])
{
  static const char max[] = "18446744073709551615"; /* 2^64 - 1 */
  size_t i, n;
  out[0] = 0;
  if (len == 0)
    return SPAA_E_INVALID;
  for (i = 0; i < len; i++)
    if (s[i] < '0' || s[i] > '9')
      return SPAA_E_INVALID;
  while (len > 1 && s[0] == '0') { /* leading zeros: the same number */
    s++;
    len--;
  }
  n = sizeof(max) - 1;
  if (len > n || (len == n && memcmp(s, max, n) > 0))
    return SPAA_E_INVALID;
  memcpy(out, s, len);
  out[len] = 0;
  return 0;
}
