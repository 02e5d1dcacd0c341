/* A store location fit for a log line or an error message: the password of a URI's user
 * information ("user:secret@") and of a "password=" parameter replaced by "***". */
#include <string.h>

#include "storage/storage.h"

/* Append n bytes of s to out (cap bytes, NUL-terminated, cut short when full). */
static void put(char *out, size_t cap, size_t *len, const char *s, size_t n)
{
  size_t room = *len + 1 < cap ? cap - *len - 1 : 0;
  if (n > room)
    n = room;
  memcpy(out + *len, s, n);
  *len += n;
  out[*len] = 0;
}

/* The length of a "password=" value starting at s (to the next '&', ' ' or the end). */
static size_t value_len(const char *s)
{
  return strcspn(s, "& ");
}

void spaa_store_redact(const char *loc, char *out, size_t cap)
{
  const char *p = loc, *auth, *at, *colon, *kv;
  size_t len = 0;
  if (!cap)
    return;
  out[0] = 0;
  if (!loc)
    return;
  /* scheme://user:password@host... */
  if ((auth = strstr(p, "://"))) {
    auth += 3;
    at = auth + strcspn(auth, "/?#@");
    colon = memchr(auth, ':', (size_t)(at - auth));
    if (*at == '@' && colon) {
      put(out, cap, &len, p, (size_t)(colon + 1 - p));
      put(out, cap, &len, "***", 3);
      p = at;
    }
  }
  /* ...?password=secret&... or key=value text: "password=secret" */
  while ((kv = strstr(p, "password="))) {
    kv += strlen("password=");
    put(out, cap, &len, p, (size_t)(kv - p));
    put(out, cap, &len, "***", 3);
    p = kv + value_len(kv);
  }
  put(out, cap, &len, p, strlen(p));
}
