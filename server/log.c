/* Line-per-event logging to stderr (see log.h). */
#include "server/log.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/hex.h"
#include "base/limits.h"
#include "base/rfc3339.h"
#include "base/utf8.h"

static int log_level = SPAA_LOG_INFO;
static int log_fd = STDERR_FILENO; /* where lines go (swapped atomically on reopen) */
static int log_json;               /* 1: JSON lines */

int spaa_log_open(const char *path, int json)
{
  int fd = STDERR_FILENO, old;
  if (path && *path) {
    fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
    if (fd < 0)
      return -1;
  }
  __atomic_store_n(&log_json, json ? 1 : 0, __ATOMIC_RELAXED);
  old = __atomic_exchange_n(&log_fd, fd, __ATOMIC_SEQ_CST);
  /* a line being written on the old descriptor at this moment may be lost with it: a
   * rotation's rare cost, rather than a lock on every line */
  if (old != STDERR_FILENO && old != fd)
    close(old);
  return 0;
}

/* Append a JSON string of s[0..len) (escaped) at out[*pos], within n. Valid UTF-8 is kept;
 * a byte that is not part of any (only when the caller passed one: spaa_log_format's lines
 * have none) comes out as the text format writes it, \xNN, i.e. "\\xNN" in JSON. */
static void put_json_str(char *out, size_t n, size_t *pos, const char *s, size_t len)
{
  size_t i, k;
  if (*pos + 2 >= n)
    return;
  out[(*pos)++] = '"';
  for (i = 0; i < len && *pos + 8 < n; i++) {
    unsigned char ch = (unsigned char)s[i];
    if (ch == '"' || ch == '\\') {
      out[(*pos)++] = '\\';
      out[(*pos)++] = (char)ch;
    } else if (ch < 0x20 || ch == 0x7f) {
      *pos += (size_t)snprintf(out + *pos, n - *pos, "\\u%04x", ch);
    } else if (ch < 0x80) {
      out[(*pos)++] = (char)ch;
    } else if ((k = spaa_utf8_seq((const unsigned char *)s + i, len - i))) {
      memcpy(out + *pos, s + i, k); /* k <= 4 and *pos + 8 < n */
      *pos += k;
      i += k - 1;
    } else {
      out[(*pos)++] = '\\';
      out[(*pos)++] = '\\';
      out[(*pos)++] = 'x';
      out[(*pos)++] = spaa_hex_digits[ch >> 4];
      out[(*pos)++] = spaa_hex_digits[ch & 15];
    }
  }
  if (*pos + 1 < n)
    out[(*pos)++] = '"';
}

/* The next value of a text field at *p: quoted ("..." with \" and \\ kept escaped in the
 * line) or bare up to a space; its unescaped bytes into v (size vn). */
static size_t text_value(const char **p, char *v, size_t vn, int *quoted)
{
  const char *s = *p;
  size_t len = 0;
  *quoted = *s == '"';
  if (*s == '"') {
    for (s++; *s && *s != '"'; s++) {
      if (*s == '\\' && (s[1] == '"' || s[1] == '\\'))
        s++;
      if (len + 1 < vn)
        v[len++] = *s;
    }
    if (*s == '"')
      s++;
  } else {
    for (; *s && *s != ' ' && *s != '\n'; s++) /* the line's own newline is no part of it */
      if (len + 1 < vn)
        v[len++] = *s;
  }
  *p = s;
  return len;
}

/* 1 when v[0..len) is a JSON number a reader takes exactly: -?(0|[1-9][0-9]*)(.[0-9]+)?
 * with at most 15 digits (a double holds them; longer ones, ids and the like, stay strings). */
static int plain_number(const char *v, size_t len)
{
  size_t i = 0, digits = 0;
  if (i < len && v[i] == '-')
    i++;
  if (i >= len || v[i] < '0' || v[i] > '9' || (v[i] == '0' && i + 1 < len && v[i + 1] != '.'))
    return 0;
  for (; i < len && v[i] >= '0' && v[i] <= '9'; i++)
    digits++;
  if (i < len && v[i] == '.') {
    if (++i >= len)
      return 0;
    for (; i < len && v[i] >= '0' && v[i] <= '9'; i++)
      digits++;
  }
  return i == len && digits <= 15;
}

size_t spaa_log_json_line(char *out, size_t n, const char *line)
{
  static const char *const first[3] = {"time", "level", "msg"};
  char v[SPAA_LOG_MAX_LINE];
  const char *p = line;
  size_t pos = 0, len, i;
  int quoted;
  if (n < 64)
    return 0;
  out[pos++] = '{';
  for (i = 0; *p && *p != '\n'; i++) {
    const char *key, *eq;
    size_t klen;
    while (*p == ' ')
      p++;
    key = p;
    if (i == 0) { /* the time has no key */
      eq = NULL;
      klen = 0;
    } else {
      eq = strchr(p, '=');
      if (!eq)
        break;
      klen = (size_t)(eq - p);
      p = eq + 1;
    }
    len = text_value(&p, v, sizeof(v), &quoted);
    if (i && pos + 1 < n)
      out[pos++] = ',';
    if (i < 3)
      put_json_str(out, n, &pos, first[i], strlen(first[i]));
    else
      put_json_str(out, n, &pos, key, klen);
    if (pos + 1 < n)
      out[pos++] = ':';
    if (i >= 3 && !quoted && plain_number(v, len)) { /* numbers as numbers: queries compare */
      if (pos + len + 1 < n) {
        memcpy(out + pos, v, len);
        pos += len;
      }
    } else {
      put_json_str(out, n, &pos, v, len);
    }
  }
  if (pos + 2 >= n)
    pos = n - 3;
  out[pos++] = '}';
  out[pos++] = '\n';
  out[pos] = 0;
  return pos;
}

