/* Internals shared by the Sentry profile decoder (sentry_profile.c) and its SPAA builder
 * (sentry_spaa.c): a decoded, Relay-normalized profile; and the envelope parser's fast-path
 * threshold (sentry_envelope.c), for its tests. Not a public contract. */
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

struct sentry__sample {
  uint64_t stack;      /* index into the stacks (range-checked by normalization) */
  size_t thread;       /* index into sentry__profile.threads */
  uint64_t elapsed;    /* V1: ns after the profile timestamp */
  int64_t t_ns;        /* absolute unix ns (V2 from the start; V1 after normalization) */
  const char *queue;   /* V1 cocoa queue_address (borrowed from the JSON) or NULL */
  size_t index;        /* position in the payload's samples array */
};

struct sentry__thread {
  uint64_t id_u64;     /* V1 thread id */
  const char *id_str;  /* V2 thread id (borrowed from the JSON), NULL for V1 */
  int64_t tid;         /* the SPAA tid */
  int tid_exact;       /* 1 when tid is the id itself (decimal, fits int64) */
  size_t n;            /* samples kept */
  size_t n_busy;       /* non-idle samples (scratch) */
  size_t first, last;  /* first and last busy sample index (scratch) */
  const json_t *meta;  /* thread_metadata entry or NULL */
};

struct sentry__profile {
  int version;                    /* 1 or 2 */
  json_t *root;                   /* the payload; owned */
  const char *platform;           /* payload "platform" */
  char id[33];                    /* event_id (V1) or chunk_id (V2) */
  char profiler_id[33];           /* V2 */
  int64_t anchor_ns;              /* V1 "timestamp" as unix ns */
  const json_t *txn;              /* V1 transaction object used */
  size_t n_frames;
  const json_t *frames;           /* the frames array */
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
  struct spaa_strmap tstr_map;    /* V2 thread id -> index */
  int reason;                     /* enum sentry__reason when rejected */
  struct spaa_err err;            /* the rejection detail */
};

/* Decode and normalize `root` (owned from now on, also on failure) as kind PROFILE or CHUNK.
 * Returns 0 (accepted), a positive enum sentry__reason (p->err has the detail), or a
 * negative SPAA_E_* (NOMEM). Free with sentry__profile_free. */
int sentry__profile_decode(json_t *root, enum sentry_item_kind kind,
                           const struct sentry_item_ctx *ctx, struct sentry__profile *p);
void sentry__profile_free(struct sentry__profile *p);

/* Reason name ("not_enough_samples") and SPAA_E_* code of a reason. */
const char *sentry__reason_name(int reason);
int sentry__reason_code(int reason);

/* Float seconds to unix ns through the shortest decimal that reads back as `d`, so that
 * 1710805788.51 gives ...510000000 exactly. 0, or -1 out of range. */
int sentry__secs_to_ns(double d, int64_t *out);
/* An address: "0x..." hex string, decimal string or non-negative integer. 0 or -1. */
int sentry__parse_addr(const json_t *v, uint64_t *out);

#endif
