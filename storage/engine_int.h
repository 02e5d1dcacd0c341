/* Internals both storage engines share (storage/sqlite/, storage/postgres/): the compact
 * packing, the preparation of a profile before it is stored, the per-profile block, the
 * content-id cache, and the reading of a block back into a model. Nothing here knows SQL:
 * an engine hands the reader its rows through struct storage__src. */
#ifndef SPAA_STORAGE_ENGINE_INT_H
#define SPAA_STORAGE_ENGINE_INT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/limits.h"
#include "spaa/cid.h"
#include "spaa/spaa.h"
#include "storage/storage.h"

/* ---- packing (pack.c) -----------------------------------------------------------------
 * Per-profile rows keep what is not in a record's identity as compact blobs: unsigned
 * LEB128 varints, zigzag varints for signed values, numbers as a tag byte (0 integer +
 * zigzag varint, 1 double + 8 bytes little-endian), strings as varint (length + 1, 0 for
 * NULL) and bytes, JSON values as strings of canonical JSON text. */
int storage__put_uv(struct spaa_buf *b, uint64_t v);
int storage__put_sv(struct spaa_buf *b, int64_t v);
int storage__put_num(struct spaa_buf *b, struct spaa_num n);
int storage__put_str(struct spaa_buf *b, const char *s);
int storage__put_json(struct spaa_buf *b, const json_t *v);

/* A bounds-checked reader: any overrun or malformed value sets `bad` and yields zeros. */
struct storage__rd {
  const uint8_t *p; /* the bytes (borrowed) */
  size_t len;       /* their count */
  size_t pos;       /* next byte */
  int bad;          /* 1 once anything failed */
};
void storage__rd_init(struct storage__rd *r, const void *p, size_t len);
uint64_t storage__get_uv(struct storage__rd *r);
int64_t storage__get_sv(struct storage__rd *r);
struct spaa_num storage__get_num(struct storage__rd *r);
/* The string interned in `p` (NULL when it was NULL, or on error with r->bad set). */
const char *storage__get_str(struct storage__rd *r, struct spaa_profile *p);
/* A new JSON value, NULL when it was NULL (or on error with r->bad set). */
json_t *storage__get_json(struct storage__rd *r);
/* Parse canonical JSON text (any value, NULs allowed); NULL on error. */
json_t *storage__json_parse(const char *s, size_t len);
/* Canonical JSON text of v into a new NUL-terminated malloc'ed string; NULL on OOM. */
char *storage__json_text(const json_t *v, size_t *len);

/* ---- preparation (prep.c) -------------------------------------------------------------
 * Everything about a profile that does not depend on row ids, computed in the caller's
 * thread before it is queued, so that the writer thread only runs SQL. The writer reads the
 * profile's header, dsos, frames and threads, but not its samples and stacks: what it needs
 * of them is here, and the store may drop them once prepared (spaa_meta.take_records). */

/* A stack's event and type (strings of the profile's arena, which stay). */
struct storage__pstack {
  const char *event, *type;
};

struct storage__prep {
  const struct spaa_profile *p;   /* borrowed, as given to spaa_store_put */
  const struct spaa_meta *m;      /* borrowed */
  struct spaa_cid *dso_cid;       /* n_dsos */
  struct spaa_cid *frame_cid;     /* n_frames */
  size_t *frame_dso;              /* n_frames: index in p->dsos, SIZE_MAX without a dso */
  size_t n_stacks;                /* p->n_stacks as it was (m->take_records drops them) */
  struct storage__pstack *pstacks; /* n_stacks */
  int checked;                    /* 1: every stack's content id was checked here */
  struct spaa_cid *stack_cid;     /* n_stacks */
  uint32_t *stack_frames;         /* every stack's frames as indexes in p->frames, leaf first */
  size_t *stack_frames_off;       /* n_stacks + 1 offsets into stack_frames */
  size_t n_samples;               /* p->n_samples as it was (m->take_records drops them) */
  struct spaa_buf psamples;       /* n_samples samples one after another in the block's sample
                                   * form (storage__put_sample), about 20 bytes each, their
                                   * stack_row an index in p->stacks */
  struct spaa_buf blobs;          /* every packed blob below, back to back */
  size_t *dso_inst;               /* n_dsos + 1 offsets into blobs */
  size_t *pstack_w;               /* 2 * n_stacks + 1 offsets: weights, x, weights, x... */
  size_t header_off[2];           /* the packed header */
  size_t strings_off[2];          /* the string table */
  size_t windows_off[2];          /* the packed windows */
  const char **frame_extra;       /* n_frames canonical JSON texts or NULL (borrowed from
                                   * texts: frames sharing one extra object share its text) */
  char **thread_extra;            /* n_threads */
  const char **stack_ctx;         /* n_stacks: context minus event, canonical, or NULL
                                   * (borrowed from texts, likewise) */
  char **texts;                   /* n_texts texts of distinct JSON objects (owned) */
  size_t n_texts;
  char *labels_text, *attrs_text; /* canonical JSON or NULL */
  const char **event_names;       /* n_events_out names (borrowed from the profile) */
  char **event_totals;            /* n_events_out canonical JSON objects */
  size_t n_events_out;
  int64_t samples;                /* the "samples" number of the meta answer */
  int sorted;                     /* 1: the stacks are in canonical order (BK_SORTED) */
  void *original;                 /* zstd-compressed original payload, or NULL */
  size_t original_len;
};

