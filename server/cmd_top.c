/* spaa-relay top [--from FORMAT] [--event E] [--metric M] [--limit N] [--by function|frame]
 * FILE: the top functions of a profile file, offline, through the same view as
 * GET /api/v1/profiles/{id}/top (codecs/spaa/view.h), printed as a table. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/limits.h"
#include "codecs/registry.h"
#include "server/cli.h"
#include "server/sniff.h"
#include "spaa/view.h"

static const char top_usage[] =
    "usage: spaa-relay top [--from FORMAT] [--event NAME] [--metric NAME] [--limit N]\n"
    "                      [--by function|frame] [--profile K] FILE\n"
    "  The functions of the profile's first (or the named) event sorted by self weight:\n"
    "  self%, self, total%, total (recursion counted once), name; the same view as\n"
    "  GET /api/v1/profiles/{id}/top. FILE may be '-' for stdin.\n"
    "  --from FORMAT          sentry, otlp, pprof, pprof-push, folded or spaa (as in convert\n"
    "                         --from). Without it the format is guessed as validate does\n"
    "                         (SPAA, zstd SPAA, Sentry, OTLP protobuf or JSON, pprof, folded\n"
    "                         stacks), else pprof\n"
    "  --event NAME           the event to rank (default: the first declared)\n"
    "  --metric NAME          the metric to rank by (default: the event's primary metric)\n"
    "  --limit N              rows printed, 1..1000000 (default 20)\n"
    "  --by function|frame    merge frames of one function (default) or keep each frame\n"
    "  --profile K            the K-th profile (from 1) of an input that holds several (an\n"
    "                         OTLP request, a Sentry envelope); needed when it does\n"
    "  -h, --help             this text\n";

static const char *const top_flags[] = {"--from", "--event", "--metric", "--limit", "--by",
                                        "--profile", "--help"};
#define N_TOP_FLAGS (sizeof(top_flags) / sizeof(top_flags[0]))

struct top_args {
  const char *from, *event, *metric, *file;
  size_t limit;
  size_t profile; /* 1-based; 0 = not given */
  int by_frame;
};

/* A count flag's value, 1..1000000, into *out; -1 (said on stderr) otherwise. */
static int parse_count(const char *flag, const char *v, size_t *out)
{
  char *end;
  long n = strtol(v, &end, 10);
  if (*end || n < 1 || n > 1000000) {
    fprintf(stderr, "spaa-relay top: %s wants 1..1000000, not '%s'\n", flag, v);
    return -1;
  }
  *out = (size_t)n;
  return 0;
}

static int top_parse(int argc, char **argv, struct top_args *a)
{
  int i;
  memset(a, 0, sizeof(*a));
  a->limit = 20;
  for (i = 1; i < argc; i++) {
    const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(o, "--help") || !strcmp(o, "-h"))
      return 1;
    if (o[0] == '-' && o[1] && !v) {
      spaa_cli_bad_option("top", o, top_flags, N_TOP_FLAGS, top_usage);
      return -2;
    }
    if (!strcmp(o, "--from"))
      a->from = argv[++i];
    else if (!strcmp(o, "--event"))
      a->event = argv[++i];
    else if (!strcmp(o, "--metric"))
      a->metric = argv[++i];
    else if (!strcmp(o, "--limit") || !strcmp(o, "--profile")) {
      if (parse_count(o, argv[++i], !strcmp(o, "--limit") ? &a->limit : &a->profile))
        return -2;
    } else if (!strcmp(o, "--by")) {
      if (strcmp(v, "function") && strcmp(v, "frame")) {
        fprintf(stderr, "spaa-relay top: --by wants function or frame, not '%s'\n", v);
        return -2;
      }
      a->by_frame = !strcmp(argv[++i], "frame");
    } else if (o[0] == '-' && o[1]) {
      spaa_cli_bad_option("top", o, top_flags, N_TOP_FLAGS, top_usage);
      return -2;
    } else if (!a->file) {
      a->file = o;
    } else {
      fprintf(stderr, "spaa-relay top: one file only ('%s' and '%s')\n", a->file, o);
      return -2;
    }
  }
  return a->file ? 0 : -1;
}

static int read_file(const char *name, struct spaa_buf *b)
{
  int fd = strcmp(name, "-") == 0 ? 0 : open(name, O_RDONLY | O_CLOEXEC);
  char chunk[65536];
  ssize_t n;
  if (fd < 0)
    return -1;
  while ((n = read(fd, chunk, sizeof(chunk))) > 0)
    if (spaa_buf_add(b, chunk, (size_t)n)) {
      n = -1;
      break;
    }
  if (fd)
    close(fd);
  return n < 0 ? -1 : 0;
}

