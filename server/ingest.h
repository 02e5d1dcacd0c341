/* Shared by the ingest dialects (Sentry, OTLP, pprof, SPAA): profile ids and storing one
 * converted profile with the request's metadata. */
#ifndef SPAA_SERVER_INGEST_H
#define SPAA_SERVER_INGEST_H

#include <jansson.h>

#include "spaa/convert.h"
#include "server/http.h"

/* Write a new random profile id (32 lowercase hex digits) into out (size >= 33). */
void spaa_ingest_new_id(char *out);

/* What the dialect knows of the upload besides the converted profile. */
struct spaa_ingest_info {
  const char *source;       /* "sentry" | "otlp" | "pprof" | "spaa" */
  const char *service;      /* service when the converter gave none, or NULL ("unknown") */
  const json_t *labels;     /* labels from the request (win over the converter's), or NULL */
  const void *original;     /* original payload to keep (zstd in the store), or NULL */
  size_t original_len;
};

/* Store one converted profile (c->profile != NULL) under c->id when it is a valid id, else
 * a new random id, written to id[64]. Logs the outcome. Returns 0 stored, 1 already stored
 * (nothing written), or a negative SPAA_E_* with err filled (SPAA_E_BUSY: answer 503). */
int spaa_ingest_store(const struct spaa_req *req, struct spaa_converted *c,
                      const struct spaa_ingest_info *info, char *id, struct spaa_err *err);

/* Store n converted profiles together (one group commit when the writer is free): c[i] with
 * info[i], ids into ids[i]. Outcomes per profile in rcs[i] / errs[i] as spaa_ingest_store
 * gives them (spaa_store_put_many: a piece the store queue has no room for gets SPAA_E_BUSY).
 * Returns 0, or the first error that kept a piece out. */
int spaa_ingest_store_many(const struct spaa_req *req, struct spaa_converted *const *c,
                           const struct spaa_ingest_info *info, size_t n, char (*ids)[64],
                           int *rcs, struct spaa_err *errs);

#endif