/* 0, or SPAA_E_INVALID (not in canonical form, a dangling reference...) / SPAA_E_NOMEM. */
int storage__prep_build(struct storage__prep *pr, const struct spaa_profile *p,
                        const struct spaa_meta *m, struct spaa_err *err);
void storage__prep_free(struct storage__prep *pr); /* NULL-safe */
/* Free the stacks' frame lists (stack_frames, stack_frames_off) once the stacks are inserted:
 * the block is built without them. For a writer that does not insert pr again after. */
void storage__prep_drop_frames(struct storage__prep *pr);

/* Flags of profile_frame.flags. */
#define PF_UNRESOLVED 1u      /* func is not resolved: the raw text is in profile_frame.func */
#define PF_SRC_UNRESOLVED 2u  /* srcline_resolved false */
#define PF_INLINED 4u         /* inlined true */
#define PF_NO_DEPTH 8u        /* inline_depth absent */
#define PF_SRC_HERE 16u       /* srcline comes from profile_frame.srcline (even when NULL) */

/* Flags at the start of a profile_stack.x blob. */
#define PS_EXCLUSIVE 1u       /* exclusive frame (uv) and weights follow */
#define PS_NO_TYPE 2u         /* stack_type absent (stored as "unified") */
#define PS_FRAMES 4u          /* explicit local frame ids follow (uv count, uv ids); written
                                 by schema version 2, still read */
#define PS_RELATED 8u         /* related stack ids follow (uv count, strings) */
#define PS_EXTRA 16u          /* extra JSON follows */
#define PS_DUPS 32u           /* frames that are not the first local frame of their shared row
                                 follow: uv count, then (uv position delta, uv rank) each */
#define PS_EXCL_LEAF 64u      /* with PS_EXCLUSIVE: the exclusive frame is the leaf (not kept) */
#define PS_EXCL_SAME 128u     /* with PS_EXCLUSIVE: exclusive weights = the weights (not kept) */

/* Flags at the start of a sample.rest blob. */
#define SR_PID 1u
#define SR_CPU 2u
#define SR_EVENT 4u           /* string table index */
#define SR_PERIOD 8u
#define SR_WEIGHTS 16u
#define SR_CONTEXT 32u
#define SR_EXTRA 64u
#define SR_STACK_ID 128u      /* the stack id as text: it names no stack of the profile */

/* ---- the per-profile block (block.c) ---------------------------------------------------
 * Layout in docs/storage.md. Built record by record (dsos, frames, threads, stacks, samples
 * each in the profile's order), then finished into the raw block the writer compresses. */
enum storage__blk_sec {
  BS_HEADER, BS_STRINGS, BS_WINDOWS, BS_DSOS, BS_FRAMES, BS_THREADS, BS_STACKS, BS_WSHAPE,
  BS_WVALS, BS_X, BS_SAMPLES, BS__N
};
enum storage__blk_count { BN_DSOS, BN_FRAMES, BN_THREADS, BN_STACKS, BN_SAMPLES, BN__N };
#define BK_SORTED 1u  /* stacks in ascending row id order; read back in canonical order */
#define BF_DSO 32u    /* frame flag in a block: a local dso id follows */
#define BF_IP 64u     /* frame flag in a block: an ip (delta) follows */
enum { BT_NONE = 0, BT_INT = 1, BT_FLOAT = 2 }; /* a sample's timestamp */

struct storage__blk_st {   /* a stack waiting for storage__blk_finish */
  int64_t row;             /* stack row id */
  size_t off, wlen, xlen;  /* its weights then extras in sblobs */
};

