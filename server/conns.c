/* Connection bookkeeping and the deadline reaper (see conns.h). The list is guarded by one
 * mutex that spaa_conns_close also takes, so the reaper never shuts down a socket that
 * libmicrohttpd has closed (and the kernel may have handed to a new connection): MHD tells
 * us a connection is closing before it closes the descriptor. Whether a waiting connection
 * has started a head is read from the kernel (TCP_INFO bytes_received): an idle keep-alive
 * connection is left to the idle timeout, a head trickling in is held to the deadline. */
#include "server/conns.h"

#include <netinet/in.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <linux/tcp.h>

#include "server/log.h"
#include "server/metrics.h"

#define REAPER_TICK_MS 250

enum conn_phase { PH_HEAD = 0, PH_BODY, PH_WORK };

struct spaa_conn {
  struct spaa_conn *prev, *next; /* the list (under c->mu) */
  int fd;                        /* the socket (borrowed from libmicrohttpd) */
  int phase;                     /* atomic: enum conn_phase */
  int64_t phase_ns;              /* atomic: monotonic time the phase began */
  unsigned gen;                  /* atomic: bumped at each head wait */
  uint64_t mark;                 /* reaper only: kernel bytes_received when the wait began */
  size_t body_bytes;             /* atomic: body bytes of the current request */
  unsigned seen_gen;             /* reaper only: gen that head_seen_ns belongs to */
  int64_t head_seen_ns;          /* reaper only: when the head's first bytes were seen */
  int dropped;                   /* reaper only: shut down already */
  struct spaa_conns *owner;      /* the bookkeeping it is listed in */
  unsigned edge_status;          /* atomic: its answer at the edge (spaa_conn_edge), or 0 */
  unsigned uri_flags;            /* SPAA_URI_* of its current request line (its I/O thread) */
  char uri_param[SPAA_URI_PARAM_MAX + 1]; /* the argument of SPAA_URI_ARG_NUL, as sent */
};

struct spaa_conns {
  struct spaa_conns_opts o;      /* deadlines and interval */
  pthread_mutex_t mu;            /* guards the list and stop */
  pthread_cond_t cv;             /* wakes the reaper to stop */
  struct spaa_conn *head;        /* open connections */
  size_t n;                      /* atomic: open connections */
  int stop;                      /* the reaper should leave */
  pthread_t reaper;              /* the reaper thread */
  uint64_t total[SPAA_CONNS__COUNT];  /* atomic: events since start */
  uint64_t logged[SPAA_CONNS__COUNT]; /* reaper only: totals at the last log line */
  int64_t last_log_ns;           /* reaper only */
};

static const char *const event_msg[SPAA_CONNS__COUNT] = {
    "answered 503: over the connection limit",
    "connections closed unanswered by libmicrohttpd: over its hard limit",
    "connections dropped: request head not complete within the header timeout",
    "connections dropped: request body slower than the minimum rate",
    "answered 503/429: over the memory budget for requests in flight",
    "answered 503: the worker queue is full",
    "libmicrohttpd reported connection errors (each at level debug)",
    ("requests answered at the edge: a head over libmicrohttpd's memory, a malformed "
     "Content-Length or chunked body, an unknown HTTP version (each at level debug)"),
};

/* Where each event counts in the metrics (family and reason; SPAA_METRIC__COUNT: nowhere). */
static const struct {
  enum spaa_metric f;
  const char *reason;
} event_metric[SPAA_CONNS__COUNT] = {
    {SPAA_METRIC_CONNECTIONS_REFUSED, "max_connections"},
    {SPAA_METRIC_CONNECTIONS_REFUSED, "hard_limit"},
    {SPAA_METRIC_CONNECTIONS_DROPPED, "header_timeout"},
    {SPAA_METRIC_CONNECTIONS_DROPPED, "body_min_rate"},
    {SPAA_METRIC_REQUESTS_BUSY, "memory_budget"},
    {SPAA_METRIC_REQUESTS_BUSY, "worker_queue"},
    {SPAA_METRIC__COUNT, NULL},
    {SPAA_METRIC__COUNT, NULL}, /* counted by status, in spaa_conn_edge */
};

static int64_t mono_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Bytes the kernel has received on fd, or -1. */
static int64_t tcp_received(int fd)
{
  struct tcp_info ti;
  socklen_t l = sizeof(ti);
  memset(&ti, 0, sizeof(ti));
  if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &l) || l < offsetof(struct tcp_info,
                                                                   tcpi_bytes_received) + 8)
    return -1;
  return (int64_t)ti.tcpi_bytes_received;
}

static void drop(struct spaa_conns *c, struct spaa_conn *k, enum spaa_conns_event ev)
{
  k->dropped = 1;
  shutdown(k->fd, SHUT_RDWR); /* libmicrohttpd sees the end and closes it */
  spaa_conns_note(c, ev);
}

