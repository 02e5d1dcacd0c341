/* A bounded worker pool: a fixed set of threads running queued jobs in order, with a cap on
 * the jobs waiting. The HTTP core hands it the decode/convert/store of finished bodies so
 * that the threads reading sockets never run a conversion. */
#ifndef SPAA_SERVER_POOL_H
#define SPAA_SERVER_POOL_H

#include <stddef.h>

/* One job. The caller owns the struct (embed it in the request) and keeps it alive until
 * fn has run; the pool only links it. */
struct spaa_pool_job {
  void (*fn)(struct spaa_pool_job *job); /* run on a pool thread */
  struct spaa_pool_job *next;            /* the pool's queue link */
};

struct spaa_pool;

/* Start `threads` threads (>= 1) with room for `max_queued` jobs waiting (>= 1).
 * 0 with *out set, or -1 (out of memory, or a thread could not start). */
int spaa_pool_new(unsigned threads, size_t max_queued, struct spaa_pool **out);
/* Queue a job: 0, or -1 when max_queued jobs are already waiting or the pool is stopping
 * (the job is not queued and fn will not run). Thread-safe. */
int spaa_pool_submit(struct spaa_pool *p, struct spaa_pool_job *job);
/* Jobs waiting (not yet running) and jobs running. */
size_t spaa_pool_queued(struct spaa_pool *p);
size_t spaa_pool_running(struct spaa_pool *p);
/* Refuse new jobs (spaa_pool_submit returns -1 from now on), run every job already queued
 * and join the threads; the pool stays allocated. Not concurrent with spaa_pool_free;
 * idempotent, NULL-safe. */
void spaa_pool_drain(struct spaa_pool *p);
/* Drain (if not done), then free. NULL-safe. */
void spaa_pool_free(struct spaa_pool *p);

#endif
