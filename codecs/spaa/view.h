/* Views of stack weights: a set of aggregated stacks (frame names root first and one value
 * each) filled from a profile or from any other source (the store's merged scans), and the
 * answers written from it: top functions, a flamegraph tree, folded stacks, speedscope.
 * Pure: bytes out through a sink, no I/O. Numbers are spaa_vnum and written as integers when
 * they are whole. */
#ifndef SPAA_VIEW_H
#define SPAA_VIEW_H

#include <regex.h>
#include <stddef.h>
#include <stdint.h>

/* The views' numbers: long double, whose 64-bit significand (x86-64) keeps integer sums exact
 * up to 2^64, where a double is exact only to 2^53 (104 days of CPU in nanoseconds: a merged
 * fleet view passes it). Weights that are floats stay floats. */
typedef long double spaa_vnum;

#include "base/buf.h"
#include "base/err.h"
#include "base/idmap.h"
#include "spaa/spaa.h"

#define SPAA_VIEW_MAX_REGEX 256 /* longest focus= / ignore= pattern, bytes */
/* The path every text output gives a stack without frames (an empty path reads as no stack
 * at all to folded-stack tools). */
#define SPAA_VIEW_NO_FRAMES "(no frames)"
#define SPAA_VIEW_MAX_METRICS 16 /* metrics a set lists as offered (spaa_vset.metrics) */
#define SPAA_VIEW_MAX_REGEX_SIZE 4096 /* its atoms with every {n,m} written out, at most */

/* One aggregated stack: name ids (indexes in the set's name table), root first. */
struct spaa_vstack {
  uint32_t *path;   /* n name ids (owned by the set) */
  size_t n;
  spaa_vnum value;  /* the chosen metric's weight */
  char id[48];      /* the stack id when there is one stack behind it, else "" */
  int64_t tag;      /* the caller's (the store's stack number in merged views), 0 else */
};

/* A set of stacks of one metric. Start with spaa_vset_init, release with spaa_vset_free. */
struct spaa_vset {
  char **names;            /* name table (owned strings) */
  size_t n_names, cap_names;
  struct spaa_strmap name_ix; /* name -> index in names */
  struct spaa_vstack *stacks; /* n_stacks (owned) */
  size_t n_stacks, cap_stacks;
  spaa_vnum total;         /* sum of every stack's value */
  const char *metric;      /* the metric's name (borrowed, or metric_buf) */
  char metric_buf[128];    /* a metric name the set keeps itself */
  char unit_buf[64];       /* a unit the set keeps itself */
  const char *unit;        /* its unit, or NULL (borrowed) */
  int has_focus, has_ignore; /* the filters below are compiled */
  regex_t focus, ignore;   /* focus=: keep stacks through a matching frame; ignore=: drop them */
  signed char *match;      /* per name: 0 unknown, 1 focus hit, 2 ignore hit, 3 both, 4 none */
  size_t dropped;          /* stacks the filters left out */
  struct spaa_meter *meter; /* optional (set after init): the set's arrays, names and paths
                            * are reported to it as they grow; a refusal fails the adding
                            * with SPAA_E_NOMEM (the meter says why) */
  size_t metered;          /* bytes reported to it, given back by spaa_vset_free */
  /* every metric the source offers for the set's stacks (the one summed among them), in the
   * order met, so that an answer can say what else metric= may ask for; names longer than
   * a slot and metrics past the last slot are left out */
  char metrics[SPAA_VIEW_MAX_METRICS][128];
  size_t n_metrics;
};

void spaa_vset_init(struct spaa_vset *v);
/* Note that the source offers `metric` (spaa_vset.metrics); known names cost a compare each. */
void spaa_vset_offer(struct spaa_vset *v, const char *metric);
void spaa_vset_free(struct spaa_vset *v); /* NULL-safe */

/* Compile the frame filters (either may be NULL). 0, or SPAA_E_BAD_REQUEST naming the
 * parameter ("focus" or "ignore") for a pattern longer than SPAA_VIEW_MAX_REGEX, with a
 * backreference, larger than SPAA_VIEW_MAX_REGEX_SIZE atoms once its bounded repetitions are
 * written out, or one regcomp (POSIX extended) refuses. */
int spaa_vset_filters(struct spaa_vset *v, const char *focus, const char *ignore,
                      struct spaa_err *err);

