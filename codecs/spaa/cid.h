/* Content ids: XXH3-128 over the canonical identity of a dso, a frame and a stack, so the
 * same stack from two uploads, two days or two formats gets the same id.
 * docs/content-ids.md specifies the byte encoding; tests/codecs/cid_test.c pins vectors. */
#ifndef SPAA_CID_H
#define SPAA_CID_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "spaa/spaa.h"

#define SPAA_CID_LEN 16      /* bytes of a content id (XXH128 canonical, big-endian) */
#define SPAA_CID_HEXLEN 34   /* "0x" + 32 hex digits */

struct spaa_cid {
  uint8_t b[SPAA_CID_LEN];
};

/* The dso's identity key: "b:" + build_id when it has one, else "n:" + name. Written into
 * `out` (cap `cap`); returns the length (truncation is an error the caller sees as >= cap). */
size_t spaa_dso_key(const struct spaa_dso *d, char *out, size_t cap);

/* Canonical identity bytes of a dso / a frame (the frame's dso may be NULL), appended to
 * `b`. 0 or SPAA_E_NOMEM / SPAA_E_TOO_LARGE. */
int spaa_dso_identity(struct spaa_buf *b, const struct spaa_dso *d);
int spaa_frame_identity(struct spaa_buf *b, const struct spaa_frame *f, const struct spaa_dso *d);

/* Content ids of a dso and a frame (the frame's dso may be NULL). 0 or SPAA_E_NOMEM. */
int spaa_dso_cid(const struct spaa_dso *d, struct spaa_cid *out);
int spaa_frame_cid(const struct spaa_frame *f, const struct spaa_dso *d, struct spaa_cid *out);

/* Content id of a stack from its event, stack_type (NULL = "unified"), the content ids of
 * its frames given leaf first, and its context minus "event" (NULL or an empty object when
 * none). 0 or SPAA_E_NOMEM. */
int spaa_stack_cid(const char *event, const char *stack_type, const struct spaa_cid *leaf_first,
                   size_t n, const json_t *context, struct spaa_cid *out);

/* "0x" + 32 lowercase hex digits, NUL-terminated, into out[SPAA_CID_HEXLEN + 1]. */
void spaa_cid_hex(const struct spaa_cid *c, char *out);
/* Parse "0x" + 32 hex digits (either case); 0 or SPAA_E_INVALID. */
int spaa_cid_parse(const char *s, struct spaa_cid *out);

/* Recompute every stack id of `p` as a content id, rewriting the stack ids used by samples,
 * related_stacks and windows to match, and set header.id_mode to content_addressable.
 * Frames that name a missing frame id make it fail with SPAA_E_INVALID in `err`.
 * Optional out arrays (may be NULL) receive the frame content ids, indexed like p->frames. */
int spaa_assign_content_ids(struct spaa_profile *p, struct spaa_cid *frame_cids,
                            struct spaa_err *err);

#endif