/* The format as `validate` tells it (zstd SPAA, OTLP-JSON, a Sentry envelope...); pprof
 * when nothing is recognised, so that its decoder says what is wrong. */
static const char *guess_format(const struct spaa_buf *b)
{
  struct spaa_sniff sn;
  spaa_sniff((const uint8_t *)b->p, b->len < SPAA_SNIFF_HEAD ? b->len : SPAA_SNIFF_HEAD, &sn);
  if (sn.is_spaa)
    return "spaa";
  return sn.from ? sn.from : "pprof";
}

static void print_rows(const struct spaa_vset *v, size_t limit)
{
  struct spaa_top_row *rows;
  size_t i, n;
  if (spaa_view__top_rows(v, &rows, &n))
    return;
  printf("metric %s%s%s%s, total %.20Lg, %zu stacks\n", v->metric ? v->metric : "?",
         v->unit ? " (" : "", v->unit ? v->unit : "", v->unit ? ")" : "", v->total, v->n_stacks);
  printf("%8s %16s %8s %16s  %s\n", "self%", "self", "total%", "total", "function");
  for (i = 0; i < n && i < limit; i++)
    printf("%7.2f%% %16.20Lg %7.2f%% %16.20Lg  %s\n",
           v->total != 0 ? (double)(100 * rows[i].self / v->total) : 0.0, rows[i].self,
           v->total != 0 ? (double)(100 * rows[i].total / v->total) : 0.0, rows[i].total,
           rows[i].name);
  free(rows);
}

int spaa_cmd_top(int argc, char **argv)
{
  struct top_args a;
  struct spaa_conv_list list;
  struct spaa_convert_opts opts;
  struct spaa_buf in;
  struct spaa_vset v;
  struct spaa_err err;
  spaa_convert_fn conv;
  size_t k;
  int rc = top_parse(argc, argv, &a), status = 0;
  if (rc) {
    if (rc != -2)
      fputs(top_usage, rc > 0 ? stdout : stderr);
    return rc > 0 ? 0 : 2;
  }
  memset(&list, 0, sizeof(list));
  memset(&opts, 0, sizeof(opts));
  memset(&err, 0, sizeof(err));
  spaa_buf_init(&in, SPAA_CONVERT_MAX_INPUT);
  spaa_vset_init(&v);
  if (read_file(a.file, &in) || spaa_buf_add(&in, "", 1)) {
    fprintf(stderr, "spaa-relay: top: cannot read %s\n", a.file);
    status = 2;
    goto out;
  }
  in.len--; /* the NUL only terminates the text for guessing */
  if (!(conv = spaa_converter(a.from ? a.from : guess_format(&in)))) {
    fprintf(stderr, "spaa-relay: top: unknown format '%s' (known: %s)\n", a.from,
            spaa_converter_names());
    status = 2;
    goto out;
  }
  if ((rc = conv((const uint8_t *)in.p, in.len, &opts, &list, &err)) || !list.n) {
    fprintf(stderr, "%s: error: %s\n", a.file, rc ? err.msg : "no profile in the input");
    status = 1;
    goto out;
  }
  if (list.n > 1 && !a.profile) {
    fprintf(stderr, "spaa-relay: top: %s holds %zu profiles: give --profile K (1..%zu)\n",
            a.file, list.n, list.n);
    status = 2;
    goto out;
  }
  if (a.profile > list.n) {
    fprintf(stderr, "spaa-relay: top: %s holds %zu profile%s: no profile %zu\n", a.file,
            list.n, list.n == 1 ? "" : "s", a.profile);
    status = 2;
    goto out;
  }
  k = a.profile ? a.profile - 1 : 0;
  if (!list.v[k].profile) {
    fprintf(stderr, "%s: error: profile %zu: %s\n", a.file, k + 1, list.v[k].err.msg);
    status = 1;
    goto out;
  }
  if ((rc = spaa_vset_from_profile(&v, list.v[k].profile, a.event, a.metric, a.by_frame, &err))) {
    fprintf(stderr, "spaa-relay: top: %s\n", err.msg);
    status = rc == SPAA_E_USAGE ? 2 : 1;
    goto out;
  }
  print_rows(&v, a.limit);
out:
  spaa_vset_free(&v);
  spaa_buf_free(&in);
  spaa_conv_list_free(&list);
  return status;
}
