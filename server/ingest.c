/* The ingest flow (see ingest.h): parse by the dialect, convert by the registry's converter,
 * store every profile together, answer by the dialect; every outcome counted. */
#include "server/ingest.h"

#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include <xxhash.h>

#include "codecs/registry.h"
#include "base/hex.h"
#include "base/utf8.h"
#include "server/log.h"
#include "server/api.h"
#include "server/budget.h"
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

/* Merge the request's labels or attrs into the converter's (the request's win). */
static json_t *merged(json_t *conv, const json_t *req)
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

/* Fill meta (with merged labels and attrs, which the caller decrefs) for entry c. */
static void meta_build(const struct spaa_ingest *x, const struct spaa_converted *c, char *id,
                       struct spaa_meta *meta, json_t **labels, json_t **attrs)
{
  memset(meta, 0, sizeof(*meta));
  if (c->id[0] && spaa_query_id_ok(c->id))
    snprintf(id, 64, "%s", c->id);
  else
    spaa_ingest_new_id(id);
  *labels = merged(c->labels, x->labels);
  *attrs = merged(c->attrs, x->attrs);
  meta->id = id;
  meta->service = c->service ? c->service : x->opts.service ? x->opts.service : "unknown";
  meta->source = x->source;
  meta->received_ns = x->req->received_ns;
  meta->start_ns = c->start_ns;
  meta->end_ns = c->end_ns;
  if (!meta->start_ns && !meta->end_ns) /* the converter gave none: the header's, if any */
    spaa_header_range_ns(c->profile, &meta->start_ns, &meta->end_ns);
  meta->payload_bytes = x->req->wire_len;
  meta->labels = *labels;
  meta->attrs = *attrs;
  meta->original = c->original;
  meta->original_len = c->original_len;
}

/* The samples a profile holds, as the list answer counts them: its sample records, or
 * without any the sum of its stacks' "samples" weights (pprof, OTLP aggregate counts). */
static int64_t sample_count(const struct spaa_profile *p)
{
  int64_t n = 0;
  size_t i, k;
  if (spaa_profile_n_samples(p))
    return (int64_t)spaa_profile_n_samples(p);
  for (i = 0; i < p->n_stacks; i++)
    for (k = 0; k < p->stacks[i].weights.n; k++) {
      const struct spaa_weight *w = &p->stacks[i].weights.v[k];
      if (strcmp(w->metric, "samples") == 0)
        n += w->value.is_float ? (int64_t)w->value.f : w->value.i;
    }
  return n;
}

static void log_outcome(const struct spaa_meta *m, size_t stacks, int64_t samples, int rc,
                        const struct spaa_err *err)
{
  /* the service and the error text may come from the client (an id is [A-Za-z0-9_-]) */
  char svc[600], detail[600];
  /* back-pressure (a full queue, a database away) is not logged one by one: the store
   * summarizes an outage (PostgreSQL's "still unavailable" lines), the metrics count them */
  if (rc < 0)
    spaa_log(rc == SPAA_E_BUSY || rc == SPAA_E_UNAVAILABLE || rc == SPAA_E_SHUTDOWN
                 ? SPAA_LOG_DEBUG : SPAA_LOG_WARN,
             "store failed", "id=%s source=%s code=%s detail=\"%s\"", m->id,
             m->source, spaa_err_name(rc), spaa_log_q(detail, sizeof(detail), err->msg));
  else
    spaa_log(SPAA_LOG_INFO, rc == 1 ? "profile already stored" : "profile stored",
             "id=%s source=%s service=\"%s\" stacks=%zu samples=%lld", m->id, m->source,
             spaa_log_q(svc, sizeof(svc), m->service), stacks, (long long)samples);
}