void spaa_log_set_level(enum spaa_log_level level)
{
  __atomic_store_n(&log_level, (int)level, __ATOMIC_RELAXED);
}

int spaa_log_enabled(enum spaa_log_level level)
{
  return (int)level >= __atomic_load_n(&log_level, __ATOMIC_RELAXED);
}

/* Append `s` escaped (quotes, backslashes, control characters) at out[*pos], within n - 1.
 * Valid UTF-8 sequences are kept whole (or left out whole at the cut); any other byte >= 0x80
 * is written \xNN, like a control character, so the line is always valid UTF-8. */
static void put_escaped(char *out, size_t n, size_t *pos, const char *s, int quote_escape)
{
  size_t k;
  for (; *s && *pos + 5 < n; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch >= 0x80 && (k = spaa_utf8_seq((const unsigned char *)s, strnlen(s, 4)))) {
      if (*pos + k + 5 >= n)
        break;
      memcpy(out + *pos, s, k);
      *pos += k;
      s += k - 1;
      continue;
    }
    if (ch == '\n') {
      out[(*pos)++] = '\\';
      out[(*pos)++] = 'n';
    } else if (ch == '\r') {
      out[(*pos)++] = '\\';
      out[(*pos)++] = 'r';
    } else if (ch == '\t') {
      out[(*pos)++] = '\\';
      out[(*pos)++] = 't';
    } else if (ch < 0x20 || ch >= 0x7f) { /* >= 0x80 here: not valid UTF-8 */
      out[(*pos)++] = '\\';
      out[(*pos)++] = 'x';
      out[(*pos)++] = spaa_hex_digits[ch >> 4];
      out[(*pos)++] = spaa_hex_digits[ch & 15];
    } else if (quote_escape && (ch == '"' || ch == '\\')) {
      out[(*pos)++] = '\\';
      out[(*pos)++] = (char)ch;
    } else {
      out[(*pos)++] = (char)ch;
    }
  }
}

size_t spaa_log_format(char *out, size_t n, long long ns, enum spaa_log_level level,
                       const char *msg, const char *kv)
{
  char when[SPAA_RFC3339_SIZE];
  size_t pos;
  int w;
  if (n < 64)
    return 0;
  spaa_rfc3339_format_ns(when, ns, 3);
  w = snprintf(out, n, "%s level=%s msg=\"", when, spaa_config_level_name(level));
  pos = w > 0 ? (size_t)w : 0;
  if (pos >= n)
    pos = n - 1;
  put_escaped(out, n, &pos, msg ? msg : "", 1);
  if (pos + 2 < n)
    out[pos++] = '"';
  if (kv && kv[0] && pos + 2 < n) {
    out[pos++] = ' ';
    put_escaped(out, n, &pos, kv, 0);
  }
  if (pos + 1 >= n)
    pos = n - 2;
  out[pos++] = '\n';
  out[pos] = 0;
  return pos;
}

static void write_all(const char *line, size_t len);

static void log_v(enum spaa_log_level level, const char *msg, const char *kv_fmt, va_list ap)
{
  char kv[SPAA_LOG_MAX_LINE], line[SPAA_LOG_MAX_LINE + 256];
  struct timespec ts;
  size_t len;
  kv[0] = 0;
  if (kv_fmt)
    vsnprintf(kv, sizeof(kv), kv_fmt, ap);
  clock_gettime(CLOCK_REALTIME, &ts);
  len = spaa_log_format(line, sizeof(line), (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec,
                        level, msg, kv);
  if (__atomic_load_n(&log_json, __ATOMIC_RELAXED)) {
    char json[sizeof(line) * 2];
    len = spaa_log_json_line(json, sizeof(json), line);
    write_all(json, len);
    return;
  }
  write_all(line, len);
}

static void write_all(const char *line, size_t len)
{
  size_t off = 0;
  int fd = __atomic_load_n(&log_fd, __ATOMIC_RELAXED);
  while (off < len) {
    ssize_t w = write(fd, line + off, len - off);
    if (w <= 0)
      break;
    off += (size_t)w;
  }
}

void spaa_log(enum spaa_log_level level, const char *msg, const char *kv_fmt, ...)
{
  va_list ap;
  if (!spaa_log_enabled(level))
    return;
  va_start(ap, kv_fmt);
  log_v(level, msg, kv_fmt, ap);
  va_end(ap);
}

void spaa_log_always(enum spaa_log_level level, const char *msg, const char *kv_fmt, ...)
{
  va_list ap;
  va_start(ap, kv_fmt);
  log_v(level, msg, kv_fmt, ap);
  va_end(ap);
}

const char *spaa_log_q(char *buf, size_t n, const char *s)
{
  size_t o = 0;
  for (; s && *s && o + 3 < n; s++) {
    if (*s == '"' || *s == '\\')
      buf[o++] = '\\';
    buf[o++] = *s;
  }
  /* a cut must not leave half a UTF-8 sequence: the log would write its bytes as \xNN */
  while (o && s && *s && ((unsigned char)buf[o - 1] & 0xc0) == 0x80)
    o--;
  if (o && s && *s && (unsigned char)buf[o - 1] >= 0xc0)
    o--;
  if (n)
    buf[o < n ? o : n - 1] = 0;
  return buf;
}
