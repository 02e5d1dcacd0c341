/* The h2c listener (see h2.h): a poll loop over non-blocking sockets feeding one nghttp2
 * server session per connection, streams collected into unary requests, and a pool of
 * worker threads that runs the service on each complete request. */
#include "server/h2.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <nghttp2/nghttp2.h>

#include "base/limits.h"
#include "server/budget.h"
#include "server/grpc_wire.h"
#include "server/log.h"
#include "server/metrics.h"

#define H2_MAX_CONNS 1024            /* connections at once when the options give none */
#define H2_REFUSING_GRACE_NS 2000000000LL /* a connection past the limit gets GOAWAY this
                                           * long after accept if it opened no stream */
#define H2_STREAM_WINDOW (1 << 20)   /* initial window of a stream: a large message flows
                                      * without waiting for a WINDOW_UPDATE per 64 KiB */
#define H2_CONN_WINDOW (16 << 20)    /* connection window (many streams at once) */
#define H2_OUT_HIGH (1 << 20)        /* bytes queued for a socket before nghttp2 is asked
                                      * for more */
#define H2_READ_CHUNK 65536
#define H2_READS_PER_WAKE 16         /* chunks read from one connection per poll round: a
                                      * fast sender does not keep the loop from the others */
#define H2_SETTINGS_TIMEOUT_S 10     /* seconds a client has to acknowledge our SETTINGS
                                      * (RFC 9113 6.5.3), or idle_timeout when shorter */
#define H2_CLOSE_GRACE_NS 1000000000LL /* a terminated connection whose peer does not read
                                        * its GOAWAY is closed this long after */
#define H2_CHARGE_STEP ((size_t)1 << 20) /* a body past what it announced is charged to the
                                          * budget this much ahead at a time */

enum stream_state {
  ST_HEADERS = 0, /* header fields arriving */
  ST_BODY,        /* accepted by check: body arriving */
  ST_IGNORE,      /* reset (too slow, or stalled): what still arrives is dropped */
  ST_WORKER,      /* with the workers (queued or running) */
  ST_ANSWERED,    /* answer submitted */
};

struct h2_conn;

struct h2_stream {
  struct h2_conn *c;             /* its connection, NULL once detached (closed in a worker) */
  struct spaa_h2 *h;             /* the listener */
  int32_t id;                    /* stream id */
  enum stream_state state;       /* see above */
  int in_worker;                 /* 1 from dispatch until the loop takes the answer back */
  int cancelled;                 /* atomic: the worker need not run it */
  int late;                      /* answered (deadline) while in a worker: drop the answer */
  struct spaa_h2_req req;        /* pointers into hbuf */
  char hbuf[SPAA_H2_HEADER_BYTES]; /* header names and values, NUL-terminated */
  size_t hlen;                   /* bytes used in hbuf */
  struct spaa_buf body;          /* request body so far (capped) */
  size_t max_body;               /* check's cap */
  int framed;                    /* check's intake.framed: the body is a gRPC message */
  size_t announced;              /* bytes the body announced (its gRPC prefix, or its
                                  * Content-Length), 0 = not known (yet) */
  size_t held;                   /* bytes charged to the memory budget for the body */
  int64_t deadline_ns;           /* CLOCK_MONOTONIC, 0 = none */
  int64_t begin_ns;              /* CLOCK_MONOTONIC its HEADERS began */
  int64_t data_ns;               /* CLOCK_MONOTONIC its body last grew (or began) */
  int slow;                      /* reset for a header block or body too slow */
  struct spaa_h2_answer ans;     /* the answer submitted */
  struct spaa_h2_answer wans;    /* the worker's answer (moved to ans when taken back) */
  size_t sent;                   /* body bytes of ans handed to nghttp2 */
  int64_t moved_ns;              /* CLOCK_MONOTONIC ans was submitted or last had body bytes
                                  * taken by nghttp2 (the peer's windows let them go) */
  int reset;                     /* RST_STREAM submitted: its answer did not move */
  struct h2_stream *prev, *next; /* the connection's streams */
  struct h2_stream *qnext;       /* worker queue / done list */
};

struct h2_conn {
  struct spaa_h2 *h;
  int fd;
  nghttp2_session *s;
  struct spaa_buf out;           /* bytes nghttp2 produced, not yet written */
  size_t out_off;                /* written from out */
  int64_t last_ns;               /* CLOCK_MONOTONIC of the last byte read */
  int64_t wrote_ns;              /* CLOCK_MONOTONIC of the last write progress (or of the
                                  * last time nothing was waiting to be written) */
  int64_t settings_ns;           /* CLOCK_MONOTONIC our SETTINGS went out; 0 before, and
                                  * once the client acknowledged them */
  int64_t closing_ns;            /* terminated (GOAWAY with an error) at; 0 = not */
  int settings_acked;            /* the client acknowledged our SETTINGS */
  int goaway;                    /* GOAWAY submitted */
  int refusing;                  /* came past max_conns: streams answered SPAA_H2_CONNS */
  int64_t born_ns;               /* CLOCK_MONOTONIC of accept */
  /* where the bytes read stand among frames (slowloris guard): the client preface's bytes
   * still due, the frame header bytes gathered, the payload bytes still due, and since when
   * the frame (or preface) under way began (0: between frames) */
  uint32_t pre_left;
  uint8_t fr_hdr[9];
  uint32_t fr_hdr_n, fr_left, fr_len;
  int64_t fr_since_ns;
  int dead;                      /* to be closed */
  struct h2_stream *streams;     /* open streams (not those detached in a worker) */
  struct h2_conn *next;
};

/* Events of two kinds counted in a metric and logged as one line per
 * SPAA_HTTP_LOG_INTERVAL_S with the counts since the last line (a flood is one line). */
struct h2_tally {
  unsigned long long n[2], total[2]; /* since the last line; since the start */
  int64_t logged_ns;                 /* CLOCK_MONOTONIC of the last line, 0 = never */
};