/* The profiles of one upload on their way to the store, in spaa_store_put_many's arrays. */
struct batch {
  size_t n;                        /* profiles in the batch */
  struct spaa_meta *meta;          /* n */
  const struct spaa_profile **p;   /* n */
  int *rcs;                        /* n: outcomes */
  struct spaa_err *errs;           /* n */
  size_t *pos;                     /* n: index in the converted list */
  json_t **labels, **attrs;        /* n: merged (owned) */
  size_t *stacks;                  /* n: stack records, for the log (counted before the put: */
  int64_t *samples;                /* n: samples      the store may take the records) */
};

static void batch_free(struct batch *b)
{
  size_t i;
  for (i = 0; i < b->n; i++) {
    json_decref(b->labels ? b->labels[i] : NULL);
    json_decref(b->attrs ? b->attrs[i] : NULL);
  }
  free(b->meta);
  free(b->p);
  free(b->rcs);
  free(b->errs);
  free(b->pos);
  free(b->labels);
  free(b->attrs);
  free(b->stacks);
  free(b->samples);
}

static int batch_alloc(struct batch *b, size_t cap)
{
  memset(b, 0, sizeof(*b));
  return (b->meta = calloc(cap, sizeof(*b->meta))) && (b->p = calloc(cap, sizeof(*b->p))) &&
                 (b->rcs = calloc(cap, sizeof(*b->rcs))) &&
                 (b->errs = calloc(cap, sizeof(*b->errs))) &&
                 (b->pos = calloc(cap, sizeof(*b->pos))) &&
                 (b->labels = calloc(cap, sizeof(*b->labels))) &&
                 (b->attrs = calloc(cap, sizeof(*b->attrs))) &&
                 (b->stacks = calloc(cap, sizeof(*b->stacks))) &&
                 (b->samples = calloc(cap, sizeof(*b->samples)))
             ? 0
             : SPAA_E_NOMEM;
}

/* 1 when the model of c, to be stored under id, may give its records to the store:
 * a large one, under an id no profile holds yet. Once taken, the model cannot be stored again
 * under a derived id (stored_elsewhere); an id held already keeps its model whole. */
static int takes_records(struct spaa_ingest *x, const struct spaa_converted *c, const char *id)
{
  struct spaa_store_profile_info pi;
  struct spaa_err e;
  int rc;
  if (spaa_profile_bytes(c->profile) < SPAA_INGEST_TAKE_BYTES)
    return 0;
  spaa_err_clear(&e);
  rc = spaa_store_meta(x->req->app->store, id, &pi, &e);
  spaa_store_profile_info_free(&pi);
  return rc == SPAA_E_NOT_FOUND;
}

/* Count the rejected entries of [from, upto), and put the converted ones into b. */
static void batch_fill(struct spaa_ingest *x, struct batch *b, size_t from, size_t upto,
                       struct spaa_metrics *m)
{
  size_t i;
  for (i = from; i < upto; i++) {
    struct spaa_converted *c = &x->list.v[i];
    if (!c->profile) {
      x->rcs[i] = SPAA_INGEST_REJECTED;
      x->rejected++;
      spaa_metrics_add(m, SPAA_METRIC_PROFILES_REJECTED, x->source,
                       c->reason[0] ? c->reason : "invalid", 1);
      continue;
    }
    meta_build(x, c, x->ids[i], &b->meta[b->n], &b->labels[b->n], &b->attrs[b->n]);
    b->meta[b->n].take_records = takes_records(x, c, x->ids[i]);
    b->p[b->n] = c->profile;
    b->stacks[b->n] = c->profile->n_stacks;
    b->samples[b->n] = sample_count(c->profile);
    b->pos[b->n++] = i;
  }
}

/* Room in x->ids and x->rcs for n entries (zeroed). 0 or SPAA_E_NOMEM. */
static int outcomes_room(struct spaa_ingest *x, size_t n)
{
  char(*ids)[64];
  int *rcs;
  size_t cap = x->cap_out ? x->cap_out : 8;
  if (n <= x->cap_out)
    return 0;
  while (cap < n)
    cap *= 2;
  if (!(ids = realloc(x->ids, cap * sizeof(*ids))))
    return SPAA_E_NOMEM;
  x->ids = ids;
  if (!(rcs = realloc(x->rcs, cap * sizeof(*rcs))))
    return SPAA_E_NOMEM;
  x->rcs = rcs;
  memset(x->ids + x->cap_out, 0, (cap - x->cap_out) * sizeof(*ids));
  memset(x->rcs + x->cap_out, 0, (cap - x->cap_out) * sizeof(*rcs));
  x->cap_out = cap;
  return 0;
}

