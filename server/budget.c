/* The memory budget for requests in flight (budget.h). */
#include "server/budget.h"

#include <malloc.h>
#include <pthread.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/compress.h"
#include "base/limits.h"
#include "server/metrics.h"

struct spaa_budget {
  pthread_mutex_t mu;          /* guards the counts below */
  pthread_cond_t cv;           /* signalled when bytes are given back */
  size_t cap;                  /* bytes requests in flight may hold */
  size_t used;                 /* bytes they hold now */
  size_t peak;                 /* most held at once */
  size_t since_trim;           /* bytes charged since memory was last returned */
  size_t working;              /* conversions holding a charge */
  struct spaa_metrics *metrics;
};

/* ---- JSON values and decoders ----------------------------------------------------------------
 * A conversion's JSON values count against its meter too: one sample's few attribute indexes
 * on the OTLP wire can become a context object of as many keys, and parsed documents are
 * part of what a request holds. jansson allocates through json_alloc and json_release, which
 * charge the meter of the conversion running on the thread, if any, with what malloc really
 * gave. A value freed where no conversion runs (or another) leaves that meter's count high,
 * never low by more than what that thread freed. The body's decoders (their windows) are
 * charged the same way (spaa_decoder_alloc_set). */
static _Thread_local struct spaa_meter *json_meter;
static pthread_once_t json_hooked = PTHREAD_ONCE_INIT;

static void *json_alloc(size_t n)
{
  struct spaa_meter *m = json_meter;
  void *r = malloc(n);
  if (r && m && spaa_meter_add(m, malloc_usable_size(r))) {
    free(r);
    return NULL;
  }
  return r;
}

static void json_release(void *r)
{
  struct spaa_meter *m = json_meter;
  if (r && m)
    spaa_meter_sub(m, malloc_usable_size(r));
  free(r);
}

/* The body's decoders alike: a br stream's window is 16 MiB whatever its size on the wire. */
static void *decoder_alloc(void *opaque, size_t n)
{
  (void)opaque;
  return json_alloc(n);
}

static void decoder_release(void *opaque, void *p)
{
  (void)opaque;
  json_release(p);
}

static void json_hook(void)
{
  json_set_alloc_funcs(json_alloc, json_release);
  spaa_decoder_alloc_set(decoder_alloc, decoder_release);
}

/* A quarter of the machine's memory. */
static size_t default_cap(void)
{
  long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || psz <= 0)
    return (size_t)1 << 30;
  return (size_t)pages / 4 * (size_t)psz;
}

int spaa_budget_new(size_t cap, struct spaa_metrics *metrics, struct spaa_budget **out)
{
  struct spaa_budget *b = calloc(1, sizeof(*b));
  *out = NULL;
  if (!b)
    return SPAA_E_NOMEM;
  b->cap = cap ? cap : default_cap();
  b->metrics = metrics;
  pthread_once(&json_hooked, json_hook);
  pthread_mutex_init(&b->mu, NULL);
  pthread_cond_init(&b->cv, NULL);
  spaa_metrics_set(metrics, SPAA_METRIC_BUDGET_LIMIT, NULL, NULL, (int64_t)b->cap);
  spaa_metrics_set(metrics, SPAA_METRIC_BUDGET_USED, NULL, NULL, 0);
  *out = b;
  return 0;
}

void spaa_budget_free(struct spaa_budget *b)
{
  if (!b)
    return;
  pthread_cond_destroy(&b->cv);
  pthread_mutex_destroy(&b->mu);
  free(b);
}

size_t spaa_budget_cap(const struct spaa_budget *b) { return b->cap; }

size_t spaa_budget_peak(struct spaa_budget *b)
{
  size_t v;
  pthread_mutex_lock(&b->mu);
  v = b->peak;
  pthread_mutex_unlock(&b->mu);
  return v;
}

/* The bytes held into the metrics (under mu, so that the last value set is the last one
 * computed). */
static void publish(struct spaa_budget *b)
{
  if (b->used > b->peak)
    b->peak = b->used;
  spaa_metrics_set(b->metrics, SPAA_METRIC_BUDGET_USED, NULL, NULL, (int64_t)b->used);
}

/* Charge n bytes, waiting up to wait_ms. Admitted when they fit; or when the budget holds
 * nothing but `own` bytes of the same request (0: nothing at all); or, for a conversion
 * (work = 1), when no other conversion holds it. 0, or -1: not admitted. */
static int take(struct spaa_budget *b, size_t n, unsigned wait_ms, int work, size_t own)
{
  struct timespec dl;
  int rc = 0;
  clock_gettime(CLOCK_REALTIME, &dl);
  dl.tv_sec += wait_ms / 1000;
  dl.tv_nsec += (long)(wait_ms % 1000) * 1000000L;
  if (dl.tv_nsec >= 1000000000L) {
    dl.tv_sec++;
    dl.tv_nsec -= 1000000000L;
  }
  pthread_mutex_lock(&b->mu);
  while (n > b->cap - (b->used < b->cap ? b->used : b->cap) && b->used > own &&
         !(work && !b->working)) {
    if (!wait_ms || pthread_cond_timedwait(&b->cv, &b->mu, &dl)) {
      rc = -1;
      break;
    }
  }
  if (!rc) {
    b->working += work ? 1 : 0;
    b->used += n;
    b->since_trim += n;
    publish(b);
  }
  pthread_mutex_unlock(&b->mu);
  return rc;
}

