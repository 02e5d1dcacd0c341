/* Connection bookkeeping for the HTTP core: how many connections are open, where each one
 * is in its request (waiting for a head, receiving a body, answered by a worker), and a
 * reaper thread that enforces the deadlines libmicrohttpd has no option for: a request head
 * must be complete within header_timeout seconds of its first byte, and a body must keep a
 * minimum rate once the first header_timeout seconds have passed. A late connection is shut
 * down (its socket, so that libmicrohttpd closes it on its own thread). Also counts the
 * events that must not log a line each (refusals, drops) and logs them once per interval. */
#ifndef SPAA_SERVER_CONNS_H
#define SPAA_SERVER_CONNS_H

#include <stddef.h>
#include <stdint.h>

/* Events counted and logged once per interval, with how many there were. */
enum spaa_conns_event {
  SPAA_CONNS_OVER_LIMIT = 0, /* a request answered 503: too many connections */
  SPAA_CONNS_MHD_LIMIT,      /* a connection libmicrohttpd closed unanswered (hard limit) */
  SPAA_CONNS_HEAD_LATE,      /* a connection dropped: its head took too long */
  SPAA_CONNS_BODY_SLOW,      /* a connection dropped: its body came too slowly */
  SPAA_CONNS_OVER_BUDGET,    /* a request answered 503/429: the memory budget was full */
  SPAA_CONNS_POOL_FULL,      /* a request answered 503: the worker queue was full */
  SPAA_CONNS_MHD_MSG,        /* a message of libmicrohttpd about one connection (at debug) */
  SPAA_CONNS_EDGE,           /* a request answered at the edge: what libmicrohttpd refuses
                              * before any handler (http_edge.c), each at level debug */
  SPAA_CONNS__COUNT
};

struct spaa_metrics;

struct spaa_conns_opts {
  unsigned header_timeout_s; /* seconds from a head's first byte to its end (0 = no limit) */
  size_t body_min_rate;      /* bytes/s a body must average after header_timeout_s (0 = off) */
  unsigned log_interval_s;   /* how often counted events are logged (>= 1) */
  struct spaa_metrics *metrics; /* where open connections and the events are counted too
                                 * (borrowed; NULL: nowhere) */
};

struct spaa_conns;
struct spaa_conn;

/* Start the bookkeeping and its reaper thread. 0, or -1 (out of memory, no thread). */
int spaa_conns_new(const struct spaa_conns_opts *o, struct spaa_conns **out);
/* Stop the reaper, log the counts not logged yet, free (connections still listed are
 * forgotten, not closed). NULL-safe. */
void spaa_conns_free(struct spaa_conns *c);

/* A connection was accepted on socket fd: returns its entry (owned by c until
 * spaa_conns_close), or NULL when out of memory (the connection is then not tracked). */
struct spaa_conn *spaa_conns_open(struct spaa_conns *c, int fd);
/* The connection is about to be closed: unlist and free its entry (NULL-safe). After this
 * returns the reaper never touches its socket again. */
void spaa_conns_close(struct spaa_conns *c, struct spaa_conn *conn);
/* Connections open now. */
size_t spaa_conns_count(const struct spaa_conns *c);

/* Phases of a connection's current request, told by the thread serving it (NULL-safe). */
void spaa_conn_head_done(struct spaa_conn *conn);           /* the head is in; the body starts */
void spaa_conn_body_bytes(struct spaa_conn *conn, size_t n); /* n more body bytes came in */
void spaa_conn_body_done(struct spaa_conn *conn);           /* the body is in: no deadline */
void spaa_conn_request_end(struct spaa_conn *conn);         /* answered: wait for a head */
/* The request was answered `status` at the edge (http_edge.c), not by a handler: counted
 * as an event and in the requests metric (route "-"); kept for spaa_conn_edge_status. */
void spaa_conn_edge(struct spaa_conn *conn, unsigned status);
/* The status the connection's request was answered at the edge, or 0 (NULL-safe). */
unsigned spaa_conn_edge_status(const struct spaa_conn *conn);
/* What the request's URI held as sent, before libmicrohttpd decoded its %XX escapes (which
 * it does before any handler sees the path): set for each request line, read by the
 * request's checks. NULL-safe (nothing kept; 0 read). */
#define SPAA_URI_NUL 1u   /* %00 in the path: a NUL byte would end it early */
#define SPAA_URI_SLASH 2u /* %2F in the path: a '/' that is no separator of its own */
#define SPAA_URI_ARG_NUL 4u /* %00 in a query argument (its name is kept: param) */
#define SPAA_URI_PARAM_MAX 48 /* bytes of that argument's name kept, as sent */
/* flags, and for SPAA_URI_ARG_NUL the argument's name as sent (param[0..n), cut at
 * SPAA_URI_PARAM_MAX; n 0 for none) */
void spaa_conn_set_uri_flags(struct spaa_conn *conn, unsigned flags, const char *param,
                             size_t n);
/* The flags; param (size SPAA_URI_PARAM_MAX + 1) receives the name, NUL-terminated. */
unsigned spaa_conn_uri_flags(const struct spaa_conn *conn, char *param);

/* Count one event; logged (with the count since the last line) by the reaper once per
 * interval. Lock-free. */
void spaa_conns_note(struct spaa_conns *c, enum spaa_conns_event ev);
/* Events counted since start (for tests and metrics). */
uint64_t spaa_conns_total(const struct spaa_conns *c, enum spaa_conns_event ev);

#endif