/* One pass over the list: enforce the deadlines. Under c->mu. */
static void reap(struct spaa_conns *c, int64_t now)
{
  int64_t head_ns = (int64_t)c->o.header_timeout_s * 1000000000LL;
  struct spaa_conn *k;
  for (k = c->head; k; k = k->next) {
    int ph = __atomic_load_n(&k->phase, __ATOMIC_ACQUIRE);
    int64_t since = __atomic_load_n(&k->phase_ns, __ATOMIC_ACQUIRE);
    if (k->dropped || !head_ns)
      continue;
    if (ph == PH_HEAD) {
      unsigned gen = __atomic_load_n(&k->gen, __ATOMIC_ACQUIRE);
      if (gen != k->seen_gen) { /* a new wait: what the kernel holds now is the mark */
        int64_t got = gen == 1 ? 0 : tcp_received(k->fd); /* the first head: from byte 0 */
        k->seen_gen = gen;
        k->head_seen_ns = 0;
        k->mark = got < 0 ? 0 : (uint64_t)got;
        continue;
      }
      if (!k->head_seen_ns) {
        int64_t got = tcp_received(k->fd);
        if (got < 0)
          k->head_seen_ns = since; /* no kernel figure: the deadline runs from the wait */
        else if ((uint64_t)got > k->mark)
          k->head_seen_ns = now;
      }
      if (k->head_seen_ns && now - k->head_seen_ns >= head_ns)
        drop(c, k, SPAA_CONNS_HEAD_LATE);
    } else if (ph == PH_BODY && c->o.body_min_rate && now - since > head_ns) {
      double secs = (double)(now - since) / 1e9;
      size_t got = __atomic_load_n(&k->body_bytes, __ATOMIC_ACQUIRE);
      if ((double)got < secs * (double)c->o.body_min_rate)
        drop(c, k, SPAA_CONNS_BODY_SLOW);
    }
  }
}

/* Log the events counted since the last line, one line per kind. */
static void log_counts(struct spaa_conns *c)
{
  int i;
  for (i = 0; i < SPAA_CONNS__COUNT; i++) {
    uint64_t t = __atomic_load_n(&c->total[i], __ATOMIC_ACQUIRE);
    if (t == c->logged[i])
      continue;
    spaa_log(SPAA_LOG_WARN, event_msg[i], "count=%llu total=%llu interval_s=%u",
             (unsigned long long)(t - c->logged[i]), (unsigned long long)t,
             c->o.log_interval_s);
    c->logged[i] = t;
  }
}

static void *reaper_main(void *arg)
{
  struct spaa_conns *c = arg;
  pthread_mutex_lock(&c->mu);
  while (!c->stop) {
    struct timespec ts;
    int64_t now;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += REAPER_TICK_MS * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
      ts.tv_sec++;
      ts.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(&c->cv, &c->mu, &ts);
    if (c->stop)
      break;
    now = mono_ns();
    reap(c, now);
    if (now - c->last_log_ns >= (int64_t)c->o.log_interval_s * 1000000000LL) {
      c->last_log_ns = now;
      log_counts(c);
    }
  }
  pthread_mutex_unlock(&c->mu);
  return NULL;
}

int spaa_conns_new(const struct spaa_conns_opts *o, struct spaa_conns **out)
{
  struct spaa_conns *c;
  int i;
  *out = NULL;
  if (!(c = calloc(1, sizeof(*c))))
    return -1;
  c->o = *o;
  if (!c->o.log_interval_s)
    c->o.log_interval_s = 1;
  pthread_mutex_init(&c->mu, NULL);
  pthread_cond_init(&c->cv, NULL);
  c->last_log_ns = mono_ns();
  for (i = 0; i < SPAA_CONNS__COUNT; i++) /* every reason listed from the start, at 0 */
    if (event_metric[i].f != SPAA_METRIC__COUNT)
      spaa_metrics_add(c->o.metrics, event_metric[i].f, event_metric[i].reason, NULL, 0);
  spaa_metrics_set(c->o.metrics, SPAA_METRIC_CONNECTIONS_OPEN, NULL, NULL, 0);
  if (pthread_create(&c->reaper, NULL, reaper_main, c)) {
    pthread_cond_destroy(&c->cv);
    pthread_mutex_destroy(&c->mu);
    free(c);
    return -1;
  }
  *out = c;
  return 0;
}

void spaa_conns_free(struct spaa_conns *c)
{
  struct spaa_conn *k, *next;
  if (!c)
    return;
  pthread_mutex_lock(&c->mu);
  c->stop = 1;
  pthread_cond_signal(&c->cv);
  pthread_mutex_unlock(&c->mu);
  pthread_join(c->reaper, NULL);
  log_counts(c);
  for (k = c->head; k; k = next) {
    next = k->next;
    free(k);
  }
  pthread_cond_destroy(&c->cv);
  pthread_mutex_destroy(&c->mu);
  free(c);
}

