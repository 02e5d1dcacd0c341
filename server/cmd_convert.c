/* spaa-relay convert --from FORMAT [--to spaa|collapsed] IN [-o OUT] [--zstd]: any input format
 * with a converter (codecs/convert.h) to canonical SPAA, or to folded stacks. One profile goes
 * to OUT (or stdout); several go to OUT/<id or index>.<ext>, OUT being a directory. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/compress.h"
#include "spaa/canon.h"
#include "codecs/registry.h"
#include "base/idmap.h"
#include "base/limits.h"
#include "spaa/spaa_io.h"
#include "server/cli.h"

#define CONVERT_ZSTD_LEVEL 3

static const char convert_usage[] =
    "usage: spaa-relay convert --from FORMAT [--to spaa|collapsed] [--zstd] [--event NAME]\n"
    "                          [--service NAME] IN [-o OUT]\n"
    "  IN may be '-' for stdin. Without -o the result goes to stdout. When the input holds\n"
    "  several profiles, OUT is a directory receiving one file per profile.\n"
    "  --to collapsed writes folded stacks (root;...;leaf weight) of one event (the first\n"
    "  declared, or --event NAME), weighted by its primary metric.\n";

enum out_kind { OUT_SPAA, OUT_COLLAPSED };

struct convert_args {
  const char *from, *to, *in, *out, *event, *service;
  int zstd;
};

/* ---- output sink ------------------------------------------------------------------------ */

/* A spaa_sink_cb writing to the FILE *ctx (compressed first through a spaa_csink when --zstd). */
static int sink_file(void *ctx, const void *data, size_t len)
{
  return len && fwrite(data, 1, len, ctx) != len ? SPAA_E_IO : 0;
}

/* ---- folded stacks ----------------------------------------------------------------------- */

/* A frame's name for folded output: ';' would split it and a newline would end the line. */
static int folded_name(struct spaa_buf *b, const struct spaa_frame *f)
{
  const char *s = f->func && f->func[0] ? f->func : "[unknown]";
  size_t start = b->len;
  int rc = spaa_buf_adds(b, s);
  for (size_t i = start; !rc && i < b->len; i++)
    if (b->p[i] == ';' || b->p[i] == '\n' || b->p[i] == '\r')
      b->p[i] = b->p[i] == ';' ? ':' : ' ';
  return rc;
}

static int write_collapsed(const struct spaa_profile *p, const char *event, spaa_sink_cb sink,
                           void *ctx, struct spaa_err *err)
{
  const struct spaa_event *e = event ? spaa_find_event(p, event)
                                     : (p->header.n_events ? &p->header.events[0] : NULL);
  struct spaa_idmap ids;
  struct spaa_buf b;
  size_t i, j, k;
  int rc = 0;
  if (!e || !e->primary_metric)
    return spaa_err_set(err, SPAA_E_USAGE, 0, 0, "no event %s%s%s with a primary metric",
                        event ? "\"" : "", event ? event : "", event ? "\"" : "");
  spaa_idmap_init(&ids);
  spaa_buf_init(&b, 0);
  for (i = 0; i < p->n_frames && !rc; i++)
    rc = spaa_idmap_put(&ids, p->frames[i].id, i, NULL) < 0 ? SPAA_E_NOMEM : 0;
  for (i = 0; i < p->n_stacks && !rc; i++) {
    const struct spaa_stack *s = &p->stacks[i];
    const struct spaa_weight *w;
    if (!s->event || strcmp(s->event, e->name) != 0 ||
        !(w = spaa_weights_find(&s->weights, e->primary_metric)))
      continue;
    for (j = 0; j < s->n_frames && !rc; j++) {
      /* root first */
      size_t pos = p->header.frame_order == SPAA_ROOT_TO_LEAF ? j : s->n_frames - 1 - j;
      if (j)
        rc = spaa_buf_add(&b, ";", 1);
      if (!rc && spaa_idmap_get(&ids, s->frames[pos], &k))
        rc = folded_name(&b, &p->frames[k]);
      else if (!rc)
        rc = spaa_buf_addf(&b, "[frame %" PRIu64 "]", s->frames[pos]);
    }
    if (!rc)
      rc = spaa_buf_add(&b, " ", 1);
    if (!rc)
      rc = spaa_canon_num(&b, w->value);
    if (!rc)
      rc = spaa_buf_add(&b, "\n", 1);
    if (!rc && b.len >= 1 << 16) {
      rc = sink(ctx, b.p, b.len);
      b.len = 0;
    }
  }
  if (!rc && b.len)
    rc = sink(ctx, b.p, b.len);
  spaa_buf_free(&b);
  spaa_idmap_free(&ids);
  if (rc && !err->code)
    spaa_err_set(err, rc, 0, 0, "writing folded stacks: %s", spaa_err_default(rc));
  return rc;
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
                     enum out_kind kind)
{
  struct spaa_csink *z = NULL;
  struct spaa_err err;
  spaa_sink_cb sink = sink_file;
  void *ctx;
  FILE *f;
  int rc = 0;
  memset(&err, 0, sizeof(err));
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
  if (kind == OUT_COLLAPSED)
    rc = write_collapsed(p, a->event, sink, ctx, &err);
  else
    rc = spaa_write(p, sink, ctx, &err);
  if (!rc && z)
    rc = spaa_csink_finish(z, &err);
out:
  if (fflush(f) && !rc)
    rc = SPAA_E_IO;
  if (path && fclose(f) && !rc)
    rc = SPAA_E_IO;
  spaa_csink_free(z);
  if (rc) {
    fprintf(stderr, "spaa-relay: %s: %s\n", path ? path : "<stdout>",
            err.code ? err.msg : rc == SPAA_E_IO ? strerror(errno) : spaa_err_default(rc));
    return rc == SPAA_E_USAGE ? 2 : 2;
  }
  return 0;
}

