/* server/metrics.c: counting by label values, sums with wildcards, counters refusing to go
 * down and gauges going both ways (and set), histograms and their buckets, the series cap,
 * label values cut and escaped, many threads counting at once, and the Prometheus text
 * exposition of the whole registry. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/err.h"
#include "server/metrics.h"

static struct spaa_metrics *fresh(void)
{
  struct spaa_metrics *m = NULL;
  assert_int_equal(spaa_metrics_new(&m), 0);
  assert_non_null(m);
  return m;
}

/* The exposition as a NUL-terminated string (free it). */
static char *text(const struct spaa_metrics *m)
{
  struct spaa_buf b;
  size_t len;
  spaa_buf_init(&b, 0);
  assert_int_equal(spaa_metrics_write(m, &b), 0);
  assert_int_equal(spaa_buf_add(&b, "", 1), 0);
  return spaa_buf_steal(&b, &len);
}

static void test_add_and_sum(void **state)
{
  struct spaa_metrics *m = fresh();
  (void)state;
  spaa_metrics_add(m, SPAA_METRIC_REQUESTS, "/ingest", "200", 1);
  spaa_metrics_add(m, SPAA_METRIC_REQUESTS, "/ingest", "200", 2);
  spaa_metrics_add(m, SPAA_METRIC_REQUESTS, "/ingest", "400", 1);
  spaa_metrics_add(m, SPAA_METRIC_REQUESTS, "/v1/pprof", "200", 5);
  spaa_metrics_add(m, SPAA_METRIC_REQUESTS, "/v1/pprof", "200", -4); /* a counter never falls */
  assert_int_equal(spaa_metrics_sum(m, SPAA_METRIC_REQUESTS, "/ingest", "200"), 3);
  assert_int_equal(spaa_metrics_sum(m, SPAA_METRIC_REQUESTS, "/ingest", NULL), 4);
  assert_int_equal(spaa_metrics_sum(m, SPAA_METRIC_REQUESTS, NULL, "200"), 8);
  assert_int_equal(spaa_metrics_sum(m, SPAA_METRIC_REQUESTS, NULL, NULL), 9);
  assert_int_equal(spaa_metrics_sum(m, SPAA_METRIC_REQUESTS, "/nowhere", NULL), 0);
  /* a label the family does not have is ignored when counting */
  spaa_metrics_add(m, SPAA_METRIC_PROFILES_STORED, "pprof", "ignored", 2);
  spaa_metrics_add(m, SPAA_METRIC_PROFILES_STORED, "pprof", NULL, 1);
  assert_int_equal(spaa_metrics_sum(m, SPAA_METRIC_PROFILES_STORED, "pprof", NULL), 3);
  assert_int_equal(spaa_metrics_sum(m, SPAA_METRIC_PROFILES_STORED, "pprof", ""), 3);
  /* a gauge goes both ways */
  spaa_metrics_add(m, SPAA_METRIC_INGEST_IN_FLIGHT, "/ingest", NULL, 1);
  spaa_metrics_add(m, SPAA_METRIC_INGEST_IN_FLIGHT, "/ingest", NULL, -3);
  assert_int_equal(spaa_metrics_sum(m, SPAA_METRIC_INGEST_IN_FLIGHT, "/ingest", NULL), -2);
  /* NULL registry: nothing happens, nothing counted */
  spaa_metrics_add(NULL, SPAA_METRIC_REQUESTS, "/ingest", "200", 1);
  assert_int_equal(spaa_metrics_sum(NULL, SPAA_METRIC_REQUESTS, NULL, NULL), 0);
  spaa_metrics_free(m);
  spaa_metrics_free(NULL);
}

/* Past SPAA_METRICS_MAX_SERIES value pairs everything new counts in the overflow series;
 * the pairs already there keep counting on their own. */
