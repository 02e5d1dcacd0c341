/* /healthz, /readyz and /metrics (see ops.h). */
#include "server/ops.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include "server/metrics.h"
#include "server/retention.h"
#include "storage/storage.h"

void spaa_ops_healthz(const struct spaa_req *req, struct spaa_resp *resp)
{
  static const char ok[] = "{\"status\":\"ok\"}";
  spaa_resp_bytes(resp, 200, "application/json", ok, sizeof(ok) - 1);
}

void spaa_ops_readyz(const struct spaa_req *req, struct spaa_resp *resp)
{
  static const char ready[] = "{\"status\":\"ready\"}";
  struct spaa_err why;
  spaa_err_clear(&why);
  if (spaa_store_ready_why(req->app->store, &why))
    spaa_resp_bytes(resp, 200, "application/json", ready, sizeof(ready) - 1);
  else /* a 503 whatever the reason, which the body gives */
    spaa_resp_error(resp, why.code == SPAA_E_SHUTDOWN ? SPAA_E_SHUTDOWN : SPAA_E_UNAVAILABLE,
                    "%s", why.msg[0] ? why.msg : "the store is not ready");
}

/* One family with one unlabelled sample (kind "counter" or "gauge"). */
static int family(struct spaa_buf *b, const char *name, const char *kind, const char *help,
                  double v)
{
  return spaa_buf_addf(b, "# HELP %s %s\n# TYPE %s %s\n%s %.17g\n", name, help, name, kind,
                         name, v);
}

/* The store's figures: writer stats, then row counts and bytes on disk (one read). */
static int store_families(struct spaa_store *s, struct spaa_buf *b)
{
  struct spaa_store_stats st;
  struct spaa_store_counts c;
  struct spaa_err err;
  int rc;
  spaa_store_stats(s, &st);
  if ((rc = family(b, "spaa_relay_store_queue_depth", "gauge",
                   "Profiles waiting in the store writer's queue.", (double)st.queued)) ||
      (rc = family(b, "spaa_relay_store_batches_total", "counter",
                   "Write transactions (batches of puts) committed.", (double)st.transactions)) ||
      (rc = family(b, "spaa_relay_store_batch_seconds_total", "counter",
                   "Time the writer spent in batches, BEGIN to COMMIT (divide by batches for "
                   "the mean commit duration).", (double)st.batch_ns / 1e9)) ||
      (rc = family(b, "spaa_relay_store_committed_profiles_total", "counter",
                   "Profiles committed by the writer (divide by batches for the mean batch "
                   "size).", (double)st.stored)) ||
      (rc = family(b, "spaa_relay_store_busy_total", "counter",
                   "Puts refused because the writer's queue was full.", (double)st.busy)) ||
      (rc = family(b, "spaa_relay_store_dedup_hits_total", "counter",
                   "Dsos, frames and stacks found already stored (content-id cache hits).",
                   (double)st.cache_hits)) ||
      (rc = family(b, "spaa_relay_store_dedup_misses_total", "counter",
                   "Dsos, frames and stacks looked up or inserted in the database.",
                   (double)st.cache_misses)) ||
      (rc = family(b, "spaa_relay_store_maintenance_steps_total", "counter",
                   "Steps of deletes and sweeps the writer ran between batches of puts.",
                   (double)st.steps)) ||
      (rc = family(b, "spaa_relay_store_maintenance_seconds_total", "counter",
                   "Time the writer spent in those steps.", (double)st.step_ns / 1e9)) ||
      (rc = family(b, "spaa_relay_store_maintenance_step_max_seconds", "gauge",
                   "The longest of those steps since start: the most a put waited for one.",
                   (double)st.step_max_ns / 1e9)))
    return rc;
  spaa_err_clear(&err);
  if (spaa_store_counts(s, &c, &err))
    return 0; /* the engine cannot count now: the gauges are left out of this scrape */
  if ((rc = family(b, "spaa_relay_store_bytes", "gauge",
                   "Bytes the store takes on disk (SQLite: database and log; PostgreSQL: its "
                   "tables, indexes and TOAST).", (double)c.bytes)))
    return rc;
  return spaa_buf_addf(b, "# HELP spaa_relay_store_rows Rows of the store, by kind.\n"
                         "# TYPE spaa_relay_store_rows gauge\n"
                         "spaa_relay_store_rows{kind=\"dso\"} %" PRId64 "\n"
                         "spaa_relay_store_rows{kind=\"frame\"} %" PRId64 "\n"
                         "spaa_relay_store_rows{kind=\"profile\"} %" PRId64 "\n"
                         "spaa_relay_store_rows{kind=\"stack\"} %" PRId64 "\n",
                         c.dsos, c.frames, c.profiles, c.stacks);
}

static int retention_families(struct spaa_retention *r, struct spaa_buf *b)
{
  struct spaa_retention_stats st;
  int rc;
  spaa_retention_stats(r, &st);
  if ((rc = family(b, "spaa_relay_retention_passes_total", "counter",
                   "Retention passes run.", (double)st.passes)) ||
      (rc = family(b, "spaa_relay_retention_failures_total", "counter",
                   "Retention passes that stopped on an error.", (double)st.failures)) ||
      (rc = family(b, "spaa_relay_retention_swept_rows_total", "counter",
                   "Dso, frame and stack rows swept after retention deletes.",
                   (double)st.swept)))
    return rc;
  return spaa_buf_addf(b, "# HELP spaa_relay_retention_deleted_profiles_total Profiles "
                         "retention deleted, by reason (age: older than retention; size: "
                         "over max_db_size).\n"
                         "# TYPE spaa_relay_retention_deleted_profiles_total counter\n"
                         "spaa_relay_retention_deleted_profiles_total{reason=\"age\"} %" PRIu64
                         "\nspaa_relay_retention_deleted_profiles_total{reason=\"size\"} %"
                         PRIu64 "\n", st.deleted_age, st.deleted_size);
}

void spaa_ops_metrics(const struct spaa_req *req, struct spaa_resp *resp)
{
  struct spaa_buf b;
  int rc;
  spaa_buf_init(&b, SPAA_METRICS_MAX_TEXT);
  if (!(rc = spaa_metrics_write(req->app->metrics, &b)) && req->app->store)
    rc = store_families(req->app->store, &b);
  if (!rc)
    rc = retention_families(req->app->retention, &b);
  if (rc)
    spaa_resp_error(resp, SPAA_E_INTERNAL, "the metrics do not fit their %d-byte buffer",
                    (int)SPAA_METRICS_MAX_TEXT);
  else
    spaa_resp_bytes(resp, 200, "text/plain; version=0.0.4; charset=utf-8", b.p, b.len);
  spaa_buf_free(&b);
}
