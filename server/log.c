/* Line-per-event logging to stderr (see log.h). */
#include "server/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/hex.h"
#include "base/limits.h"
#include "base/rfc3339.h"

static int log_level = SPAA_LOG_INFO;

void spaa_log_set_level(enum spaa_log_level level)
{
  __atomic_store_n(&log_level, (int)level, __ATOMIC_RELAXED);
}

int spaa_log_enabled(enum spaa_log_level level)
{
  return (int)level >= __atomic_load_n(&log_level, __ATOMIC_RELAXED);
}

/* Append `s` escaped (quotes, backslashes, control characters) at out[*pos], within n - 1. */
static void put_escaped(char *out, size_t n, size_t *pos, const char *s, int quote_escape)
{
  for (; *s && *pos + 5 < n; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '\n') {
      out[(*pos)++] = '\\';
      out[(*pos)++] = 'n';
    } else if (ch == '\r') {
      out[(*pos)++] = '\\';
      out[(*pos)++] = 'r';
    } else if (ch == '\t') {
      out[(*pos)++] = '\\';
      out[(*pos)++] = 't';
    } else if (ch < 0x20 || ch == 0x7f) {
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

static void log_v(enum spaa_log_level level, const char *msg, const char *kv_fmt, va_list ap)
{
  char kv[SPAA_LOG_MAX_LINE], line[SPAA_LOG_MAX_LINE + 256];
  struct timespec ts;
  size_t len, off = 0;
  kv[0] = 0;
  if (kv_fmt)
    vsnprintf(kv, sizeof(kv), kv_fmt, ap);
  clock_gettime(CLOCK_REALTIME, &ts);
  len = spaa_log_format(line, sizeof(line), (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec,
                        level, msg, kv);
  while (off < len) {
    ssize_t w = write(STDERR_FILENO, line + off, len - off);
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
