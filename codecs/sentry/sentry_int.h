/* Internals shared by the Sentry profile decoder (sentry_profile.c), its SPAA builder
 * (sentry_spaa.c) and the payload reader they share (sentry_json.c): a decoded,
 * Relay-normalized profile, the payload's JSON as spans of its bytes; and the envelope
 * parser's fast-path threshold (sentry_envelope.c), for its tests. Not a public contract. */
#ifndef SPAA_SENTRY_INT_H
#define SPAA_SENTRY_INT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/err.h"
#include "base/idmap.h"
#include "sentry/sentry.h"

/* Envelope and item header lines of up to this many bytes are read with the pull scanner
 * (base/jscan.h), its scratch (this plus one byte) on the parser's stack; longer lines, and
 * any the scanner refuses, are read with jansson. Not a cap: SENTRY_MAX_HEADER_LINE is. */
#define SENTRY__FAST_LINE 4096

/* Relay's rejection reasons (outcome = "profiling_" + name). */
#define SENTRY__REASONS(XX)                                                                   \
  XX(INVALID_JSON, "invalid_json", BAD_JSON)                                                  \
  XX(PLATFORM_NOT_SUPPORTED, "platform_not_supported", UNSUPPORTED)                           \
  XX(INVALID_PROFILE_TYPE, "invalid_profile_type", INVALID)                                   \
  XX(INVALID_PROFILE_METADATA, "invalid_profile_metadata", INVALID)                           \
  XX(NO_TRANSACTION, "no_transaction_associated", INVALID)                                    \
  XX(INVALID_TRANSACTION_METADATA, "invalid_transaction_metadata", INVALID)                   \
  XX(NOT_ENOUGH_SAMPLES, "not_enough_samples", INVALID)                                       \
  XX(MALFORMED_SAMPLES, "malformed_samples", INVALID)                                         \
  XX(MALFORMED_STACKS, "malformed_stacks", INVALID)                                           \
  XX(DURATION_TOO_LONG, "duration_is_too_long", INVALID)                                      \
  XX(TOO_MANY_PROFILES, "too_many_profiles", INVALID)

enum sentry__reason {
  SENTRY__OK = 0,
#define SENTRY__R(id, name, code) SENTRY__R_##id,
  SENTRY__REASONS(SENTRY__R)
#undef SENTRY__R
};

/* ---- the payload's JSON, read in place (sentry_json.c) -----------------------------------
 * A profile payload is checked whole first, accepting exactly what jansson's json_loadb
 * accepts (so that "not valid JSON" and jansson's message come first, as before); then the
 * members the rules read are parsed by jansson one by one into a slim root object, and the
 * three arrays that make a profile large (profile.samples, .stacks, .frames) are walked in
 * place as spans of the payload's bytes: no tree of a multi-megabyte profile is built. */

/* One JSON value of a checked payload: its bytes, borrowed from the payload. */
struct sentry__span {
  const char *p; /* first byte of the value; NULL when the value is absent */
  size_t n;      /* its bytes */
};

/* What a value is, from its bytes (numbers as jansson types them). */
enum sentry__jkind {
  SENTRY__J_ABSENT = 0, /* p == NULL */
  SENTRY__J_NULL,
  SENTRY__J_FALSE,
  SENTRY__J_TRUE,
  SENTRY__J_INT,        /* a number without fraction or exponent (fits int64: checked) */
  SENTRY__J_REAL,       /* any other number (finite: checked) */
  SENTRY__J_STR,
  SENTRY__J_ARR,
  SENTRY__J_OBJ
};

/* A member of the profile object the decoder reads in place, with its element counts. */
struct sentry__arr {
  struct sentry__span v; /* the value (any kind: the rules check it), absent when missing */
  size_t n;              /* elements when v is an array (members when an object) */
  size_t n_inner;        /* the elements (or members) of its elements, in all */
};

/* A payload read: the slim root and the profile's large arrays. */
struct sentry__doc {
  json_t *root;             /* the root value; when an object, only the members the rules
                             * read, each parsed by jansson from its bytes, and "profile"
                             * (when an object) without samples, stacks and frames; owned */
  int has_profile_obj;      /* 1 when the root's (last) "profile" is an object */
  struct sentry__arr samples, stacks, frames; /* that object's members (absent otherwise) */
  int only_header_keys;     /* 1 when every root key is an envelope header key (event_id,
                             * dsn, sdk, sent_at, trace): `convert` sniffing a bare file */
};

