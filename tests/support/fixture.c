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

/* Where the shared folder is expected: $SPAA_SHARED, else ../shared beside the source tree
 * (whether or not it exists). */
static void shared_candidate(char *out, size_t cap)
{
  const char *env = getenv("SPAA_SHARED");
  if (env && *env)
    snprintf(out, cap, "%s", env);
  else {
    char root[2048]; /* well under every caller's cap, so that "/../shared" fits */
    source_root(root, sizeof(root));
    snprintf(out, cap, "%s/../shared", root);
  }
}

static int is_dir(const char *path)
{
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

const char *spaa_test_shared(void)
{
  static char dir[4096];
  shared_candidate(dir, sizeof(dir));
  return is_dir(dir) ? dir : NULL;
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

/* spaa_test_read_file, and a line on stderr naming the file when it fails. */
static uint8_t *read_or_say(const char *path, size_t *len)
{
  uint8_t *p = spaa_test_read_file(path, len);
  if (!p) {
    int e = errno;
    fprintf(stderr, "cannot read %s: %s\n", path, strerror(e));
    errno = e;
  }
  return p;
}

uint8_t *spaa_test_fixture(const char *rel, size_t *len)
{
  char path[4096];
  if (len)
    *len = 0;
  if (!spaa_test_shared()) {
    errno = ENOENT;
    return NULL;
  }
  if (spaa_test_fixture_path(path, sizeof(path), rel)) {
    fprintf(stderr, "fixture path too long: %s\n", rel);
    errno = ENAMETOOLONG;
    return NULL;
  }
  return read_or_say(path, len);
}

uint8_t *spaa_test_fixture_in(const char *dir, const char *name, size_t *len)
{
  char rel[2048];
  int n = snprintf(rel, sizeof(rel), "%s/%s", dir, name);
  if (len)
    *len = 0;
  if (n < 0 || (size_t)n >= sizeof(rel)) {
    fprintf(stderr, "fixture path too long: %s/%s\n", dir, name);
    errno = ENAMETOOLONG;
    return NULL;
  }
  return spaa_test_fixture(rel, len);
}

int spaa_test_have_fixtures(const char *dir, const char *who)
{
  char path[4096];
  if (spaa_test_fixture_path(path, sizeof(path), dir) == 0 && is_dir(path))
    return 1;
  if (who) {
    char shared[4000];
    shared_candidate(shared, sizeof(shared));
    fprintf(stderr, "%s: skipped, no folder %s/fixtures/%s (set SPAA_SHARED)\n", who, shared,
            dir);
  }
  return 0;
}

void spaa_test_data_path(char *out, size_t cap, const char *name)
{
  char rel[2048];
  snprintf(rel, sizeof(rel), "tests/data/%s", name);
  spaa_test_source_path(out, cap, rel);
}

void spaa_test_source_path(char *out, size_t cap, const char *rel)
{
  char root[2048];
  source_root(root, sizeof(root));
  snprintf(out, cap, "%s/%s", root, rel);
}

uint8_t *spaa_test_data(const char *name, size_t *len)
{
  char path[4096];
  spaa_test_data_path(path, sizeof(path), name);
  return read_or_say(path, len);
}
