/* The ingest flow: one handler for every route that takes profiles. The route names the
 * format (its converter in codecs/registry.h) and the dialect; the flow runs
 *   dialect parse (request -> conversion options) -> converter -> dialect accept ->
 *   store (every profile of the upload together) -> dialect answer
 * or, at the first error, dialect fail; and counts every outcome in the metrics registry.
 * docs/ingest-flow.md describes it. */
#ifndef SPAA_SERVER_INGEST_H
#define SPAA_SERVER_INGEST_H

#include <jansson.h>

#include "spaa/convert.h"
#include "server/http.h"
#include "server/metrics.h"

/* Where the flow stopped. */
enum spaa_ingest_stage {
  SPAA_INGEST_REFUSED = 0, /* the HTTP core refused the request before the handler ran */
  SPAA_INGEST_PARSE,       /* the dialect could not turn the request into options */
  SPAA_INGEST_CONVERT,     /* the converter, or the dialect's accept, refused the input */
  SPAA_INGEST_STORE,       /* a converted profile could not be stored (see failed_at) */
};

#define SPAA_INGEST_REJECTED 2 /* rcs[i] of an entry the converter rejected on its own */

/* One request on its way through the flow: what the dialect hooks see and fill. */
struct spaa_ingest {
  const struct spaa_req *req;          /* the request (borrowed) */
  struct spaa_resp *resp;              /* the answer being built (borrowed) */
  const struct spaa_dialect *dialect;  /* the route's dialect */
  const char *source;                  /* the stored source: the route's format unless
                                        * parse says otherwise */
  const char *format;                  /* the converter's name (codecs/registry.h): the
                                        * route's format unless parse says otherwise (/ingest
                                        * takes pprof and folded stacks) */
  const uint8_t *body;                 /* the bytes to convert: the request body unless the
                                        * dialect points into it (a multipart field) */
  size_t body_len;                     /* bytes at body */
  struct spaa_convert_opts opts;       /* conversion options (keep_original set by the flow) */
  json_t *labels;                      /* labels of the request (owned, or NULL): win over
                                        * the converter's */
  json_t *attrs;                       /* attrs of the request (owned, or NULL): merged over
                                        * the converter's */
  void *state;                         /* the dialect's own (released by its done hook) */
  struct spaa_conv_list list;          /* the converted entries (owned) */
  char (*ids)[64];                     /* after storing, list.n: each stored entry's id */
  int *rcs;                            /* after storing, list.n: 0 stored, 1 already stored,
                                        * SPAA_INGEST_REJECTED, or a negative SPAA_E_* */
  size_t stored, dups, rejected;       /* entries stored, already stored, rejected alone */
  size_t failed_at;                    /* with SPAA_INGEST_STORE: the first entry that failed */
  size_t flushed;                      /* entries [0, flushed) went to the store (or were
                                        * counted rejected): ids and rcs hold their outcomes */
  size_t entered;                      /* entries the dialect's entry hook has seen */
  size_t cap_out;                      /* entries ids and rcs have room for */
  size_t pending;                      /* streaming: bytes of models not stored yet */
  int store_failed;                    /* streaming: a store during conversion failed */
};

/* With spaa_dialect.stream: the models converted and not yet stored are stored (and
 * freed) once they hold about this many bytes. Small uploads are stored in one go. */
#define SPAA_INGEST_BATCH_BYTES (8u << 20)

/* A model holding at least this many bytes, under an id not stored yet, gives its sample and
 * stack records to the store (spaa_meta.take_records): they go once prepared, before the
 * writer packs and compresses the profile, instead of staying beside what it builds. */
#define SPAA_INGEST_TAKE_BYTES (4u << 20)

/* spaa_dialect.body_spent */
#define SPAA_BODY_SPENT_CONVERTED 1 /* nothing reads the body once it is converted */

/* A dialect: what one way of pushing profiles does differently. Hooks marked optional may
 * be NULL. A hook that fails returns a negative SPAA_E_* with err filled; the flow then
 * calls fail. */