/* The id of a profile that came as `id` to service/source when another service or source
 * holds that id: 32 hex digits hashed from the three, the same each time it comes again, so
 * that a resend is still found already stored. */
static void derived_id(char *id, const char *service, const char *source)
{
  XXH3_state_t *st = XXH3_createState();
  XXH128_hash_t h = {0, 0};
  if (st && XXH3_128bits_reset(st) == XXH_OK) {
    XXH3_128bits_update(st, id, strlen(id) + 1);
    XXH3_128bits_update(st, service, strlen(service) + 1);
    XXH3_128bits_update(st, source, strlen(source) + 1);
    h = XXH3_128bits_digest(st);
  }
  XXH3_freeState(st);
  if (!h.high64 && !h.low64)
    spaa_ingest_new_id(id); /* out of memory: a fresh random one */
  else
    snprintf(id, 64, "%016llx%016llx", (unsigned long long)h.high64,
             (unsigned long long)h.low64);
}

/* Entry j of b was answered "already stored" (1): its id is taken. When the profile under
 * that id came from another service or source, this one is another profile (an envelope sent
 * to two projects, ids that collide across senders), not a copy: it is stored under an id
 * derived from the three (derived_id), the one it came with kept as attr source_profile_id.
 * Returns the outcome. */
static int stored_elsewhere(struct spaa_ingest *x, struct batch *b, size_t j)
{
  struct spaa_store *store = x->req->app->store;
  struct spaa_store_profile_info pi;
  char *id = x->ids[b->pos[j]];
  struct spaa_err e;
  json_t *a;
  int same, rc = 1;
  spaa_err_clear(&e);
  if (spaa_store_meta(store, id, &pi, &e)) {
    spaa_store_profile_info_free(&pi); /* a failure may leave part of it filled */
    return 1; /* deleted since, or not readable: it stays a duplicate */
  }
  same = pi.service && pi.source && strcmp(pi.service, b->meta[j].service) == 0 &&
         strcmp(pi.source, b->meta[j].source) == 0;
  spaa_store_profile_info_free(&pi);
  if (same)
    return 1;
  if (b->meta[j].take_records) /* stored by another sender since takes_records looked */
    return spaa_err_set(&b->errs[j], SPAA_E_BUSY, 0, 0, "another profile was stored under id "
                        "%s while this one was being stored: send it again", id);
  a = b->attrs[j] ? json_deep_copy(b->attrs[j]) : json_object(); /* it may be shared */
  if (!a || json_object_set_new(a, "source_profile_id", json_string(id))) {
    json_decref(a);
    return spaa_err_set(&b->errs[j], SPAA_E_NOMEM, 0, 0, NULL);
  }
  json_decref(b->attrs[j]);
  b->attrs[j] = a;
  b->meta[j].attrs = a;
  derived_id(id, b->meta[j].service, b->meta[j].source);
  spaa_store_put_many(store, 1, &b->p[j], &b->meta[j], &rc, &b->errs[j]);
  return rc;
}

/* Store entries [x->flushed, upto) of the list in one spaa_store_put_many; with `release`
 * the models stored are freed (taken) after. Returns 0 or the first failing entry's code
 * (x->failed_at) with err filled. */