struct storage__blk {
  struct spaa_buf sec[BS__N];
  uint64_t n[BN__N];
  struct storage__blk_st *stacks;
  size_t cap_stacks;
  struct spaa_buf sblobs;
  uint64_t prev_dso_local, prev_frame_local, prev_ip;
  int64_t prev_dso_row, prev_frame_row, prev_ts, prev_sample_stack;
};

/* One frame instance: the profile_frame columns of schema version 2. */
struct storage__blk_frame {
  uint64_t local_id;
  int64_t row;             /* frame row id */
  unsigned flags;          /* PF_* */
  int has_dso, has_ip;
  uint64_t dso_local, ip;
  const char *func, *symoff, *srcline, *extra; /* NUL-terminated or NULL */
};

/* The same, read back: strings point into the block (not NUL-terminated). */
struct storage__blk_frame_rd {
  uint64_t local_id;
  int64_t row;
  unsigned flags;
  int has_dso, has_ip;
  uint64_t dso_local, ip;
  const char *func, *symoff, *srcline, *extra;
  size_t func_len, symoff_len, srcline_len, extra_len;
};

/* One sample: the sample columns of schema version 2. */
struct storage__blk_sample {
  int ts_kind;             /* BT_* */
  struct spaa_num ts;
  int has_tid, has_stack;
  int64_t tid, stack_row;
  const void *rest;        /* packed SR_* fields, or NULL */
  size_t rest_len;
};

/* One sample in the block's sample form (varint flags, the timestamp as a delta, the
 * thread, the stack as a delta, the packed rest) into s, or read from r: *prev_ts and
 * *prev_stack carry the deltas (0 before the first). The block's sample section and the
 * preparation's packed samples (whose stack_row is an index in p->stacks) are this form.
 * put: 0 or an SPAA_E_* code; get: 0 or SPAA_E_STORE (malformed). */
int storage__put_sample(struct spaa_buf *s, int64_t *prev_ts, int64_t *prev_stack,
                        const struct storage__blk_sample *sm);
int storage__get_sample(struct storage__rd *r, int64_t *prev_ts, int64_t *prev_stack,
                        struct storage__blk_sample *sm);

/* The profile-wide tables kept in the block, and whether its stacks may be sorted. */
struct storage__blk_tables {
  const void *header, *strings, *windows;
  size_t header_len, strings_len, windows_len;
  int sorted;              /* 1: stacks are in canonical order, store them by row id */
};

struct storage__blk_weight {
  uint64_t metric, unit;   /* string table references (0 = none) */
  struct spaa_num value;
};

void storage__blk_init(struct storage__blk *b);
void storage__blk_free(struct storage__blk *b); /* NULL-safe */
/* Append one record; 0 or SPAA_E_NOMEM. */
int storage__blk_dso(struct storage__blk *b, uint64_t local_id, int64_t row, const void *inst,
                     size_t len);
int storage__blk_frame(struct storage__blk *b, const struct storage__blk_frame *f);
int storage__blk_thread(struct storage__blk *b, int64_t pid, int64_t tid, const char *comm,
                        const char *extra);
/* w: packed weights (pack.c), x: packed PS_* extras (may be empty). */
int storage__blk_stack(struct storage__blk *b, int64_t row, const void *w, size_t wlen,
                       const void *x, size_t xlen);
int storage__blk_sample(struct storage__blk *b, const struct storage__blk_sample *sm);
/* The raw block appended to out; b's sections are freed as they are copied (free b after).
 * 0, SPAA_E_NOMEM, or SPAA_E_STORE for malformed weights. */
int storage__blk_finish(struct storage__blk *b, const struct storage__blk_tables *t,
                        struct spaa_buf *out);

/* A raw block taken apart: counts and one reader per section, records read in order. */
struct storage__blk_rd {
  unsigned flags;
  uint64_t n[BN__N];
  struct storage__rd sec[BS__N];
  uint64_t prev_dso_local, prev_frame_local, prev_ip;
  int64_t prev_dso_row, prev_frame_row, prev_ts, prev_sample_stack, prev_stack_row;
};
/* 0, or SPAA_E_STORE when the bytes are not a block. The reader borrows raw. */
int storage__blk_open(struct storage__blk_rd *r, const void *raw, size_t len);
/* The next record of each kind; 0 or SPAA_E_STORE (corrupt). */
int storage__blk_next_dso(struct storage__blk_rd *r, uint64_t *local_id, int64_t *row,
                          struct storage__rd *inst);