struct spaa_dialect {
  const char *name; /* for logs: "sentry", "otlp", "pyroscope", "collector", "spaa" */
  /* SPAA_BODY_SPENT_CONVERTED when nothing the dialect keeps points into the body once it
   * is converted: the flow then frees the body before storing what is left (unless
   * originals are kept or point into it), so that a large upload does not hold its bytes
   * and its models at once. 0: kept to the end. */
  int body_spent;
  /* 1: store the profiles while the converter makes them (spaa_convert_opts.each), a
   * batch each time the models waiting pass SPAA_INGEST_BATCH_BYTES, and free each batch's
   * models once stored: a large upload holds one batch of models, not all of them. For
   * dialects whose profiles stand alone in the answer (OTLP's partial success); a failure
   * to store stops the conversion, and the batches stored before it stay stored. */
  int stream;
  /* Optional. Turn the request into x->opts (and x->body, x->labels, x->attrs, x->state,
   * and x->format and x->source when the request names its format): auth grammar, query
   * and header parameters, the container around the payload. */
  int (*parse)(struct spaa_ingest *x, struct spaa_err *err);
  /* Optional. Adjust entry k of the list just before it goes to the store (called once
   * per entry, in order, rejected ones included): its id, a log line. */
  void (*entry)(struct spaa_ingest *x, size_t k);
  /* Optional. Check or adjust the converted list once it is complete, before what is left
   * of it is stored (with stream, earlier batches may be stored already). */
  int (*accept)(struct spaa_ingest *x, struct spaa_err *err);
  /* Answer the sender once every entry is stored or rejected on its own. */
  void (*answer)(struct spaa_ingest *x);
  /* Answer an error found at `stage` (code SPAA_E_*, detail possibly ""). Also called for
   * errors the HTTP core found (SPAA_INGEST_REFUSED: only req and resp are set then). */
  void (*fail)(struct spaa_ingest *x, enum spaa_ingest_stage stage, int code,
               const char *detail);
  /* Optional. Called last by spaa_ingest, whatever the outcome (x->state may be NULL):
   * log the request, release x->state. Not called for SPAA_INGEST_REFUSED. */
  void (*done)(struct spaa_ingest *x);
};

/* The handler of every ingest route (spaa_handler_cb): req->route->format and ->dialect
 * say what to do. Answers through the dialect, counts into req->app->metrics. */
void spaa_ingest(const struct spaa_req *req, struct spaa_resp *resp);
/* The on_error of every ingest route (spaa_error_cb): the dialect's fail at
 * SPAA_INGEST_REFUSED, counted like any other answer. */
void spaa_ingest_on_error(const struct spaa_req *req, struct spaa_resp *resp, int code,
                          const char *detail);

/* ---- the pieces of the flow, for dialects and benchmarks ------------------------------- */

/* Start x for a request (resp may be NULL when nothing is answered): body = the request
 * body, opts zeroed but keep_original, which is 1 when the configuration says
 * keep_original = always; source and format as given. Allocates nothing. */
void spaa_ingest_init(struct spaa_ingest *x, const struct spaa_req *req, struct spaa_resp *resp,
                      const char *source);
/* Store every converted entry of x->list that has a profile and was not stored yet, all in
 * one spaa_store_put_many (they share group commits), each under its converter id when that is a valid profile id,
 * else a new random one; the request's labels and attrs merged over the converter's; its
 * original kept when x->opts.keep_original. Fills x->ids, x->rcs, the counts, and the metrics (profiles stored,
 * duplicate, rejected by reason). Returns 0, or the code of the lowest failing entry
 * (x->failed_at) with err filled (SPAA_E_BUSY / SPAA_E_SHUTDOWN: answer 503); the other
 * entries may have been stored. */
int spaa_ingest_store_all(struct spaa_ingest *x, struct spaa_err *err);
/* Release what x owns (not state); x can be started again. */
void spaa_ingest_release(struct spaa_ingest *x);

/* The registry to count into (req->app->metrics), or NULL. */
struct spaa_metrics *spaa_ingest_metrics(const struct spaa_req *req);

/* Write a new random profile id (32 lowercase hex digits) into out (size >= 33). */
void spaa_ingest_new_id(char *out);

#endif