/* Add a stack: n names root first (copied), its value and its id (may be NULL). A stack the
 * filters leave out is counted in v->dropped and not added. 0 or SPAA_E_NOMEM. */
int spaa_vset_add(struct spaa_vset *v, const char *const *names, size_t n, spaa_vnum value,
                  const char *id);

/* The stacks of one event of a profile, weighed by one metric: names are the frames'
 * functions ("[unknown]" when empty), with " (file:line)" appended when by_frame and the
 * frame has a source line. event NULL = the first declared; metric NULL = its primary.
 * 0, SPAA_E_USAGE (no such event or metric; err names it), SPAA_E_NOMEM. */
int spaa_vset_from_profile(struct spaa_vset *v, const struct spaa_profile *p,
                           const char *event, const char *metric, int by_frame,
                           struct spaa_err *err);

/* Top functions as JSON: {"metric","unit","total","functions":N,"top":[{"name","self",
 * "self_pct","total","total_pct"}...]} sorted by self (then total, then name), at most
 * `limit` entries (0 = all). A function's total counts each stack once however often the
 * function appears in it (recursion). Percentages of v->total, 2 decimals. */
int spaa_view_top(const struct spaa_vset *v, size_t limit, spaa_sink_cb sink, void *ctx,
                  struct spaa_err *err);

/* A flamegraph tree as JSON: {"metric","unit","total","metrics","nodes":N,"trimmed_nodes":M,
 * "trimmed_value":X,"other_nodes":K,"other_max":W|null,"cut_value":C,"tree":{"name":"root",
 * "self","total","children":[...]}}. Every node's total is its self plus its children's
 * totals; children are sorted by total (then name), an "other" child last. With max_nodes 0
 * (no limit), or a call tree that fits, the whole tree. Otherwise the tree is laid out in at
 * most max_nodes nodes besides the root, "other" nodes included: a node's children (those of
 * the tree nodes it stands for, grouped by name) that weigh at most a threshold, two or more of
 * them, are merged into one child {"name":"other","merged":n,...} (n: the tree nodes it stands
 * for) whose children are theirs grouped by name, laid out by the same rule; a lone light
 * child keeps its name. A light node (at most the threshold) under a light one is laid out no
 * further: its children become one leaf "other" (self = their total), so that a light stack,
 * however deep, costs a few nodes and never the heavy ones their names. The threshold is the
 * lowest that fits, then tree nodes of exactly its weight are kept by rank (heaviest first, a
 * parent before its children, then by name) while they fit. When max_nodes is below the depth
 * of the deepest stack the max_nodes heaviest nodes are kept instead and each kept node's
 * other children become one leaf "other" (at most one per kept node, beyond max_nodes).
 * N: nodes besides the root and the "other" ones; K: the "other" ones; M: nodes of the whole
 * tree not drawn under their own path; X: the total of the outermost "other" nodes; W: the
 * heaviest group merged into one; C: the value of the stacks cut short (under a leaf "other").
 * Deterministic. 0, the sink's error or SPAA_E_NOMEM. */
int spaa_view_flamegraph(const struct spaa_vset *v, size_t max_nodes, spaa_sink_cb sink,
                         void *ctx, struct spaa_err *err);

/* Folded stacks of the set: "a;b;c value\n" per distinct path (stacks with the same names
 * summed), sorted by value descending then path. ';' in a name becomes ':', CR/LF a space. */
int spaa_view_collapsed(const struct spaa_vset *v, spaa_sink_cb sink, void *ctx,
                        struct spaa_err *err);

/* speedscope's file format: one "sampled" profile named `name` whose samples are the stacks
 * (frame indexes root first) and weights their values; the unit from v->unit when speedscope
 * knows it ("nanoseconds", "microseconds", "milliseconds", "seconds", "bytes"), else "none". */
int spaa_view_speedscope(const struct spaa_vset *v, const char *name, spaa_sink_cb sink,
                         void *ctx, struct spaa_err *err);

/* 1 when p has samples of `event` (NULL: the first event) that carry timestamps and none
 * carries weights of its own: ticks, each lasting until the thread's next. A sample with its
 * own weights (an OTLP off-CPU duration, an allocation's size) measures them, not the gap to
 * the next: such a profile has no timeline, and its speedscope form is the sampled one,
 * whose totals are the views'. */
