/* Names, HTTP statuses and messages of the error codes in err.h. */
#include "base/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

struct err_info {
  int code;
  int status;
  const char *name;
  const char *msg;
};

static const struct err_info err_table[] = {
#define XX(name, status, msg) {SPAA_E_##name, status, #name, msg},
    SPAA_ERR_MAP(XX)
#undef XX
};

static const struct err_info *err_find(int code)
{
  size_t i;
  for (i = 0; i < sizeof(err_table) / sizeof(err_table[0]); i++)
    if (err_table[i].code == code)
      return &err_table[i];
  return NULL;
}

const char *spaa_err_name(int code)
{
  /* lower-case names for JSON bodies: "BAD_JSON" -> "bad_json" */
  static const char *const lower[] = {
#define XX(name, status, msg) #name,
      SPAA_ERR_MAP(XX)
#undef XX
  };
  static char cache[sizeof(lower) / sizeof(lower[0])][32];
  static int ready;
  size_t i, n = sizeof(lower) / sizeof(lower[0]);
  const struct err_info *e;
  if (code == 0)
    return "ok";
  e = err_find(code);
  if (!e)
    return "internal";
  if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE)) {
    /* idempotent: every thread writes the same bytes */
    for (i = 0; i < n; i++) {
      size_t j;
      for (j = 0; lower[i][j] && j < sizeof(cache[i]) - 1; j++)
        cache[i][j] = (char)((lower[i][j] >= 'A' && lower[i][j] <= 'Z') ? lower[i][j] + 32
                                                                         : lower[i][j]);
      cache[i][j] = 0;
    }
    __atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
  }
  return cache[e - err_table];
}

int spaa_err_status(int code)
{
  const struct err_info *e = err_find(code);
  return e ? e->status : 500;
}

const char *spaa_err_default(int code)
{
  const struct err_info *e = err_find(code);
  return e ? e->msg : "unknown error";
}

int spaa_err_set(struct spaa_err *err, int code, size_t line, size_t offset, const char *fmt,
                 ...)
{
  va_list ap;
  if (!err)
    return code;
  err->code = code;
  err->line = line;
  err->offset = offset;
  if (fmt) {
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    va_end(ap);
  } else {
    snprintf(err->msg, sizeof(err->msg), "%s", spaa_err_default(code));
  }
  /* messages are single lines */
  for (char *p = err->msg; *p; p++)
    if (*p == '\n' || *p == '\r')
      *p = ' ';
  return code;
}

void spaa_err_clear(struct spaa_err *err)
{
  if (err)
    memset(err, 0, sizeof(*err));
}