static int is_dir(const char *path)
{
  struct stat st;
  return path && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* DIR/<id or index>.<ext>: the source's id when it is a safe file name, else the index. */
static void out_name(char *dst, size_t cap, const char *dir, const struct spaa_converted *c,
                     size_t index, const struct convert_args *a, enum out_kind kind)
{
  const char *ext = kind == OUT_COLLAPSED ? (a->zstd ? ".folded.zst" : ".folded")
                                          : (a->zstd ? ".spaa.zst" : ".spaa");
  int safe = c->id[0] && c->id[0] != '.';
  const char *q;
  for (q = c->id; safe && *q; q++)
    if (!((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9') ||
          *q == '-' || *q == '_' || *q == '.'))
      safe = 0;
  if (safe)
    snprintf(dst, cap, "%s/%s%s", dir, c->id, ext);
  else
    snprintf(dst, cap, "%s/%zu%s", dir, index, ext);
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
    else if (!strcmp(s, "--zstd"))
      a->zstd = 1;
    else if (!strcmp(s, "--help") || !strcmp(s, "-h"))
      return 1;
    else if (s[0] == '-' && s[1]) {
      fprintf(stderr, "spaa-relay: convert: unknown option '%s'\n", s);
      return -1;
    } else if (a->in) {
      fprintf(stderr, "spaa-relay: convert: one input only ('%s' and '%s')\n", a->in, s);
      return -1;
    } else {
      a->in = s;
    }
    if (slot) {
      if (i + 1 >= argc) {
        fprintf(stderr, "spaa-relay: convert: %s needs a value\n", s);
        return -1;
      }
      *slot = argv[++i];
    }
  }
  if (!a->from || !a->in) {
    fprintf(stderr, "spaa-relay: convert: %s\n", !a->from ? "--from is required" : "no input");
    return -1;
  }
  return 0;
}

int spaa_cmd_convert(int argc, char **argv)
{
  struct convert_args a;
  struct spaa_conv_list list;
  struct spaa_convert_opts opts;
  struct spaa_buf in;
  struct spaa_err err;
  spaa_convert_fn conv;
  enum out_kind kind = OUT_SPAA;
  size_t i, ok = 0, done = 0;
  int rc, status = 0;

  memset(&list, 0, sizeof(list));
  memset(&err, 0, sizeof(err));
  memset(&opts, 0, sizeof(opts));
  spaa_buf_init(&in, SPAA_CONVERT_MAX_INPUT);
  rc = parse_args(argc, argv, &a);
  if (rc) {
    fputs(convert_usage, rc > 0 ? stdout : stderr);
    return rc > 0 ? 0 : 2;
  }
  if (a.to && !strcmp(a.to, "collapsed")) {
    kind = OUT_COLLAPSED;
  } else if (a.to && strcmp(a.to, "spaa") != 0) {
    fprintf(stderr, "spaa-relay: convert: --to %s is not supported yet (spaa, collapsed)\n", a.to);
    return 2;
  }
  if (!(conv = spaa_converter(a.from))) {
    fprintf(stderr, "spaa-relay: convert: unknown format '%s' (known: %s)\n", a.from,
            spaa_converter_names());
    return 2;
  }
  if ((status = read_all(a.in, &in)))
    goto out;
  opts.service = a.service;
  rc = conv((const uint8_t *)(in.p ? in.p : ""), in.len, &opts, &list, &err);
  spaa_buf_free(&in); /* the profiles hold what they need */
  if (rc) {
    const char *name = strcmp(a.in, "-") ? a.in : "<stdin>";
    if (err.line)
      fprintf(stderr, "%s:%zu: error: %s\n", name, err.line, err.msg);
    else
      fprintf(stderr, "%s: error: %s\n", name, err.msg[0] ? err.msg : spaa_err_default(rc));
    status = rc == SPAA_E_NOMEM || rc == SPAA_E_IO || rc == SPAA_E_INTERNAL ? 2 : 1;
    goto out;
  }
  for (i = 0; i < list.n; i++) {
    if (list.v[i].profile) {
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
  if (ok > 1 && !is_dir(a.out) && mkdir(a.out, 0777) != 0) {
    fprintf(stderr, "spaa-relay: %s: %s\n", a.out, strerror(errno));
    status = 2;
    goto out;
  }
  for (i = 0; i < list.n; i++) {
    char path[4096];
    const char *dst = a.out;
    int r;
    if (!list.v[i].profile)
      continue;
    if (ok > 1 || is_dir(a.out)) {
      out_name(path, sizeof(path), a.out, &list.v[i], i, &a, kind);
      dst = path;
    }
    r = write_one(list.v[i].profile, dst, &a, kind);
    if (r > status)
      status = r;
    done++;
  }
out:
  spaa_buf_free(&in);
  spaa_conv_list_free(&list);
  return status;
}
