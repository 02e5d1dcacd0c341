/* server/ingest_sentry.c against a real store, calling the route's handler directly (no
 * HTTP: no headers and no query string, so the envelope header's dsn is the credentials):
 * dsn rules, what is stored equals the offline conversion, idempotent re-posts, dropped
 * profiles, 503 when the store queue is full, the Relay error shape, and the outcomes
 * counted in the metrics registry. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "sentry/sentry.h"
#include "spaa/spaa_io.h"
#include "server/ingest_sentry.h"
#include "server/metrics.h"
#include "server/routes.h"
#include "storage/storage.h"

#include "fixture.h"

static char tmpdir[256];
static struct spaa_store *store;
static struct spaa_config cfg;
static struct spaa_app app;
static struct spaa_metrics *metrics;
static struct spaa_sentry_key keys[2];

/* An envelope: header `hdr`, a transaction item, one item of `type` holding the fixture. */
static char *envelope(const char *hdr, const char *type, const char *fixture, size_t *len)
{
  static const char txn[] = "{\"type\":\"transaction\",\"transaction\":\"GET /unit\"}";
  size_t plen, n;
  uint8_t *p = spaa_test_fixture_in("sentry", fixture, &plen);
  char *b = malloc(plen + 1024);
  assert_non_null(p);
  assert_non_null(b);
  n = (size_t)sprintf(b, "%s\n{\"type\":\"transaction\",\"length\":%zu}\n%s\n"
                         "{\"type\":\"%s\",\"length\":%zu}\n",
                      hdr, strlen(txn), txn, type, plen);
  memcpy(b + n, p, plen);
  *len = n + plen;
  free(p);
  return b;
}

#define DSN42 "{\"dsn\":\"https://k42@example.org/42\",\"event_id\":\"9f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0\"}"

struct answer {
  int status;
  json_t *body;      /* parsed answer (owned) */
  char retry[16];    /* Retry-After, "" when absent */
  char limits[64];   /* X-Sentry-Rate-Limits, "" when absent */
};

/* The routing table's envelope route: the handler and the on_error under test. */
static const struct spaa_route *sentry_route(void)
{
  size_t i;
  for (i = 0; i < spaa_n_routes; i++)
    if (strcmp(spaa_routes[i].pattern, "/api/{project_id}/envelope") == 0)
      return &spaa_routes[i];
  fail_msg("no envelope route");
  return NULL;
}

/* The outcomes these tests look at, read from the metrics registry. */
struct sentry_counts {
  int64_t accepted;                           /* answered 200 */
  int64_t profiles_stored;                    /* profile items stored (new) */
  int64_t profiles_duplicate;                 /* profile items whose id was already stored */
  int64_t profiles_rejected[SENTRY_N_REASONS];/* dropped, by reason (sentry_reason_at(i)) */
  int64_t bad_request;                        /* answered 400 */
  int64_t not_found;                          /* answered 404 (a bad project id) */
  int64_t unauthorized;                       /* answered 401 */
  int64_t forbidden;                          /* answered 403 */
  int64_t busy;                               /* answered 503 */
};

static int64_t answered(const char *status)
{
  return spaa_metrics_sum(metrics, SPAA_METRIC_REQUESTS, "/api/{project_id}/envelope", status);
}

static void read_counts(struct sentry_counts *c)
{
  size_t i;
  c->accepted = answered("200");
  c->bad_request = answered("400");
  c->not_found = answered("404");
  c->unauthorized = answered("401");
  c->forbidden = answered("403");
  c->busy = answered("429");
  c->profiles_stored = spaa_metrics_sum(metrics, SPAA_METRIC_PROFILES_STORED, "sentry", NULL);
  c->profiles_duplicate =
      spaa_metrics_sum(metrics, SPAA_METRIC_PROFILES_DUPLICATE, "sentry", NULL);
  for (i = 0; i < SENTRY_N_REASONS; i++)
    c->profiles_rejected[i] =
        spaa_metrics_sum(metrics, SPAA_METRIC_PROFILES_REJECTED, "sentry", sentry_reason_at(i));
}