int storage__blk_next_frame(struct storage__blk_rd *r, struct storage__blk_frame_rd *f);
int storage__blk_next_thread(struct storage__blk_rd *r, int64_t *pid, int64_t *tid,
                             const char **comm, size_t *comm_len, const char **extra,
                             size_t *extra_len);
/* A stack's row id and its extras (x, empty when none); its weights follow with
 * storage__blk_next_weights (at most cap of them, else SPAA_E_STORE). */
int storage__blk_next_stack(struct storage__blk_rd *r, int64_t *row, struct storage__rd *x);
int storage__blk_next_weights(struct storage__blk_rd *r, struct storage__blk_weight *w,
                              size_t cap, size_t *n);
/* How many weights the next storage__blk_next_weights gives (read ahead, not consumed), to
 * size its array; SIZE_MAX when the section is corrupt there. */
size_t storage__blk_peek_weights(const struct storage__blk_rd *r);
int storage__blk_next_sample(struct storage__blk_rd *r, struct storage__blk_sample *sm);

/* Compress a raw block (with the service dictionary `dict`, raw content, when dict_len > 0)
 * into out; decompress one into out (cap SPAA_STORE_MAX_BLOCK). 0, SPAA_E_NOMEM,
 * SPAA_E_STORE (corrupt, too large). */
int storage__blk_compress(const void *raw, size_t len, const void *dict, size_t dict_len,
                          void **cdict, struct spaa_buf *out);
/* With a dictionary, cdict (when not NULL) keeps it digested for the next blocks: *cdict is
 * made on first use and freed with storage__blk_cdict_free (NULL-safe). The output is the
 * same format either way: it decompresses with the dictionary as a prefix. */
void storage__blk_cdict_free(void *cdict);
size_t storage__blk_cdict_size(const void *cdict); /* bytes it holds; 0 for NULL */
/* The raw size a compressed block states in its frame header, or 0 when it states none (or
 * one past SPAA_STORE_MAX_BLOCK): what decompressing it will allocate. */
size_t storage__blk_raw_size(const void *z, size_t len);
int storage__blk_decompress(const void *z, size_t len, const void *dict, size_t dict_len,
                            struct spaa_buf *out);

/* ---- the content-id cache (cache.c) -------------------------------------------------------
 * The writer's map content id -> row id of dsos, frames and stacks (and service -> block
 * dictionary), so that a known record costs no SQL lookup. Only committed rows enter it:
 * rows found or inserted inside the open transaction wait as pending entries, which a
 * rollback truncates and a COMMIT makes findable. At most SPAA_STORE_CID_CACHE entries,
 * committed and pending together: a full cache keeps the committed ones found since it last
 * made room (at most half the bound, the newest), forgets the rest, and warms again from
 * lookups; a service's frames, found by each of its profiles, stay while stacks seen once
 * go. */
enum storage__kind { SK_DSO, SK_FRAME, SK_STACK };
#define STORAGE_PENDING_DICTS 8 /* new service dictionaries cached per transaction */
#define STORAGE_BLOCK_LEVEL 9   /* zstd level of blocks (docs/storage.md has the measurements) */
#define STORAGE_BLOCK_LEVEL_LARGE 3 /* ... for a service dictionary over STORAGE_LEVEL_SWITCH */
#define STORAGE_LEVEL_SWITCH ((size_t)1 << 20)
#define STORAGE_DICT_TABLE_LOG 17 /* log2 of the match table entries of a digested dictionary */

/* 24 bytes: the kind rides in the row's two low bits (row ids are positive and far below
 * 2^61; a larger one is simply not cached), and the top bit says the entry was found since
 * the cache last made room (CENT_FOUND). */
struct storage__cent {
  uint8_t cid[SPAA_CID_LEN];
  uint64_t rk;             /* CENT_FOUND | row << 2 | kind */
};
#define CENT_FOUND ((uint64_t)1 << 63)

struct storage__dict {
  char *service;           /* owned */
  int64_t id;              /* block_dict row */
  void *raw;               /* the dictionary bytes (owned) */
  size_t len;
  void *cdict;             /* raw digested for compression, made on first use (owned; it
                              refers to raw: freed with it) */
};

