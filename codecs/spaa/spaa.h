/* The SPAA model: the one in-memory form every input converts to and every output is
 * written from (SPAA v1.0, one record type per struct). Owned by struct spaa_profile. */
#ifndef SPAA_SPAA_H
#define SPAA_SPAA_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/err.h"
#include "base/num.h"

enum spaa_frame_order {
  SPAA_LEAF_TO_ROOT = 0, /* frames[0] is the leaf */
  SPAA_ROOT_TO_LEAF = 1  /* frames[0] is the root */
};

enum spaa_id_mode {
  SPAA_IDS_CONTENT = 0, /* "content_addressable": stack ids are content ids (cid.h) */
  SPAA_IDS_LOCAL = 1    /* "local": arbitrary, unique within the file */
};

/* One weight: {"metric": ..., "value": ..., "unit": ...}. */
struct spaa_weight {
  const char *metric; /* never NULL */
  struct spaa_num value;
  const char *unit;   /* NULL when absent */
};

struct spaa_weights {
  struct spaa_weight *v; /* n entries, in the profile's arena (never free()d on its own) */
  uint32_t n;            /* 32 bits: a stack record holds two of these, a sample one */
  uint32_t cap;
};

/* header.events[] */
struct spaa_event {
  const char *name;           /* unique within the header */
  const char *kind;           /* hardware|software|allocation|deallocation|timer|probe */
  const char *mode;           /* sampling.mode: period|frequency|event */
  const char *primary_metric; /* sampling.primary_metric */
  int has_sample_period;
  struct spaa_num sample_period; /* sampling.sample_period */
  int has_frequency_hz;
  struct spaa_num frequency_hz;  /* sampling.frequency_hz */
  json_t *sampling_extra;        /* other sampling keys (object) or NULL; owned */
  json_t *extra;                 /* other event keys, e.g. allocation_tracking; owned */
};

struct spaa_header {
  const char *source_tool;           /* "perf", "sentry", "otlp", "pprof", ... */
  enum spaa_frame_order frame_order;
  enum spaa_id_mode id_mode;         /* stack_id_mode */
  struct spaa_event *events;         /* n_events entries */
  size_t n_events;
  size_t cap_events;
  int has_time_range;
  struct spaa_num start;             /* time_range.start */
  struct spaa_num end;               /* time_range.end */
  const char *time_unit;             /* time_range.unit: "seconds", "nanoseconds", ... */
  json_t *source;                    /* the "source" object as given, or NULL; owned */
  json_t *extra;                     /* other header keys, or NULL; owned */
};

/* "type":"dso" */
struct spaa_dso {
  uint64_t id;          /* file-local id, unique */
  const char *name;     /* path or module name; never NULL ("" allowed) */
  const char *build_id; /* lowercase hex, no separators; NULL when unknown */
  int is_kernel;
  int has_mapping;      /* 1 when the load address is known (x_mapping) */
  uint64_t map_start;   /* first address the dso is mapped at */
  uint64_t map_limit;   /* one past its last mapped address */
  uint64_t map_offset;  /* file offset of map_start */
  json_t *extra;        /* other keys, or NULL; owned */
};

/* "type":"frame" */
/* "type":"frame"; the flags last, in bytes: an upload may hold hundreds of thousands
 * (80 bytes each). */
struct spaa_frame {
  uint64_t id;            /* file-local id, unique */
  const char *func;       /* symbol, or the raw ip as hex when !func_resolved; never NULL */
  uint64_t dso;           /* the spaa_dso.id it belongs to (when has_dso) */
  uint64_t ip;            /* instruction address, as recorded (when has_ip) */
  const char *symoff;     /* hex string or NULL */
  const char *srcline;    /* "file:line" or NULL */
  const char *kind;       /* user|kernel|unknown; never NULL */
  json_t *extra;          /* other keys, or NULL; owned */
  uint32_t inline_depth;  /* 0 physical, 1+ inline nesting (when has_inline_depth) */
  unsigned char func_resolved;    /* default 1 */
  unsigned char has_dso, has_ip;
  unsigned char srcline_resolved; /* default 1 */
  unsigned char inlined;          /* default 0 */
  unsigned char has_inline_depth;
};

/* "type":"thread" */
struct spaa_thread {
  int64_t pid;
  int64_t tid;        /* unique within the file */
  const char *comm;   /* NULL when absent */
  json_t *extra;      /* other keys, or NULL; owned */
};

