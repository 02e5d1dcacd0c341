/* The store's messages to the operator's log (log_int.h): formatted here, written by the
 * callback the store's opener gave (the server's logger). */
#include "storage/log_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "base/limits.h"

void storage__log(const struct storage__log *l, enum spaa_store_log_level level,
                  const char *msg, const char *kv_fmt, ...)
{
  char kv[SPAA_LOG_MAX_LINE];
  va_list ap;
  if (!l || !l->cb)
    return;
  kv[0] = 0;
  if (kv_fmt) {
    va_start(ap, kv_fmt);
    vsnprintf(kv, sizeof(kv), kv_fmt, ap);
    va_end(ap);
  }
  l->cb(l->ctx, level, msg, kv);
}

const char *storage__log_q(char *buf, size_t n, const char *s)
{
  size_t o = 0;
  if (!n)
    return buf;
  for (; s && *s; s++) {
    int esc = *s == '"' || *s == '\\', space = *s == '\n' || *s == '\r' || *s == '\t';
    if (space && o && buf[o - 1] == ' ')
      continue; /* "...failed\n\tIs the server...": one space */
    if (o + (esc ? 2 : 1) >= n)
      break;
    if (esc)
      buf[o++] = '\\';
    buf[o++] = space ? ' ' : *s;
  }
  while (o && (buf[o - 1] == ' ' || buf[o - 1] == '.'))
    o--;
  buf[o] = 0;
  return buf;
}

uint64_t storage__mono_ns(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}