static int flush(struct spaa_ingest *x, size_t upto, int release, struct spaa_err *err)
{
  struct spaa_metrics *m = spaa_ingest_metrics(x->req);
  size_t from = x->flushed, stored = 0, dups = 0, j;
  struct batch b;
  int rc = 0;
  if (upto <= from)
    return 0;
  if (outcomes_room(x, upto) || batch_alloc(&b, upto - from)) {
    if (x->cap_out >= upto)
      batch_free(&b);
    x->failed_at = from;
    return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
  }
  for (; x->entered < upto; x->entered++)
    if (x->dialect && x->dialect->entry)
      x->dialect->entry(x, x->entered);
  batch_fill(x, &b, from, upto, m);
  if (b.n)
    spaa_store_put_many(x->req->app->store, b.n, b.p, b.meta, b.rcs, b.errs);
  for (j = 0; j < b.n; j++)
    if (b.rcs[j] == 1)
      b.rcs[j] = stored_elsewhere(x, &b, j);
  for (j = 0; j < b.n; j++) {
    size_t i = b.pos[j];
    x->rcs[i] = b.rcs[j];
    log_outcome(&b.meta[j], b.stacks[j], b.samples[j], b.rcs[j], &b.errs[j]);
    if (b.rcs[j] == 0)
      stored++;
    else if (b.rcs[j] == 1)
      dups++;
    else if (!rc) {
      rc = b.rcs[j];
      x->failed_at = i;
      *err = b.errs[j];
    }
  }
  x->stored += stored;
  x->dups += dups;
  spaa_metrics_add(m, SPAA_METRIC_PROFILES_STORED, x->source, NULL, (int64_t)stored);
  spaa_metrics_add(m, SPAA_METRIC_PROFILES_DUPLICATE, x->source, NULL, (int64_t)dups);
  batch_free(&b);
  for (j = from; release && j < upto; j++)
    if (x->list.v[j].profile) {
      spaa_profile_free(x->list.v[j].profile);
      x->list.v[j].profile = NULL;
      x->list.v[j].taken = 1;
    }
  x->flushed = upto;
  x->pending = 0;
  return rc;
}

int spaa_ingest_store_all(struct spaa_ingest *x, struct spaa_err *err)
{
  return flush(x, x->list.n, 0, err);
}

/* spaa_convert_opts.each of a streaming dialect: once the models converted and not yet
 * stored pass SPAA_INGEST_BATCH_BYTES, store them and let them go. */
static int each_entry(void *ctx, struct spaa_conv_list *l, size_t k, struct spaa_err *err)
{
  struct spaa_ingest *x = ctx;
  int rc;
  x->pending += spaa_profile_bytes(l->v[k].profile);
  if (x->pending < SPAA_INGEST_BATCH_BYTES)
    return 0;
  if ((rc = flush(x, k + 1, 1, err)))
    x->store_failed = 1;
  return rc;
}

/* ---- the handler ------------------------------------------------------------------------ */

struct spaa_metrics *spaa_ingest_metrics(const struct spaa_req *req)
{
  return req && req->app ? req->app->metrics : NULL;
}

void spaa_ingest_init(struct spaa_ingest *x, const struct spaa_req *req, struct spaa_resp *resp,
                      const char *source)
{
  memset(x, 0, sizeof(*x));
  x->req = req;
  x->resp = resp;
  x->source = x->format = source;
  x->body = req->body ? req->body : (const uint8_t *)"";
  x->body_len = req->body_len;
  x->opts.keep_original = req->app && req->app->cfg &&
                          req->app->cfg->keep_original == SPAA_KEEP_ALWAYS;
  x->opts.meter = req->meter;
  x->opts.input_spent = !x->opts.keep_original; /* the body is read once, part by part */
  x->opts.input_refetch = req->body_file;
  x->opts.compact_samples = 1; /* the store reads them with spaa_profile_sample */
  x->failed_at = SIZE_MAX;
}

void spaa_ingest_release(struct spaa_ingest *x)
{
  json_decref(x->labels);
  json_decref(x->attrs);
  spaa_conv_list_free(&x->list);
  free(x->ids);
  free(x->rcs);
  x->labels = x->attrs = NULL;
  x->ids = NULL;
  x->rcs = NULL;
  x->cap_out = x->flushed = x->entered = x->pending = 0;
  x->failed_at = SIZE_MAX;
  x->store_failed = 0;
}

