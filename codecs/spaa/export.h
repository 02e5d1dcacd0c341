/* Exporters: SPAA models -> output formats. Every output format exposes one entry point of
 * type spaa_export_fn that streams a profile into a sink; codecs/registry.c lists them by
 * name for `spaa-relay convert --to NAME` and the HTTP downloads (docs/exports.md). */
#ifndef SPAA_EXPORT_H
#define SPAA_EXPORT_H

#include <stddef.h>

#include "base/buf.h"
#include "base/err.h"
#include "spaa/spaa.h"

/* Choices an exporter may use; a NULL options pointer means every field zero. */
struct spaa_export_opts {
  const char *event;  /* one-event formats (folded): the event to write, NULL = the first
                         declared in the header */
  const char *metric; /* one-metric formats (folded): the weight to write, NULL = the
                         event's primary metric */
};

/* Write `p` to `sink` in pieces as they are produced (never the whole output in one
 * buffer). Returns 0, the sink's negative code when it fails (err says what was being
 * written), SPAA_E_USAGE when the options name what the profile lacks, or SPAA_E_NOMEM.
 * The profile is only read. */
typedef int (*spaa_export_fn)(const struct spaa_profile *p, const struct spaa_export_opts *o,
                              spaa_sink_cb sink, void *sink_ctx, struct spaa_err *err);

/* One output format, as the registry lists it. */
struct spaa_exporter {
  const char *name;         /* the --to name, e.g. "spaa" */
  spaa_export_fn fn;        /* the writer */
  const char *ext;          /* file name extension before any compression one, e.g. ".spaa" */
  const char *media_type;   /* HTTP Content-Type of the output */
};

/* "spaa": SPAA NDJSON exactly as spaa_write() writes it (options unused). */
int spaa_export_spaa(const struct spaa_profile *p, const struct spaa_export_opts *o,
                     spaa_sink_cb sink, void *sink_ctx, struct spaa_err *err);

/* "collapsed": folded stacks, one line per stack of the chosen event that has the chosen
 * metric: frame names root first joined by ';', a space, the weight, '\n'. In a name ';'
 * becomes ':' and CR or LF a space; a frame without a name is "[unknown]", a frame id the
 * profile lacks "[frame N]"; a stack without frames gives an empty path. Lines follow the
 * model's stack order. SPAA_E_USAGE when there is no such event or it has no primary
 * metric (and none was asked for). */
int spaa_export_folded(const struct spaa_profile *p, const struct spaa_export_opts *o,
                       spaa_sink_cb sink, void *sink_ctx, struct spaa_err *err);

/* "speedscope": speedscope's file format (spaa_view_speedscope), one sampled profile of the
 * chosen event weighed by the chosen metric. SPAA_E_USAGE as "collapsed". */
int spaa_export_speedscope(const struct spaa_profile *p, const struct spaa_export_opts *o,
                           spaa_sink_cb sink, void *sink_ctx, struct spaa_err *err);

/* Export into `out` (appending), zstd-compressed at `zstd_level` when > 0, else plain.
 * Returns as `fn` does, SPAA_E_TOO_LARGE past out's cap, SPAA_E_INTERNAL when compression
 * fails. (Lives in spaa_write.c beside the zstd sink it shares with spaa_write_buf.) */
int spaa_export_buf(spaa_export_fn fn, const struct spaa_profile *p,
                    const struct spaa_export_opts *o, int zstd_level, struct spaa_buf *out,
                    struct spaa_err *err);

#endif