/* "type":"stack" */
struct spaa_stack {
  char id[48];              /* "0x" + 32 hex for content ids; any string in local mode */
  uint64_t *frames;         /* n_frames frame ids, in the header's frame_order (arena) */
  size_t n_frames;
  const char *stack_type;   /* unified|user|kernel; NULL = absent (unified) */
  const char **related;     /* related_stacks ids (array and strings in the arena) */
  size_t n_related;
  const char *event;        /* context.event; never NULL in a valid profile */
  json_t *context;          /* the other context keys (object) or NULL; owned */
  struct spaa_weights weights;
  int has_exclusive;
  uint64_t excl_frame;      /* exclusive.frame */
  struct spaa_weights excl_weights; /* exclusive.weights */
  json_t *extra;            /* other keys, or NULL; owned */
};

/* "type":"sample"; the flags last, in bytes: an upload may hold millions of these. */
struct spaa_sample {
  struct spaa_num timestamp; /* same unit and epoch as the header time_range */
  int64_t pid, tid, cpu;
  const char *event;         /* NULL when absent */
  struct spaa_num period;
  const char *stack_id;      /* never NULL */
  struct spaa_weights weights; /* x_weights: per-sample values when a tool gives them */
  json_t *context;           /* object or NULL; owned */
  json_t *extra;             /* other keys, or NULL; owned */
  unsigned char has_timestamp, has_pid, has_tid, has_cpu, has_period;
};

/* A sample in compact form (spaa_profile.csamples), for an upload of many timed samples
 * whose records differ only in these fields: 24 bytes, where a record takes 136 and its
 * one-weight array 40 more. It is the record
 *   {timestamp (an integer, when SPAA_CS_TIMESTAMP), pid = cs.pid, tid, cpu (the three
 *    present), event = cs.event, stack_id = the id of stacks[stack] ("" when stack is not
 *    a stack's index), weights = [{cs.metric, value, cs.unit}] (when SPAA_CS_WEIGHT),
 *    context}
 * where tid, cpu and context are those of cs.ctxs[ctx]: what samples of one thread, cpu and
 * context share is kept once (an OTLP profile has one entry per distinct attributes, a
 * Sentry one per thread and queue).
 * It comes after the profile's records: read both with spaa_profile_sample. It names its
 * stack by position, so that no map of stack ids is needed to read or normalize it (which
 * moves the stacks and keeps the positions right). Only a converter asked for them makes
 * them (spaa_convert_opts.compact_samples): a reader that does not know them reads the
 * records alone. */
#define SPAA_CS_TIMESTAMP 1u
#define SPAA_CS_WEIGHT 2u
#define SPAA_CS_NO_STACK UINT32_MAX
#define SPAA_CS_MAX_CTX (((uint32_t)1 << 30) - 1) /* the most entries cs.ctxs may hold */
struct spaa_csample {
  int64_t timestamp;
  int64_t value;
  uint32_t stack;       /* index in the profile's stacks, or SPAA_CS_NO_STACK */
  uint32_t ctx : 30;    /* index in the profile's cs.ctxs */
  uint32_t flags : 2;   /* SPAA_CS_* */
};

/* What compact samples of one thread, cpu and context share (spaa_profile.cs.ctxs). */
struct spaa_cctx {
  int64_t tid, cpu;
  json_t *context;      /* object or NULL; owned */
};

/* "type":"window"; kept whole: by_stack rarely matters to ingest. */
struct spaa_window {
  const char *id;
  struct spaa_num start, end;
  const char *unit;       /* NULL when absent */
  json_t *by_stack;       /* the by_stack array as given; owned */
  json_t *extra;          /* other keys, or NULL; owned */
};

struct spaa_block; /* base/blocks.h */

/* A meter of the memory models hold: what a request's conversion may build. The input's
 * bytes do not bound the model (an OTLP request names one deep stack from many samples with
 * distinct attributes: each becomes a stack of its own, every one with all the frames), so
 * the model is counted as it grows. A profile made with spaa_profile_new_metered reports to
 * its meter until it is freed: its record arrays and arena blocks. Past `room`, `ask` is
 * called; when it refuses, the allocation fails as out of memory would, and `refused` and
 * `why` say why. Not locked: one thread at a time. */
struct spaa_meter {
  size_t held;     /* bytes the metered profiles hold now */
  size_t peak;     /* the most they held at once */
  size_t room;     /* bytes they may hold before asking */
  /* Raise room to at least held + need: 0, or an SPAA_E_* code with why filled. NULL:
   * room is all there is. */
  int (*ask)(struct spaa_meter *m, size_t need);
  void *ctx;       /* ask's */
  int refused;     /* 0, or the code ask refused with (kept: later asks are not made) */
  struct spaa_err why; /* the refusal, for the answer */
};

/* n more bytes held under m (other than a profile's: what else a conversion holds), asking
 * past its room: 0, or -1 refused (allocate nothing). spaa_meter_sub gives bytes back. */
int spaa_meter_add(struct spaa_meter *m, size_t n);
void spaa_meter_sub(struct spaa_meter *m, size_t n);
/* The same for a user of the meter that keeps what it reported in *counted (m NULL: nothing
 * is counted, 0): take n more (0, or -1: refused); give n back (at most *counted). */
