/* An HTTP/2 cleartext (h2c, prior knowledge) listener for unary calls, on libnghttp2's server
 * session API with a socket loop of its own: one thread polls the listening socket and every
 * connection (non-blocking), feeds nghttp2 and writes what it produces; a request whose body
 * is complete goes to a bounded pool of worker threads, so the loop never waits for a
 * conversion or a commit. The service (server/grpc.c) decides what a request means.
 *
 * Why its own loop and not the HTTP core's (server/http.c): libmicrohttpd does not speak
 * HTTP/2 at all, and the HTTP core is being rewritten; nghttp2 wants the bytes of a
 * connection, which a poll loop over non-blocking sockets gives it in ~300 lines with no
 * dependency on how the HTTP/1.1 side is served. */
#ifndef SPAA_SERVER_H2_H
#define SPAA_SERVER_H2_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"

#define SPAA_H2_MAX_HEADERS 32        /* request header fields kept (more: the stream is reset) */
#define SPAA_H2_HEADER_BYTES 8192     /* bytes of names and values of one request */
#define SPAA_H2_ANSWER_FIELDS 8       /* header fields (and, apart, trailer fields) of an answer */
#define SPAA_H2_REFUSING 64           /* connections past max_conns held to be answered */
#define SPAA_H2_VALUE_MAX 3200        /* bytes of one answer field value (a percent-encoded
                                       * grpc-message of 1024 bytes fits) */

/* One request as the service sees it; borrowed for the duration of the call. */
struct spaa_h2_req {
  const char *method;               /* :method */
  const char *path;                 /* :path */
  size_t n_headers;                 /* regular header fields, names lowercase */
  struct {
    const char *name;
    const char *value;
  } headers[SPAA_H2_MAX_HEADERS];
  const uint8_t *body;              /* the whole body (NULL in check) */
  size_t body_len;
  size_t charged;                   /* bytes of the body the transport holds charged to the
                                     * memory budget (spaa_h2_opts.budget) until the answer:
                                     * run's own besides its conversion's charge */
  int64_t received_ns;              /* unix time the headers arrived, ns */
};

/* The value of a header field (lowercase name), or NULL. */
const char *spaa_h2_header(const struct spaa_h2_req *r, const char *name);

/* An answer: :status and header fields, a body, trailer fields. With an empty body and
 * trailers, everything goes in one HEADERS frame (gRPC's "trailers-only"). Start it zeroed. */
struct spaa_h2_answer {
  int status;                       /* :status (200 when 0) */
  struct spaa_buf fields;           /* owned: per field 'h' (header) or 't' (trailer), the
                                     * name, NUL, the value, NUL */
  struct spaa_buf body;             /* owned */
};

/* Add a field to the headers (trailer = 0) or the trailers; past SPAA_H2_ANSWER_FIELDS of
 * either kind or on no memory it is dropped. Values are cut at SPAA_H2_VALUE_MAX bytes. */
void spaa_h2_answer_field(struct spaa_h2_answer *a, int trailer, const char *name,
                          const char *value);
/* Free what an answer owns; it can be filled again. */
void spaa_h2_answer_clear(struct spaa_h2_answer *a);

/* Why the transport refuses a request on its own. */
enum spaa_h2_refusal {
  SPAA_H2_TOO_LARGE = 1, /* the body passed the max_body check gave */
  SPAA_H2_BUSY,          /* the worker queue is full, or no memory for the body */
  SPAA_H2_DEADLINE,      /* the deadline check gave passed before the answer */
  SPAA_H2_SHUTDOWN,      /* (reserved) */
  SPAA_H2_CONNS,         /* the connection came past max_conns: each of its streams gets
                          * this answer, then GOAWAY (counted and logged by the transport,
                          * once per interval: the service should not log each one) */
  SPAA_H2_OVER_BUDGET,   /* the body does not fit in what is left of the memory budget
                          * (req->body_len: the bytes it was to be charged; counted in the
                          * metrics by the transport) */
};

/* What check sets for a request whose body it lets in. */
struct spaa_h2_intake {
  size_t max_body;                  /* the body's cap (past it: SPAA_H2_TOO_LARGE) */
  int64_t deadline_ns;              /* CLOCK_MONOTONIC ns, 0 = none */
  int framed;                       /* 1: the body is a gRPC message (a flag byte, then its
                                     * length in 4 bytes, big endian): the length the prefix
                                     * announces is charged to the memory budget as soon as
                                     * the prefix is in, and one over max_body refused then;
                                     * 0: a Content-Length is charged with the headers */
};