struct spaa_h2 {
  struct spaa_h2_opts o;
  struct spaa_h2_service svc;
  int lfd;                       /* listening socket, -1 once closed */
  int efd;                       /* eventfd: workers and quiesce/stop wake the loop */
  uint16_t port;
  struct h2_conn *conns;
  size_t n_conns;                /* serving (not refusing) */
  size_t n_refusing;             /* held past max_conns to be answered */
  size_t max_conns;              /* o.max_conns, or H2_MAX_CONNS */
  struct h2_tally over;          /* connections past the limit: answered (held), closed at
                                  * accept */
  struct h2_tally slow;          /* dropped as too slow: connections (a frame not whole in
                                  * time), streams (header block or body) */
  int64_t header_ns;             /* o.header_timeout in ns */
  int64_t settings_timeout_ns;   /* a client's SETTINGS ACK is due this long after ours */
  int64_t idle_ns;               /* o.idle_timeout in ns */
  int quiesce, stop;             /* atomic requests to the loop */
  size_t inflight;               /* atomic: streams open */
  pthread_t loop;
  pthread_t *workers;
  unsigned n_workers;
  pthread_mutex_t mu;            /* guards the queue, the done list, wstop */
  pthread_cond_t cv;
  struct h2_stream *qhead, *qtail, *done;
  size_t qlen;
  int wstop;
};

static int64_t mono_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int64_t real_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void wake(struct spaa_h2 *h)
{
  uint64_t one = 1;
  ssize_t n = write(h->efd, &one, sizeof(one));
  (void)n;
}

const char *spaa_h2_header(const struct spaa_h2_req *r, const char *name)
{
  size_t i;
  for (i = 0; i < r->n_headers; i++)
    if (strcmp(r->headers[i].name, name) == 0)
      return r->headers[i].value;
  return NULL;
}

/* Count the fields of one kind ('h' or 't'). */
static size_t field_count(const struct spaa_h2_answer *a, char kind)
{
  const char *p = a->fields.p, *end = p + a->fields.len;
  size_t n = 0;
  while (p && p < end) {
    n += *p == kind;
    p += strlen(p) + 1;
    p += strlen(p) + 1;
  }
  return n;
}

void spaa_h2_answer_field(struct spaa_h2_answer *a, int trailer, const char *name,
                          const char *value)
{
  char kind = trailer ? 't' : 'h';
  size_t vl = strnlen(value, SPAA_H2_VALUE_MAX);
  if (!a->fields.max) /* zeroed: not initialized yet */
    spaa_buf_init(&a->fields, 0);
  if (field_count(a, kind) >= SPAA_H2_ANSWER_FIELDS ||
      spaa_buf_reserve(&a->fields, 1 + strlen(name) + 1 + vl + 1))
    return;
  spaa_buf_add(&a->fields, &kind, 1);
  spaa_buf_add(&a->fields, name, strlen(name) + 1);
  spaa_buf_add(&a->fields, value, vl);
  spaa_buf_add(&a->fields, "", 1);
}

void spaa_h2_answer_clear(struct spaa_h2_answer *a)
{
  spaa_buf_free(&a->fields);
  spaa_buf_free(&a->body);
  a->status = 0;
}

/* Fill nv (room for cap) with the fields of kind(s): 'h', 't', or 0 for both. */
static size_t field_nv(const struct spaa_h2_answer *a, char kind, nghttp2_nv *nv, size_t cap)
{
  const char *p = a->fields.p, *end = p + a->fields.len;
  size_t n = 0;
  while (p && p < end && n < cap) {
    const char *name = p + 1, *value = name + strlen(name) + 1;
    if (!kind || *p == kind) {
      nv[n].name = (uint8_t *)name;
      nv[n].namelen = strlen(name);
      nv[n].value = (uint8_t *)value;
      nv[n].valuelen = strlen(value);
      nv[n++].flags = NGHTTP2_NV_FLAG_NONE;
    }
    p = value + strlen(value) + 1;
  }
  return n;
}

/* ---- streams ------------------------------------------------------------------------------ */

/* Free the body and give its charge back to the budget. */
static void body_release(struct h2_stream *st)
{
  if (st->held)
    spaa_budget_give(st->h->o.budget, st->held, 0);
  st->held = 0;
  spaa_buf_free(&st->body);
}

static void stream_unlink(struct h2_stream *st)
{
  struct h2_conn *c = st->c;
  if (!c)
    return;
  if (st->prev)
    st->prev->next = st->next;
  else
    c->streams = st->next;
  if (st->next)
    st->next->prev = st->prev;
  st->prev = st->next = NULL;
}

static void stream_free(struct h2_stream *st)
{
  body_release(st);
  spaa_h2_answer_clear(&st->ans);
  spaa_h2_answer_clear(&st->wans);
  __atomic_sub_fetch(&st->h->inflight, 1, __ATOMIC_RELAXED);
  free(st);
}

/* nghttp2 is done with the stream (or the connection goes): free it, unless a worker has it,
 * in which case it is detached and freed when the answer comes back. */
static void stream_close(struct h2_stream *st)
{
  stream_unlink(st);
  if (st->in_worker) { /* its body and charge stay until the worker is done with them */
    st->c = NULL;
    __atomic_store_n(&st->cancelled, 1, __ATOMIC_RELAXED);
    return;
  }
  st->c = NULL;
  stream_free(st);
}

static ssize_t read_body(nghttp2_session *s, int32_t id, uint8_t *buf, size_t len,
                         uint32_t *flags, nghttp2_data_source *src, void *user)
{
  struct h2_stream *st = src->ptr;
  size_t left = st->ans.body.len - st->sent, n = left < len ? left : len;
  (void)user;
  memcpy(buf, st->ans.body.p + st->sent, n);
  st->sent += n;
  st->moved_ns = mono_ns();
  if (st->sent == st->ans.body.len) {
    nghttp2_nv nv[SPAA_H2_ANSWER_FIELDS];
    size_t nt = field_nv(&st->ans, 't', nv, SPAA_H2_ANSWER_FIELDS);
    *flags |= NGHTTP2_DATA_FLAG_EOF;
    if (nt && nghttp2_submit_trailer(s, id, nv, nt) == 0)
      *flags |= NGHTTP2_DATA_FLAG_NO_END_STREAM;
  }
  return (ssize_t)n;
}

