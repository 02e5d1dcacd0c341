/* libFuzzer target: the Sentry payload reader (codecs/sentry/sentry_json.c) against jansson.
 * The reader must accept exactly what json_loadb accepts, with jansson's error for the rest,
 * and its in-place walks must stay inside the bytes of what it accepted. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sentry/sentry_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Every element and member of v, as the decoder walks them. */
static void walk_all(struct sentry__span v, int depth)
{
  static const char *const keys[] = {"stack_id", "thread_id", "timestamp", "function"};
  struct sentry__iter it;
  struct sentry__span k, e, f[4];
  struct sentry__scratch sc = {NULL, 0};
  const char *s;
  size_t n;
  switch (sentry__kind(v)) {
  case SENTRY__J_ARR:
    sentry__iter_init(&it, v);
    while (sentry__iter_next(&it, &e))
      if (depth < 3)
        walk_all(e, depth + 1);
    break;
  case SENTRY__J_OBJ:
    sentry__fields(v, keys, 4, f);
    sentry__iter_init(&it, v);
    while (sentry__iter_member(&it, &k, &e))
      if (depth < 3)
        walk_all(e, depth + 1);
    break;
  case SENTRY__J_STR:
    if (sentry__str(v, &sc, &s, &n) == 0 && n) {
      volatile char last = s[n - 1]; /* the text is read: out of bounds shows */
      (void)last;
    }
    break;
  case SENTRY__J_INT:
    (void)sentry__int(v);
    break;
  case SENTRY__J_REAL:
    (void)sentry__real(v);
    break;
  default:
    break;
  }
  sentry__scratch_free(&sc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct sentry__doc d;
  json_error_t je, mine;
  /* an exact-size copy: a read past the end is caught */
  uint8_t *b = malloc(size ? size : 1);
  json_t *j;
  int rc;
  if (!b)
    return 0;
  memcpy(b, data, size);
  j = json_loadb((const char *)b, size, 0, &je);
  rc = sentry__doc_load(b, size, &d, &mine);
  if ((j != NULL) != (rc == 0) || (!j && rc != SPAA_E_BAD_JSON))
    abort();
  if (!j && (strcmp(je.text, mine.text) != 0 || je.position != mine.position))
    abort();
  if (j) {
    walk_all(d.samples.v, 0);
    walk_all(d.stacks.v, 0);
    walk_all(d.frames.v, 0);
  }
  json_decref(j);
  sentry__doc_free(&d);
  free(b);
  return 0;
}