static const char *route_label(const struct spaa_req *req)
{
  return req->route && req->route->pattern ? req->route->pattern : "-";
}

/* X-Spaa-Profile-Ids: the ids of the entries stored (or already stored), comma-separated, in
 * the upload's order, on every answer of the flow that stored one. The list holds as many whole
 * ids as fit in the answer's long header value, SPAA_HTTP_LONG_HEADER bytes (248 ids of 32
 * hex digits). X-Spaa-Profile-Count, on the same answers, is the number of such ids whether or
 * not all are listed: fewer ids in the list than the count means the list was cut (the first
 * ones are listed). */
static void ids_header(struct spaa_ingest *x)
{
  char v[sizeof(x->resp->long_value)];
  char count[24];
  size_t i, len = 0, total = 0;
  int full = 0;
  v[0] = 0;
  for (i = 0; x->ids && x->rcs && i < x->flushed; i++) {
    size_t n = strlen(x->ids[i]);
    if ((x->rcs[i] != 0 && x->rcs[i] != 1) || !n)
      continue;
    total++;
    if (full || len + n + 2 > sizeof(v)) {
      full = 1; /* the list stays a prefix: counted from here on, not listed */
      continue;
    }
    if (len)
      v[len++] = ',';
    memcpy(v + len, x->ids[i], n + 1);
    len += n;
  }
  if (len) /* none: no header (an empty value reads differently over HTTP/1.1 and h2) */
    spaa_resp_header(x->resp, "X-Spaa-Profile-Ids", v);
  snprintf(count, sizeof(count), "%zu", total);
  spaa_resp_header(x->resp, "X-Spaa-Profile-Count", count);
}

/* Count the answer: spaa_relay_requests_total{route, status}. */
static void count_answer(const struct spaa_req *req, const struct spaa_resp *resp)
{
  char status[12];
  snprintf(status, sizeof(status), "%d", resp->status);
  spaa_metrics_add(spaa_ingest_metrics(req), SPAA_METRIC_REQUESTS, route_label(req), status, 1);
}

/* The profiles of an upload that failed, as rejected for the error's reason: those the store
 * failed (the converter's own rejections among the entries stored were counted by reason
 * already), and every entry not sent to the store (one when the upload could not be read
 * at all). */
static void count_refused(struct spaa_ingest *x, int code)
{
  size_t i, n = 0;
  for (i = 0; x->rcs && i < x->flushed; i++)
    n += x->rcs[i] < 0;
  if (x->list.n > x->flushed)
    n += x->list.n - x->flushed;
  if (!n && !x->flushed)
    n = 1;
  if (n)
    spaa_metrics_add(spaa_ingest_metrics(x->req), SPAA_METRIC_PROFILES_REJECTED, x->source,
                     spaa_err_name(code), (int64_t)n);
}

/* 1 when a converted entry's original lies in the request's body. */
static int points_into_body(const struct spaa_ingest *x)
{
  uintptr_t b = (uintptr_t)x->req->body, e = b + x->req->body_len;
  size_t i;
  for (i = 0; i < x->list.n; i++) {
    uintptr_t o = (uintptr_t)x->list.v[i].original;
    if (o && b && o >= b && o <= e)
      return 1;
  }
  return 0;
}

/* Free the request's body now when nothing needs it any more: not kept as the original,
 * no entry's original in it. */
static void drop_body(struct spaa_ingest *x)
{
  if (x->opts.keep_original || !x->req->drop_body || !x->body_len || points_into_body(x))
    return;
  x->req->drop_body(x->req);
  x->body = (const uint8_t *)"";
  x->body_len = 0;
}

/* Parse, convert, accept, store: 0, or the failing code with *stage and err set. The
 * converter is the one of x->format once parse ran. */