/* Submit st->ans: HEADERS (+ DATA + trailers), or one HEADERS when the body is empty. */
static void answer_submit(struct h2_stream *st)
{
  struct spaa_h2_answer *a = &st->ans;
  nghttp2_nv nv[1 + 2 * SPAA_H2_ANSWER_FIELDS];
  nghttp2_data_provider prd;
  char status[8];
  int only = a->body.len == 0;
  size_t n;
  snprintf(status, sizeof(status), "%d", a->status ? a->status : 200);
  nv[0].name = (uint8_t *)":status";
  nv[0].namelen = 7;
  nv[0].value = (uint8_t *)status;
  nv[0].valuelen = strlen(status);
  nv[0].flags = NGHTTP2_NV_FLAG_NONE;
  n = 1 + field_nv(a, only ? 0 : 'h', nv + 1, 2 * SPAA_H2_ANSWER_FIELDS);
  prd.source.ptr = st;
  prd.read_callback = read_body;
  st->state = ST_ANSWERED;
  st->moved_ns = mono_ns();
  if (!st->in_worker) /* a worker still reads it: released when taken back */
    body_release(st);
  if (nghttp2_submit_response(st->c->s, st->id, nv, n, only ? NULL : &prd) != 0)
    nghttp2_submit_rst_stream(st->c->s, NGHTTP2_FLAG_NONE, st->id, NGHTTP2_INTERNAL_ERROR);
}

static void conn_goaway(struct h2_conn *c);

static void refuse(struct h2_stream *st, enum spaa_h2_refusal why)
{
  st->h->svc.refuse(st->h->svc.ctx, &st->req, why, &st->ans);
  answer_submit(st);
}

/* The body is complete: hand the request to the workers. */
static void dispatch(struct h2_stream *st)
{
  struct spaa_h2 *h = st->h;
  if (st->deadline_ns && mono_ns() >= st->deadline_ns) {
    refuse(st, SPAA_H2_DEADLINE);
    return;
  }
  pthread_mutex_lock(&h->mu);
  if (h->qlen >= h->o.queue_depth) {
    pthread_mutex_unlock(&h->mu);
    refuse(st, SPAA_H2_BUSY);
    return;
  }
  st->req.body = st->body.p ? (const uint8_t *)st->body.p : (const uint8_t *)"";
  st->req.body_len = st->body.len;
  st->req.charged = st->held;
  st->state = ST_WORKER;
  st->in_worker = 1;
  st->qnext = NULL;
  if (h->qtail)
    h->qtail->qnext = st;
  else
    h->qhead = st;
  h->qtail = st;
  h->qlen++;
  pthread_cond_signal(&h->cv);
  pthread_mutex_unlock(&h->mu);
}

/* A worker's answer is back (loop thread). */
static void take_back(struct h2_stream *st)
{
  st->in_worker = 0;
  if (!st->c) { /* the stream or its connection went meanwhile */
    stream_free(st);
    return;
  }
  body_release(st);
  if (st->late) /* already answered (deadline): the stream closes on its own */
    return;
  spaa_h2_answer_clear(&st->ans);
  st->ans = st->wans;
  memset(&st->wans, 0, sizeof(st->wans));
  answer_submit(st);
}

/* ---- nghttp2 callbacks -------------------------------------------------------------------- */

static int on_begin_headers(nghttp2_session *s, const nghttp2_frame *f, void *user)
{
  struct h2_conn *c = user;
  struct h2_stream *st;
  if (f->hd.type != NGHTTP2_HEADERS || f->headers.cat != NGHTTP2_HCAT_REQUEST)
    return 0;
  if (!(st = calloc(1, sizeof(*st))))
    return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE; /* resets this stream only */
  st->c = c;
  st->h = c->h;
  st->id = f->hd.stream_id;
  st->req.received_ns = real_ns();
  st->begin_ns = mono_ns();
  spaa_buf_init(&st->body, 0);
  st->next = c->streams;
  if (c->streams)
    c->streams->prev = st;
  c->streams = st;
  __atomic_add_fetch(&c->h->inflight, 1, __ATOMIC_RELAXED);
  nghttp2_session_set_stream_user_data(s, st->id, st);
  return 0;
}

/* Copy name and value into hbuf; NULL when it is full. */
static const char *keep(struct h2_stream *st, const uint8_t *v, size_t n)
{
  char *p;
  if (n + 1 > sizeof(st->hbuf) - st->hlen)
    return NULL;
  p = st->hbuf + st->hlen;
  memcpy(p, v, n);
  p[n] = 0;
  st->hlen += n + 1;
  return p;
}

static int on_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name,
                     size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags,
                     void *user)
{
  struct h2_stream *st = nghttp2_session_get_stream_user_data(s, f->hd.stream_id);
  const char *k, *v;
  (void)flags;
  (void)user;
  if (!st || st->state != ST_HEADERS)
    return 0; /* trailers of a request: not used */
  if (!(k = keep(st, name, namelen)) || !(v = keep(st, value, valuelen)))
    return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
  if (strcmp(k, ":method") == 0)
    st->req.method = v;
  else if (strcmp(k, ":path") == 0)
    st->req.path = v;
  else if (k[0] != ':') {
    if (st->req.n_headers >= SPAA_H2_MAX_HEADERS)
      return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
    st->req.headers[st->req.n_headers].name = k;
    st->req.headers[st->req.n_headers++].value = v;
  }
  return 0;
}

/* Charge the memory budget for the body as it will be once `len` more bytes (data) are in:
 * what it announced (the length in its gRPC prefix, read as soon as the prefix is whole, or
 * its Content-Length) at once, bytes past that H2_CHARGE_STEP ahead at a time. 0, or the
 * refusal: SPAA_H2_TOO_LARGE (the prefix announces more than max_body) or
 * SPAA_H2_OVER_BUDGET (the budget has no room; nothing more is charged); req.body_len says
 * how many bytes. */
static int body_charge(struct h2_stream *st, const uint8_t *data, size_t len)
{
  struct spaa_budget *b = st->h->o.budget;
  size_t want = st->body.len + len, target;
  if (st->framed && !st->announced && want >= SPAA_GRPC_PREFIX) {
    uint8_t p[SPAA_GRPC_PREFIX];
    size_t have = st->body.len; /* fewer than the prefix's bytes: it was not whole before */
    if (have)
      memcpy(p, st->body.p, have);
    memcpy(p + have, data, SPAA_GRPC_PREFIX - have);
    st->announced = SPAA_GRPC_PREFIX + ((size_t)p[1] << 24 | (size_t)p[2] << 16 |
                                      (size_t)p[3] << 8 | p[4]);
    if (st->announced > st->max_body) {
      st->req.body_len = st->announced;
      return SPAA_H2_TOO_LARGE;
    }
  }
  if (!b || (want <= st->held && st->announced <= st->held))
    return 0;
  target = want <= st->announced ? st->announced : want + H2_CHARGE_STEP;
  if (target > st->max_body)
    target = st->max_body; /* want is not over it: on_data refused that */
  if (spaa_budget_take(b, target - st->held, 0, 0)) {
    st->req.body_len = target;
    spaa_metrics_add(st->h->o.metrics, SPAA_METRIC_REQUESTS_BUSY, "memory_budget", NULL, 1);
    return SPAA_H2_OVER_BUDGET;
  }
  st->held = target;
  if (target == st->announced) /* one allocation of the announced size, no doubling */
    spaa_buf_presize(&st->body, target); /* on failure, spaa_buf_add says so */
  return 0;
}