static void post(const char *project, const void *body, size_t len, struct answer *a)
{
  struct spaa_req req;
  struct spaa_resp resp;
  size_t i;
  memset(&req, 0, sizeof(req));
  memset(&resp, 0, sizeof(resp));
  resp.status = 200;
  spaa_buf_init(&resp.body, SPAA_HTTP_RESP_MAX);
  req.method = "POST";
  req.path = "/api/x/envelope";
  req.n_params = 1;
  req.params[0].name = "project_id";
  req.params[0].name_len = 10;
  req.params[0].value = project;
  req.body = body;
  req.body_len = len;
  req.wire_len = len;
  req.app = &app;
  req.received_ns = 1700000000000000000LL;
  req.route = sentry_route();
  req.route->fn(&req, &resp);
  a->status = resp.status;
  a->body = json_loadb(resp.body.p ? resp.body.p : "", resp.body.len, 0, NULL);
  if (!a->body)
    fail_msg("the answer is not JSON: %.*s", (int)resp.body.len, resp.body.p ? resp.body.p : "");
  assert_string_equal(resp.content_type, "application/json");
  a->retry[0] = 0;
  a->limits[0] = 0;
  for (i = 0; i < resp.n_headers; i++) {
    if (strcmp(resp.headers[i].name, "Retry-After") == 0)
      snprintf(a->retry, sizeof(a->retry), "%.15s", resp.headers[i].value);
    if (strcmp(resp.headers[i].name, "X-Sentry-Rate-Limits") == 0)
      snprintf(a->limits, sizeof(a->limits), "%.63s", resp.headers[i].value);
  }
  spaa_buf_free(&resp.body);
}

/* The answer is {"detail":..., "causes":[one string containing `cause`]} with `status`. */
static void assert_relay_error(const struct answer *a, int status, const char *cause)
{
  json_t *causes = json_object_get(a->body, "causes");
  const char *c0 = json_string_value(json_array_get(causes, 0));
  if (a->status != status)
    fail_msg("status %d, want %d", a->status, status);
  assert_non_null(json_string_value(json_object_get(a->body, "detail")));
  assert_true(json_is_array(causes));
  if (!c0 || !strstr(c0, cause))
    fail_msg("cause '%s' does not say '%s'", c0 ? c0 : "(none)", cause);
}

static int setup(void **state)
{
  struct spaa_store_opts o;
  struct spaa_err err;
  char db[300];
  (void)state;
  snprintf(tmpdir, sizeof(tmpdir), "/tmp/spaa-sentry-test.XXXXXX");
  if (!mkdtemp(tmpdir))
    return -1;
  snprintf(db, sizeof(db), "%s/t.db", tmpdir);
  memset(&o, 0, sizeof(o));
  o.path = db;
  o.queue_depth = 1;
  o.batch_max = 1;
  o.readers = 1;
  if (spaa_store_open(&o, &store, &err)) {
    fprintf(stderr, "store: %s\n", err.msg);
    return -1;
  }
  keys[0].project = "42";
  keys[0].key = "k42";
  keys[1].project = "43";
  keys[1].key = "k43";
  memset(&cfg, 0, sizeof(cfg));
  cfg.sentry_keys = keys;
  cfg.n_sentry_keys = 2;
  if (spaa_metrics_new(&metrics))
    return -1;
  app.cfg = &cfg;
  app.store = store;
  app.metrics = metrics;
  return 0;
}

static int teardown(void **state)
{
  char cmd[300];
  (void)state;
  spaa_store_close(store);
  spaa_metrics_free(metrics);
  if (tmpdir[0]) {
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
      fprintf(stderr, "could not remove %s\n", tmpdir);
  }
  return 0;
}