struct spaa_conn *spaa_conns_open(struct spaa_conns *c, int fd)
{
  struct spaa_conn *k = calloc(1, sizeof(*k));
  if (!k)
    return NULL;
  k->fd = fd;
  k->owner = c;
  k->phase = PH_HEAD;
  k->phase_ns = mono_ns();
  k->gen = 1;
  pthread_mutex_lock(&c->mu);
  k->next = c->head;
  if (c->head)
    c->head->prev = k;
  c->head = k;
  pthread_mutex_unlock(&c->mu);
  __atomic_add_fetch(&c->n, 1, __ATOMIC_ACQ_REL);
  spaa_metrics_add(c->o.metrics, SPAA_METRIC_CONNECTIONS_OPEN, NULL, NULL, 1);
  return k;
}

void spaa_conns_close(struct spaa_conns *c, struct spaa_conn *k)
{
  if (!k)
    return;
  pthread_mutex_lock(&c->mu);
  if (k->prev)
    k->prev->next = k->next;
  else
    c->head = k->next;
  if (k->next)
    k->next->prev = k->prev;
  pthread_mutex_unlock(&c->mu);
  __atomic_sub_fetch(&c->n, 1, __ATOMIC_ACQ_REL);
  spaa_metrics_add(c->o.metrics, SPAA_METRIC_CONNECTIONS_OPEN, NULL, NULL, -1);
  free(k);
}

size_t spaa_conns_count(const struct spaa_conns *c)
{
  return __atomic_load_n(&c->n, __ATOMIC_ACQUIRE);
}

static void set_phase(struct spaa_conn *k, int ph)
{
  __atomic_store_n(&k->phase_ns, mono_ns(), __ATOMIC_RELEASE);
  __atomic_store_n(&k->phase, ph, __ATOMIC_RELEASE);
}

void spaa_conn_head_done(struct spaa_conn *k)
{
  if (!k)
    return;
  __atomic_store_n(&k->body_bytes, 0, __ATOMIC_RELEASE);
  set_phase(k, PH_BODY);
}

void spaa_conn_body_bytes(struct spaa_conn *k, size_t n)
{
  if (k)
    __atomic_add_fetch(&k->body_bytes, n, __ATOMIC_ACQ_REL);
}

void spaa_conn_body_done(struct spaa_conn *k)
{
  if (k)
    set_phase(k, PH_WORK);
}

void spaa_conn_request_end(struct spaa_conn *k)
{
  if (!k)
    return;
  /* no syscall here (one per request is measurable): the reaper takes the mark at its next
   * pass; bytes of the next head that came in before it are missed, later ones are not */
  __atomic_add_fetch(&k->gen, 1, __ATOMIC_ACQ_REL);
  set_phase(k, PH_HEAD);
}

void spaa_conns_note(struct spaa_conns *c, enum spaa_conns_event ev)
{
  if (!c || (unsigned)ev >= SPAA_CONNS__COUNT)
    return;
  __atomic_add_fetch(&c->total[ev], 1, __ATOMIC_ACQ_REL);
  if (event_metric[ev].f != SPAA_METRIC__COUNT)
    spaa_metrics_add(c->o.metrics, event_metric[ev].f, event_metric[ev].reason, NULL, 1);
}

uint64_t spaa_conns_total(const struct spaa_conns *c, enum spaa_conns_event ev)
{
  return (unsigned)ev < SPAA_CONNS__COUNT ? __atomic_load_n(&c->total[ev], __ATOMIC_ACQUIRE)
                                          : 0;
}

void spaa_conn_edge(struct spaa_conn *k, unsigned status)
{
  char st[12];
  if (!k)
    return;
  __atomic_store_n(&k->edge_status, status, __ATOMIC_RELEASE);
  spaa_conns_note(k->owner, SPAA_CONNS_EDGE);
  snprintf(st, sizeof(st), "%u", status);
  spaa_metrics_add(k->owner->o.metrics, SPAA_METRIC_REQUESTS, "-", st, 1);
}

unsigned spaa_conn_edge_status(const struct spaa_conn *k)
{
  return k ? __atomic_load_n(&k->edge_status, __ATOMIC_ACQUIRE) : 0;
}

void spaa_conn_set_uri_flags(struct spaa_conn *k, unsigned flags, const char *param, size_t n)
{
  if (!k)
    return;
  k->uri_flags = flags;
  n = n < SPAA_URI_PARAM_MAX ? n : SPAA_URI_PARAM_MAX;
  if (n)
    memcpy(k->uri_param, param, n);
  k->uri_param[n] = 0;
}

unsigned spaa_conn_uri_flags(const struct spaa_conn *k, char *param)
{
  param[0] = 0;
  if (!k)
    return 0;
  memcpy(param, k->uri_param, sizeof(k->uri_param));
  return k->uri_flags;
}