static int on_data(nghttp2_session *s, uint8_t flags, int32_t id, const uint8_t *data,
                   size_t len, void *user)
{
  struct h2_stream *st = nghttp2_session_get_stream_user_data(s, id);
  int why;
  (void)flags;
  (void)user;
  if (!st || st->state != ST_BODY)
    return 0;
  st->data_ns = mono_ns();
  if (len > st->max_body - st->body.len) {
    st->req.body_len = st->body.len + len; /* what arrived, for the refusal's message */
    refuse(st, SPAA_H2_TOO_LARGE);
    return 0;
  }
  if ((why = body_charge(st, data, len))) {
    refuse(st, (enum spaa_h2_refusal)why);
    return 0;
  }
  if (spaa_buf_add(&st->body, data, len))
    refuse(st, SPAA_H2_BUSY);
  return 0;
}

/* The Content-Length of a request (digits only, at most max), or 0. */
static size_t content_length(const struct spaa_h2_req *r, size_t max)
{
  const char *v = spaa_h2_header(r, "content-length");
  size_t n = 0;
  if (!v || !*v)
    return 0;
  for (; *v; v++) {
    size_t d = (size_t)(*v - '0');
    if (*v < '0' || *v > '9' || n > max / 10 || d > max - n * 10)
      return 0;
    n = n * 10 + d;
  }
  return n;
}

static int on_frame(nghttp2_session *s, const nghttp2_frame *f, void *user)
{
  struct h2_stream *st;
  struct h2_conn *c = user;
  if (f->hd.type == NGHTTP2_SETTINGS && (f->hd.flags & NGHTTP2_FLAG_ACK)) {
    c->settings_acked = 1;
    c->settings_ns = 0;
    return 0;
  }
  if (f->hd.type != NGHTTP2_HEADERS && f->hd.type != NGHTTP2_DATA)
    return 0;
  if (!(st = nghttp2_session_get_stream_user_data(s, f->hd.stream_id)))
    return 0;
  if (f->hd.type == NGHTTP2_HEADERS && st->state == ST_HEADERS) {
    struct spaa_h2_intake in;
    int why;
    memset(&in, 0, sizeof(in));
    if (!st->req.method || !st->req.path) {
      nghttp2_submit_rst_stream(s, NGHTTP2_FLAG_NONE, st->id, NGHTTP2_PROTOCOL_ERROR);
      return 0;
    }
    if (c->refusing) { /* answered at once, then GOAWAY: the client goes elsewhere or later */
      refuse(st, SPAA_H2_CONNS);
      st->state = ST_ANSWERED;
      conn_goaway(c);
      return 0;
    }
    if (st->h->svc.check(st->h->svc.ctx, &st->req, &st->ans, &in)) {
      answer_submit(st);
      st->state = ST_ANSWERED;
      return 0;
    }
    st->max_body = in.max_body;
    st->deadline_ns = in.deadline_ns;
    st->framed = in.framed;
    st->state = ST_BODY;
    st->data_ns = mono_ns();
    if (!st->framed) /* a Content-Length is charged now, as the HTTP listener charges it */
      st->announced = content_length(&st->req, st->max_body);
    if ((why = body_charge(st, NULL, 0))) {
      refuse(st, (enum spaa_h2_refusal)why);
      return 0;
    }
  }
  if ((f->hd.flags & NGHTTP2_FLAG_END_STREAM) && st->state == ST_BODY)
    dispatch(st);
  return 0;
}

/* Our SETTINGS went out: the client's ACK is due from now. An answer went out whole. */
static int on_frame_sent(nghttp2_session *s, const nghttp2_frame *f, void *user)
{
  struct h2_conn *c = user;
  if (f->hd.type == NGHTTP2_SETTINGS && !(f->hd.flags & NGHTTP2_FLAG_ACK) &&
      !c->settings_acked && !c->settings_ns)
    c->settings_ns = mono_ns();
  /* an answer complete before its request (refused while the body still comes): the client
   * is asked to stop sending it, RST_STREAM NO_ERROR (RFC 9113 8.1), as grpc-go's server
   * does, instead of sending the rest for nothing */
  if ((f->hd.type == NGHTTP2_HEADERS || f->hd.type == NGHTTP2_DATA) &&
      (f->hd.flags & NGHTTP2_FLAG_END_STREAM) &&
      nghttp2_session_get_stream_remote_close(s, f->hd.stream_id) == 0)
    nghttp2_submit_rst_stream(s, NGHTTP2_FLAG_NONE, f->hd.stream_id, NGHTTP2_NO_ERROR);
  return 0;
}

static int on_close(nghttp2_session *s, int32_t id, uint32_t code, void *user)
{
  struct h2_stream *st = nghttp2_session_get_stream_user_data(s, id);
  (void)code;
  (void)user;
  if (st) {
    nghttp2_session_set_stream_user_data(s, id, NULL);
    stream_close(st);
  }
  return 0;
}

/* ---- connections ---------------------------------------------------------------------------- */

static nghttp2_session_callbacks *callbacks(void)
{
  nghttp2_session_callbacks *cb;
  if (nghttp2_session_callbacks_new(&cb))
    return NULL;
  nghttp2_session_callbacks_set_on_begin_headers_callback(cb, on_begin_headers);
  nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data);
  nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame);
  nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_close);
  nghttp2_session_callbacks_set_on_frame_send_callback(cb, on_frame_sent);
  return cb;
}

