/* spaa-relay validate FILE...: check SPAA files (plain or zstd, "-" for stdin) against the
 * spec's rules; diagnostics on stderr as FILE:LINE: error: [rule] field: message, one summary
 * line per file on stdout. Exit 0 all valid, 1 any invalid, 2 usage or I/O error. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spaa/spaa_io.h"
#include "server/cli.h"

#define DEFAULT_MAX_ERRORS 100

static const char validate_usage[] =
    "usage: spaa-relay validate [--max-errors N] [--quiet] FILE...\n"
    "  FILE may be '-' for stdin; zstd input is detected by its magic number.\n"
    "  --max-errors N  print at most N errors and N warnings per file (0: all; default 100)\n"
    "  --quiet         print no warnings\n";

struct file_src {
  int fd;
  int err; /* errno of a failed read */
};

static ssize_t fd_read(void *ctx, void *buf, size_t cap)
{
  struct file_src *f = ctx;
  for (;;) {
    ssize_t n = read(f->fd, buf, cap);
    if (n >= 0)
      return n;
    if (errno != EINTR) {
      f->err = errno;
      return -1;
    }
  }
}

struct printer {
  const char *name; /* file name as given */
  int quiet;        /* no warnings */
};

static void print_diag(void *ctx, const struct spaa_diag *d)
{
  const struct printer *p = ctx;
  if (!d->is_error && p->quiet)
    return;
  if (d->field && d->field[0])
    fprintf(stderr, "%s:%zu: %s: [%s] %s: %s\n", p->name, d->line,
            d->is_error ? "error" : "warning", d->rule, d->field, d->msg);
  else
    fprintf(stderr, "%s:%zu: %s: [%s] %s\n", p->name, d->line, d->is_error ? "error" : "warning",
            d->rule, d->msg);
}

/* Validate one file; returns 0 valid, 1 invalid, 2 unreadable. */
static int validate_one(const char *name, size_t max_errors, int quiet)
{
  struct file_src src = {0, 0};
  struct printer pr = {name, quiet};
  struct spaa_validate_stats st;
  const char *shown = strcmp(name, "-") == 0 ? "<stdin>" : name;
  int rc;
  pr.name = shown;
  if (strcmp(name, "-") != 0 && (src.fd = open(name, O_RDONLY | O_CLOEXEC)) < 0) {
    fprintf(stderr, "spaa-relay: %s: %s\n", name, strerror(errno));
    return 2;
  }
  rc = spaa_validate(fd_read, &src, print_diag, &pr, max_errors, &st);
  if (src.fd > 0)
    close(src.fd);
  if (rc == SPAA_E_IO || rc == SPAA_E_BAD_COMPRESSION || rc == SPAA_E_NOMEM) {
    if (src.err)
      fprintf(stderr, "spaa-relay: %s: %s\n", shown, strerror(src.err));
    printf("%s: unreadable (%s)\n", shown, spaa_err_default(rc));
    return 2;
  }
  if (rc == 0) {
    printf("%s: valid (%zu stacks, %zu warnings)\n", shown, st.stacks, st.warnings);
    return 0;
  }
  printf("%s: invalid (%zu errors, %zu warnings)\n", shown, st.errors, st.warnings);
  return 1;
}

int spaa_cmd_validate(int argc, char **argv)
{
  size_t max_errors = DEFAULT_MAX_ERRORS;
  int i, quiet = 0, worst = 0, files = 0, opts_done = 0;
  for (i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!opts_done && strcmp(a, "--") == 0) {
      opts_done = 1;
    } else if (!opts_done && (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)) {
      fputs(validate_usage, stdout);
      return 0;
    } else if (!opts_done && strcmp(a, "--max-errors") == 0) {
      char *end;
      if (i + 1 >= argc) {
        fputs(validate_usage, stderr);
        return 2;
      }
      errno = 0;
      max_errors = (size_t)strtoull(argv[++i], &end, 10);
      if (errno || *end || argv[i][0] == '-' || !argv[i][0]) {
        fprintf(stderr, "spaa-relay: --max-errors wants a number, not '%s'\n", argv[i]);
        return 2;
      }
    } else if (!opts_done && (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0)) {
      quiet = 1;
    } else if (!opts_done && a[0] == '-' && a[1]) {
      fprintf(stderr, "spaa-relay: validate: unknown option '%s'\n%s", a, validate_usage);
      return 2;
    } else {
      argv[files++ + 1] = argv[i]; /* keep the file names at the front */
    }
  }
  if (!files) {
    fputs(validate_usage, stderr);
    return 2;
  }
  for (i = 0; i < files; i++) {
    int r = validate_one(argv[i + 1], max_errors, quiet);
    if (r > worst)
      worst = r;
  }
  fflush(stdout);
  return worst;
}