static void test_series_cap(void **state)
{
  struct spaa_metrics *m = fresh();
  char v[32], *t;
  int i;
  (void)state;
  for (i = 0; i < SPAA_METRICS_MAX_SERIES + 10; i++) {
    snprintf(v, sizeof(v), "reason%03d", i);
    spaa_metrics_add(m, SPAA_METRIC_PROFILES_REJECTED, "otlp", v, 1);
  }
  spaa_metrics_add(m, SPAA_METRIC_PROFILES_REJECTED, "otlp", "reason000", 1);
  assert_int_equal(spaa_metrics_sum(m, SPAA_METRIC_PROFILES_REJECTED, NULL, NULL),
                   SPAA_METRICS_MAX_SERIES + 11);
  assert_int_equal(spaa_metrics_sum(m, SPAA_METRIC_PROFILES_REJECTED, "otlp", "reason000"), 2);
  assert_int_equal(spaa_metrics_sum(m, SPAA_METRIC_PROFILES_REJECTED, SPAA_METRICS_OVERFLOW,
                                    SPAA_METRICS_OVERFLOW), 10);
  assert_int_equal(spaa_metrics_sum(m, SPAA_METRIC_PROFILES_REJECTED, "otlp", "reason199"), 0);
  t = text(m);
  assert_non_null(strstr(t, "spaa_relay_profiles_rejected_total{source=\"_overflow\","
                            "reason=\"_overflow\"} 10\n"));
  assert_non_null(strstr(t, "spaa_relay_profiles_rejected_total{source=\"otlp\","
                            "reason=\"reason000\"} 2\n"));
  free(t);
  spaa_metrics_free(m);
}

/* Label values are cut to SPAA_METRICS_MAX_VALUE - 1 bytes and escaped on the way out. */
static void test_values_cut_and_escaped(void **state)
{
  struct spaa_metrics *m = fresh();
  char longv[200], cut[SPAA_METRICS_MAX_VALUE], *t;
  (void)state;
  memset(longv, 'x', sizeof(longv) - 1);
  longv[sizeof(longv) - 1] = 0;
  memset(cut, 'x', sizeof(cut) - 1);
  cut[sizeof(cut) - 1] = 0;
  spaa_metrics_add(m, SPAA_METRIC_PROFILES_STORED, longv, NULL, 1);
  spaa_metrics_add(m, SPAA_METRIC_PROFILES_STORED, cut, NULL, 1); /* the same series */
  assert_int_equal(spaa_metrics_sum(m, SPAA_METRIC_PROFILES_STORED, cut, NULL), 2);
  assert_int_equal(spaa_metrics_sum(m, SPAA_METRIC_PROFILES_STORED, longv, NULL), 2);
  spaa_metrics_add(m, SPAA_METRIC_PROFILES_REJECTED, "a\"b", "c\\d\ne", 7);
  t = text(m);
  assert_non_null(strstr(t, "spaa_relay_profiles_rejected_total{source=\"a\\\"b\","
                            "reason=\"c\\\\d\\ne\"} 7\n"));
  free(t);
  spaa_metrics_free(m);
}

/* The whole registry: every family's HELP and TYPE in declaration order, series sorted by
 * label values, gauges signed. */
static void test_exposition(void **state)
{
  static const char want[] =
      "# TYPE spaa_relay_requests_total counter\n"
      "spaa_relay_requests_total{route=\"/ingest\",status=\"200\"} 2\n"
      "spaa_relay_requests_total{route=\"/ingest\",status=\"400\"} 1\n"
      "spaa_relay_requests_total{route=\"/v1/pprof\",status=\"204\"} 1\n"
      "# HELP spaa_relay_http_request_duration_seconds ";
  struct spaa_metrics *m = fresh();
  struct spaa_buf small;
  const char *p;
  char *t;
  (void)state;
  spaa_metrics_add(m, SPAA_METRIC_REQUESTS, "/v1/pprof", "204", 1);
  spaa_metrics_add(m, SPAA_METRIC_REQUESTS, "/ingest", "400", 1);
  spaa_metrics_add(m, SPAA_METRIC_REQUESTS, "/ingest", "200", 2);
  spaa_metrics_add(m, SPAA_METRIC_INGEST_IN_FLIGHT, "/ingest", NULL, -1);
  t = text(m);
  {
    static const char help[] = "# HELP spaa_relay_requests_total Requests answered";
    assert_int_equal(strncmp(t, help, strlen(help)), 0);
  }
  p = strchr(t, '\n') + 1;
  if (strncmp(p, want, strlen(want)) != 0)
    fail_msg("exposition:\n%s", t);
  assert_non_null(strstr(t, "# TYPE spaa_relay_ingest_in_flight gauge\n"
                            "spaa_relay_ingest_in_flight{route=\"/ingest\"} -1\n"));
  assert_non_null(strstr(t, "# TYPE spaa_relay_otlp_requests_total counter\n"));
  /* a family nothing counted into has its HELP and TYPE only */
  assert_non_null(strstr(t, "# TYPE spaa_relay_partial_success_total counter\n# HELP "));
  /* every line ends in \n, no line is empty */
  assert_int_equal(t[strlen(t) - 1], '\n');
  assert_null(strstr(t, "\n\n"));
  free(t);
  /* the buffer's cap is an error, not a crash */
  spaa_buf_init(&small, 64);
  assert_int_equal(spaa_metrics_write(m, &small), SPAA_E_TOO_LARGE);
  spaa_buf_free(&small);
  spaa_metrics_free(m);
}

