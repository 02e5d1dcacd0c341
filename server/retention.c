/* The retention thread: a pass every `every_s` seconds, woken early only to stop, run only
 * while this relay leads the store's upkeep (spaa_store_lead). A pass
 * deletes by age first (one delete of everything received before now - keep_s), then, while
 * the store is over its cap, the oldest twentieth of what is left (at least
 * RETENTION_MIN_STEP profiles), measuring again after each step. Each delete runs on the
 * store's writer between batches of puts, in short transactions. The figures /metrics shows
 * are updated as the pass begins and after each delete, not only when it ends. */
#include "server/retention.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server/log.h"

#define RETENTION_MIN_STEP 1    /* profiles deleted at least per step over the cap */
#define RETENTION_MAX_STEPS 64  /* steps over the cap per pass (the next pass goes on) */

struct spaa_retention {
  struct spaa_store *store;
  struct spaa_retention_opts o;
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int wake;                        /* new rules were set: pass now, not after the interval */
  int stop;
  struct spaa_retention_stats stats; /* under mu */
};

static int64_t now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void add(struct spaa_retention_stats *st, const struct spaa_store_deleted *d, int size)
{
  if (size)
    st->deleted_size += d->profiles;
  else
    st->deleted_age += d->profiles;
  st->swept += d->dsos + d->frames + d->stacks;
}

/* One line per rule per pass; `steps` deletes made it (the reasons are the metric's). */
static void log_deleted(const char *why, const struct spaa_store_deleted *d, int steps)
{
  spaa_log(SPAA_LOG_INFO, "retention deleted profiles",
           "reason=%s profiles=%llu stacks=%llu frames=%llu dsos=%llu steps=%d bytes_before=%lld "
           "bytes_after=%lld", why, (unsigned long long)d->profiles,
           (unsigned long long)d->stacks, (unsigned long long)d->frames,
           (unsigned long long)d->dsos, steps, (long long)d->bytes_before,
           (long long)d->bytes_after);
}

/* Add one step's delete to the pass's sum (bytes: the first before, the last after). */
static void sum_deleted(struct spaa_store_deleted *sum, const struct spaa_store_deleted *d,
                        int first)
{
  if (first)
    sum->bytes_before = d->bytes_before;
  sum->bytes_after = d->bytes_after;
  sum->profiles += d->profiles;
  sum->stacks += d->stacks;
  sum->frames += d->frames;
  sum->dsos += d->dsos;
}

/* Make the pass's figures so far what /metrics shows (r NULL: a pass run by hand). Called
 * after each delete, so a long pass shows its progress, not only its end: only the retention
 * thread writes r->stats, so its running copy is always the latest. */
static void publish(struct spaa_retention *r, const struct spaa_retention_stats *stats)
{
  if (!r)
    return;
  pthread_mutex_lock(&r->mu);
  r->stats = *stats;
  pthread_mutex_unlock(&r->mu);
}

/* While over the cap: delete the oldest share. 0 or a SPAA_E_*. */
static int pass_size(struct spaa_retention *r, struct spaa_store *store,
                     const struct spaa_retention_opts *o, struct spaa_retention_stats *stats,
                     struct spaa_err *err)
{
  struct spaa_store_counts c;
  struct spaa_store_deleted d, sum;
  struct spaa_list_query q;
  int step, rc = 0;
  memset(&sum, 0, sizeof(sum));
  for (step = 0; step < RETENTION_MAX_STEPS; step++) {
    if ((rc = spaa_store_counts(store, &c, err)))
      break;
    /* a store whose size deleting does not lower (PostgreSQL) is not capped: its deletes
     * would never bring it under, and would take every profile */
    if (c.bytes <= 0 || c.keeps_size || (uint64_t)c.bytes <= o->max_bytes || c.profiles == 0)
      break;
    memset(&q, 0, sizeof(q));
    q.limit = (size_t)(c.profiles / 20 > RETENTION_MIN_STEP ? c.profiles / 20
                                                              : RETENTION_MIN_STEP);
    rc = spaa_store_delete(store, &q, &d, err);
    add(stats, &d, 1); /* a failed delete may have committed some of its transactions */
    publish(r, stats);
    sum_deleted(&sum, &d, step == 0);
    if (rc || d.profiles == 0) {
      step++;
      break;
    }
  }
  if (sum.profiles)
    log_deleted("size", &sum, step);
  return rc;
}

