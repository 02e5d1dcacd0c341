/* The bounded worker pool (see pool.h): one mutex, one condition variable, a FIFO list. */
#include "server/pool.h"

#include <pthread.h>
#include <stdlib.h>

struct spaa_pool {
  pthread_mutex_t mu;              /* guards everything below */
  pthread_cond_t cv;               /* signalled on a new job and on stop */
  struct spaa_pool_job *head;      /* oldest waiting job */
  struct spaa_pool_job *tail;      /* newest waiting job */
  size_t queued;                   /* jobs waiting */
  size_t running;                  /* jobs being run */
  size_t max_queued;               /* cap on queued */
  int stopping;                    /* no new jobs; threads leave once the queue is empty */
  int joined;                      /* the threads have been joined (spaa_pool_drain) */
  unsigned n_threads;              /* threads started */
  pthread_t *threads;              /* n_threads */
};

static void *pool_main(void *arg)
{
  struct spaa_pool *p = arg;
  pthread_mutex_lock(&p->mu);
  for (;;) {
    struct spaa_pool_job *j;
    while (!p->head && !p->stopping)
      pthread_cond_wait(&p->cv, &p->mu);
    if (!(j = p->head))
      break; /* stopping and nothing left */
    p->head = j->next;
    if (!p->head)
      p->tail = NULL;
    p->queued--;
    p->running++;
    pthread_mutex_unlock(&p->mu);
    j->next = NULL;
    j->fn(j);
    pthread_mutex_lock(&p->mu);
    p->running--;
  }
  pthread_mutex_unlock(&p->mu);
  return NULL;
}

int spaa_pool_new(unsigned threads, size_t max_queued, struct spaa_pool **out)
{
  struct spaa_pool *p;
  unsigned i;
  *out = NULL;
  if (!threads || !max_queued || !(p = calloc(1, sizeof(*p))))
    return -1;
  if (!(p->threads = calloc(threads, sizeof(*p->threads)))) {
    free(p);
    return -1;
  }
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->cv, NULL);
  p->max_queued = max_queued;
  for (i = 0; i < threads; i++) {
    if (pthread_create(&p->threads[i], NULL, pool_main, p))
      break;
    p->n_threads++;
  }
  if (p->n_threads < threads) {
    spaa_pool_free(p);
    return -1;
  }
  *out = p;
  return 0;
}

int spaa_pool_submit(struct spaa_pool *p, struct spaa_pool_job *job)
{
  int rc = -1;
  pthread_mutex_lock(&p->mu);
  if (!p->stopping && p->queued < p->max_queued) {
    job->next = NULL;
    if (p->tail)
      p->tail->next = job;
    else
      p->head = job;
    p->tail = job;
    p->queued++;
    pthread_cond_signal(&p->cv);
    rc = 0;
  }
  pthread_mutex_unlock(&p->mu);
  return rc;
}

size_t spaa_pool_queued(struct spaa_pool *p)
{
  size_t n;
  pthread_mutex_lock(&p->mu);
  n = p->queued;
  pthread_mutex_unlock(&p->mu);
  return n;
}

size_t spaa_pool_running(struct spaa_pool *p)
{
  size_t n;
  pthread_mutex_lock(&p->mu);
  n = p->running;
  pthread_mutex_unlock(&p->mu);
  return n;
}

void spaa_pool_drain(struct spaa_pool *p)
{
  unsigned i;
  if (!p || p->joined)
    return;
  pthread_mutex_lock(&p->mu);
  p->stopping = 1;
  pthread_cond_broadcast(&p->cv);
  pthread_mutex_unlock(&p->mu);
  for (i = 0; i < p->n_threads; i++)
    pthread_join(p->threads[i], NULL);
  p->joined = 1;
}

void spaa_pool_free(struct spaa_pool *p)
{
  if (!p)
    return;
  spaa_pool_drain(p);
  pthread_cond_destroy(&p->cv);
  pthread_mutex_destroy(&p->mu);
  free(p->threads);
  free(p);
}