/* A histogram: each observation in the first bucket whose bound holds it (bounds included),
 * buckets cumulative up to +Inf, _sum in seconds, _count equal to +Inf; add and set do
 * nothing to it; set moves a gauge and nothing else. */
static void test_histogram_and_set(void **state)
{
  static const char want[] =
      "# TYPE spaa_relay_http_request_duration_seconds histogram\n"
      "spaa_relay_http_request_duration_seconds_bucket{route=\"/a\",le=\"0.005\"} 2\n"
      "spaa_relay_http_request_duration_seconds_bucket{route=\"/a\",le=\"0.01\"} 4\n"
      "spaa_relay_http_request_duration_seconds_bucket{route=\"/a\",le=\"0.025\"} 4\n"
      "spaa_relay_http_request_duration_seconds_bucket{route=\"/a\",le=\"0.05\"} 4\n"
      "spaa_relay_http_request_duration_seconds_bucket{route=\"/a\",le=\"0.1\"} 4\n"
      "spaa_relay_http_request_duration_seconds_bucket{route=\"/a\",le=\"0.25\"} 4\n"
      "spaa_relay_http_request_duration_seconds_bucket{route=\"/a\",le=\"0.5\"} 4\n"
      "spaa_relay_http_request_duration_seconds_bucket{route=\"/a\",le=\"1\"} 4\n"
      "spaa_relay_http_request_duration_seconds_bucket{route=\"/a\",le=\"2.5\"} 4\n"
      "spaa_relay_http_request_duration_seconds_bucket{route=\"/a\",le=\"5\"} 4\n"
      "spaa_relay_http_request_duration_seconds_bucket{route=\"/a\",le=\"10\"} 4\n"
      "spaa_relay_http_request_duration_seconds_bucket{route=\"/a\",le=\"+Inf\"} 5\n"
      "spaa_relay_http_request_duration_seconds_sum{route=\"/a\"} 20.017000001\n"
      "spaa_relay_http_request_duration_seconds_count{route=\"/a\"} 5\n"
      "spaa_relay_http_request_duration_seconds_bucket{route=\"/b\",le=\"0.005\"} 0\n";
  struct spaa_metrics *m = fresh();
  char *t;
  const char *p;
  (void)state;
  spaa_metrics_observe_ns(m, SPAA_METRIC_HTTP_DURATION, "/a", NULL, 5000000);  /* on 0.005 */
  spaa_metrics_observe_ns(m, SPAA_METRIC_HTTP_DURATION, "/a", NULL, -3);       /* as 0 */
  spaa_metrics_observe_ns(m, SPAA_METRIC_HTTP_DURATION, "/a", NULL, 5000001);  /* 0.01 */
  spaa_metrics_observe_ns(m, SPAA_METRIC_HTTP_DURATION, "/a", NULL, 7000000);
  spaa_metrics_observe_ns(m, SPAA_METRIC_HTTP_DURATION, "/a", NULL, 20000000000LL); /* +Inf */
  spaa_metrics_observe_ns(m, SPAA_METRIC_HTTP_DURATION, "/b", NULL, 3000000000LL);
  spaa_metrics_add(m, SPAA_METRIC_HTTP_DURATION, "/a", NULL, 100); /* not a histogram's */
  spaa_metrics_observe_ns(m, SPAA_METRIC_REQUESTS, "/a", "200", 1); /* not a counter's */
  spaa_metrics_set(m, SPAA_METRIC_REQUESTS, "/a", "200", 9);        /* nor this */
  spaa_metrics_set(m, SPAA_METRIC_BUDGET_USED, NULL, NULL, 12345);
  spaa_metrics_set(m, SPAA_METRIC_BUDGET_USED, NULL, NULL, 678);
  assert_int_equal(spaa_metrics_sum(m, SPAA_METRIC_HTTP_DURATION, "/a", NULL), 5);
  assert_int_equal(spaa_metrics_sum(m, SPAA_METRIC_HTTP_DURATION, NULL, NULL), 6);
  assert_int_equal(spaa_metrics_sum(m, SPAA_METRIC_REQUESTS, NULL, NULL), 0);
  assert_int_equal(spaa_metrics_sum(m, SPAA_METRIC_BUDGET_USED, NULL, NULL), 678);
  t = text(m);
  p = strstr(t, "# TYPE spaa_relay_http_request_duration_seconds histogram\n");
  if (!p || strncmp(p, want, strlen(want)) != 0) {
    fprintf(stderr, "%s", t);
    fail_msg("the exposition above lacks:\n%s", want);
  }
  assert_non_null(strstr(t, "spaa_relay_http_request_duration_seconds_bucket{route=\"/b\","
                            "le=\"5\"} 1\n"));
  assert_non_null(strstr(t, "spaa_relay_http_request_duration_seconds_sum{route=\"/b\"} "
                            "3.000000000\n"));
  assert_non_null(strstr(t, "# TYPE spaa_relay_memory_budget_used_bytes gauge\n"
                            "spaa_relay_memory_budget_used_bytes 678\n"));
  /* label-less families have their one line from the start */
  assert_non_null(strstr(t, "\nspaa_relay_connections_open 0\n"));
  free(t);
  spaa_metrics_free(m);
}

