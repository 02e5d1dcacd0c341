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
#include "server/sniff.h"

#define DEFAULT_MAX_ERRORS 100

static const char validate_usage[] =
    "usage: spaa-relay validate [--max-errors N] [--quiet] FILE...\n"
    "  Checks SPAA files (NDJSON, plain or zstd-compressed) against the spec's rules:\n"
    "  diagnostics on stderr as FILE:LINE: error|warning: [rule] field: message, one summary\n"
    "  line per file on stdout. Exit 0 all valid, 1 any invalid, 2 usage or I/O error.\n"
    "  FILE may be '-' for stdin; zstd input is detected by its magic number. A file that is\n"
    "  not SPAA (pprof, OTLP, a Sentry envelope or profile, folded stacks, gzip, other JSON)\n"
    "  is invalid, with what it looks like and the 'spaa-relay convert --from FORMAT' command\n"
    "  that reads it (formats: sentry, otlp, pprof, pprof-push, folded, spaa).\n"
    "  --max-errors N   print at most N errors and N warnings per file (0: all; default 100)\n"
    "  -q, --quiet      print no warnings\n"
    "  --               the arguments after it are files\n"
    "  -h, --help       this text\n";

static const char *const validate_flags[] = {"--max-errors", "--quiet", "--help"};

struct file_src {
  int fd;
  int err;            /* errno of a failed read */
  const uint8_t *head; /* bytes already read for sniffing, given out first */
  size_t head_len, head_pos;
};

static ssize_t fd_read(void *ctx, void *buf, size_t cap)
{
  struct file_src *f = ctx;
  if (f->head_pos < f->head_len) {
    size_t n = f->head_len - f->head_pos < cap ? f->head_len - f->head_pos : cap;
    memcpy(buf, f->head + f->head_pos, n);
    f->head_pos += n;
    return (ssize_t)n;
  }
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

/* Read the file's first SPAA_SNIFF_HEAD bytes into head; 0 or -1 (errno in src->err). */
static int read_head(struct file_src *src, uint8_t *head)
{
  size_t got = 0;
  while (got < SPAA_SNIFF_HEAD) {
    ssize_t n = fd_read(src, head + got, SPAA_SNIFF_HEAD - got);
    if (n < 0)
      return -1;
    if (n == 0)
      break;
    got += (size_t)n;
  }
  src->head = head;
  src->head_len = got;
  return 0;
}

/* A file that is not SPAA: what it looks like and the command that converts it. 1. */
static int not_spaa(const struct spaa_sniff *sn, const char *shown, const char *name)
{
  char hint[600];
  spaa_sniff_hint(sn, strcmp(name, "-") == 0 ? "FILE" : name, hint, sizeof(hint));
  fprintf(stderr, "%s: error: not SPAA: this looks like %s%s%s\n", shown, sn->what,
          sn->coding ? ", compressed with " : "", sn->coding ? sn->coding : "");
  fprintf(stderr, "%s: hint: %s\n", shown, hint);
  printf("%s: invalid (not SPAA: %s%s%s)\n", shown, sn->what, sn->coding ? ", " : "",
         sn->coding ? sn->coding : "");
  return 1;
}

/* Validate one file; returns 0 valid, 1 invalid (a corrupt compressed file too), 2 unreadable. */
static int validate_one(const char *name, size_t max_errors, int quiet)
{
  struct file_src src;
  struct printer pr = {name, quiet};
  struct spaa_validate_stats st;
  struct spaa_sniff sn;
  const char *shown = strcmp(name, "-") == 0 ? "<stdin>" : name;
  uint8_t *head;
  int rc;
  memset(&src, 0, sizeof(src));
  pr.name = shown;
  if (strcmp(name, "-") != 0 && (src.fd = open(name, O_RDONLY | O_CLOEXEC)) < 0) {
    fprintf(stderr, "spaa-relay: %s: %s\n", name, strerror(errno));
    return 2;
  }
  if (!(head = malloc(SPAA_SNIFF_HEAD)) || read_head(&src, head)) {
    fprintf(stderr, "spaa-relay: %s: %s\n", shown, strerror(head ? src.err : ENOMEM));
    if (src.fd > 0)
      close(src.fd);
    free(head);
    return 2;
  }
  spaa_sniff(head, src.head_len, &sn);
  if (!sn.is_spaa) {
    if (src.fd > 0)
      close(src.fd);
    free(head);
    return not_spaa(&sn, shown, name);
  }
  rc = spaa_validate(fd_read, &src, print_diag, &pr, max_errors, &st);
  free(head);
  if (src.fd > 0)
    close(src.fd);
  if (rc == SPAA_E_IO || rc == SPAA_E_BAD_COMPRESSION || rc == SPAA_E_NOMEM) {
    if (src.err)
      fprintf(stderr, "spaa-relay: %s: %s\n", shown, strerror(src.err));
    printf("%s: unreadable (%s)\n", shown, spaa_err_default(rc));
    /* a corrupt compressed file is invalid input (1, as convert says); 2 is for a file that
     * could not be read at all */
    return rc == SPAA_E_BAD_COMPRESSION ? 1 : 2;
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
        spaa_cli_bad_option("validate", a, validate_flags, 3, validate_usage);
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
      spaa_cli_bad_option("validate", a, validate_flags, 3, validate_usage);
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