/* The SPAA text of a model. */
static char *spaa_text(const struct spaa_profile *p, size_t *len)
{
  struct spaa_buf b;
  struct spaa_err err;
  spaa_buf_init(&b, 0);
  assert_int_equal(spaa_write_buf(p, 0, &b, &err), 0);
  *len = b.len;
  return spaa_buf_steal(&b, len);
}

/* Post `fixture` as an item of `type`; the answer names profile `id` as stored, and the
 * store gives back exactly the SPAA that the offline converter makes of the same bytes. */
static void roundtrip(const char *type, const char *fixture, const char *id)
{
  struct spaa_conv_list l;
  struct spaa_profile *got = NULL;
  struct spaa_err err;
  struct answer a;
  size_t len, la, lb;
  char *env, *ta, *tb;
  json_t *pr;
  env = envelope(DSN42, type, fixture, &len);
  post("42", env, len, &a);
  if (a.status != 200)
    fail_msg("%s: status %d", fixture, a.status);
  assert_string_equal(json_string_value(json_object_get(a.body, "id")),
                      "9f1e2d3c4b5a69788796a5b4c3d2e1f0");
  pr = json_array_get(json_object_get(a.body, "profiles"), 0);
  assert_string_equal(json_string_value(json_object_get(pr, "id")), id);
  assert_true(json_is_true(json_object_get(pr, "stored")));
  assert_null(json_object_get(pr, "duplicate"));
  json_decref(a.body);
  memset(&l, 0, sizeof(l));
  assert_int_equal(spaa_convert_sentry((const uint8_t *)env, len, NULL, &l, &err), 0);
  assert_int_equal(l.n, 1);
  assert_non_null(l.v[0].profile);
  assert_int_equal(spaa_store_get(store, id, &got, &err), 0);
  ta = spaa_text(l.v[0].profile, &la);
  tb = spaa_text(got, &lb);
  if (la != lb || memcmp(ta, tb, la) != 0)
    fail_msg("%s: the stored SPAA (%zu bytes) differs from the conversion (%zu bytes)", fixture,
             lb, la);
  free(ta);
  free(tb);
  spaa_profile_free(got);
  spaa_conv_list_free(&l);
  free(env);
}

static void test_store_and_readback(void **state)
{
  struct sentry_counts c0, c1;
  struct answer a;
  size_t len;
  char *env;
  json_t *pr;
  (void)state;
  read_counts(&c0);
  roundtrip("profile", "vroom_node_v1.json", "18bc5f6674d9432a8d30daf22a0c16bc");
  roundtrip("profile", "relay_sample_v1_valid_cocoa.json", "41fed0925670468bb0457f61a74688ec");
  roundtrip("profile_chunk", "vroomrs_sample_v2_cocoa.json", "0432a0a4c25f4697bf9f0a2fcbe6a814");
  roundtrip("profile_chunk", "vroomrs_sample_v2_android.json",
            "1f4ab0a4c25f4697bf9f0a2fcbe6a815");
  read_counts(&c1);
  assert_int_equal(c1.accepted, c0.accepted + 4);
  assert_int_equal(c1.profiles_stored, c0.profiles_stored + 4);

  /* idempotent: the same envelope again stores nothing and names the same profile */
  env = envelope(DSN42, "profile", "vroom_node_v1.json", &len);
  post("42", env, len, &a);
  assert_int_equal(a.status, 200);
  pr = json_array_get(json_object_get(a.body, "profiles"), 0);
  assert_string_equal(json_string_value(json_object_get(pr, "id")),
                      "18bc5f6674d9432a8d30daf22a0c16bc");
  assert_true(json_is_true(json_object_get(pr, "stored")));
  assert_true(json_is_true(json_object_get(pr, "duplicate")));
  json_decref(a.body);
  read_counts(&c0);
  assert_int_equal(c0.profiles_duplicate, c1.profiles_duplicate + 1);
  assert_int_equal(c0.profiles_stored, c1.profiles_stored);
  free(env);
}