/* One pass, its figures published to r (NULL: none) as it goes. */
static int pass(struct spaa_retention *r, struct spaa_store *store,
                const struct spaa_retention_opts *o, struct spaa_retention_stats *stats)
{
  struct spaa_store_deleted d;
  struct spaa_list_query q;
  struct spaa_err err = {0};
  int rc = 0;
  stats->passes++;
  publish(r, stats);
  {
    /* the age rule; without one, a delete that matches nothing (received before 1970), so
     * that a sweep a killed delete owed runs before the size is measured and live profiles
     * do not go for rows nothing references */
    memset(&q, 0, sizeof(q));
    q.received_before_ns = o->keep_s ? now_ns() - (int64_t)o->keep_s * 1000000000LL : 1;
    if (q.received_before_ns > 0) {
      rc = spaa_store_delete(store, &q, &d, &err);
      add(stats, &d, 0); /* a failed delete may have committed some of its transactions */
      publish(r, stats);
      if (!rc && d.profiles)
        log_deleted("age", &d, 1);
    }
  }
  if (!rc && o->max_bytes)
    rc = pass_size(r, store, o, stats, &err);
  if (rc) {
    stats->failures++;
    publish(r, stats);
    spaa_log(SPAA_LOG_WARN, "retention pass failed", "code=%s detail=\"%s\"",
             spaa_err_name(err.code ? err.code : rc), err.msg);
  }
  return rc;
}

int spaa_retention_pass(struct spaa_store *store, const struct spaa_retention_opts *o,
                        struct spaa_retention_stats *stats)
{
  return pass(NULL, store, o, stats);
}

/* Whether this relay runs the pass now: relays sharing one database take turns through the
 * store's leadership (one at a time; SQLite always leads). Each change is logged once;
 * *was is the last answer (1, 0, -1 unknown, -2 not asked yet). */
static int leading(struct spaa_store *store, int *was)
{
  struct spaa_err err = {0};
  int rc = spaa_store_lead(store, &err), now = rc < 0 ? -1 : rc;
  if (now != *was) {
    if (now == 1)
      spaa_log(SPAA_LOG_INFO, "retention leadership taken", "passes=run");
    else if (now == 0)
      spaa_log(SPAA_LOG_INFO, "retention led by another relay", "passes=skipped");
    else
      spaa_log(SPAA_LOG_WARN, "retention leadership unknown", "code=%s detail=\"%s\"",
               spaa_err_name(err.code ? err.code : rc), err.msg);
  }
  *was = now;
  return now == 1;
}

static void *run(void *arg)
{
  struct spaa_retention *r = arg;
  struct spaa_retention_stats st;
  struct timespec until;
  int led = -2;
  pthread_mutex_lock(&r->mu);
  while (!r->stop) {
    st = r->stats;
    {
      struct spaa_retention_opts o = r->o; /* a reload may change r->o meanwhile */
      pthread_mutex_unlock(&r->mu);
      if (leading(r->store, &led))
        pass(r, r->store, &o, &st); /* publishes r->stats after each delete */
      pthread_mutex_lock(&r->mu);
    }
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += (time_t)r->o.every_s;
    while (!r->stop && !r->wake && pthread_cond_timedwait(&r->cv, &r->mu, &until) != ETIMEDOUT)
      ;
    r->wake = 0;
  }
  pthread_mutex_unlock(&r->mu);
  return NULL;
}

int spaa_retention_start(struct spaa_store *store, const struct spaa_retention_opts *o,
                         struct spaa_retention **out)
{
  struct spaa_retention *r;
  *out = NULL;
  if (!o->keep_s && !o->max_bytes)
    return 0;
  if (!(r = calloc(1, sizeof(*r))))
    return -1;
  r->store = store;
  r->o = *o;
  if (!r->o.every_s)
    r->o.every_s = 60;
  pthread_mutex_init(&r->mu, NULL);
  pthread_cond_init(&r->cv, NULL);
  if (pthread_create(&r->thread, NULL, run, r) != 0) {
    pthread_mutex_destroy(&r->mu);
    pthread_cond_destroy(&r->cv);
    free(r);
    return -1;
  }
  *out = r;
  return 0;
}

void spaa_retention_stop(struct spaa_retention *r)
{
  if (!r)
    return;
  pthread_mutex_lock(&r->mu);
  r->stop = 1;
  pthread_cond_signal(&r->cv);
  pthread_mutex_unlock(&r->mu);
  pthread_join(r->thread, NULL);
  pthread_mutex_destroy(&r->mu);
  pthread_cond_destroy(&r->cv);
  free(r);
}

void spaa_retention_stats(struct spaa_retention *r, struct spaa_retention_stats *out)
{
  memset(out, 0, sizeof(*out));
  if (!r)
    return;
  pthread_mutex_lock(&r->mu);
  *out = r->stats;
  pthread_mutex_unlock(&r->mu);
}

void spaa_retention_set(struct spaa_retention *r, const struct spaa_retention_opts *o)
{
  if (!r)
    return;
  pthread_mutex_lock(&r->mu);
  r->o = *o;
  if (!r->o.every_s)
    r->o.every_s = 60;
  r->wake = 1; /* the new rules at once, not after the old interval */
  pthread_cond_signal(&r->cv);
  pthread_mutex_unlock(&r->mu);
}
