/* Folded (collapsed) stacks in: `frame;frame;...;leaf COUNT` per line, as Pyroscope's /ingest
 * takes them (format=folded, its default, and format=lines: one stack per line, each counting
 * 1), converted to the SPAA model with the profile type Pyroscope reads from the application
 * name (`app.cpu{...}`) and its sampleRate. Mapping in docs/folded-mapping.md. */
#ifndef SPAA_FOLDED_H
#define SPAA_FOLDED_H

#include <stddef.h>
#include <stdint.h>

#include "spaa/convert.h"
#include "base/err.h"
#include "base/limits.h"

/* How the bytes are read and what the counts mean besides the Pyroscope name and time range
 * (those come as spaa_convert_opts.pprof, parsed by pprof.h's setters as for a pprof push).
 * Start with spaa_folded_opts_init; nothing to release. */
struct spaa_folded_opts {
  int lines;            /* 1: format=lines, one stack per line (no count, each line 1) */
  int64_t sample_rate;  /* Hz the counts of a cpu or wall profile were sampled at: each
                         * count weighs 1e9 / sample_rate nanoseconds; 0: counts only */
};

/* Defaults: format=folded, sample_rate 100 (Pyroscope's when sampleRate is absent). */
void spaa_folded_opts_init(struct spaa_folded_opts *o);

/* Set sample_rate from Pyroscope's `sampleRate` query parameter as its /ingest reads it for
 * folded stacks: NULL, "" or anything that is not a decimal integer (an optional sign, then
 * digits) leaves the default, 100; "0" means counts only. 0, or SPAA_E_BAD_REQUEST for a
 * negative rate or one over SPAA_PPROF_MAX_SAMPLE_RATE (its period would be 0 ns). */
int spaa_folded_opts_sample_rate(struct spaa_folded_opts *o, const char *hz,
                                 struct spaa_err *err);

/* What spaa_folded_sniff found in a body. */
enum spaa_folded_sniff {
  SPAA_FOLDED_TEXT = 0,  /* text: folded stacks, or lines */
  SPAA_FOLDED_GZIP,      /* it starts with the gzip magic (1f 8b) */
  SPAA_FOLDED_CONTROL,   /* a control byte other than tab, CR and LF, or DEL */
  SPAA_FOLDED_NOT_UTF8,  /* bytes that are not UTF-8 */
};

/* Whether buf looks like text (folded stacks, or lines) or like a binary profile: the gzip
 * magic, or within its first SPAA_FOLDED_SNIFF bytes a control byte other than tab, CR and
 * LF, DEL, or bytes that are not UTF-8. *at (may be NULL) receives the offset of the byte at
 * fault (0 for gzip and text). How /ingest reads a body sent without `format` that is not
 * multipart: text is folded (Pyroscope's default), the rest pprof. Never fails. */
enum spaa_folded_sniff spaa_folded_sniff(const uint8_t *buf, size_t len, size_t *at);

/* 1 when spaa_folded_sniff finds buf to be text, else 0. */
int spaa_folded_is_text(const uint8_t *buf, size_t len);

/* The profile type a Pyroscope application name gives folded stacks: the text after the last
 * '.' of `app` (the name before '{'), "cpu" when app has no '.'. */
struct spaa_folded_type {
  const char *suffix;     /* as in the name ("cpu", "alloc_space", "seconds") */
  const char *type;       /* the sample type Pyroscope stores: event and metric name */
  const char *unit;       /* its unit: "count", "bytes", "nanoseconds" */
  const char *timer;      /* "cpu" or "wall" when a sample rate turns the counts into time
                           * (the event and metric are then this, in nanoseconds), or NULL */
  const char *kind;       /* SPAA event kind: timer, allocation, software */
};

/* The type of application name `app` (e.g. "svc.alloc_space"); *service_len receives the
 * length of the service part (before the suffix; all of app when it has no '.'). NULL with
 * err set (SPAA_E_BAD_REQUEST) when the suffix is no type Pyroscope knows for folded
 * stacks, or nothing precedes it. */
const struct spaa_folded_type *spaa_folded_type(const char *app, size_t *service_len,
                                                struct spaa_err *err);

/* The converter (spaa_convert_fn): folded stacks (o->folded NULL or lines 0) or lines, into
 * one entry. With o->pprof (a name set with spaa_pprof_opts_name, a range with
 * spaa_pprof_opts_range; its sample_rate and sample_type_config are not used) the entry gets
 *   - service: the name without its type suffix (o->service wins when given);
 *   - labels: the name's labels, and `__name__` = the type suffix ("cpu" when none);
 *   - attrs: pyroscope_name, profile_type, from_ns, until_ns, sample_rate (when it turned
 *     counts into time), folded_format ("folded" or "lines");
 *   - time range: from/until (header and start_ns/end_ns).
 * One event, named after the type; each distinct stack once with its counts summed, weighing
 * the type (count, or count * 1e9 / sample_rate nanoseconds for cpu and wall, with a second
 * metric `samples`, the count). With o->keep_original the original is buf.
 * Lines: split at '\n' (a '\r' before it dropped); empty lines skipped. Folded: the count is
 * the text after the last space. Frames: the stack split at ';' (a ';' at its end ends it,
 * an empty frame elsewhere is kept as "[unknown]"). Errors, nothing appended:
 *   SPAA_E_INVALID     a line with no space or a count that is not a decimal integer, a
 *                      negative count, invalid UTF-8 or a NUL byte, counts (or counts times
 *                      the period) past 2^63 - 1, a gzip body (err names the line:
 *                      "line N: ...", err->line = N);
 *   SPAA_E_TOO_LARGE   a line over SPAA_FOLDED_MAX_LINE bytes, a stack over
 *                      SPAA_FOLDED_MAX_DEPTH frames, over SPAA_FOLDED_MAX_FRAME_REFS frame
 *                      references in all;
 *   SPAA_E_BAD_REQUEST the name's type suffix is unknown (spaa_folded_type);
 *   SPAA_E_NOMEM (also when o->meter refuses). */
int spaa_convert_folded(const uint8_t *buf, size_t len, const struct spaa_convert_opts *o,
                        struct spaa_conv_list *out, struct spaa_err *err);

#endif
