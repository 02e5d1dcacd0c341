/* The memory budget for requests in flight: the bytes that bodies, decoded payloads and the
 * models converted from them may hold at once, shared by the HTTP core and the gRPC server.
 * A body is charged as it arrives; a conversion is charged in advance (its route's factor
 * times the decoded size) and, when its models grow past that, as they grow (a meter, see
 * spaa_meter in spaa/spaa.h): an input's bytes do not bound what it expands to. */
#ifndef SPAA_SERVER_BUDGET_H
#define SPAA_SERVER_BUDGET_H

#include <stddef.h>

#include "spaa/spaa.h"

struct spaa_metrics;
struct spaa_budget;

/* cap 0: a quarter of the machine's memory. metrics (may be NULL) get the limit and the
 * bytes held. The first one makes jansson allocate through the budget's meters (for the
 * whole process). 0 or SPAA_E_NOMEM. */
int spaa_budget_new(size_t cap, struct spaa_metrics *metrics, struct spaa_budget **out);
void spaa_budget_free(struct spaa_budget *b); /* NULL-safe; nothing may be held */
size_t spaa_budget_cap(const struct spaa_budget *b);
size_t spaa_budget_peak(struct spaa_budget *b); /* the most held at once since it was made */

/* Charge n bytes. Admitted when they fit or nothing is held; a conversion (work = 1) is also
 * admitted when no other conversion holds the budget, so that one larger than the whole
 * budget still goes through alone. Waits up to wait_ms for others to give bytes back (0:
 * does not wait). 0, or -1: over the budget. */
int spaa_budget_take(struct spaa_budget *b, size_t n, unsigned wait_ms, int work);
/* Give n bytes back (work: the end of a conversion's charge). When nothing is held any more
 * after a burst, freed memory goes back to the operating system (glibc keeps it). */
void spaa_budget_give(struct spaa_budget *b, size_t n, int work);

/* The advance charge of converting `decoded` bytes at `factor` bytes per byte (0: the
 * default, SPAA_HTTP_MODEL_FACTOR), saturated. */
size_t spaa_budget_cost(size_t decoded, size_t factor);

/* One conversion's charge and the meter of the models it builds. */
struct spaa_budget_work {
  struct spaa_budget *b;     /* NULL: nothing charged */
  size_t charged;            /* bytes held in b: base + grown */
  size_t base;               /* the advance charge */
  size_t grown;              /* taken since, as the models grew past their share */
  size_t body;               /* bytes the same request holds in b besides (its body) */
  struct spaa_meter meter;   /* the models' (room: base + grown / 2): give it to the
                              * converter (spaa_convert_opts.meter) */
  struct spaa_meter *prev;   /* the thread's JSON meter before begin */
  int read;                  /* 1: the models are read from the store, not converted from the
                              * request (set after begin: the refusals say so) */
};

/* Charge `cost` (waiting up to wait_ms) as a conversion (b NULL: nothing is charged or
 * metered, 0), and meter its models (w->meter, handed to the converter) and the JSON values
 * made on this thread until spaa_budget_work_end. Past
 * `cost` they take more from the budget, twice what they grow by (the model, then the
 * store's preparation of it), waiting briefly; beyond the budget too when nothing but this
 * request (`body`: what it holds in b already) holds it. A request whose charge would pass
 * the budget, or SPAA_BUDGET_MIN_CEILING when that is larger, is refused SPAA_E_TOO_LARGE;
 * one that finds the budget held by others SPAA_E_BUSY (spaa_meter's refused and why).
 * 0, or -1: over the budget (nothing charged, no meter). */
int spaa_budget_work_begin(struct spaa_budget_work *w, struct spaa_budget *b, size_t body,
                           size_t cost, unsigned wait_ms);
/* The advance charge changed to `cost` once the decoded size is known (more is taken
 * without waiting: the work has begun). */
void spaa_budget_work_adjust(struct spaa_budget_work *w, size_t cost);
/* JSON values no longer metered on this thread; the charge stays until
 * spaa_budget_work_give. */
void spaa_budget_work_end(struct spaa_budget_work *w);
/* From here on this thread's JSON values are charged to no meter: the answer to a conversion
 * its meter refused is made with them (a refused meter refuses every JSON value). The
 * thread's work is over: spaa_budget_work_end then leaves the thread uncharged. */
void spaa_budget_json_unmetered(void);
/* Give the whole charge back (NULL-safe, once). */
void spaa_budget_work_give(struct spaa_budget_work *w);

#endif
