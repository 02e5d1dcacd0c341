/* Strict zero-copy JSON pull scanner (see jscan.h). */
#include "base/jscan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/hex.h"
#include "base/limits.h"
#include "base/utf8.h"

/* 1 for bytes that stand for themselves inside a string: printable ASCII but '"' and '\\'. */
static const unsigned char plain[256] = {
#define R16(v) v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v
    R16(0), R16(0),
    1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0x20: '"' at 0x22 */
    R16(1), R16(1),
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, /* 0x50: '\\' at 0x5c */
    R16(1), R16(1),
    R16(0), R16(0), R16(0), R16(0), R16(0), R16(0), R16(0), R16(0),
#undef R16
};

static int fail(struct spaa_jscan *s, const char *at, const char *msg)
{
  if (!s->err) {
    s->err = msg;
    s->err_off = (size_t)(at - s->base);
  }
  return -1;
}

static void ws(struct spaa_jscan *s)
{
  const char *p = s->p;
  while (p < s->end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
    p++;
  s->p = p;
}

void spaa_jscan_init(struct spaa_jscan *s, const char *buf, size_t len, char *scratch,
                     size_t scratch_cap)
{
  s->p = s->base = buf;
  s->end = buf + len;
  s->out = scratch;
  s->out_len = 0;
  s->out_cap = scratch_cap;
  s->depth = 0;
  s->first[0] = 1;
  s->err = NULL;
  s->err_off = 0;
}

enum spaa_jtype spaa_jscan_peek(struct spaa_jscan *s)
{
  ws(s);
  if (s->p >= s->end)
    return SPAA_J_BAD;
  switch (*s->p) {
  case '{': return SPAA_J_OBJ;
  case '[': return SPAA_J_ARR;
  case '"': return SPAA_J_STR;
  case 't': return SPAA_J_TRUE;
  case 'f': return SPAA_J_FALSE;
  case 'n': return SPAA_J_NULL;
  case '-': case '0': case '1': case '2': case '3': case '4':
  case '5': case '6': case '7': case '8': case '9':
    return SPAA_J_NUM;
  default:
    return SPAA_J_BAD;
  }
}

/* The four hex digits of a \u escape. */
static int hex4(const unsigned char *p, unsigned *v)
{
  uint64_t x;
  if (spaa_hex_parse_u64((const char *)p, 4, &x))
    return -1;
  *v = (unsigned)x;
  return 0;
}

static char *put_utf8(char *o, unsigned cp)
{
  if (cp < 0x80) {
    *o++ = (char)cp;
  } else if (cp < 0x800) {
    *o++ = (char)(0xc0 | cp >> 6);
    *o++ = (char)(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    *o++ = (char)(0xe0 | cp >> 12);
    *o++ = (char)(0x80 | ((cp >> 6) & 0x3f));
    *o++ = (char)(0x80 | (cp & 0x3f));
  } else {
    *o++ = (char)(0xf0 | cp >> 18);
    *o++ = (char)(0x80 | ((cp >> 12) & 0x3f));
    *o++ = (char)(0x80 | ((cp >> 6) & 0x3f));
    *o++ = (char)(0x80 | (cp & 0x3f));
  }
  return o;
}

/* Scan the string at s->p (a quote). With keep, the decoded bytes go to the scratch and
 * v, len receive them; without, the string is only checked. */
static int scan_string(struct spaa_jscan *s, int keep, const char **v, size_t *len)
{
  const unsigned char *p = (const unsigned char *)s->p + 1;
  const unsigned char *e = (const unsigned char *)s->end;
  char dummy[8];
  char *o, *start;
  if (keep) {
    /* the decoded text plus its NUL never outgrows the raw bytes left */
    if (s->out_cap - s->out_len < (size_t)(e - p) + 1)
      return fail(s, s->p, "scanner scratch too small");
    start = o = s->out + s->out_len;
  } else {
    start = o = dummy;
  }
  for (;;) {
    const unsigned char *q = p;
    while (q < e && plain[*q])
      q++;
    if (keep) {
      memcpy(o, p, (size_t)(q - p));
      o += q - p;
    }
    p = q;
    if (p >= e)
      return fail(s, (const char *)p, "unterminated string");
    if (*p == '"') {
      p++;
      break;
    }
    if (*p == '\\') {
      unsigned cp, lo;
      char one;
      if (e - p < 2)
        return fail(s, (const char *)p, "unterminated string");
      switch (p[1]) {
      case '"': one = '"'; break;
      case '\\': one = '\\'; break;
      case '/': one = '/'; break;
      case 'b': one = '\b'; break;
      case 'f': one = '\f'; break;
      case 'n': one = '\n'; break;
      case 'r': one = '\r'; break;
      case 't': one = '\t'; break;
      case 'u':
        if (e - p < 6 || hex4(p + 2, &cp))
          return fail(s, (const char *)p, "bad \\u escape");
        p += 6;
        if (cp >= 0xd800 && cp <= 0xdbff) {
          if (e - p < 6 || p[0] != '\\' || p[1] != 'u' || hex4(p + 2, &lo) || lo < 0xdc00 ||
              lo > 0xdfff)
            return fail(s, (const char *)p, "unpaired UTF-16 surrogate in \\u escape");
          p += 6;
          cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
        } else if (cp >= 0xdc00 && cp <= 0xdfff) {
          return fail(s, (const char *)p - 6, "unpaired UTF-16 surrogate in \\u escape");
        } else if (cp == 0) {
          return fail(s, (const char *)p - 6, "\\u0000 is not allowed in strings");
        }
        if (keep)
          o = put_utf8(o, cp);
        continue;
      default:
        return fail(s, (const char *)p, "bad escape in string");
      }
      if (keep)
        *o++ = one;
      p += 2;
      continue;
    }
    if (*p < 0x20)
      return fail(s, (const char *)p, "control character in string");
    {
      size_t n = spaa_utf8_seq(p, (size_t)(e - p));
      if (!n)
        return fail(s, (const char *)p, "invalid UTF-8 in string");
      if (keep) {
        memcpy(o, p, n);
        o += n;
      }
      p += n;
    }
  }
  if (keep) {
    *o = 0;
    *v = start;
    *len = (size_t)(o - start);
    s->out_len += (size_t)(o - start) + 1;
  }
  s->p = (const char *)p;
  return 0;
}

struct numtok {
  const char *start, *end;
  uint64_t mag;  /* magnitude of an integer */
  int neg;
  int is_int;    /* no fraction, no exponent */
  int overflow;  /* the integer does not fit in 64 bits */
};

static int scan_number(struct spaa_jscan *s, struct numtok *t)
{
  const char *p = s->p, *e = s->end;
  t->start = p;
  t->mag = 0;
  t->neg = 0;
  t->is_int = 1;
  t->overflow = 0;
  if (p < e && *p == '-') {
    t->neg = 1;
    p++;
  }
  if (p >= e || *p < '0' || *p > '9')
    return fail(s, p, "bad number");
  if (*p == '0') {
    p++;
  } else {
    while (p < e && *p >= '0' && *p <= '9') {
      unsigned d = (unsigned)(*p - '0');
      if (t->mag > (UINT64_MAX - d) / 10)
        t->overflow = 1;
      else
        t->mag = t->mag * 10 + d;
      p++;
    }
  }
  if (p < e && *p == '.') {
    t->is_int = 0;
    p++;
    if (p >= e || *p < '0' || *p > '9')
      return fail(s, p, "bad number: digits expected after '.'");
    while (p < e && *p >= '0' && *p <= '9')
      p++;
  }
  if (p < e && (*p == 'e' || *p == 'E')) {
    t->is_int = 0;
    p++;
    if (p < e && (*p == '+' || *p == '-'))
      p++;
    if (p >= e || *p < '0' || *p > '9')
      return fail(s, p, "bad number: digits expected in exponent");
    while (p < e && *p >= '0' && *p <= '9')
      p++;
  }
  if (p - t->start > SPAA_JSCAN_MAXNUM)
    return fail(s, t->start, "number too long");
  t->end = p;
  s->p = p;
  return 0;
}

static int scan_literal(struct spaa_jscan *s, const char *lit, size_t n)
{
  if ((size_t)(s->end - s->p) < n || memcmp(s->p, lit, n) != 0)
    return fail(s, s->p, "bad literal");
  s->p += n;
  return 0;
}

static int open_container(struct spaa_jscan *s, char c, const char *what)
{
  ws(s);
  if (s->p >= s->end || *s->p != c)
    return fail(s, s->p, what);
  if (s->depth >= SPAA_JSCAN_MAXDEPTH)
    return fail(s, s->p, "nesting too deep");
  s->p++;
  s->depth++;
  s->first[s->depth] = 1;
  return 0;
}

int spaa_jscan_obj_begin(struct spaa_jscan *s) { return open_container(s, '{', "object expected"); }
int spaa_jscan_arr_begin(struct spaa_jscan *s) { return open_container(s, '[', "array expected"); }

/* Before a member: close the container (0), or step over the comma (1); -1 on error. */
static int member(struct spaa_jscan *s, char close)
{
  if (s->err)
    return -1;
  ws(s);
  if (s->p >= s->end)
    return fail(s, s->p, close == '}' ? "unterminated object" : "unterminated array");
  if (*s->p == close) {
    s->p++;
    s->depth--;
    return 0;
  }
  if (s->first[s->depth]) {
    s->first[s->depth] = 0;
    return 1;
  }
  if (*s->p != ',')
    return fail(s, s->p, close == '}' ? "',' or '}' expected" : "',' or ']' expected");
  s->p++;
  ws(s);
  return 1;
}

int spaa_jscan_obj_key(struct spaa_jscan *s, const char **key, size_t *klen)
{
  int r = member(s, '}');
  if (r <= 0)
    return r;
  if (s->p >= s->end || *s->p != '"')
    return fail(s, s->p, "object key expected");
  if (scan_string(s, 1, key, klen))
    return -1;
  ws(s);
  if (s->p >= s->end || *s->p != ':')
    return fail(s, s->p, "':' expected");
  s->p++;
  return 1;
}

int spaa_jscan_arr_next(struct spaa_jscan *s)
{
  int r = member(s, ']');
  if (r == 1 && s->p < s->end && *s->p == ']')
    return fail(s, s->p, "value expected after ','");
  return r;
}

int spaa_jscan_str(struct spaa_jscan *s, const char **v, size_t *len)
{
  if (spaa_jscan_peek(s) != SPAA_J_STR)
    return fail(s, s->p, "string expected");
  return scan_string(s, 1, v, len);
}

int spaa_jscan_num(struct spaa_jscan *s, struct spaa_num *v)
{
  struct numtok t;
  char tmp[SPAA_JSCAN_MAXNUM + 1];
  if (spaa_jscan_peek(s) != SPAA_J_NUM)
    return fail(s, s->p, "number expected");
  if (scan_number(s, &t))
    return -1;
  if (t.is_int && !t.overflow) {
    if (!t.neg && t.mag <= (uint64_t)INT64_MAX) {
      *v = spaa_int((int64_t)t.mag);
      return 0;
    }
    if (t.neg && t.mag <= (uint64_t)INT64_MAX + 1) {
      *v = spaa_int(t.mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)t.mag);
      return 0;
    }
  }
  memcpy(tmp, t.start, (size_t)(t.end - t.start));
  tmp[t.end - t.start] = 0;
  *v = spaa_float(strtod(tmp, NULL));
  if (!isfinite(v->f))
    return fail(s, t.start, "number out of range");
  return 0;
}

int spaa_jscan_u64(struct spaa_jscan *s, uint64_t *v)
{
  struct numtok t;
  const char *at;
  if (spaa_jscan_peek(s) != SPAA_J_NUM)
    return fail(s, s->p, "integer expected");
  at = s->p;
  if (scan_number(s, &t))
    return -1;
  if (!t.is_int || t.overflow || (t.neg && t.mag))
    return fail(s, at, "non-negative 64-bit integer expected");
  *v = t.mag;
  return 0;
}

int spaa_jscan_bool(struct spaa_jscan *s, int *v)
{
  switch (spaa_jscan_peek(s)) {
  case SPAA_J_TRUE:
    *v = 1;
    return scan_literal(s, "true", 4);
  case SPAA_J_FALSE:
    *v = 0;
    return scan_literal(s, "false", 5);
  default:
    return fail(s, s->p, "true or false expected");
  }
}

static int skip_value(struct spaa_jscan *s, int depth)
{
  struct numtok t;
  int first = 1;
  if (depth > SPAA_JSCAN_SKIPDEPTH)
    return fail(s, s->p, "nesting too deep");
  switch (spaa_jscan_peek(s)) {
  case SPAA_J_STR:
    return scan_string(s, 0, NULL, NULL);
  case SPAA_J_NUM:
    return scan_number(s, &t);
  case SPAA_J_TRUE:
    return scan_literal(s, "true", 4);
  case SPAA_J_FALSE:
    return scan_literal(s, "false", 5);
  case SPAA_J_NULL:
    return scan_literal(s, "null", 4);
  case SPAA_J_OBJ:
    s->p++;
    for (;;) {
      ws(s);
      if (s->p < s->end && *s->p == '}' && first) {
        s->p++;
        return 0;
      }
      if (!first) {
        if (s->p < s->end && *s->p == '}') {
          s->p++;
          return 0;
        }
        if (s->p >= s->end || *s->p != ',')
          return fail(s, s->p, "',' or '}' expected");
        s->p++;
        ws(s);
      }
      first = 0;
      if (s->p >= s->end || *s->p != '"')
        return fail(s, s->p, "object key expected");
      if (scan_string(s, 0, NULL, NULL))
        return -1;
      ws(s);
      if (s->p >= s->end || *s->p != ':')
        return fail(s, s->p, "':' expected");
      s->p++;
      if (skip_value(s, depth + 1))
        return -1;
    }
  case SPAA_J_ARR:
    s->p++;
    for (;;) {
      ws(s);
      if (s->p < s->end && *s->p == ']' && first) {
        s->p++;
        return 0;
      }
      if (!first) {
        if (s->p < s->end && *s->p == ']') {
          s->p++;
          return 0;
        }
        if (s->p >= s->end || *s->p != ',')
          return fail(s, s->p, "',' or ']' expected");
        s->p++;
      }
      first = 0;
      if (skip_value(s, depth + 1))
        return -1;
    }
  default:
    return fail(s, s->p, s->p >= s->end ? "value expected, end of line found" : "value expected");
  }
}

int spaa_jscan_skip(struct spaa_jscan *s, const char **vstart, const char **vend)
{
  const char *a;
  ws(s);
  a = s->p;
  if (skip_value(s, 0))
    return -1;
  if (vstart)
    *vstart = a;
  if (vend)
    *vend = s->p;
  return 0;
}

int spaa_jscan_finish(struct spaa_jscan *s)
{
  if (s->err)
    return -1;
  ws(s);
  if (s->p != s->end)
    return fail(s, s->p, "unexpected bytes after the JSON value");
  return 0;
}
