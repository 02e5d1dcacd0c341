/* Sentry codecs: the envelope grammar, the auth header grammar and the profile decoders
 * (transaction profiles in Sample Format V1, continuous-profiling chunks in V2) -> SPAA.
 * Pure functions over buffers; docs/sentry-mapping.md maps every field. */
#ifndef SPAA_SENTRY_H
#define SPAA_SENTRY_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "spaa/convert.h"
#include "base/err.h"
#include "base/limits.h"

/* ---- identifiers and DSNs (sentry_envelope.c) --------------------------------------- */

/* Normalize a UUID given as 32 hex digits or as 8-4-4-4-12 with dashes (either case, also
 * in braces) into 32 lowercase hex digits plus NUL. Returns 0, or SPAA_E_INVALID when `s`
 * is not a UUID. The nil UUID is accepted here (callers decide). */
int sentry_uuid_normalize(const char *s, size_t len, char out[33]);

/* A DSN: scheme://PUBLIC_KEY[:SECRET]@HOST[:PORT]/[PATH/]PROJECT_ID. */
struct sentry_dsn {
  char scheme[8];       /* "https" or "http" */
  char public_key[64];  /* never empty when parsed */
  char secret[64];      /* "" when absent */
  char host[256];       /* host[:port] */
  char path[256];       /* path prefix without the project id, "" or "/a/b" */
  char project_id[24];  /* decimal digits */
};

/* Parse a DSN. 0, or SPAA_E_BAD_REQUEST with err saying which part is wrong. */
int sentry_dsn_parse(const char *s, size_t len, struct sentry_dsn *out, struct spaa_err *err);

/* ---- envelopes (sentry_envelope.c) -------------------------------------------------- */

enum sentry_item_kind {
  SENTRY_ITEM_OTHER = 0,   /* anything the profile path ignores (sessions, attachments...) */
  SENTRY_ITEM_TRANSACTION, /* "transaction" */
  SENTRY_ITEM_PROFILE,     /* "profile": Sample Format V1 (or legacy formats) */
  SENTRY_ITEM_CHUNK        /* "profile_chunk" or its alias "profile_chunk_ui": V2 */
};

/* One item. Slices point into the caller's input buffer (zero copy): the envelope must not
 * outlive that buffer. */
struct sentry_item {
  enum sentry_item_kind kind;
  char type[48];            /* the header's "type" (truncated when longer: then OTHER) */
  char platform[32];        /* header "platform" or "" */
  char content_type[64];    /* header "content_type" or "" */
  int has_length;           /* 1 when the header carried "length" */
  uint64_t length;          /* header "length" */
  const uint8_t *payload;   /* payload bytes (borrowed), NULL when empty */
  size_t payload_len;
  size_t offset;            /* byte offset of the item header line in the envelope */
  size_t payload_offset;    /* byte offset of the payload */
};

struct sentry_envelope {
  const uint8_t *header_line; /* the envelope header line (borrowed, like payloads), a JSON
                               * object; sentry_envelope_header parses it */
  size_t header_len;        /* its bytes, without the \n */
  char event_id[33];        /* normalized 32 lowercase hex, "" when absent */
  int has_dsn;              /* 1 when the header carried a "dsn" */
  struct sentry_dsn dsn;    /* parsed "dsn" when has_dsn */
  struct sentry_item *items;/* n_items entries; owned */
  size_t n_items;
  size_t cap_items;
};

/* Parse a whole envelope: header line, then items. Grammar: an item header line (a JSON
 * object with "type"); with "length" the payload is exactly that many bytes followed by \n
 * or the end; without it the payload runs to the next \n or the end. \r is payload. Blank
 * lines between items and at the end are skipped. Unknown item types are kept as OTHER.
 * Returns 0 with *env filled (free with sentry_envelope_free, also after an error), or
 * SPAA_E_BAD_ENVELOPE (err names the item index and byte offset; err->offset is set),
 * SPAA_E_TOO_LARGE (more than SENTRY_MAX_ITEMS items or an over-long header line), or
 * SPAA_E_NOMEM. */
int sentry_envelope_parse(const uint8_t *buf, size_t len, struct sentry_envelope *env,
                          struct spaa_err *err);
/* NULL-safe; releases what the envelope owns and zeroes it. */
void sentry_envelope_free(struct sentry_envelope *env);
/* The envelope header (sdk, sent_at, trace...) as a new JSON object, parsed from
 * env->header_line on each call: the parse above reads only event_id and dsn. The caller
 * owns the result (json_decref). NULL when the envelope has no header line (not parsed, or
 * parsing failed on it) or when out of memory. */
json_t *sentry_envelope_header(const struct sentry_envelope *env);
/* Index of the first item of `kind`, or -1. */
long sentry_envelope_find(const struct sentry_envelope *env, enum sentry_item_kind kind);

/* ---- auth (sentry_auth.c) ----------------------------------------------------------- */

struct sentry_auth {
  char key[64];     /* sentry_key */
  char secret[64];  /* sentry_secret, "" when absent */
  char client[128]; /* sentry_client, "" when absent */
  int version;      /* sentry_version, 0 when absent */
};