static void test_dropped(void **state)
{
  struct sentry_counts c0, c1;
  struct answer a;
  size_t len, i, idx = SENTRY_N_REASONS;
  char *env;
  json_t *pr;
  (void)state;
  for (i = 0; i < SENTRY_N_REASONS; i++)
    if (strcmp(sentry_reason_at(i), "not_enough_samples") == 0)
      idx = i;
  assert_true(idx < SENTRY_N_REASONS);
  assert_null(sentry_reason_at(SENTRY_N_REASONS));
  read_counts(&c0);
  env = envelope("{\"dsn\":\"https://k42@example.org/42\"}", "profile",
                 "vroomrs_sample_v1_python.json", &len);
  post("42", env, len, &a);
  assert_int_equal(a.status, 200);
  assert_null(json_object_get(a.body, "id")); /* no event_id in the header */
  pr = json_array_get(json_object_get(a.body, "profiles"), 0);
  assert_true(json_is_false(json_object_get(pr, "stored")));
  assert_string_equal(json_string_value(json_object_get(pr, "reason")), "not_enough_samples");
  assert_non_null(strstr(json_string_value(json_object_get(pr, "detail")), "sample"));
  json_decref(a.body);
  read_counts(&c1);
  assert_int_equal(c1.profiles_rejected[idx], c0.profiles_rejected[idx] + 1);
  assert_int_equal(c1.accepted, c0.accepted + 1);
  free(env);
}

static void test_dsn_rules(void **state)
{
  struct sentry_counts c0, c1;
  struct answer a;
  size_t len;
  char *env;
  (void)state;
  read_counts(&c0);
  env = envelope("{}", "profile", "relay_sample_v1_valid_cocoa.json", &len);
  post("42", env, len, &a);
  assert_relay_error(&a, 401, "no credentials");
  json_decref(a.body);
  free(env);
  env = envelope("{\"dsn\":\"https://k43@example.org/43\"}", "profile",
                 "relay_sample_v1_valid_cocoa.json", &len);
  post("42", env, len, &a);
  assert_relay_error(&a, 400, "names project 43");
  json_decref(a.body);
  free(env);
  env = envelope("{\"dsn\":\"https://k43@example.org/42\"}", "profile",
                 "relay_sample_v1_valid_cocoa.json", &len);
  post("42", env, len, &a);
  assert_relay_error(&a, 403, "not configured for project 42");
  json_decref(a.body);
  post("4x2", env, len, &a);
  assert_relay_error(&a, 404, "must be a number");
  json_decref(a.body);
  free(env);
  post("42", "", 0, &a);
  assert_relay_error(&a, 400, "empty");
  json_decref(a.body);
  {
    static const char trunc[] =
        "{\"dsn\":\"https://k42@example.org/42\"}\n{\"type\":\"profile\",\"length\":9}\nabc";
    post("42", trunc, strlen(trunc), &a);
  }
  assert_relay_error(&a, 400, "truncated");
  json_decref(a.body);
  read_counts(&c1);
  assert_int_equal(c1.unauthorized, c0.unauthorized + 1);
  assert_int_equal(c1.forbidden, c0.forbidden + 1);
  assert_int_equal(c1.bad_request + c1.not_found, c0.bad_request + c0.not_found + 4);
  assert_int_equal(c1.not_found, c0.not_found + 1);
}

struct poster {
  const char *env;
  size_t len;
  struct answer a;
};

static void *post_thread(void *arg)
{
  struct poster *p = arg;
  post("42", p->env, p->len, &p->a);
  return NULL;
}