/* Check buf as JSON and read it into d. 0; SPAA_E_BAD_JSON when it is not JSON, with *je
 * jansson's error for it (the payload parsed by jansson to get it); SPAA_E_NOMEM. d->root
 * may be an array (the caller refuses it). Free with sentry__doc_free, also after an error. */
int sentry__doc_load(const uint8_t *buf, size_t len, struct sentry__doc *d, json_error_t *je);
void sentry__doc_free(struct sentry__doc *d);

/* The kind of a value. */
enum sentry__jkind sentry__kind(struct sentry__span v);
/* An INT value (range-checked when the payload was): its value. */
int64_t sentry__int(struct sentry__span v);
/* A REAL or INT value as a double, read as jansson reads it (strtod). */
double sentry__real(struct sentry__span v);

/* Walking arrays and objects of a checked payload. */
struct sentry__iter {
  const char *p;   /* cursor */
  const char *end; /* one past the container's last byte */
  int first;       /* 1 before the first element */
};
/* Start on the array or object v (of that kind). */
void sentry__iter_init(struct sentry__iter *it, struct sentry__span v);
/* The next array element: 1 with *e set, 0 at the end. */
int sentry__iter_next(struct sentry__iter *it, struct sentry__span *e);
/* The next object member: 1 with *key (the key's bytes, quotes included) and *val set, 0 at
 * the end. */
int sentry__iter_member(struct sentry__iter *it, struct sentry__span *key, struct sentry__span *val);
/* Which of keys[0..n) the key span (as sentry__iter_member gives it) names, -1 for none. */
int sentry__key_index(struct sentry__span key, const char *const *keys, size_t n);
/* The members of object `obj` named keys[0..n): out[k] the last occurrence of keys[k], as
 * jansson keeps it, or absent. */
void sentry__fields(struct sentry__span obj, const char *const *keys, size_t n,
                    struct sentry__span *out);

/* A scratch for decoded strings, reused from one string to the next. */
struct sentry__scratch {
  char *p;    /* owned */
  size_t cap; /* bytes at p */
};
/* The text of STR value v: *s, *n (not NUL-terminated; borrowed from the payload, or from
 * sc when v holds escapes: valid until sc's next use). 0 or SPAA_E_NOMEM. */
int sentry__str(struct sentry__span v, struct sentry__scratch *sc, const char **s, size_t *n);
void sentry__scratch_free(struct sentry__scratch *sc);

/* Copies of short strings that never move (thread ids, queue addresses), freed together. */
struct sentry__strs {
  struct sentry__strblk *head; /* blocks, newest first */
};
/* A NUL-terminated copy of [s, s+n), or NULL when out of memory. */
const char *sentry__strs_put(struct sentry__strs *st, const char *s, size_t n);
void sentry__strs_free(struct sentry__strs *st);

struct sentry__sample {
  uint64_t stack;      /* index into the stacks (range-checked by normalization) */
  size_t thread;       /* index into sentry__profile.threads */
  uint64_t elapsed;    /* V1: ns after the profile timestamp */
  int64_t t_ns;        /* absolute unix ns (V2 from the start; V1 after normalization) */
  const char *queue;   /* V1 cocoa queue_address (in sentry__profile.strs) or NULL */
  size_t index;        /* position in the payload's samples array */
};

struct sentry__thread {
  uint64_t id_u64;     /* V1 thread id */
  const char *id_str;  /* V2 thread id (in sentry__profile.strs), NULL for V1 */
  int64_t tid;         /* the SPAA tid */
  int tid_exact;       /* 1 when tid is the id itself (decimal, fits int64) */
  size_t n;            /* samples kept */
  size_t n_busy;       /* non-idle samples (scratch) */
  size_t first, last;  /* first and last busy sample index (scratch) */
  const json_t *meta;  /* thread_metadata entry or NULL */
};

