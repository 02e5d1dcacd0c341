/* The store's messages to the operator's log (spaa_store_opts.log), for both engines: one
 * formatted line handed to the caller's callback, and the quoting of a value that may hold
 * quotes (a database's error message). */
#ifndef SPAA_STORAGE_LOG_INT_H
#define SPAA_STORAGE_LOG_INT_H

#include <stddef.h>
#include <stdint.h>

#include "storage/storage.h"

/* Where a store's messages go: the callback of its options and its argument. */
struct storage__log {
  spaa_store_log_cb cb; /* NULL: the messages go nowhere */
  void *ctx;            /* cb's first argument */
};

/* Format kv_fmt (printf rules; NULL for no fields) and hand msg and the fields to l->cb.
 * Nothing when l or l->cb is NULL. Fields longer than SPAA_LOG_MAX_LINE bytes are cut.
 * Never fails. */
void storage__log(const struct storage__log *l, enum spaa_store_log_level level,
                  const char *msg, const char *kv_fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* s (NULL: "") with '"' and '\\' written \" and \\, and CR, LF and tab as a space (none
 * right after a space), into buf (size n >= 1, cut short when it does not fit, trailing
 * spaces and dots dropped): a value to put inside quotes in kv_fmt. Returns buf. */
const char *storage__log_q(char *buf, size_t n, const char *s);

/* CLOCK_MONOTONIC in nanoseconds (both engines: how long a migration took, how long an
 * outage lasted, how long a maintenance step ran). */
uint64_t storage__mono_ns(void);

#endif