static int conn_new(struct spaa_h2 *h, int fd, int refusing)
{
  nghttp2_settings_entry iv[] = {
      {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, h->o.max_streams},
      {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, H2_STREAM_WINDOW},
      {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, SPAA_H2_HEADER_BYTES},
  };
  nghttp2_session_callbacks *cb = callbacks();
  struct h2_conn *c = calloc(1, sizeof(*c));
  int ok = cb && c && nghttp2_session_server_new(&c->s, cb, c) == 0;
  /* streams past the limit are refused by nghttp2 itself (RST_STREAM REFUSED_STREAM) */
  if (cb)
    nghttp2_session_callbacks_del(cb);
  if (!ok || nghttp2_submit_settings(c->s, NGHTTP2_FLAG_NONE, iv, sizeof(iv) / sizeof(iv[0])) ||
      nghttp2_session_set_local_window_size(c->s, NGHTTP2_FLAG_NONE, 0, H2_CONN_WINDOW)) {
    if (c && c->s)
      nghttp2_session_del(c->s);
    free(c);
    close(fd);
    return -1;
  }
  c->h = h;
  c->fd = fd;
  c->refusing = refusing;
  c->born_ns = c->last_ns = c->wrote_ns = mono_ns();
  c->pre_left = 24; /* "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" */
  spaa_buf_init(&c->out, 0);
  c->next = h->conns;
  h->conns = c;
  if (refusing)
    h->n_refusing++;
  else
    h->n_conns++;
  return 0;
}

static void conn_free(struct h2_conn *c)
{
  while (c->streams) {
    struct h2_stream *st = c->streams;
    nghttp2_session_set_stream_user_data(c->s, st->id, NULL);
    stream_close(st);
  }
  nghttp2_session_del(c->s);
  close(c->fd);
  spaa_buf_free(&c->out);
  free(c);
}

/* Pull frames from nghttp2 and write what the socket takes. -1: close the connection. */
static int conn_flush(struct h2_conn *c)
{
  for (;;) {
    while (c->out.len - c->out_off < H2_OUT_HIGH) {
      const uint8_t *p;
      ssize_t n = nghttp2_session_mem_send(c->s, &p);
      if (n < 0)
        return -1;
      if (n == 0)
        break;
      if (spaa_buf_add(&c->out, p, (size_t)n))
        return -1;
    }
    if (c->out_off == c->out.len) {
      c->wrote_ns = mono_ns();
      return 0;
    }
    {
      ssize_t w = send(c->fd, c->out.p + c->out_off, c->out.len - c->out_off, MSG_NOSIGNAL);
      if (w < 0)
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -1;
      if (w > 0)
        c->wrote_ns = mono_ns();
      c->out_off += (size_t)w;
      if (c->out_off == c->out.len)
        c->out.len = c->out_off = 0;
    }
  }
}

/* Follow the frame boundaries in n bytes read (the preface first, then 9-byte headers and
 * their payloads), noting when the frame under way began. */
static void frames_track(struct h2_conn *c, const uint8_t *p, size_t n, int64_t now)
{
  while (n) {
    size_t k;
    int whole;
    if (!c->fr_since_ns)
      c->fr_since_ns = now; /* a frame (or the preface) begins */
    if (c->pre_left) {
      k = n < c->pre_left ? n : c->pre_left;
      c->pre_left -= (uint32_t)k;
      c->fr_len = 24;
      whole = !c->pre_left;
    } else if (c->fr_hdr_n < 9) {
      k = 9 - c->fr_hdr_n < n ? 9 - c->fr_hdr_n : n;
      memcpy(c->fr_hdr + c->fr_hdr_n, p, k);
      c->fr_hdr_n += (uint32_t)k;
      c->fr_len = c->fr_left = 0;
      if (c->fr_hdr_n == 9)
        c->fr_len = c->fr_left = ((uint32_t)c->fr_hdr[0] << 16) |
                                 ((uint32_t)c->fr_hdr[1] << 8) | c->fr_hdr[2];
      whole = c->fr_hdr_n == 9 && !c->fr_left;
    } else {
      k = n < c->fr_left ? n : c->fr_left;
      c->fr_left -= (uint32_t)k;
      whole = !c->fr_left;
    }
    p += k;
    n -= k;
    if (whole) {
      c->fr_hdr_n = 0;
      c->fr_since_ns = 0;
    }
  }
}

/* Read what the socket has and feed it to nghttp2. -1: close the connection. */
static int conn_read(struct h2_conn *c)
{
  uint8_t buf[H2_READ_CHUNK];
  int round;
  for (round = 0; round < H2_READS_PER_WAKE; round++) {
    ssize_t n = recv(c->fd, buf, sizeof(buf), 0), used;
    if (n < 0)
      return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -1;
    if (n == 0)
      return -1;
    c->last_ns = mono_ns();
    frames_track(c, buf, (size_t)n, c->last_ns);
    used = nghttp2_session_mem_recv(c->s, buf, (size_t)n);
    if (used < 0) {
      spaa_log(SPAA_LOG_INFO, "grpc connection closed on a protocol error",
               "detail=\"%s\"", nghttp2_strerror((int)used));
      conn_flush(c); /* the GOAWAY nghttp2 may have queued */
      return -1;
    }
    if ((size_t)n < sizeof(buf))
      return 0;
  }
  return 0; /* more may be waiting: poll says so again next round */
}

static void conn_goaway(struct h2_conn *c)
{
  if (c->goaway)
    return;
  c->goaway = 1;
  nghttp2_submit_goaway(c->s, NGHTTP2_FLAG_NONE, nghttp2_session_get_last_proc_stream_id(c->s),
                        NGHTTP2_NO_ERROR, NULL, 0);
}

/* ---- the loop ------------------------------------------------------------------------------- */

static void slow_count(struct spaa_h2 *h, int stream, int64_t now);
static int stream_slow(const struct spaa_h2 *h, const struct h2_stream *st, int64_t now);

/* Answer the streams whose deadline passed, reset those whose answer has not moved for twice
 * idle_timeout and those too slow (stream_slow); returns the nearest deadline still ahead
 * (0: none). */