int spaa_view_has_timeline(const struct spaa_profile *p, const char *event);
/* speedscope's file format with one "evented" profile per thread, from p's timestamped
 * samples of `event` (NULL: the first) whose stacks are in v (v built from p, so that its
 * stacks carry their ids; stacks the filters left out are gaps): each sample lasts until the
 * thread's next one, the last as long as the gap before it; times relative to the first
 * sample, in the header's time unit when speedscope knows it. */
int spaa_view_speedscope_evented(const struct spaa_vset *v, const struct spaa_profile *p,
                                 const char *event, const char *name, spaa_sink_cb sink,
                                 void *ctx, struct spaa_err *err);

/* A summary for agents, never longer than `budget` bytes: plain text (or JSON when `json`),
 * in a fixed order: the name, metric and total, the top self functions with percentages,
 * then the hottest stacks (root;...;leaf, shortened in the middle past 8 frames) each with
 * its stack id to drill down with. Lines (JSON entries) that would pass the budget are left
 * out, and the answer says how many were. Deterministic. */
int spaa_view_summary(const struct spaa_vset *v, size_t budget, int json, const char *name,
                      spaa_sink_cb sink, void *ctx, struct spaa_err *err);

enum spaa_diff_format {
  SPAA_DIFF_JSON = 0, /* {"metric","base_total","target_total","delta","n_functions",
                         "functions":[{"name","base","target","delta","base_pct","target_pct",
                         "delta_pct","status":"new|gone|changed|same"}],"n_stacks","stacks":[{"id",
                         "path",...}]} sorted by |delta| (then key), at most `limit` of each */
  SPAA_DIFF_COLLAPSED, /* "path base target\n" per folded path, sorted by path */
  SPAA_DIFF_SUMMARY,   /* text: totals, then the 10 largest movers of each kind, <= budget */
  /* or'ed into the JSON and summary formats: movers sorted by how far their share of their
   * side's total moved (|delta_pct|, then key), not by |delta|: sides of unlike totals (a
   * selection of 7 profiles against one of 6) are compared by shape */
  SPAA_DIFF_BY_SHARE = 0x100
};

/* The diff of two sets of the same metric: per function (self weight) and per stack id
 * (base, target, delta; percentages of each side's total). Stacks are matched by id, which
 * is a content id: the same stack from two sources matches. A set diffed with itself gives
 * zero deltas. Sides in two units of one kind (spaa_unit_size) are compared in the finer;
 * units of no common kind are SPAA_E_BAD_REQUEST. 0, the sink's error, SPAA_E_NOMEM. */
int spaa_view_diff(const struct spaa_vset *base, const struct spaa_vset *target, int format,
                   size_t limit, size_t budget, spaa_sink_cb sink, void *ctx,
                   struct spaa_err *err);

/* One function of a top answer (internal to the views, shared with the summary). */
struct spaa_top_row {
  const char *name; /* borrowed from the set */
  spaa_vnum self, total;
};
/* Every function of v with self and total, sorted as spaa_view_top sorts (*out malloc'ed).
 * 0 or SPAA_E_NOMEM. */
int spaa_view__top_rows(const struct spaa_vset *v, struct spaa_top_row **out, size_t *n);
/* {"metric":..,"unit":..,"total":..,"metrics":[..] (no closing brace): how every JSON view of
 * v opens. 0 or SPAA_E_NOMEM. */
int spaa_view__head(struct spaa_buf *b, const struct spaa_vset *v);
/* Per name of v, its index among the names v's stacks use (focus= and ignore= leave others
 * out), in the set's order, or UINT32_MAX when none uses it: what speedscope's frame table
 * lists. malloc()ed; NULL when out of memory. */
uint32_t *spaa_view__used_names(const struct spaa_vset *v);

/* A weight as a view number, exact for any int64. */
static inline spaa_vnum spaa_vnum_of(struct spaa_num n)
{
  return n.is_float ? (spaa_vnum)n.f : (spaa_vnum)n.i;
}
/* A number as the views write it: whole values below 2^64 as integers, others with %.17g. */
int spaa_view_num(struct spaa_buf *b, spaa_vnum x);
/* A JSON string (quotes and escapes) into b. */
int spaa_view_jstr(struct spaa_buf *b, const char *s);

#endif