#define THREADS 8
#define ADDS 20000

static struct spaa_metrics *shared;

static void *counter_thread(void *arg)
{
  char status[8];
  int i, id = (int)(intptr_t)arg;
  for (i = 0; i < ADDS; i++) {
    snprintf(status, sizeof(status), "%d", 200 + i % 5);
    spaa_metrics_add(shared, SPAA_METRIC_REQUESTS, id % 2 ? "/a" : "/b", status, 1);
    spaa_metrics_add(shared, SPAA_METRIC_INGEST_IN_FLIGHT, "/a", NULL, 1);
    spaa_metrics_add(shared, SPAA_METRIC_INGEST_IN_FLIGHT, "/a", NULL, -1);
  }
  return NULL;
}

/* Threads creating the same series at once and adding to them lose nothing. */
static void test_threads(void **state)
{
  pthread_t th[THREADS];
  char *t;
  int i;
  (void)state;
  shared = fresh();
  for (i = 0; i < THREADS; i++)
    assert_int_equal(pthread_create(&th[i], NULL, counter_thread, (void *)(intptr_t)i), 0);
  for (i = 0; i < THREADS; i++)
    assert_int_equal(pthread_join(th[i], NULL), 0);
  assert_int_equal(spaa_metrics_sum(shared, SPAA_METRIC_REQUESTS, NULL, NULL), THREADS * ADDS);
  assert_int_equal(spaa_metrics_sum(shared, SPAA_METRIC_REQUESTS, "/a", "200"),
                   THREADS / 2 * ADDS / 5);
  assert_int_equal(spaa_metrics_sum(shared, SPAA_METRIC_INGEST_IN_FLIGHT, NULL, NULL), 0);
  t = text(shared);
  /* 2 routes x 5 statuses: ten series, each once */
  assert_non_null(strstr(t, "spaa_relay_requests_total{route=\"/a\",status=\"200\"} 16000\n"));
  assert_null(strstr(strstr(t, "status=\"200\"} 16000\n") + 1, "route=\"/a\",status=\"200\""));
  free(t);
  spaa_metrics_free(shared);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_add_and_sum),
      cmocka_unit_test(test_series_cap),
      cmocka_unit_test(test_values_cut_and_escaped),
      cmocka_unit_test(test_exposition),
      cmocka_unit_test(test_histogram_and_set),
      cmocka_unit_test(test_threads),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