int spaa_meter_take(struct spaa_meter *m, size_t *counted, size_t n);
void spaa_meter_give(struct spaa_meter *m, size_t *counted, size_t n);
/* The same for a user that knows the total it holds now: take what want passes *counted by
 * (0, or -1: refused); never gives back (spaa_meter_give does, at the end). */
int spaa_meter_hold(struct spaa_meter *m, size_t *counted, size_t want);

/* A whole profile. Create with spaa_profile_new, free with spaa_profile_free.
 * Strings, stack frame lists, related_stacks arrays and weight arrays live in the profile's
 * arenas and go with it (allocate them with spaa_alloc / the helpers below, never malloc;
 * the helpers put frame lists and weight arrays in an arena of their own, freed with the
 * records by spaa_profile_drop_stacks);
 * the record arrays grow with the add functions, which return a zeroed element (pointers
 * into a record array are invalidated by the next add). JSON values are owned references. */
struct spaa_profile {
  struct spaa_header header;
  struct spaa_dso *dsos;       size_t n_dsos, cap_dsos;
  struct spaa_frame *frames;   size_t n_frames, cap_frames;
  struct spaa_thread *threads; size_t n_threads, cap_threads;
  struct spaa_stack *stacks;   size_t n_stacks, cap_stacks;
  struct spaa_sample *samples; size_t n_samples, cap_samples;
  struct spaa_csample *csamples; size_t n_csamples, cap_csamples; /* after samples */
  struct {
    int64_t pid;
    const char *event, *metric, *unit; /* outliving the profile (arena, literal); metric
                                        * and unit read only with SPAA_CS_WEIGHT */
    struct spaa_cctx *ctxs;            /* what some of them share (spaa_add_cctx) */
    size_t n_ctxs, cap_ctxs;
  } cs;                                /* what every compact sample shares */
  struct spaa_window *windows; size_t n_windows, cap_windows;
  struct spaa_block *arena;       /* string storage */
  size_t arena_bytes;             /* bytes handed out by the arena */
  struct spaa_block *bulk;        /* frame lists and weight arrays (spaa_stack_set_frames,
                                     spaa_weights_add, spaa_weights_alloc) */
  size_t bulk_bytes;
  struct spaa_meter *meter;       /* the meter it reports to, or NULL */
  size_t metered;                 /* bytes reported to it */
};

/* NULL on allocation failure. */
struct spaa_profile *spaa_profile_new(void);
/* The same, reporting to m (NULL: none), which must outlive it. NULL when m refuses. */
struct spaa_profile *spaa_profile_new_metered(struct spaa_meter *m);
/* NULL-safe; frees every record, string and JSON value the profile owns. */
void spaa_profile_free(struct spaa_profile *p);
/* About how many bytes the profile holds: its record arrays (as allocated) and its arena;
 * JSON values not counted. For deciding when to let go of models, not for accounting. */
size_t spaa_profile_bytes(const struct spaa_profile *p);

/* Copy `len` bytes of `s` into the profile's arena, NUL-terminated. NULL on OOM.
 * spaa_strdup(p, NULL) returns NULL. */
const char *spaa_strndup(struct spaa_profile *p, const char *s, size_t len);
const char *spaa_strdup(struct spaa_profile *p, const char *s);
/* Raw arena memory (8-byte aligned), zeroed; NULL on OOM. */
void *spaa_alloc(struct spaa_profile *p, size_t size);

/* Free the sample records (n_samples becomes 0; the compact ones too) and their JSON
 * values; what they point to in the arenas stays. For a store that has read them
 * (spaa_meta.take_records). */
void spaa_profile_drop_samples(struct spaa_profile *p);
/* Free the stack records (n_stacks becomes 0) and their JSON values; once no sample record
 * is left either, the arena of frame lists and weight arrays too. Strings stay. */
void spaa_profile_drop_stacks(struct spaa_profile *p);
/* For a reader that takes the records as it goes (spaa_meta.take_records): records
 * [from, to) were read and will not be read again. Their JSON values are released and the
 * whole pages they fill given back to the system (their bytes read as zeros after); the
 * others are untouched. Samples are numbered as spaa_profile_sample numbers them. The
 * profile is then fit only for spaa_profile_drop_* and spaa_profile_free. */
void spaa_profile_release_samples(struct spaa_profile *p, size_t from, size_t to);
void spaa_profile_release_stacks(struct spaa_profile *p, size_t from, size_t to);
/* Room for n more sample records in one allocation, for a count the input gives in advance
 * (no doubling past it). 0 or SPAA_E_NOMEM (nothing changed). */