static int64_t deadlines(struct spaa_h2 *h, int64_t now)
{
  int64_t next = 0, stall = 2 * (int64_t)h->o.idle_timeout * 1000000000LL;
  struct h2_conn *c;
  for (c = h->conns; c; c = c->next) {
    struct h2_stream *st;
    for (st = c->streams; st; st = st->next) {
      if (st->state == ST_ANSWERED && !st->reset && now - st->moved_ns > stall) {
        /* a peer whose flow-control windows keep the answer from moving: the stream goes */
        st->reset = 1;
        spaa_log(SPAA_LOG_INFO, "grpc stream reset: its answer did not move", "stream=%d",
                 (int)st->id);
        nghttp2_submit_rst_stream(c->s, NGHTTP2_FLAG_NONE, st->id, NGHTTP2_CANCEL);
      }
      if (stream_slow(h, st, now)) {
        /* a header block or body trickled in, or a body stalled: the stream goes (its body
         * and charge at once, not when the peer reads the reset), the connection stays */
        st->slow = 1;
        slow_count(h, 1, now);
        body_release(st);
        st->state = ST_IGNORE;
        nghttp2_submit_rst_stream(c->s, NGHTTP2_FLAG_NONE, st->id, NGHTTP2_CANCEL);
        continue;
      }
      if (!st->deadline_ns || st->state == ST_ANSWERED || st->late)
        continue;
      if (st->deadline_ns > now) {
        next = !next || st->deadline_ns < next ? st->deadline_ns : next;
        continue;
      }
      if (st->state == ST_WORKER) {
        st->late = 1;
        __atomic_store_n(&st->cancelled, 1, __ATOMIC_RELAXED);
        h->svc.refuse(h->svc.ctx, &st->req, SPAA_H2_DEADLINE, &st->ans);
        answer_submit(st);
      } else if (st->state == ST_BODY || st->state == ST_HEADERS) {
        refuse(st, SPAA_H2_DEADLINE);
      }
    }
  }
  return next;
}

static const char *const slow_reason[2] = {"grpc_frame_timeout", "grpc_stream_too_slow"};
static const char *const over_reason[2] = {"grpc_max_connections", "grpc_hard_limit"};

/* 1 when t has counts to log and its interval has passed since its last line. */
static int tally_due(const struct h2_tally *t, int64_t now)
{
  return (t->n[0] | t->n[1]) &&
         (!t->logged_ns || now - t->logged_ns >= SPAA_HTTP_LOG_INTERVAL_S * 1000000000LL);
}

static void tally_logged(struct h2_tally *t, int64_t now)
{
  t->n[0] = t->n[1] = 0;
  t->logged_ns = now;
}

/* The tallies' lines, when due (after each event, and each loop round for the counts of an
 * interval no later event came to log). */
static void tallies_log(struct spaa_h2 *h, int64_t now)
{
  if (tally_due(&h->over, now)) {
    spaa_log(SPAA_LOG_WARN, "grpc connections over the limit",
             "answered=%llu closed=%llu total_answered=%llu total_closed=%llu max=%zu "
             "interval_s=%d", h->over.n[0], h->over.n[1], h->over.total[0], h->over.total[1],
             h->max_conns, SPAA_HTTP_LOG_INTERVAL_S);
    tally_logged(&h->over, now);
  }
  if (tally_due(&h->slow, now)) {
    spaa_log(SPAA_LOG_WARN, "grpc slow clients dropped",
             "connections=%llu streams=%llu total_connections=%llu total_streams=%llu "
             "header_timeout_s=%u body_min_rate=%zu idle_timeout_s=%u interval_s=%d",
             h->slow.n[0], h->slow.n[1], h->slow.total[0], h->slow.total[1],
             h->o.header_timeout, h->o.body_min_rate, h->o.idle_timeout,
             SPAA_HTTP_LOG_INTERVAL_S);
    tally_logged(&h->slow, now);
  }
}

/* One event of kind k of tally t, counted in metric family f under reason[k]. */
static void tally_add(struct spaa_h2 *h, struct h2_tally *t, int k, enum spaa_metric f,
                      const char *const *reason, int64_t now)
{
  t->n[k]++;
  t->total[k]++;
  spaa_metrics_add(h->o.metrics, f, reason[k], NULL, 1);
  tallies_log(h, now);
}

static void slow_count(struct spaa_h2 *h, int stream, int64_t now)
{
  tally_add(h, &h->slow, stream, SPAA_METRIC_CONNECTIONS_DROPPED, slow_reason, now);
}

/* 1 when a stream still reading its header block or body is too slow: the block not whole
 * within header_timeout; the body stalled (not a byte for idle_timeout, whatever came
 * before: a client that sent all of a message but its last bytes holds it otherwise for as
 * long as its average stays over body_min_rate), or under body_min_rate on average past
 * header_timeout. */
static int stream_slow(const struct spaa_h2 *h, const struct h2_stream *st, int64_t now)
{
  int64_t age = now - st->begin_ns;
  if (st->slow)
    return 0;
  if (st->state == ST_HEADERS)
    return age > h->header_ns;
  if (st->state != ST_BODY)
    return 0;
  if (h->idle_ns && now - st->data_ns > h->idle_ns)
    return 1;
  return age > h->header_ns && h->o.body_min_rate &&
         (double)st->body.len < (double)age / 1e9 * (double)h->o.body_min_rate;
}

/* 1 when the frame under way (or the client preface) is not whole in time: header_timeout,
 * plus its length at body_min_rate. */
static int frame_slow(const struct spaa_h2 *h, const struct h2_conn *c, int64_t now)
{
  int64_t allow = h->header_ns;
  if (!c->fr_since_ns)
    return 0;
  if (h->o.body_min_rate)
    allow += (int64_t)((double)c->fr_len / (double)h->o.body_min_rate * 1e9);
  return now - c->fr_since_ns > allow;
}

static void over_count(struct spaa_h2 *h, int closed, int64_t now)
{
  tally_add(h, &h->over, closed, SPAA_METRIC_CONNECTIONS_REFUSED, over_reason, now);
}

/* Accept what is waiting. Past max_conns, a connection is still served long enough to
 * answer its first stream with SPAA_H2_CONNS (gRPC clients see a status they retry on, not a
 * reset socket); past SPAA_H2_REFUSING of those, it is closed at once. */
static void accept_all(struct spaa_h2 *h)
{
  for (;;) {
    int one = 1, fd = accept4(h->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC), refusing;
    if (fd < 0)
      return;
    refusing = h->n_conns >= h->max_conns;
    if (refusing && h->n_refusing >= SPAA_H2_REFUSING) {
      over_count(h, 1, mono_ns());
      close(fd);
      continue;
    }
    if (refusing)
      over_count(h, 0, mono_ns());
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    conn_new(h, fd, refusing);
  }
}

