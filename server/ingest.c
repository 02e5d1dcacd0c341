/* What every ingest dialect shares: profile ids, and storing one converted profile with
 * its metadata (see ingest.h). */
#include "server/ingest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "base/hex.h"
#include "server/log.h"
#include "server/api.h"
#include "storage/storage.h"

void spaa_ingest_new_id(char *out)
{
  unsigned char r[16];
  size_t i, got = 0;
  while (got < sizeof(r)) {
    ssize_t n = getrandom(r + got, sizeof(r) - got, 0);
    if (n <= 0)
      break;
    got += (size_t)n;
  }
  if (got < sizeof(r)) { /* no entropy source: fall back to time and address bits */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    for (i = 0; i < sizeof(r); i++)
      r[i] = (unsigned char)((uint64_t)ts.tv_nsec >> (i % 4 * 8) ^ (uint64_t)ts.tv_sec >> i ^
                             (uintptr_t)&ts >> (i % 8));
  }
  spaa_hex_encode(out, r, sizeof(r));
}

static int64_t unit_ns(const char *unit)
{
  if (!unit || strcmp(unit, "nanoseconds") == 0)
    return 1;
  if (strcmp(unit, "microseconds") == 0)
    return 1000;
  if (strcmp(unit, "milliseconds") == 0)
    return 1000000;
  if (strcmp(unit, "seconds") == 0)
    return 1000000000;
  return 0;
}

/* Fill start/end from the profile header's time_range when the converter gave none. */
static void header_range(const struct spaa_profile *p, int64_t *start, int64_t *end)
{
  int64_t m = unit_ns(p->header.time_unit);
  if (*start || *end || !p->header.has_time_range || !m)
    return;
  *start = (int64_t)(spaa_num_as_double(p->header.start) * (double)m);
  *end = (int64_t)(spaa_num_as_double(p->header.end) * (double)m);
}

/* Merge the labels of the request into the converter's (request labels win). */
static json_t *merged_labels(json_t *conv, const json_t *req)
{
  json_t *all;
  if (!req)
    return json_incref(conv);
  if (!conv)
    return json_incref((json_t *)req);
  all = json_deep_copy(conv);
  if (all)
    json_object_update(all, (json_t *)req);
  return all;
}

/* Fill meta (and its merged labels, which the caller decrefs) for one converted profile. */
static void meta_build(const struct spaa_req *req, struct spaa_converted *c,
                       const struct spaa_ingest_info *info, char *id, struct spaa_meta *meta,
                       json_t **labels)
{
  memset(meta, 0, sizeof(*meta));
  if (c->id[0] && spaa_query_id_ok(c->id))
    snprintf(id, 64, "%s", c->id);
  else
    spaa_ingest_new_id(id);
  *labels = merged_labels(c->labels, info->labels);
  meta->id = id;
  meta->service = c->service ? c->service : info->service ? info->service : "unknown";
  meta->source = info->source;
  meta->received_ns = req->received_ns;
  meta->start_ns = c->start_ns;
  meta->end_ns = c->end_ns;
  header_range(c->profile, &meta->start_ns, &meta->end_ns);
  meta->payload_bytes = req->wire_len;
  meta->labels = *labels;
  meta->attrs = c->attrs;
  meta->original = info->original;
  meta->original_len = info->original_len;
}

static void log_outcome(const struct spaa_meta *m, const struct spaa_converted *c, int rc,
                        const struct spaa_err *err)
{
  if (rc < 0)
    spaa_log(SPAA_LOG_WARN, "store failed", "id=%s source=%s code=%s detail=\"%s\"", m->id,
             m->source, spaa_err_name(rc), err->msg);
  else
    spaa_log(SPAA_LOG_INFO, rc == 1 ? "profile already stored" : "profile stored",
             "id=%s source=%s service=%s stacks=%zu samples=%zu", m->id, m->source,
             m->service, c->profile->n_stacks, c->profile->n_samples);
}

int spaa_ingest_store(const struct spaa_req *req, struct spaa_converted *c,
                      const struct spaa_ingest_info *info, char *id, struct spaa_err *err)
{
  struct spaa_meta meta;
  json_t *labels;
  int rc;
  meta_build(req, c, info, id, &meta, &labels);
  rc = spaa_store_put(req->app->store, c->profile, &meta, err);
  log_outcome(&meta, c, rc, err);
  json_decref(labels);
  return rc;
}

int spaa_ingest_store_many(const struct spaa_req *req, struct spaa_converted *const *c,
                           const struct spaa_ingest_info *info, size_t n, char (*ids)[64],
                           int *rcs, struct spaa_err *errs)
{
  struct spaa_meta *meta = calloc(n ? n : 1, sizeof(*meta));
  const struct spaa_profile **p = calloc(n ? n : 1, sizeof(*p));
  json_t **labels = calloc(n ? n : 1, sizeof(*labels));
  size_t i;
  int rc;
  if (!meta || !p || !labels) {
    for (i = 0; i < n; i++)
      rcs[i] = spaa_err_set(&errs[i], SPAA_E_NOMEM, 0, 0, NULL);
    rc = SPAA_E_NOMEM;
    goto out;
  }
  for (i = 0; i < n; i++) {
    meta_build(req, c[i], &info[i], ids[i], &meta[i], &labels[i]);
    p[i] = c[i]->profile;
  }
  rc = spaa_store_put_many(req->app->store, n, p, meta, rcs, errs);
  for (i = 0; i < n; i++)
    log_outcome(&meta[i], c[i], rcs[i], &errs[i]);
out:
  for (i = 0; labels && i < n; i++)
    json_decref(labels[i]);
  free(meta);
  free(p);
  free(labels);
  return rc;
}