int spaa_budget_take(struct spaa_budget *b, size_t n, unsigned wait_ms, int work)
{
  return take(b, n, wait_ms, work, 0);
}

void spaa_budget_give(struct spaa_budget *b, size_t n, int work)
{
  int trim = 0;
  if (!n && !work)
    return;
  pthread_mutex_lock(&b->mu);
  b->working -= work && b->working ? 1 : 0;
  b->used -= n < b->used ? n : b->used;
  publish(b);
  if (!b->used && b->since_trim >= SPAA_HTTP_TRIM_AFTER) {
    b->since_trim = 0;
    trim = 1;
  }
  pthread_cond_broadcast(&b->cv);
  pthread_mutex_unlock(&b->mu);
  if (trim)
    malloc_trim(0);
}

/* ---- a conversion's charge and its meter --------------------------------------------------- */

/* spaa_meter.ask: the models passed their share. Take twice the growth (rounded up to a
 * step, so that a growing model asks seldom): the model's bytes, then the store's
 * preparation of it. Past the ceiling, refused for good; else admitted when it fits, or when
 * nothing but this request holds the budget (as the advance charge of a conversion alone);
 * else, after a short wait, refused as busy. */
static int work_ask(struct spaa_meter *m, size_t need)
{
  struct spaa_budget_work *w = m->ctx;
  struct spaa_budget *b = w->b;
  const size_t step = SPAA_BUDGET_GROW_STEP, mib = (size_t)1 << 20;
  size_t more, ceiling = b->cap > SPAA_BUDGET_MIN_CEILING ? b->cap : SPAA_BUDGET_MIN_CEILING;
  size_t reach = m->room + need; /* what the models would hold (meter_add checked the sum) */
  const char *whose = w->read ? "this request reads" : "of this request";
  if (need > ceiling / 2)
    need = ceiling / 2 + 1; /* past the ceiling: refused below */
  more = 2 * ((need + step - 1) / step * step);
  if (more > ceiling || w->charged > ceiling - more)
    return spaa_err_set(&m->why, w->read ? SPAA_E_OVER_BUDGET : SPAA_E_TOO_LARGE, 0, 0,
                        "the profiles %s need more than %zu MiB in memory%s, the most one "
                        "request may hold (the memory budget for requests in flight, at least "
                        "%zu MiB; %zu MiB of models were built): %s", whose, ceiling / mib,
                        w->read ? "" : " once expanded", (size_t)SPAA_BUDGET_MIN_CEILING / mib,
                        (m->held + mib - 1) / mib,
                        w->read ? "ask for fewer or smaller profiles, or raise --memory-budget"
                                : "send fewer or smaller profiles per request");
  if (take(b, more, SPAA_BUDGET_GROW_WAIT_MS, 0, w->charged + w->body))
    return spaa_err_set(&m->why, SPAA_E_BUSY, 0, 0, "the profiles %s grew to %zu MiB in memory "
                        "and the memory budget for requests in flight is held by others; "
                        "retry later", whose, (reach + mib - 1) / mib);
  w->charged += more;
  w->grown += more;
  m->room += more / 2;
  return 0;
}

size_t spaa_budget_cost(size_t decoded, size_t factor)
{
  size_t f = factor ? factor : SPAA_HTTP_MODEL_FACTOR;
  return decoded > ((size_t)-1) / f / 2 ? (size_t)-1 / 2 : decoded * f;
}

int spaa_budget_work_begin(struct spaa_budget_work *w, struct spaa_budget *b, size_t body,
                           size_t cost, unsigned wait_ms)
{
  memset(w, 0, sizeof(*w));
  if (!b)
    return 0;
  if (spaa_budget_take(b, cost, wait_ms, 1))
    return -1;
  w->b = b;
  w->body = body;
  w->charged = w->base = cost;
  w->meter.room = cost;
  w->meter.ask = work_ask;
  w->meter.ctx = w;
  w->prev = json_meter;
  json_meter = &w->meter;
  return 0;
}

void spaa_budget_work_adjust(struct spaa_budget_work *w, size_t cost)
{
  struct spaa_budget *b = w->b;
  if (!b)
    return;
  pthread_mutex_lock(&b->mu);
  if (cost < w->base)
    b->used -= w->base - cost < b->used ? w->base - cost : b->used;
  else
    b->used += cost - w->base;
  publish(b);
  pthread_cond_broadcast(&b->cv);
  pthread_mutex_unlock(&b->mu);
  w->base = cost;
  w->charged = cost + w->grown;
  w->meter.room = cost + w->grown / 2;
}

void spaa_budget_json_unmetered(void)
{
  json_meter = NULL;
}

void spaa_budget_work_end(struct spaa_budget_work *w)
{
  if (w->b && json_meter == &w->meter)
    json_meter = w->prev;
}

void spaa_budget_work_give(struct spaa_budget_work *w)
{
  if (!w->b)
    return;
  spaa_budget_work_end(w);
  spaa_budget_give(w->b, w->charged, 1);
  w->b = NULL;
  w->charged = 0;
}