/* What a service does; ctx is passed back. */
struct spaa_h2_service {
  void *ctx;
  /* Loop thread, once the request's headers are in (req->body NULL): return 0 to read the
   * body, with `in` filled (it comes zeroed); or 1 with `a` filled to answer at once (the
   * body is then discarded). Must not block. */
  int (*check)(void *ctx, const struct spaa_h2_req *req, struct spaa_h2_answer *a,
               struct spaa_h2_intake *in);
  /* A worker thread, once the body is complete: fill `a`. May take its time. */
  void (*run)(void *ctx, const struct spaa_h2_req *req, struct spaa_h2_answer *a);
  /* Loop thread: the answer to a refusal by the transport (req->body NULL; with
   * SPAA_H2_TOO_LARGE, req->body_len is the bytes received so far, or the length a gRPC
   * prefix announced). Must not block. */
  void (*refuse)(void *ctx, const struct spaa_h2_req *req, enum spaa_h2_refusal why,
                 struct spaa_h2_answer *a);
};

struct spaa_metrics;
struct spaa_budget;

struct spaa_h2_opts {
  const char *host;        /* numeric address to bind */
  uint16_t port;           /* 0 = any free port */
  int ipv6;                /* host is IPv6 */
  unsigned max_streams;    /* SETTINGS_MAX_CONCURRENT_STREAMS */
  unsigned workers;        /* worker threads */
  size_t queue_depth;      /* requests waiting for a worker before SPAA_H2_BUSY */
  struct spaa_budget *budget; /* the memory budget request bodies are charged to as they
                            * arrive (borrowed; NULL: not charged): what a body announces
                            * (intake.framed) at once, the rest a step at a time, given back
                            * once the stream is answered and run is done with it; a body
                            * that does not fit is SPAA_H2_OVER_BUDGET at once (no wait) */
  unsigned max_conns;      /* connections served at once (0: 1024); up to SPAA_H2_REFUSING
                            * more are held just long enough to answer their streams
                            * SPAA_H2_CONNS and send GOAWAY, any past those are closed at
                            * accept; both counted in metrics and logged once per interval */
  struct spaa_metrics *metrics; /* where those refusals count, or NULL */
  unsigned header_timeout; /* seconds a frame may take to arrive whole (plus its length at
                            * body_min_rate), and a stream's header block: past them, the
                            * connection is closed, the stream reset (0: 10 s) */
  size_t body_min_rate;    /* bytes/s a request body must average after header_timeout, or
                            * its stream is reset (0: not checked) */
  unsigned idle_timeout;   /* seconds a request body may make no progress, whatever it sent
                            * before, before its stream is reset (0: not checked); seconds
                            * a connection with no open stream may stay silent,
                            * the client preface and SETTINGS included; also the deadline
                            * for the client's ACK of our SETTINGS when under 10 s (GOAWAY
                            * SETTINGS_TIMEOUT past it); twice it, the longest a
                            * connection may leave bytes unread before it is closed, and
                            * an answer may not move before its stream is reset */
};

struct spaa_h2;

/* Bind, listen and start the loop and the workers. 0, or SPAA_E_IO (err says why) /
 * SPAA_E_NOMEM. svc is copied. */
int spaa_h2_start(const struct spaa_h2_opts *o, const struct spaa_h2_service *svc,
                  struct spaa_h2 **out, struct spaa_err *err);
/* The port bound. */
uint16_t spaa_h2_port(const struct spaa_h2 *h);
/* Stop accepting: close the listening socket and send GOAWAY (last stream id: the last one
 * processed) on every connection; streams already open are finished, then each connection
 * closes. Idempotent; returns at once. */
void spaa_h2_quiesce(struct spaa_h2 *h);
/* Streams opened and not yet answered and closed. */
size_t spaa_h2_inflight(const struct spaa_h2 *h);
/* Quiesce, wait at most grace_ms for the streams in flight, then close everything, join the
 * threads and free. NULL-safe. */
void spaa_h2_stop(struct spaa_h2 *h, unsigned grace_ms);

#endif