/* Take the workers' answers back. */
static void take_done(struct spaa_h2 *h)
{
  struct h2_stream *st;
  uint64_t v;
  ssize_t n = read(h->efd, &v, sizeof(v));
  (void)n;
  pthread_mutex_lock(&h->mu);
  st = h->done;
  h->done = NULL;
  pthread_mutex_unlock(&h->mu);
  while (st) {
    struct h2_stream *next = st->qnext;
    take_back(st);
    st = next;
  }
}

/* The client did not acknowledge our SETTINGS in time: GOAWAY SETTINGS_TIMEOUT, and the
 * connection closes once it is sent (or H2_CLOSE_GRACE_NS later if the peer does not read). */
static void settings_expired(struct h2_conn *c, int64_t now)
{
  spaa_log(SPAA_LOG_INFO, "grpc connection closed: SETTINGS not acknowledged", "timeout_ms=%lld",
           (long long)(c->h->settings_timeout_ns / 1000000));
  c->settings_ns = 0;
  c->goaway = 1;
  c->closing_ns = now;
  if (nghttp2_session_terminate_session(c->s, NGHTTP2_SETTINGS_TIMEOUT))
    c->dead = 1;
}

/* 1 when the connection is to be closed now. */
static int conn_done(struct h2_conn *c, int64_t now)
{
  int64_t idle = (int64_t)c->h->o.idle_timeout * 1000000000LL;
  if (c->dead || conn_flush(c))
    return 1;
  if (c->closing_ns && now - c->closing_ns > H2_CLOSE_GRACE_NS)
    return 1; /* terminated, and its GOAWAY cannot be written: the peer does not read */
  if (c->goaway && !c->streams && now - c->last_ns > 2 * idle)
    return 1; /* a peer that does not read: close anyway */
  if (c->out_off < c->out.len && now - c->wrote_ns > 2 * idle)
    return 1; /* nothing written for that long with bytes waiting: a peer that stopped */
  return !nghttp2_session_want_read(c->s) && !nghttp2_session_want_write(c->s) &&
         c->out_off == c->out.len;
}

/* Close the connections that are done or dead; flush the others. Idle ones time out, and so
 * do those whose client does not acknowledge our SETTINGS. */
static void sweep(struct spaa_h2 *h, int64_t now)
{
  struct h2_conn **pp = &h->conns;
  int64_t idle = (int64_t)h->o.idle_timeout * 1000000000LL;
  while (*pp) {
    struct h2_conn *c = *pp;
    if (c->settings_ns && !c->closing_ns && now - c->settings_ns > h->settings_timeout_ns)
      settings_expired(c, now);
    /* quiescing, or idle (no stream, nothing read for idle_timeout, the client preface and
     * SETTINGS included): GOAWAY, then the connection closes once it has nothing to do */
    if (__atomic_load_n(&h->quiesce, __ATOMIC_RELAXED) || (!c->streams && now - c->last_ns > idle) ||
        (c->refusing && now - c->born_ns > H2_REFUSING_GRACE_NS))
      conn_goaway(c);
    if (!c->dead && frame_slow(h, c, now)) {
      c->dead = 1; /* a frame trickled in (slowloris): closed, nothing to answer */
      slow_count(h, 0, now);
    }
    c->dead = conn_done(c, now);
    if (c->dead) {
      *pp = c->next;
      if (c->refusing)
        h->n_refusing--;
      else
        h->n_conns--;
      conn_free(c);
    } else {
      pp = &c->next;
    }
  }
}

static void *loop_main(void *arg)
{
  struct spaa_h2 *h = arg;
  struct pollfd *pfd = calloc(h->max_conns + SPAA_H2_REFUSING + 2, sizeof(*pfd));
  struct h2_conn **map = calloc(h->max_conns + SPAA_H2_REFUSING + 2, sizeof(*map));
  while (pfd && map && !__atomic_load_n(&h->stop, __ATOMIC_RELAXED)) {
    int64_t now = mono_ns(), next = deadlines(h, now), wait_ms = 1000;
    size_t n = 0, i;
    struct h2_conn *c;
    if (__atomic_load_n(&h->quiesce, __ATOMIC_RELAXED) && h->lfd >= 0) {
      close(h->lfd);
      h->lfd = -1;
    }
    sweep(h, now);
    tallies_log(h, now); /* the counts of an interval no later event came to log */
    pfd[n].fd = h->efd;
    pfd[n++].events = POLLIN;
    if (h->lfd >= 0) {
      pfd[n].fd = h->lfd;
      pfd[n++].events = POLLIN;
    }
    for (c = h->conns; c; c = c->next) {
      map[n] = c;
      pfd[n].fd = c->fd;
      pfd[n++].events = (short)(POLLIN | (c->out_off < c->out.len ? POLLOUT : 0));
    }
    if (next)
      wait_ms = (next - now) / 1000000 + 1 < wait_ms ? (next - now) / 1000000 + 1 : wait_ms;
    if (poll(pfd, n, (int)wait_ms) < 0 && errno != EINTR)
      break;
    for (i = 0; i < n; i++) {
      if (!pfd[i].revents)
        continue;
      if (pfd[i].fd == h->efd)
        take_done(h);
      else if (pfd[i].fd == h->lfd)
        accept_all(h);
      else if ((pfd[i].revents & (POLLIN | POLLERR | POLLHUP)) && conn_read(map[i]))
        map[i]->dead = 1;
    }
  }
  free(pfd);
  free(map);
  return NULL;
}

/* ---- workers -------------------------------------------------------------------------------- */

static void *worker_main(void *arg)
{
  struct spaa_h2 *h = arg;
  for (;;) {
    struct h2_stream *st;
    pthread_mutex_lock(&h->mu);
    while (!h->qhead && !h->wstop)
      pthread_cond_wait(&h->cv, &h->mu);
    if (!h->qhead) {
      pthread_mutex_unlock(&h->mu);
      return NULL;
    }
    st = h->qhead;
    h->qhead = st->qnext;
    if (!h->qhead)
      h->qtail = NULL;
    h->qlen--;
    pthread_mutex_unlock(&h->mu);
    if (!__atomic_load_n(&st->cancelled, __ATOMIC_RELAXED))
      h->svc.run(h->svc.ctx, &st->req, &st->wans);
    pthread_mutex_lock(&h->mu);
    st->qnext = h->done;
    h->done = st;
    pthread_mutex_unlock(&h->mu);
    wake(h);
  }
}