static void test_busy(void **state)
{
  struct sentry_counts c0, c1;
  struct spaa_store_stats st;
  struct poster first;
  struct answer a;
  pthread_t th;
  size_t len2;
  char *env2;
  int i;
  (void)state;
  read_counts(&c0);
  first.env = envelope(DSN42, "profile_chunk", "relay_sample_v2_valid_cocoa.json", &first.len);
  env2 = envelope(DSN42, "profile_chunk", "vroomrs_sample_v2_android.json", &len2);
  spaa_store__pause(store, 1);
  assert_int_equal(pthread_create(&th, NULL, post_thread, &first), 0);
  for (i = 0; i < 5000; i++) { /* until the first profile waits in the (1-deep) queue */
    spaa_store_stats(store, &st);
    if (st.queued == 1)
      break;
    usleep(1000);
  }
  assert_int_equal(st.queued, 1);
  post("42", env2, len2, &a);
  assert_relay_error(&a, 429, ""); /* back-pressure is a rate limit to an SDK, as Relay's */
  assert_string_equal(a.retry, "1");
  assert_string_equal(a.limits, "1::organization:server_busy");
  json_decref(a.body);
  spaa_store__pause(store, 0);
  pthread_join(th, NULL);
  assert_int_equal(first.a.status, 200);
  json_decref(first.a.body);
  read_counts(&c1);
  assert_int_equal(c1.busy, c0.busy + 1);
  /* after the queue drained the second one goes in */
  post("42", env2, len2, &a);
  assert_int_equal(a.status, 200);
  json_decref(a.body);
  free((char *)first.env);
  free(env2);
}

static void test_core_errors(void **state)
{
  static const struct {
    int code;
    int status;
  } t[] = {
      {SPAA_E_MEDIA_TYPE, 400},    {SPAA_E_BAD_COMPRESSION, 400}, {SPAA_E_TOO_LARGE, 413},
      {SPAA_E_UNAUTHORIZED, 401},  {SPAA_E_NOMEM, 503},
  };
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
    struct spaa_req req;
    struct spaa_resp resp;
    json_t *o;
    memset(&req, 0, sizeof(req));
    memset(&resp, 0, sizeof(resp));
    spaa_buf_init(&resp.body, SPAA_HTTP_RESP_MAX);
    req.route = sentry_route();
    req.route->on_error(&req, &resp, t[i].code, "the detail");
    assert_int_equal(resp.status, t[i].status);
    o = json_loadb(resp.body.p, resp.body.len, 0, NULL);
    assert_non_null(o);
    assert_non_null(json_string_value(json_object_get(o, "detail")));
    assert_string_equal(json_string_value(json_array_get(json_object_get(o, "causes"), 0)),
                        "the detail");
    json_decref(o);
    spaa_buf_free(&resp.body);
  }
}

/* Which envelopes are answered on the I/O thread: none that may hold a profile item. */
static void test_quick(void **state)
{
  static const char txn[] = "{\"event_id\":\"9ec79c33ec9942ab8353589fcb2e04dc\"}\n"
                            "{\"type\":\"transaction\"}\n{\"transaction\":\"GET /\"}\n";
  static const char prof[] = "{}\n{\"type\": \"profile\"}\n{}\n";
  static const char chunk[] = "{}\n{\"type\":\"profile_chunk\",\"length\":2}\n{}\n";
  (void)state;
  assert_true(spaa_sentry_quick(txn, sizeof(txn) - 1));
  assert_true(spaa_sentry_quick("", 0));
  assert_false(spaa_sentry_quick(prof, sizeof(prof) - 1));
  assert_false(spaa_sentry_quick(chunk, sizeof(chunk) - 1));
  /* the byte after the body is not looked at */
  assert_true(spaa_sentry_quick("{}\nprofile", 3));
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_store_and_readback),
      cmocka_unit_test(test_dropped),
      cmocka_unit_test(test_dsn_rules),
      cmocka_unit_test(test_busy),
      cmocka_unit_test(test_core_errors),
      cmocka_unit_test(test_quick),
  };
  if (!spaa_test_have_fixtures("sentry", "the Sentry server tests"))
    return SPAA_TEST_SKIP;
  return cmocka_run_group_tests(tests, setup, teardown);
}