struct storage__cache {
  /* entries in one array: [0, n) committed, then n_pending of the open transaction; the
   * committed ones found through slots (open addressing: entry index + 1, 0 empty), a table
   * of cap (a power of two, at least twice n) rebuilt from the array as it grows */
  struct storage__cent *ents;
  size_t n, n_pending, cap_ents;
  uint32_t *slots;
  size_t cap;
  struct storage__dict dicts[SPAA_STORE_DICT_CACHE]; /* committed dictionaries */
  size_t n_dicts;              /* oldest first */
  struct storage__dict pdicts[STORAGE_PENDING_DICTS]; /* added in the open transaction */
  size_t pdict_mark[STORAGE_PENDING_DICTS];           /* n_pending when each was added */
  size_t n_pdicts;
  uint64_t hits, misses;
};

void storage__cache_free(struct storage__cache *c); /* NULL-safe; leaves it empty */
/* 1 with *row when cid of kind is cached (the entry marked found), else 0. */
int storage__cache_get(struct storage__cache *c, enum storage__kind kind,
                       const struct spaa_cid *cid, int64_t *row);
/* Remember a row of the open transaction. 0 or SPAA_E_NOMEM (nothing cached then: fine). */
int storage__cache_pending(struct storage__cache *c, enum storage__kind kind,
                           const struct spaa_cid *cid, int64_t row);
/* Drop the pending rows after the first `mark` (a profile's savepoint rolled back). */
void storage__cache_rollback(struct storage__cache *c, size_t mark);
/* The transaction committed: pending rows into the map. */
void storage__cache_commit(struct storage__cache *c);
/* The cached dictionary of a service, or NULL. */
struct storage__dict *storage__cache_dict(struct storage__cache *c, const char *service);
/* Keep a service dictionary (raw is copied): committed (pending 0), or added in the open
 * transaction (pending 1: kept once it commits). 0 or SPAA_E_NOMEM. */
int storage__cache_dict_put(struct storage__cache *c, const char *service, int64_t id,
                            const void *raw, size_t len, int pending);


/* The canonical order of stacks (spaa_normalize's): header event position, then the
 * event's primary metric heaviest first, then stack id (prep.c). <0, 0, >0. */
int storage__stack_order_cmp(const struct spaa_profile *p, const struct spaa_stack *a,
                             const struct spaa_stack *b);

/* ---- the block built from a prepared profile and its row ids (block.c) ----------------- */
/* The raw block of pr, its dsos, frames and stacks having the row ids given (one per record,
 * in the profile's order), appended to raw. 0, SPAA_E_NOMEM or SPAA_E_STORE. */
int storage__blk_build(const struct storage__prep *pr, const int64_t *dso_rows,
                       const int64_t *frame_rows, const int64_t *stack_rows,
                       struct spaa_buf *raw);
/* The same for a writer that builds a prepared profile's block once: pr's per-stack and
 * per-sample arrays are freed as soon as they are packed, and pr is then fit only to be
 * freed. */
int storage__blk_build_once(struct storage__prep *pr, const int64_t *dso_rows,
                            const int64_t *frame_rows, const int64_t *stack_rows,
                            struct spaa_buf *raw);
/* A new stack's id must be its content id (known stacks' ids are trusted): 0, or
 * SPAA_E_INVALID / SPAA_E_NOMEM with err filled. Stack i of pr (prep.c); 0 at once when
 * pr->checked (the preparation checked every stack before the records were taken). */
int storage__prep_check_stack(const struct storage__prep *pr, size_t i, struct spaa_err *err);

/* The identity columns of frame i of pr, as spaa_frame_identity reads them (prep.c). */
struct storage__frame_ident {
  const char *func;        /* "" when unresolved */
  const char *srcline;     /* NULL when unresolved or empty */
  int64_t inline_depth;    /* 0 when absent */
  const char *kind;        /* "unknown" when absent */
  int has_addr;            /* 1: an unresolved function's address follows */
  int64_t addr;            /* relative to its dso's mapping when that is known */
};
void storage__frame_ident(const struct storage__prep *pr, size_t i,
                          struct storage__frame_ident *out);

/* ---- reading a block back (read.c) ---------------------------------------------------- */
/* A dictionary read for decompressing blocks, kept across blocks of one read. */
struct storage__rdict {
  int64_t id;              /* block_dict row held in raw, 0 = none */
  struct spaa_buf raw;
};

/* A shared frame row as the reader needs it. Strings are borrowed, not NUL-terminated, NULL
 * for SQL NULL, valid until the source's next call. */
struct storage__frow {
  const char *func, *srcline, *kind;
  size_t func_len, srcline_len, kind_len;
  int64_t inline_depth;
};

