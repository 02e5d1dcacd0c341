/* Finding and reading test inputs (see fixture.h). */
#include "fixture.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

uint8_t *spaa_test_read_file(const char *path, size_t *len)
{
  FILE *f = fopen(path, "rb");
  uint8_t *p = NULL;
  long n;
  int e = 0;
  if (len)
    *len = 0;
  if (!f)
    return NULL;
  if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
    e = errno ? errno : EIO;
    goto out;
  }
  if (!(p = malloc((size_t)n + 1))) {
    e = ENOMEM;
    goto out;
  }
  if (fread(p, 1, (size_t)n, f) != (size_t)n) {
    e = EIO;
    free(p);
    p = NULL;
    goto out;
  }
  p[n] = 0;
  if (len)
    *len = (size_t)n;
out:
  fclose(f);
  if (e)
    errno = e;
  return p;
}

/* The source tree's root, from this file's own path (tests/support/fixture.c). */
static void source_root(char *out, size_t cap)
{
  const char *f = __FILE__, *t = strstr(f, "/tests/support/");
  if (t)
    snprintf(out, cap, "%.*s", (int)(t - f), f);
  else
    snprintf(out, cap, ".");
}

const char *spaa_test_shared(void)
{
  static char dir[4096];
  struct stat st;
  const char *env = getenv("SPAA_SHARED");
  if (env && *env)
    snprintf(dir, sizeof(dir), "%s", env);
  else {
    char root[4000];
    source_root(root, sizeof(root));
    snprintf(dir, sizeof(dir), "%s/../shared", root);
  }
  return stat(dir, &st) == 0 && S_ISDIR(st.st_mode) ? dir : NULL;
}

int spaa_test_fixture_path(char *out, size_t cap, const char *rel)
{
  const char *shared = spaa_test_shared();
  int n;
  if (!shared)
    return -1;
  n = snprintf(out, cap, "%s/fixtures/%s", shared, rel);
  return n < 0 || (size_t)n >= cap ? -1 : 0;
}

uint8_t *spaa_test_fixture(const char *rel, size_t *len)
{
  char path[4096];
  if (len)
    *len = 0;
  if (spaa_test_fixture_path(path, sizeof(path), rel))
    return NULL;
  return spaa_test_read_file(path, len);
}

void spaa_test_data_path(char *out, size_t cap, const char *name)
{
  char root[4000];
  source_root(root, sizeof(root));
  snprintf(out, cap, "%s/tests/data/%s", root, name);
}
