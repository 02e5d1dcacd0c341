/* spaa-relay convert --from FORMAT [--to NAME] IN [-o OUT] [--zstd]: any input format with a
 * converter to any output format with an exporter (both looked up in codecs/registry.h). One
 * profile goes to OUT (or stdout); several go to OUT/<id or index>.<ext>, OUT a directory. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "codecs/registry.h"
#include "base/buf.h"
#include "base/compress.h"
#include "base/limits.h"
#include "folded/folded.h"
#include "pprof/pprof.h"
#include "config/suggest.h"
#include "server/cli.h"

#define CONVERT_ZSTD_LEVEL 3

static const char convert_usage[] =
    "usage: spaa-relay convert --from FORMAT [--to FORMAT] [--event NAME] [--service NAME]\n"
    "                          [--zstd] IN [-o OUT]\n"
    "  Reads IN ('-' for stdin), converts every profile in it to SPAA and writes each in the\n"
    "  --to format to OUT (stdout without -o, or with -o -; a directory of one file per\n"
    "  profile when IN holds several). Exit 0 converted, 1 invalid input, 2 usage or I/O\n"
    "  error.\n"
    "  --from FORMAT      what IN is (required):\n"
    "      sentry         a Sentry envelope with profile or profile_chunk items, or a\n"
    "                     profile's JSON (Sample Format V1, continuous-profiling V2)\n"
    "      otlp           OTLP ExportProfilesServiceRequest, protobuf or OTLP-JSON\n"
    "                     (v1development or v1experimental)\n"
    "      pprof          a pprof profile.proto, gzipped or not\n"
    "      pprof-push     a Pyroscope push.v1.PushRequest (protobuf)\n"
    "      folded         folded (collapsed) stacks, 'frame;frame;...;leaf COUNT' lines, as\n"
    "                     Pyroscope's POST /ingest takes them (a cpu profile at 100 Hz\n"
    "                     unless --name and --sample-rate say otherwise)\n"
    "      spaa           SPAA NDJSON, zstd-compressed or not (normalized on the way)\n"
    "                     (a gzip or zstd file of any of them is read decompressed)\n"
    "  --to FORMAT        what to write (default spaa):\n"
    "      spaa           SPAA NDJSON (.spaa)\n"
    "      collapsed      folded stacks, 'root;...;leaf weight' lines, of one event weighted\n"
    "                     by its primary metric (.folded)\n"
    "      pprof          that event as a gzipped pprof, a sample type per metric (.pb.gz)\n"
    "      speedscope     speedscope's JSON (.speedscope.json)\n"
    "  --event NAME       the event --to collapsed/pprof/speedscope write (default: the first\n"
    "                     declared)\n"
    "  --service NAME     the service recorded when the input names none\n"
    "  --zstd             compress the output with zstd (and add .zst in a directory)\n"
    "  -o, --output OUT   output file, or directory for several profiles (new or empty:\n"
    "                     a directory holding files is refused, never mixed into)\n"
    "  -h, --help         this text\n"
    "  With --from pprof or folded, what a Pyroscope push sends beside the profile (the SPAA\n"
    "  is then what POST /ingest stores with the same query and sample_type_config):\n"
    "  --name 'APP.TYPE{k=v,...}'     application name: service, profile type, labels\n"
    "  --sample-rate HZ               sampleRate: pprof: frequency of timer events without a\n"
    "                                 period; folded: cpu and wall counts become time (0:\n"
    "                                 counts only; default 100)\n"
    "  --time-from T --time-until T   from/until: the time range when the profile has none\n"
    "  --sample-type-config FILE      (pprof) JSON: sample type -> {units, display-name,\n"
    "                                 aggregation, cumulative, sampled}, kept on the events\n"
    "  Times T: 'now', or unix time as digits read by magnitude: seconds (below 1e11),\n"
    "  milliseconds (below 1e14), microseconds (below 1e17), else nanoseconds.\n"
    "  A file of unknown kind: 'spaa-relay validate FILE' says what it looks like.\n";

/* Every flag of convert, for "did you mean". */
static const char *const convert_flags[] = {
    "--from", "--to", "--output", "--event", "--service", "--name", "--sample-rate",
    "--time-from", "--time-until", "--sample-type-config", "--zstd", "--help", "-o"};

struct convert_args {
  const char *from, *to, *in, *out, *event, *service;
  const char *name, *sample_rate, *time_from, *time_until, *stc_file; /* pprof input options */
  int zstd;
};