/* ---- life cycle ----------------------------------------------------------------------------- */

static int bind_listen(struct spaa_h2 *h, struct spaa_err *err)
{
  struct sockaddr_storage ss;
  socklen_t sl;
  int one = 1;
  memset(&ss, 0, sizeof(ss));
  if (h->o.ipv6) {
    struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
    a->sin6_family = AF_INET6;
    a->sin6_port = htons(h->o.port);
    inet_pton(AF_INET6, h->o.host, &a->sin6_addr);
    sl = sizeof(*a);
  } else {
    struct sockaddr_in *a = (struct sockaddr_in *)&ss;
    a->sin_family = AF_INET;
    a->sin_port = htons(h->o.port);
    inet_pton(AF_INET, h->o.host, &a->sin_addr);
    sl = sizeof(*a);
  }
  h->lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (h->lfd < 0)
    return spaa_err_set(err, SPAA_E_IO, 0, 0, "gRPC listener: socket: %s", strerror(errno));
  setsockopt(h->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (bind(h->lfd, (struct sockaddr *)&ss, sl) || listen(h->lfd, 512))
    return spaa_err_set(err, SPAA_E_IO, 0, 0, "gRPC listener: cannot listen on %s%s%s:%u: %s",
                        h->o.ipv6 ? "[" : "", h->o.host, h->o.ipv6 ? "]" : "", h->o.port,
                        strerror(errno));
  sl = sizeof(ss);
  getsockname(h->lfd, (struct sockaddr *)&ss, &sl);
  h->port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                           : ((struct sockaddr_in *)&ss)->sin_port);
  return 0;
}

static void h2_free(struct spaa_h2 *h)
{
  while (h->conns) {
    struct h2_conn *c = h->conns;
    h->conns = c->next;
    conn_free(c);
  }
  while (h->done) { /* answers nobody takes back any more */
    struct h2_stream *st = h->done;
    h->done = st->qnext;
    st->in_worker = 0;
    stream_free(st);
  }
  if (h->lfd >= 0)
    close(h->lfd);
  if (h->efd >= 0)
    close(h->efd);
  pthread_mutex_destroy(&h->mu);
  pthread_cond_destroy(&h->cv);
  free(h->workers);
  free(h);
}

static void workers_stop(struct spaa_h2 *h)
{
  unsigned i;
  pthread_mutex_lock(&h->mu);
  h->wstop = 1;
  pthread_cond_broadcast(&h->cv);
  pthread_mutex_unlock(&h->mu);
  for (i = 0; i < h->n_workers; i++)
    pthread_join(h->workers[i], NULL);
  h->n_workers = 0;
}

int spaa_h2_start(const struct spaa_h2_opts *o, const struct spaa_h2_service *svc,
                  struct spaa_h2 **out, struct spaa_err *err)
{
  struct spaa_h2 *h = calloc(1, sizeof(*h));
  unsigned i;
  int rc;
  *out = NULL;
  if (!h)
    return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
  h->o = *o;
  h->svc = *svc;
  h->max_conns = o->max_conns ? o->max_conns : H2_MAX_CONNS;
  h->header_ns = (int64_t)(o->header_timeout ? o->header_timeout : 10) * 1000000000LL;
  h->idle_ns = (int64_t)o->idle_timeout * 1000000000LL;
  for (i = 0; i < 2; i++) { /* every reason listed from the start, at 0 */
    spaa_metrics_add(o->metrics, SPAA_METRIC_CONNECTIONS_REFUSED, over_reason[i], NULL, 0);
    spaa_metrics_add(o->metrics, SPAA_METRIC_CONNECTIONS_DROPPED, slow_reason[i], NULL, 0);
  }
  h->settings_timeout_ns = (int64_t)(o->idle_timeout && o->idle_timeout < H2_SETTINGS_TIMEOUT_S
                                         ? o->idle_timeout : H2_SETTINGS_TIMEOUT_S) * 1000000000LL;
  h->lfd = h->efd = -1;
  pthread_mutex_init(&h->mu, NULL);
  pthread_cond_init(&h->cv, NULL);
  if ((rc = bind_listen(h, err)))
    goto fail;
  if ((h->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0 ||
      !(h->workers = calloc(o->workers ? o->workers : 1, sizeof(*h->workers)))) {
    rc = spaa_err_set(err, SPAA_E_NOMEM, 0, 0, "gRPC listener: no eventfd or memory");
    goto fail;
  }
  for (i = 0; i < (o->workers ? o->workers : 1); i++, h->n_workers++)
    if (pthread_create(&h->workers[i], NULL, worker_main, h)) {
      rc = spaa_err_set(err, SPAA_E_NOMEM, 0, 0, "gRPC listener: cannot start a worker");
      goto fail;
    }
  if (pthread_create(&h->loop, NULL, loop_main, h)) {
    rc = spaa_err_set(err, SPAA_E_NOMEM, 0, 0, "gRPC listener: cannot start its thread");
    goto fail;
  }
  *out = h;
  return 0;
fail:
  workers_stop(h);
  h2_free(h);
  return rc;
}

uint16_t spaa_h2_port(const struct spaa_h2 *h) { return h ? h->port : 0; }

void spaa_h2_quiesce(struct spaa_h2 *h)
{
  if (!h)
    return;
  __atomic_store_n(&h->quiesce, 1, __ATOMIC_RELAXED);
  wake(h);
}

size_t spaa_h2_inflight(const struct spaa_h2 *h)
{
  return h ? __atomic_load_n(&h->inflight, __ATOMIC_RELAXED) : 0;
}

void spaa_h2_stop(struct spaa_h2 *h, unsigned grace_ms)
{
  struct timespec tick = {0, 10 * 1000 * 1000};
  unsigned waited = 0;
  if (!h)
    return;
  spaa_h2_quiesce(h);
  while (spaa_h2_inflight(h) && waited < grace_ms) {
    nanosleep(&tick, NULL);
    waited += 10;
  }
  __atomic_store_n(&h->stop, 1, __ATOMIC_RELAXED);
  wake(h);
  pthread_join(h->loop, NULL);
  workers_stop(h);
  h2_free(h);
}