/* Parse an X-Sentry-Auth or Authorization header value: "Sentry k=v, k=v" (scheme
 * case-insensitive, items split on ',' and '=', blanks trimmed, unknown keys ignored).
 * sentry_version is read as Relay does: the digits before the first '.' ("7.0" is 7), at
 * most 65535 (Relay's u16); anything else there is malformed.
 * Returns 1 when sentry_key was found (out filled), 0 when the value is not Sentry
 * credentials (another scheme, or no sentry_key), SPAA_E_BAD_REQUEST for a malformed
 * sentry_version or an over-long value (err says which). */
int sentry_auth_parse_header(const char *value, size_t len, struct sentry_auth *out,
                             struct spaa_err *err);
/* Same for a query string ("a=b&sentry_key=...&sentry_version=7"), percent-decoded ('+' is
 * a space). Returns 1, 0 or SPAA_E_BAD_REQUEST as above. */
int sentry_auth_parse_query(const char *qs, size_t len, struct sentry_auth *out,
                            struct spaa_err *err);

/* A project id as Relay reads it from a request path or a DSN: an unsigned 64-bit decimal
 * integer, so leading zeros do not matter ("0042" is project 42). Writes its canonical
 * decimal form ("42"; "0" for zeros only) into out. 0, or SPAA_E_INVALID when [s, s+len) is
 * empty, holds anything but the digits 0-9, or is over 18446744073709551615. */
int sentry_project_id_normalize(const char *s, size_t len, char out[SENTRY_MAX_PROJECT + 1]);

/* ---- profiles (sentry_profile.c, sentry_spaa.c) ------------------------------------- */

/* What the envelope around a profile item tells its decoder. */
struct sentry_item_ctx {
  int in_envelope;            /* 1: the payload came in an envelope (V1 then needs txn) */
  int has_transaction;        /* 1: that envelope holds a transaction item */
  const json_t *transaction;  /* its parsed payload (object), NULL when not JSON or absent */
  const char *item_platform;  /* the item header's "platform", NULL or "" when absent */
  const json_t *env_header;   /* envelope header (for "sdk"), or NULL */
  struct spaa_meter *meter;   /* what the model may hold (spaa.h), or NULL */
  int compact_samples;        /* 1: samples as compact ones (spaa_convert_opts) */
  int input_spent;            /* 1: the payload is not read after the conversion returns,
                               * so the pages of it that were read are given back
                               * (spaa_mem_discard) before the model's records are made */
};

/* Decode one profile payload (`kind` PROFILE or CHUNK) into `out` (an entry the caller
 * added with spaa_conv_add). On acceptance out->profile is a normalized SPAA profile,
 * out->id the profile id (event_id for V1, chunk_id for V2, 32 hex), out->attrs metadata
 * (release, environment, platform, transaction, trace_id...). On rejection out->profile is
 * NULL, out->reason holds Relay's reason without its "profiling_" prefix
 * ("not_enough_samples") and out->err the detail. Returns 0 in both cases; a negative code
 * (SPAA_E_NOMEM, SPAA_E_INTERNAL) only when conversion itself failed (out->err filled). */
int sentry_profile_convert(const uint8_t *payload, size_t len, enum sentry_item_kind kind,
                           const struct sentry_item_ctx *ctx, struct spaa_converted *out);

/* Convert every profile and chunk item of a parsed envelope, in order, appending one entry
 * per item to out (other items are skipped; the first transaction item supplies the V1
 * transaction context); o->service (copied) as each entry's service, the item payload as
 * its original with o->keep_original. As Relay, the first profile item that converts is the
 * envelope's profile: any later profile item is rejected on its own ("too_many_profiles",
 * not parsed); profile_chunk items each stand alone. Returns 0, SPAA_E_TOO_LARGE when a
 * profile or chunk item passes SENTRY_MAX_PROFILE_BYTES (nothing is appended then), or
 * SPAA_E_NOMEM. */
int sentry_envelope_convert(const struct sentry_envelope *env, const struct spaa_convert_opts *o,
                            struct spaa_conv_list *out, struct spaa_err *err);

/* Relay's profile rejection reasons (without "profiling_"), for counting outcomes: index i
 * in [0, SENTRY_N_REASONS) gives its name ("invalid_json", "not_enough_samples"...), any
 * other index NULL. Static strings. */
#define SENTRY_N_REASONS 11
const char *sentry_reason_at(size_t i);

/* The converter for `spaa-relay convert --from sentry`: an envelope, or a bare profile or
 * chunk JSON object (detected: an object with "version":"2" or a "chunk_id" is a chunk,
 * anything else a profile; bare V1 profiles need no transaction item). With o->sentry_env
 * (the envelope the caller already parsed from buf, as the HTTP endpoint does) that
 * envelope is converted with sentry_envelope_convert and buf is not read. With
 * o->keep_original each accepted entry's original is its item payload. Returns 0 (profiles
 * may still be rejected one by one), SPAA_E_BAD_ENVELOPE / SPAA_E_BAD_JSON when the input
 * is neither, SPAA_E_TOO_LARGE, SPAA_E_NOMEM. */
int spaa_convert_sentry(const uint8_t *buf, size_t len, const struct spaa_convert_opts *o,
                        struct spaa_conv_list *out, struct spaa_err *err);

#endif