static int run(struct spaa_ingest *x, enum spaa_ingest_stage *stage, struct spaa_err *err)
{
  const struct spaa_dialect *d = x->dialect;
  spaa_convert_fn conv;
  int rc;
  *stage = SPAA_INGEST_PARSE;
  if (d->parse && (rc = d->parse(x, err)))
    return rc;
  if (!(conv = spaa_converter(x->format)))
    return spaa_err_set(err, SPAA_E_INTERNAL, 0, 0, "no converter for format '%s' is built in",
                        x->format ? x->format : "");
  if (x->opts.service && spaa_utf8_check(x->opts.service, strlen(x->opts.service)) != SIZE_MAX)
    /* it would be stored, then left out of every answer that must be valid JSON */
    return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0, "the service name is not valid UTF-8 "
                        "(byte %zu)", spaa_utf8_check(x->opts.service, strlen(x->opts.service)));
  *stage = SPAA_INGEST_CONVERT;
  if (d->stream) {
    x->opts.each = each_entry;
    x->opts.each_ctx = x;
  }
  rc = conv(x->body, x->body_len, &x->opts, &x->list, err);
  if (rc && x->store_failed)
    *stage = SPAA_INGEST_STORE;
  if (rc || (d->accept && (rc = d->accept(x, err))))
    return rc;
  if (d->body_spent)
    drop_body(x);
  *stage = SPAA_INGEST_STORE;
  return spaa_ingest_store_all(x, err);
}

void spaa_ingest(const struct spaa_req *req, struct spaa_resp *resp)
{
  struct spaa_metrics *m = spaa_ingest_metrics(req);
  const struct spaa_route *rt = req->route;
  const char *route = route_label(req);
  enum spaa_ingest_stage stage;
  struct spaa_meter *mt;
  struct spaa_ingest x;
  struct spaa_err err;
  int rc;
  if (!rt || !rt->dialect) {
    spaa_resp_error(resp, SPAA_E_INTERNAL, "this route has no ingest dialect");
    return;
  }
  spaa_ingest_init(&x, req, resp, rt->format);
  x.dialect = rt->dialect;
  spaa_err_clear(&err);
  spaa_metrics_add(m, SPAA_METRIC_INGEST_IN_FLIGHT, route, NULL, 1);
  spaa_metrics_add(m, SPAA_METRIC_REQUEST_BYTES, route, NULL, (int64_t)req->wire_len);
  spaa_metrics_add(m, SPAA_METRIC_REQUEST_DECODED_BYTES, route, NULL, (int64_t)req->body_len);
  rc = run(&x, &stage, &err);
  if (rc && (mt = req->meter) && mt->refused) {
    /* not the machine's memory: the request's models grew past what the budget gives (a
     * parser may have called the refusal invalid input or out of memory) */
    rc = mt->refused;
    err = mt->why;
    spaa_budget_json_unmetered(); /* the refusal's answer must be made */
  }
  if (rc) {
    count_refused(&x, rc);
    x.dialect->fail(&x, stage, rc, err.msg);
  } else {
    x.dialect->answer(&x);
  }
  ids_header(&x);
  count_answer(req, resp);
  if (x.dialect->done)
    x.dialect->done(&x);
  spaa_ingest_release(&x);
  spaa_metrics_add(m, SPAA_METRIC_INGEST_IN_FLIGHT, route, NULL, -1);
}

void spaa_ingest_on_error(const struct spaa_req *req, struct spaa_resp *resp, int code,
                          const char *detail)
{
  struct spaa_ingest x;
  spaa_ingest_init(&x, req, resp, req->route ? req->route->format : NULL);
  x.dialect = req->route ? req->route->dialect : NULL;
  if (x.dialect) {
    count_refused(&x, code);
    x.dialect->fail(&x, SPAA_INGEST_REFUSED, code, detail ? detail : "");
  } else {
    spaa_resp_error(resp, code, "%s", detail && detail[0] ? detail : spaa_err_default(code));
  }
  count_answer(req, resp);
  spaa_ingest_release(&x);
}