int spaa_reserve_samples(struct spaa_profile *p, size_t n);
/* The same for compact samples (spaa_add_csample). */
int spaa_reserve_csamples(struct spaa_profile *p, size_t n);
/* Give back what the record arrays hold beyond their records (a doubling's slack), once a
 * profile is complete. Never fails: an array that cannot shrink stays as it was. */
void spaa_profile_fit(struct spaa_profile *p);

/* Append a zeroed record; NULL on OOM. Frames get func_resolved = srcline_resolved = 1
 * and kind "unknown" by default. */
struct spaa_event *spaa_add_event(struct spaa_profile *p);
struct spaa_dso *spaa_add_dso(struct spaa_profile *p);
struct spaa_frame *spaa_add_frame(struct spaa_profile *p);
struct spaa_thread *spaa_add_thread(struct spaa_profile *p);
struct spaa_stack *spaa_add_stack(struct spaa_profile *p);
struct spaa_sample *spaa_add_sample(struct spaa_profile *p);
struct spaa_window *spaa_add_window(struct spaa_profile *p);
/* A zeroed compact sample (stack_id "", ctx 0); NULL on OOM. */
struct spaa_csample *spaa_add_csample(struct spaa_profile *p);
/* A zeroed entry of cs.ctxs, its index in *index; NULL on OOM or past SPAA_CS_MAX_CTX. */
struct spaa_cctx *spaa_add_cctx(struct spaa_profile *p, uint32_t *index);

/* Every sample, records then compact ones: how many, and sample i as a record (a compact one
 * written out into *buf, valid until buf is used again; the record itself otherwise). */
struct spaa_sample_buf {
  struct spaa_sample s;
  struct spaa_weight w;
};
static inline size_t spaa_profile_n_samples(const struct spaa_profile *p)
{
  return p->n_samples + p->n_csamples;
}
const struct spaa_sample *spaa_profile_sample(const struct spaa_profile *p, size_t i,
                                              struct spaa_sample_buf *buf);
/* Append a weight to `w` (metric and unit are interned); 0 or SPAA_E_NOMEM. A stack's
 * weights and exclusive weights may share one array (a converter's one list for both): a
 * writer in place gives the exclusive ones their own first (normalize does). */
int spaa_weights_add(struct spaa_profile *p, struct spaa_weights *w, const char *metric,
                     struct spaa_num value, const char *unit);
/* Make `w` exactly n zeroed weights (w->n = n) whose metric, value and unit the caller
 * sets, e.g. to strings the profile already interned. 0 or SPAA_E_NOMEM. */
int spaa_weights_alloc(struct spaa_profile *p, struct spaa_weights *w, size_t n);
/* Set the stack's frames (copied into the arena); 0 or SPAA_E_NOMEM. A frame list is never
 * written once set, so stacks of one profile may share one: */
int spaa_stack_set_frames(struct spaa_profile *p, struct spaa_stack *s, const uint64_t *frames,
                          size_t n);
/* Point s at the frame list of another stack of p (set by spaa_stack_set_frames). The meter
 * is charged as for a copy all the same: what the profile expands to downstream (the
 * store's preparation, stack rows, SPAA text) grows with each stack's frames, shared or not,
 * so a request naming one deep stack from many samples is refused as before. 0, or
 * SPAA_E_NOMEM when the meter refuses (s unchanged). */
int spaa_stack_share_frames(struct spaa_profile *p, struct spaa_stack *s, uint64_t *frames,
                            size_t n);

/* Lookups. Linear unless an index was built by spaa_profile_index(). NULL when absent. */
const struct spaa_event *spaa_find_event(const struct spaa_profile *p, const char *name);
const struct spaa_weight *spaa_weights_find(const struct spaa_weights *w, const char *metric);

/* Units of one kind, which add up once converted (the views do so): how many of the finest
 * unit of its kind one `unit` is (nanoseconds for time: 1000 for "microseconds"; bytes for
 * sizes: 1024 for "kilobytes"), with *kind set (1 time, 2 bytes); 0 for NULL or a unit of no
 * known kind, which adds up only with itself. Names as pprof, OTLP (UCUM) and SPAA give them. */
double spaa_unit_size(const char *unit, int *kind);

/* The header's time range in unix nanoseconds: start and end read in its unit
 * (nanoseconds when it names none; microseconds, milliseconds, seconds). 0 with *start_ns
 * and *end_ns set, or -1 with both untouched when the header has no time range or names
 * another unit. */
int spaa_header_range_ns(const struct spaa_profile *p, int64_t *start_ns, int64_t *end_ns);

/* The address an unresolved frame is known by (docs/content-ids.md): its ip made relative to
 * its dso's mapping when the dso `d` (may be NULL) has one holding the ip, else the ip. One
 * rule for stack identity and for the names views give such frames. */
uint64_t spaa_frame_rel_addr(const struct spaa_frame *f, const struct spaa_dso *d);

#endif