struct sentry__profile {
  int version;                    /* 1 or 2 */
  json_t *root;                   /* the payload's slim root (sentry__doc); owned */
  struct sentry__arr samples_v;   /* profile.samples, .stacks, .frames as read (spans into
                                   * the payload, which must outlive the decoding) */
  struct sentry__arr stacks_v;
  struct sentry__arr frames_v;
  const char *platform;           /* payload "platform" */
  char id[33];                    /* event_id (V1) or chunk_id (V2) */
  char profiler_id[33];           /* V2 */
  int64_t anchor_ns;              /* V1 "timestamp" as unix ns */
  const json_t *txn;              /* V1 transaction object used */
  size_t n_frames;
  struct sentry__span *frame;     /* per frame: its object's bytes in the payload */
  uint64_t *addr;                 /* per frame: instruction_addr (PAC-stripped) */
  unsigned char *has_addr;        /* per frame: 1 when addr is set */
  size_t n_stacks;
  size_t *stack_off;              /* n_stacks + 1 offsets into stack_frames */
  uint64_t *stack_frames;         /* all stacks' frame indices, leaf first */
  struct sentry__sample *samples; /* kept samples, in SPAA order */
  size_t n_samples;
  struct sentry__thread *threads;
  size_t n_threads;
  size_t cap_threads;
  struct spaa_idmap tid_map;      /* V1 thread id -> index */
  struct spaa_strmap tstr_map;    /* V2 thread id -> index (keys in strs) */
  struct spaa_strmap queue_map;   /* V1 queue address -> index in queue_names (keys in strs) */
  const char **queue_names;       /* the distinct queue addresses (in strs) */
  size_t n_queues, cap_queues;
  struct sentry__strs strs;       /* thread ids and queue addresses */
  struct sentry__scratch sc;      /* decoded strings */
  struct spaa_meter *meter;       /* the conversion's (sentry_item_ctx), or NULL */
  size_t metered;                 /* bytes of the tables above counted to it */
  int reason;                     /* enum sentry__reason when rejected */
  struct spaa_err err;            /* the rejection detail */
};

/* Decode and normalize the payload read into d (its root taken by p, also on failure; its
 * arrays are spans of the payload, which must outlive p) as kind PROFILE or CHUNK.
 * Returns 0 (accepted), a positive enum sentry__reason (p->err has the detail), or a
 * negative SPAA_E_* (NOMEM). Free with sentry__profile_free. */
int sentry__profile_decode(struct sentry__doc *d, enum sentry_item_kind kind,
                           const struct sentry_item_ctx *ctx, struct sentry__profile *p);
void sentry__profile_free(struct sentry__profile *p);
/* The decoder's tables (samples, stacks, frames, threads, queues) are counted to p->meter as
 * the jansson tree they replace was: count * size zeroed bytes, or the table resized from
 * `was` bytes, each counted first; NULL when the meter refuses (as out of memory would) or
 * malloc fails, the old table then left as it was. */
void *sentry__calloc(struct sentry__profile *p, size_t count, size_t size);
void *sentry__realloc(struct sentry__profile *p, void *old, size_t was, size_t count, size_t size);
/* Free the frame and stack tables alone (n_frames and n_stacks stay) and give back what was
 * counted for them, once the model's frames and stacks are made: the model's sample records,
 * the conversion's largest table, are made after. */
void sentry__profile_drop_stacks(struct sentry__profile *p);
/* Free the tables the builder has read (samples, stacks, frames, threads) and give back
 * every byte counted for p's tables. */
void sentry__profile_drop_tables(struct sentry__profile *p);

/* Reject p for `reason` with a detail (printf-style): the reason, returned. */
int sentry__rej(struct sentry__profile *p, int reason, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The large arrays read in place (sentry_arrays.c), in Relay's order: profile.frames
 * (checked) and profile.stacks into p's flat tables; the V1 or V2 samples into p->samples,
 * threads made as they appear. 0, a rejection, or SPAA_E_NOMEM. */
int sentry__load_frames_stacks(struct sentry__profile *p);
int sentry__v1_samples(struct sentry__profile *p);
int sentry__v2_samples(struct sentry__profile *p);

/* Reason name ("not_enough_samples") and SPAA_E_* code of a reason. */
const char *sentry__reason_name(int reason);
int sentry__reason_code(int reason);

/* Exactly `n` decimal digits (1 to 20) that fit in 64 bits: 0 with *out set, or -1. */
int sentry__parse_u64_str(const char *s, size_t n, uint64_t *out);
/* Float seconds to unix ns through the shortest decimal that reads back as `d`, so that
 * 1710805788.51 gives ...510000000 exactly. 0, or -1 out of range. */
int sentry__secs_to_ns(double d, int64_t *out);
/* An address: "0x..." hex string, decimal string or non-negative integer. 0 or -1. */
int sentry__parse_addr(const json_t *v, uint64_t *out);
/* The same for the text of a string. */
int sentry__parse_addr_str(const char *s, size_t n, uint64_t *out);

#endif