/* A shared stack row, borrowed the same way. */
struct storage__srow {
  const void *cid;         /* the content id */
  size_t cid_len;          /* SPAA_CID_LEN unless corrupt */
  const char *event, *stack_type, *context; /* context: canonical JSON or NULL */
  size_t event_len, stack_type_len, context_len;
  const void *frames;      /* frame row ids, leaf first, as varints */
  size_t frames_len;
};

/* What lies outside a block, as an engine finds it. Each callback returns 0 (filled), 1 (no
 * such row) or a negative SPAA_E_* with err filled (SPAA_E_BUSY: the database is away). */
struct storage__src {
  void *ctx;
  /* the stored (compressed) dictionary of block_dict row id */
  int (*dict)(void *ctx, int64_t id, const void **z, size_t *len, struct spaa_err *err);
  int (*frame)(void *ctx, int64_t row, struct storage__frow *out, struct spaa_err *err);
  int (*stack)(void *ctx, int64_t row, struct storage__srow *out, struct spaa_err *err);
  /* optional: called once with the opened block before its records are read (to fetch
   * every row it names at once, storage__blk_rows) */
  int (*prefetch)(void *ctx, const struct storage__blk_rd *b, struct spaa_err *err);
  struct spaa_meter *meter; /* optional: the meter of the model read (storage__read_block) */
};

/* Decompress a stored block (dict_id 0 = none; the dictionary is read through src unless
 * `dict` holds it already) into raw (emptied first). 0, SPAA_E_STORE (corrupt: err not
 * filled), SPAA_E_NOMEM with err filled, or the source's error. */
int storage__block_raw(const struct storage__src *src, struct storage__rdict *dict,
                       int64_t dict_id, const void *z, size_t len, struct spaa_buf *raw,
                       struct spaa_err *err);
/* Every stack row (kind 0) and frame row (kind 1) a block names, in order, to fn; with
 * `all` also its dso rows (kind 2) and the stack rows its samples name. The block reader b
 * is not advanced. 0, SPAA_E_STORE (corrupt), or fn's nonzero answer. */
int storage__blk_rows(const struct storage__blk_rd *b, int all,
                      int (*fn)(void *ctx, int kind, int64_t row), void *ctx);
/* The profile `id` from its stored block (dictionary dict_id, bytes z/len) and the rows src
 * gives: a new model into *out (caller frees). 0, SPAA_E_STORE (corrupt, message names the
 * profile), SPAA_E_NOMEM, or the source's error; err filled. */
int storage__read_block(const struct storage__src *src, const char *id, int64_t dict_id,
                        const void *z, size_t len, struct spaa_profile **out,
                        struct spaa_err *err);

/* ---- scanning the stack weights of blocks (scan.c) ------------------------------------ */
struct storage__scan {
  spaa_store_scan_cb cb;         /* the caller's callback and its argument */
  void *ctx;
  struct spaa_buf raw;           /* the current block (raw), filled by the engine */
  char **strs;                   /* its string table, NUL-terminated copies */
  size_t n_strs;
  struct storage__blk_weight *w; /* weights of one stack as stored */
  struct spaa_store_scan_weight *out; /* the same, named */
  size_t cap_w;
  struct spaa_meter *meter;      /* the raw block reports to it (NULL: none) */
  size_t metered;                /* the largest raw block so far, reported */
};
/* Before the engine decompresses block z into x->raw: report its raw size to x->meter when
 * it passes the largest so far. 0, or SPAA_E_NOMEM when the meter refuses. */
int storage__scan_room(struct storage__scan *x, const void *z, size_t len);
/* Every stack of the block in x->raw to x->cb, as profile num / id. 0, SPAA_E_STORE
 * (corrupt), SPAA_E_NOMEM (err not filled), or the callback's nonzero answer. */
int storage__scan_block(struct storage__scan *x, int64_t num, const char *id);
void storage__scan_free(struct storage__scan *x); /* frees the buffers; x stays reusable */

/* ---- selections (select.c) ------------------------------------------------------------- */
/* Check a selection's limits as spaa_store_list documents them. 0 or SPAA_E_BAD_REQUEST. */
int storage__check_query(const struct spaa_list_query *q, struct spaa_err *err);
/* The labels column (a canonical object of strings, text/len) as pi's key/value pairs; the
 * totals column (an object of numbers) as e's totals. 0 or SPAA_E_NOMEM. */
int storage__labels_of(const char *text, size_t len, struct spaa_store_profile_info *pi);
int storage__totals_of(const char *text, size_t len, struct spaa_store_event *e);

#endif