/* ---- output sink ------------------------------------------------------------------------ */

/* A spaa_sink_cb writing to the FILE *ctx (compressed first through a spaa_csink when --zstd). */
static int sink_file(void *ctx, const void *data, size_t len)
{
  return len && fwrite(data, 1, len, ctx) != len ? SPAA_E_IO : 0;
}

/* ---- input and output files ------------------------------------------------------------- */

static int read_all(const char *name, struct spaa_buf *b)
{
  int fd = strcmp(name, "-") == 0 ? 0 : open(name, O_RDONLY | O_CLOEXEC);
  int rc = 0;
  if (fd < 0) {
    fprintf(stderr, "spaa-relay: %s: %s\n", name, strerror(errno));
    return 2;
  }
  for (;;) {
    ssize_t n;
    if (spaa_buf_reserve(b, 1 << 20)) {
      fprintf(stderr, "spaa-relay: %s: input larger than %zu bytes\n", name,
              SPAA_CONVERT_MAX_INPUT);
      rc = 2;
      break;
    }
    n = read(fd, b->p + b->len, b->cap - b->len - 1);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      fprintf(stderr, "spaa-relay: %s: %s\n", name, strerror(errno));
      rc = 2;
      break;
    }
    if (n == 0)
      break;
    b->len += (size_t)n;
  }
  if (fd > 0)
    close(fd);
  return rc;
}

/* Write one profile to `path` (NULL: stdout). 0, or 2 with a message. */
static int write_one(const struct spaa_profile *p, const char *path, const struct convert_args *a,
                     const struct spaa_exporter *x)
{
  struct spaa_csink *z = NULL;
  struct spaa_export_opts opts;
  struct spaa_err err;
  spaa_sink_cb sink = sink_file;
  void *ctx;
  FILE *f;
  int rc = 0;
  memset(&err, 0, sizeof(err));
  memset(&opts, 0, sizeof(opts));
  f = path ? fopen(path, "wb") : stdout;
  if (!f) {
    fprintf(stderr, "spaa-relay: %s: %s\n", path, strerror(errno));
    return 2;
  }
  ctx = f;
  if (a->zstd) {
    if ((rc = spaa_csink_open(SPAA_CODING_ZSTD, CONVERT_ZSTD_LEVEL, sink_file, f, &z, &err)))
      goto out;
    sink = spaa_csink_write;
    ctx = z;
  }
  opts.event = a->event;
  rc = x->fn(p, &opts, sink, ctx, &err);
  if (!rc && z)
    rc = spaa_csink_finish(z, &err);
out:
  if (fflush(f) && !rc)
    rc = SPAA_E_IO;
  if (path && fclose(f) && !rc)
    rc = SPAA_E_IO;
  spaa_csink_free(z);
  if (rc && rc != SPAA_E_IO && err.code != SPAA_E_IO) { /* the export's fault, not the file's */
    fprintf(stderr, "spaa-relay: convert: %s\n", err.code ? err.msg : spaa_err_default(rc));
    return 2;
  }
  if (rc) {
    fprintf(stderr, "spaa-relay: %s: %s\n", path ? path : "<stdout>",
            err.code ? err.msg : strerror(errno));
    return 2;
  }
  return 0;
}

