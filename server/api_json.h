/* The REST query API's JSON: a stored profile's metadata and a list page shaped as the HTTP
 * answers give them, and the text form of list cursors. storage/ answers in structs
 * (storage/storage.h); this is where they become JSON. */
#ifndef SPAA_SERVER_API_JSON_H
#define SPAA_SERVER_API_JSON_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/err.h"
#include "base/limits.h"
#include "storage/storage.h"


/* The metadata object of one profile, members in this order:
 * {"id","service","source","received_at","start","end","events":[{"name","totals":{metric:N}}],
 *  "samples","payload_bytes","labels":{k:v},"attrs":...}. received_at is RFC 3339 in UTC with
 * nanoseconds ("2023-11-14T22:13:20.123456789Z"); start and end are unix ns, null when 0
 * (unknown); labels is {} without labels; attrs is the stored JSON value, {} when none.
 * Returns a new reference, or NULL when out of memory. */
json_t *spaa_api_profile_json(const struct spaa_store_profile_info *pi);

/* The list answer {"profiles":[metadata...],"next_cursor":"<cursor text>"|null} into *out (a
 * new reference). 0, SPAA_E_NOMEM, or SPAA_E_INTERNAL when the next cursor does not fit in a
 * cursor's text. err is filled on failure. */
int spaa_api_page_json(const struct spaa_store_page *pg, json_t **out, struct spaa_err *err);

/* A cursor's text: the lowercase hex of "<received_ns>:<id>", into out (cap bytes, at least
 * SPAA_QUERY_MAX_CURSOR + 1). 0, or SPAA_E_INTERNAL when it would be longer than
 * SPAA_QUERY_MAX_CURSOR characters. */
int spaa_api_cursor_encode(const struct spaa_store_cursor *c, char *out, size_t cap);

/* Read a cursor's text back: *received_ns, and the id into `id` (cap bytes, at least
 * SPAA_QUERY_MAX_CURSOR / 2 + 1), NUL-terminated. 0, or SPAA_E_BAD_REQUEST (odd length, not
 * lowercase hex, a NUL byte, no ':', no number or no id) with err filled. */
int spaa_api_cursor_decode(const char *text, int64_t *received_ns, char *id, size_t cap,
                           struct spaa_err *err);

#endif