static int is_dir(const char *path)
{
  struct stat st;
  return path && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* OUT as the directory of this conversion: made when it is not there, else taken only when
 * empty. Files of an earlier conversion left beside this one's would read as one output
 * (a rerun writing fewer profiles keeps the rest), and nothing here deletes what it did not
 * write: the user clears the directory or names another. 0, or 2 with `why` filled. */
static int out_dir_take(const char *dir, char *why, size_t n)
{
  DIR *d;
  struct dirent *e;
  int found = 0;
  if (!is_dir(dir)) {
    if (mkdir(dir, 0777) == 0)
      return 0;
    snprintf(why, n, "%s: %s", dir, strerror(errno));
    return 2;
  }
  if (!(d = opendir(dir))) {
    snprintf(why, n, "%s: %s", dir, strerror(errno));
    return 2;
  }
  while (!found && (e = readdir(d)))
    found = strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
  closedir(d);
  if (!found)
    return 0;
  snprintf(why, n, "convert: %s: the directory is not empty: -o DIR writes into a new or empty "
           "directory, so that it holds one conversion (remove its files, name another "
           "directory, or name the file: -o DIR/FILE)", dir);
  return 2;
}

/* DIR/<id or index>.<ext>: the source's id when it is a safe file name, else the index. */
static void out_name(char *dst, size_t cap, const char *dir, const struct spaa_converted *c,
                     size_t index, const struct convert_args *a, const struct spaa_exporter *x)
{
  const char *zext = a->zstd ? ".zst" : "";
  int safe = c->id[0] && c->id[0] != '.';
  const char *q;
  for (q = c->id; safe && *q; q++)
    if (!((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9') ||
          *q == '-' || *q == '_' || *q == '.'))
      safe = 0;
  if (safe)
    snprintf(dst, cap, "%s/%s%s%s", dir, c->id, x->ext, zext);
  else
    snprintf(dst, cap, "%s/%zu%s%s", dir, index, x->ext, zext);
}

/* Profiles written as the converter makes them (spaa_convert_opts.each), so that an input
 * of many profiles (an OTLP request) holds one model at a time: the first converted profile
 * waits, since OUT is a plain file when it is the only one; from the second on OUT is a
 * directory, and each profile is written there and freed at once. */
struct out_stream {
  const struct convert_args *a;
  const struct spaa_exporter *x;
  size_t first;   /* list index of the first converted entry */
  size_t ok;      /* converted entries seen */
  int status;     /* the worst write status so far */
  int dir_taken;  /* OUT was made or found empty (out_dir_take) */
};

static void stream_write(struct out_stream *o, struct spaa_conv_list *l, size_t i)
{
  char path[4096];
  int r;
  out_name(path, sizeof(path), o->a->out, &l->v[i], i, o->a, o->x);
  r = write_one(l->v[i].profile, path, o->a, o->x);
  if (r > o->status)
    o->status = r;
  spaa_profile_free(l->v[i].profile);
  l->v[i].profile = NULL;
  l->v[i].taken = 1;
}

static int stream_each(void *ctx, struct spaa_conv_list *l, size_t k, struct spaa_err *err)
{
  struct out_stream *o = ctx;
  if (!l->v[k].profile)
    return 0; /* rejected: reported with the others at the end */
  if (++o->ok == 1) {
    o->first = k;
    return 0;
  }
  if (o->ok == 2) {
    char why[4200];
    if (!o->dir_taken && out_dir_take(o->a->out, why, sizeof(why)))
      return spaa_err_set(err, SPAA_E_IO, 0, 0, "%s", why);
    o->dir_taken = 1;
    stream_write(o, l, o->first);
  }
  stream_write(o, l, k);
  return 0;
}

/* The Pyroscope input options into po and fo (o->pprof points at po when any is given,
 * o->folded at fo for --from folded), parsed by the codecs as POST /ingest parses its query.
 * 0, or 2 with a message. */
static int pyroscope_opts(const struct convert_args *a, struct spaa_pprof_opts *po,
                          struct spaa_folded_opts *fo, struct spaa_convert_opts *o)
{
  int folded = strcmp(a->from, "folded") == 0;
  struct spaa_buf stc;
  struct spaa_err err;
  struct timespec now;
  int rc = 0;
  spaa_err_clear(&err);
  if (folded) {
    o->folded = fo;
    if (a->sample_rate && spaa_folded_opts_sample_rate(fo, a->sample_rate, &err)) {
      fprintf(stderr, "spaa-relay: convert: %s\n", err.msg);
      return 2;
    }
  }
  if (!a->name && !a->time_from && !a->time_until && !a->stc_file && (folded || !a->sample_rate))
    return 0;
  if (!folded && strcmp(a->from, "pprof") != 0) {
    fprintf(stderr, "spaa-relay: convert: --name, --sample-rate, --time-from, --time-until and "
            "--sample-type-config apply to --from pprof and folded only\n");
    return 2;
  }
  if (folded && a->stc_file) {
    fprintf(stderr, "spaa-relay: convert: --sample-type-config applies to --from pprof only\n");
    return 2;
  }
  spaa_buf_init(&stc, SPAA_CONVERT_MAX_INPUT);
  clock_gettime(CLOCK_REALTIME, &now);
  if ((a->name && spaa_pprof_opts_name(po, a->name, &err)) ||
      ((a->time_from || a->time_until) &&
       spaa_pprof_opts_range(po, a->time_from, a->time_until,
                             (int64_t)now.tv_sec * 1000000000 + now.tv_nsec, &err)) ||
      (!folded && a->sample_rate && spaa_pprof_opts_sample_rate(po, a->sample_rate, &err)))
    rc = 2;
  else if (a->stc_file && (rc = read_all(a->stc_file, &stc)) == 0 &&
           spaa_pprof_opts_stc(po, (const uint8_t *)(stc.p ? stc.p : ""), stc.len, &err))
    rc = 2;
  if (rc && err.code)
    fprintf(stderr, "spaa-relay: convert: %s\n", err.msg);
  spaa_buf_free(&stc);
  o->pprof = po;
  return rc;
}

static int parse_args(int argc, char **argv, struct convert_args *a)
{
  int i;
  memset(a, 0, sizeof(*a));
  for (i = 1; i < argc; i++) {
    const char *s = argv[i];
    const char **slot = NULL;
    if (!strcmp(s, "--from"))
      slot = &a->from;
    else if (!strcmp(s, "--to"))
      slot = &a->to;
    else if (!strcmp(s, "-o") || !strcmp(s, "--output"))
      slot = &a->out;
    else if (!strcmp(s, "--event"))
      slot = &a->event;
    else if (!strcmp(s, "--service"))
      slot = &a->service;
    else if (!strcmp(s, "--name"))
      slot = &a->name;
    else if (!strcmp(s, "--sample-rate"))
      slot = &a->sample_rate;
    else if (!strcmp(s, "--time-from"))
      slot = &a->time_from;
    else if (!strcmp(s, "--time-until"))
      slot = &a->time_until;
    else if (!strcmp(s, "--sample-type-config"))
      slot = &a->stc_file;
    else if (!strcmp(s, "--zstd"))
      a->zstd = 1;
    else if (!strcmp(s, "--help") || !strcmp(s, "-h"))
      return 1;
    else if (s[0] == '-' && s[1]) {
      spaa_cli_bad_option("convert", s, convert_flags,
                          sizeof(convert_flags) / sizeof(convert_flags[0]), convert_usage);
      return -2;
    } else if (a->in) {
      fprintf(stderr, "spaa-relay: convert: one input only ('%s' and '%s')\n", a->in, s);
      return -1;
    } else {
      a->in = s;
    }
    if (slot) {
      if (i + 1 >= argc) {
        spaa_cli_bad_option("convert", s, convert_flags,
                            sizeof(convert_flags) / sizeof(convert_flags[0]), convert_usage);
        return -2;
      }
      *slot = argv[++i];
    }
  }
  if (!a->from || !a->in) {
    fprintf(stderr, "spaa-relay: convert: %s\n", !a->from ? "--from is required" : "no input");
    return -1;
  }
  if (a->out && strcmp(a->out, "-") == 0)
    a->out = NULL; /* "-o -": stdout, as "-" is stdin for IN */
  return 0;
}

int spaa_cmd_convert(int argc, char **argv)
{
  struct convert_args a;
  struct spaa_conv_list list;
  struct spaa_convert_opts opts;
  struct spaa_pprof_opts po;
  struct spaa_folded_opts fo;
  struct spaa_buf in;
  struct spaa_err err;
  spaa_convert_fn conv;
  const struct spaa_exporter *x;
  struct out_stream stream;
  char why[4200]; /* out_dir_take's message */
  size_t i, ok = 0;
  int rc, status = 0;

  memset(&stream, 0, sizeof(stream));
  memset(&list, 0, sizeof(list));
  memset(&err, 0, sizeof(err));
  memset(&opts, 0, sizeof(opts));
  memset(&po, 0, sizeof(po));
  spaa_folded_opts_init(&fo);
  spaa_buf_init(&in, SPAA_CONVERT_MAX_INPUT);
  rc = parse_args(argc, argv, &a);
  if (rc) {
    if (rc != -2)
      fputs(convert_usage, rc > 0 ? stdout : stderr);
    return rc > 0 ? 0 : 2;
  }
  if (!(x = spaa_exporter(a.to ? a.to : "spaa"))) {
    fprintf(stderr, "spaa-relay: convert: --to %s is not supported yet (%s)\n", a.to,
            spaa_exporter_names());
    return 2;
  }
  if (!(conv = spaa_converter(a.from))) {
    static const char *const froms[] = {"spaa", "sentry", "otlp", "pprof", "pprof-push",
                                        "folded"};
    const char *near = spaa_suggest(a.from, froms, sizeof(froms) / sizeof(froms[0]));
    fprintf(stderr, "spaa-relay: convert: unknown format '%s'%s%s%s (known: %s)\n", a.from,
            near ? " (did you mean " : "", near ? near : "", near ? "?)" : "",
            spaa_converter_names());
    return 2;
  }
  if ((status = pyroscope_opts(&a, &po, &fo, &opts)))
    goto out;
  /* a directory OUT that is not empty is refused before the work (out_dir_take) */
  if (is_dir(a.out)) {
    if ((status = out_dir_take(a.out, why, sizeof(why)))) {
      fprintf(stderr, "spaa-relay: %s\n", why);
      goto out;
    }
    stream.dir_taken = 1;
  }
  if ((status = read_all(a.in, &in)))
    goto out;
  /* a compressed input of a format whose codec reads plain bytes (pprof reads gzip itself,
   * SPAA zstd): undone here, as the server undoes a Content-Encoding */
  if (strcmp(a.from, "pprof") != 0 &&
      (spaa_is_gzip(in.p, in.len) || (strcmp(a.from, "spaa") != 0 && spaa_is_zstd(in.p, in.len)))) {
    struct spaa_buf plain;
    spaa_buf_init(&plain, 0);
    if (spaa_decompress(spaa_is_gzip(in.p, in.len) ? SPAA_CODING_GZIP : SPAA_CODING_ZSTD, in.p,
                        in.len, SPAA_CONVERT_MAX_INPUT, &plain, &err)) {
      fprintf(stderr, "%s: error: %s\n", strcmp(a.in, "-") ? a.in : "<stdin>", err.msg);
      status = 1;
      goto out;
    }
    spaa_buf_free(&in);
    in = plain;
  }
  opts.service = a.service;
  opts.input_spent = 1; /* in is freed right after, unread */
  if (a.out) { /* without OUT, an input of several profiles is refused below */
    stream.a = &a;
    stream.x = x;
    opts.each = stream_each;
    opts.each_ctx = &stream;
  }
  rc = conv((const uint8_t *)(in.p ? in.p : ""), in.len, &opts, &list, &err);
  spaa_buf_free(&in); /* the profiles hold what they need */
  if (rc) {
    const char *name = strcmp(a.in, "-") ? a.in : "<stdin>";
    if (err.line) { /* FILE:LINE: once, not again in a message that starts "line N: " */
      char lead[32];
      int n = snprintf(lead, sizeof(lead), "line %zu: ", err.line);
      const char *msg = strncmp(err.msg, lead, (size_t)n) == 0 ? err.msg + n : err.msg;
      fprintf(stderr, "%s:%zu: error: %s\n", name, err.line, msg);
    } else {
      fprintf(stderr, "%s: error: %s\n", name, err.msg[0] ? err.msg : spaa_err_default(rc));
    }
    status = rc == SPAA_E_NOMEM || rc == SPAA_E_IO || rc == SPAA_E_INTERNAL ? 2 : 1;
    goto out;
  }
  status = stream.status;
  for (i = 0; i < list.n; i++) {
    if (spaa_converted_ok(&list.v[i])) {
      ok++;
      continue;
    }
    fprintf(stderr, "%s: profile %zu rejected: %s: %s\n", a.in, i,
            list.v[i].reason[0] ? list.v[i].reason : "invalid", list.v[i].err.msg);
    status = 1;
  }
  if (!ok) {
    if (!list.n)
      fprintf(stderr, "%s: no profile in the input\n", a.in);
    status = 1;
    goto out;
  }
  if (ok > 1 && !a.out) {
    fprintf(stderr, "spaa-relay: the input holds %zu profiles: give -o DIR\n", ok);
    status = 2;
    goto out;
  }
  if (ok > 1 && !stream.dir_taken && (status = out_dir_take(a.out, why, sizeof(why)))) {
    fprintf(stderr, "spaa-relay: %s\n", why);
    goto out;
  }
  for (i = 0; i < list.n; i++) {
    char path[4096];
    const char *dst = a.out;
    int r;
    if (!list.v[i].profile)
      continue;
    if (ok > 1 || is_dir(a.out)) {
      out_name(path, sizeof(path), a.out, &list.v[i], i, &a, x);
      dst = path;
    }
    r = write_one(list.v[i].profile, dst, &a, x);
    if (r > status)
      status = r;
  }
out:
  spaa_buf_free(&in);
  spaa_conv_list_free(&list);
  spaa_pprof_opts_clear(&po);
  return status;
}
