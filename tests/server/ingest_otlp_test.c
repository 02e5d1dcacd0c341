/* server/ingest_otlp.c against a live daemon with the real routing table and a real store,
 * over raw sockets: 503 + Retry-After + Status{UNAVAILABLE} when the store queue is full,
 * profiles sharing one profile_id inside a request all stored (and deduplicated on a retry),
 * and the outcomes counted in the metrics registry. The fixture-wide behaviour is covered by
 * tests/e2e/otlp_http.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "config/config.h"
#include "server/http.h"
#include "server/log.h"
#include "server/ingest_otlp.h"
#include "server/metrics.h"
#include "server/routes.h"
#include "storage/storage.h"

#include "fixture.h"

#include "otlp_profiles_service.pb-c.h"

#define REQ Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesServiceRequest
#define REQ_DESC opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__descriptor

static struct spaa_config *cfg;
static struct spaa_store *store;
static struct spaa_http *srv;
static struct spaa_app app;
static struct spaa_metrics *metrics;
static uint16_t port;
static char dir[] = "/tmp/spaa-otlp-test.XXXXXX";

static int start(void **state)
{
  char *argv[] = {"serve", "--listen", "127.0.0.1:0", "--workers", "8", "--log-level", "error",
                  NULL};
  char *env[] = {NULL};
  char db[128];
  struct spaa_store_opts so;
  struct spaa_err err;
  (void)state;
  signal(SIGPIPE, SIG_IGN);
  if (spaa_config_load(7, argv, env, &cfg, &err))
    fail_msg("config: %s", err.msg);
  spaa_log_set_level(cfg->log_level);
  assert_non_null(mkdtemp(dir));
  snprintf(db, sizeof(db), "%s/otlp.db", dir);
  memset(&so, 0, sizeof(so));
  so.path = db;
  so.queue_depth = 1; /* one waiting profile fills it */
  so.batch_max = 1;
  so.readers = 1;
  if (spaa_store_open(&so, &store, &err))
    fail_msg("store: %s", err.msg);
  if (spaa_metrics_new(&metrics))
    fail_msg("metrics: out of memory");
  app.cfg = cfg;
  app.store = store;
  app.metrics = metrics;
  if (spaa_http_start(&app, spaa_routes, spaa_n_routes, &srv, &err))
    fail_msg("start: %s", err.msg);
  port = spaa_http_port(srv);
  return 0;
}

static int stop(void **state)
{
  char cmd[160];
  (void)state;
  spaa_http_stop(srv);
  spaa_store_close(store);
  spaa_metrics_free(metrics);
  spaa_config_free(cfg);
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
  return system(cmd) == 0 ? 0 : -1;
}

struct answer {
  int status;
  char head[2048];     /* status line and headers */
  uint8_t body[4096];  /* the body (binary) */
  size_t body_len;
};

/* POST body to path with a Content-Type; read the whole answer (the server closes). */
static void post(const char *path, const char *ctype, const void *body, size_t len,
                 struct answer *a)
{
  static char buf[1 << 16];
  struct sockaddr_in sa;
  char head[512];
  size_t got = 0, off = 0;
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  char *sep;
  memset(a, 0, sizeof(*a));
  memset(&sa, 0, sizeof(sa));
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
  snprintf(head, sizeof(head),
           "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
           "Connection: close\r\n\r\n",
           path, ctype, len);
  assert_true(write(fd, head, strlen(head)) == (ssize_t)strlen(head));
  while (off < len) {
    ssize_t w = write(fd, (const char *)body + off, len - off);
    assert_true(w > 0);
    off += (size_t)w;
  }
  for (;;) {
    ssize_t r = read(fd, buf + got, sizeof(buf) - 1 - got);
    if (r <= 0)
      break;
    got += (size_t)r;
  }
  close(fd);
  buf[got] = 0;
  if (sscanf(buf, "HTTP/1.1 %d", &a->status) != 1)
    fail_msg("no status line in '%.80s'", buf);
  sep = strstr(buf, "\r\n\r\n");
  assert_non_null(sep);
  snprintf(a->head, sizeof(a->head), "%.*s", (int)(sep - buf), buf);
  a->body_len = got - (size_t)(sep + 4 - buf);
  assert_true(a->body_len <= sizeof(a->body));
  memcpy(a->body, sep + 4, a->body_len);
}

static int64_t n_profiles(void)
{
  struct spaa_store_counts c;
  struct spaa_err err;
  if (spaa_store_counts(store, &c, &err))
    fail_msg("counts: %s", err.msg);
  return c.profiles;
}

struct bg {
  const uint8_t *body;
  size_t len;
  struct answer a;
  pthread_t th;
};

static void *bg_main(void *arg)
{
  struct bg *b = arg;
  post("/v1development/profiles", "application/x-protobuf", b->body, b->len, &b->a);
  return NULL;
}

/* The outcomes these tests look at, read from the metrics registry. */
struct otlp_counts {
  int64_t requests;           /* export requests that reached the handler */
  int64_t requests_json;      /* ... of which OTLP/JSON */
  int64_t ok;                 /* 200 without partial_success */
  int64_t partial;            /* 200 with partial_success */
  int64_t bad_request;        /* 400 */
  int64_t refused;            /* 401, 413, 415 */
  int64_t unavailable;        /* 503 */
  int64_t profiles_stored;
  int64_t profiles_duplicate;
  int64_t profiles_rejected;
};

/* requests_total{status} over both OTLP routes */
static int64_t answered(const char *status)
{
  return spaa_metrics_sum(metrics, SPAA_METRIC_REQUESTS, "/v1development/profiles", status) +
         spaa_metrics_sum(metrics, SPAA_METRIC_REQUESTS, "/v1experimental/profiles", status);
}

static void read_counts(struct otlp_counts *c)
{
  c->requests = spaa_metrics_sum(metrics, SPAA_METRIC_OTLP_REQUESTS, NULL, NULL);
  c->requests_json = spaa_metrics_sum(metrics, SPAA_METRIC_OTLP_REQUESTS, "json", NULL);
  c->partial = spaa_metrics_sum(metrics, SPAA_METRIC_PARTIAL_SUCCESS, "otlp", NULL);
  c->ok = answered("200") - c->partial;
  c->bad_request = answered("400");
  c->refused = answered("401") + answered("413") + answered("415");
  c->unavailable = answered("503");
  c->profiles_stored = spaa_metrics_sum(metrics, SPAA_METRIC_PROFILES_STORED, "otlp", NULL);
  c->profiles_duplicate = spaa_metrics_sum(metrics, SPAA_METRIC_PROFILES_DUPLICATE, "otlp", NULL);
  c->profiles_rejected = spaa_metrics_sum(metrics, SPAA_METRIC_PROFILES_REJECTED, "otlp", NULL);
}

/* a request waiting in the paused writer's queue fills it: the next one gets 503 */
static void test_busy(void **state)
{
  struct otlp_counts s0, s1;
  struct spaa_store_stats st;
  struct timespec tick = {0, 1000000};
  struct answer a;
  struct bg b;
  size_t len1, len6;
  size_t lenj;
  uint8_t *v1 = spaa_test_fixture_in("otlp", "v1dev_01_cpu_basic.bin", &len1);
  uint8_t *v6 = spaa_test_fixture_in("otlp", "v1dev_06_minimal.bin", &len6);
  uint8_t *j1 = spaa_test_fixture_in("otlp", "v1dev_01_cpu_basic.json", &lenj);
  int64_t before = n_profiles();
  int i;
  (void)state;
  assert_non_null(v1);
  assert_non_null(v6);
  assert_non_null(j1);
  read_counts(&s0);
  spaa_store__pause(store, 1);
  b.body = v6;
  b.len = len6;
  assert_int_equal(pthread_create(&b.th, NULL, bg_main, &b), 0);
  for (i = 0; i < 20000; i++) { /* a guard against hanging, not a timing assertion */
    spaa_store_stats(store, &st);
    if (st.queued == 1)
      break;
    nanosleep(&tick, NULL);
  }
  assert_int_equal(st.queued, 1);
  post("/v1development/profiles", "application/json", j1, lenj, &a);
  spaa_store__pause(store, 0); /* whatever the answer: later tests need the writer */
  assert_int_equal(a.status, 503);
  assert_non_null(strstr(a.head, "Retry-After: 1"));
  assert_non_null(strstr(a.head, "Content-Type: application/json"));
  if (!strstr((const char *)a.body, "{\"code\":14,\"message\":\"profile 1 of 1 could not be stored"))
    fail_msg("503 body: %.*s", (int)a.body_len, (const char *)a.body);
  assert_int_equal(pthread_join(b.th, NULL), 0);
  assert_int_equal(b.a.status, 200);
  assert_int_equal(b.a.body_len, 0);
  assert_int_equal(n_profiles(), before + 1);
  /* the retry goes through */
  post("/v1development/profiles", "application/x-protobuf", v1, len1, &a);
  assert_int_equal(a.status, 200);
  assert_int_equal(n_profiles(), before + 2);
  read_counts(&s1);
  assert_int_equal(s1.unavailable - s0.unavailable, 1);
  assert_int_equal(s1.ok - s0.ok, 2);
  assert_int_equal(s1.requests - s0.requests, 3);
  assert_int_equal(s1.requests_json - s0.requests_json, 1);
  assert_int_equal(s1.profiles_stored - s0.profiles_stored, 2);
  free(v1);
  free(v6);
  free(j1);
}

/* Two profiles carrying one profile_id in one request: both stored; the request sent again
 * finds both already stored. */
static void test_shared_profile_id(void **state)
{
  static uint8_t pid[16] = {0xfe, 0xed, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14};
  struct otlp_counts s0, s1;
  struct answer a;
  size_t len, plen;
  uint8_t *v6 = spaa_test_fixture_in("otlp", "v1dev_06_minimal.bin", &len), *body;
  REQ *r;
  Opentelemetry__Proto__Profiles__V1development__ScopeProfiles *sp;
  Opentelemetry__Proto__Profiles__V1development__Profile *two[2], **saved;
  size_t saved_n;
  int64_t before = n_profiles();
  (void)state;
  assert_non_null(v6);
  r = (REQ *)protobuf_c_message_unpack(&REQ_DESC, NULL, len, v6);
  assert_non_null(r);
  sp = r->resource_profiles[0]->scope_profiles[0];
  assert_int_equal(sp->n_profiles, 1);
  sp->profiles[0]->profile_id.data = pid;
  sp->profiles[0]->profile_id.len = 16;
  two[0] = two[1] = sp->profiles[0];
  saved = sp->profiles;
  saved_n = sp->n_profiles;
  sp->profiles = two;
  sp->n_profiles = 2;
  plen = protobuf_c_message_get_packed_size(&r->base);
  body = malloc(plen);
  assert_non_null(body);
  protobuf_c_message_pack(&r->base, body);
  sp->profiles = saved;
  sp->n_profiles = saved_n;
  sp->profiles[0]->profile_id.data = NULL; /* not ours to free */
  sp->profiles[0]->profile_id.len = 0;
  protobuf_c_message_free_unpacked(&r->base, NULL);

  read_counts(&s0);
  post("/v1development/profiles", "application/x-protobuf", body, plen, &a);
  assert_int_equal(a.status, 200);
  assert_int_equal(n_profiles(), before + 2);
  post("/v1experimental/profiles", "application/x-protobuf", body, plen, &a);
  assert_int_equal(a.status, 200);
  assert_int_equal(a.body_len, 0);
  assert_int_equal(n_profiles(), before + 2);
  read_counts(&s1);
  assert_int_equal(s1.profiles_stored - s0.profiles_stored, 2);
  assert_int_equal(s1.profiles_duplicate - s0.profiles_duplicate, 2);
  free(body);
  free(v6);
}

/* rejections and refusals are counted where they belong */
static void test_counters(void **state)
{
  struct otlp_counts s0, s1;
  struct answer a;
  size_t len;
  uint8_t *v90 = spaa_test_fixture_in("otlp", "v1dev_90_invalid_stack_index.bin", &len);
  (void)state;
  assert_non_null(v90);
  read_counts(&s0);
  post("/v1development/profiles", "application/x-protobuf", v90, len, &a);
  assert_int_equal(a.status, 200);
  post("/v1development/profiles", "text/plain", v90, len, &a);
  assert_int_equal(a.status, 415);
  assert_non_null(strstr(a.head, "Content-Type: application/x-protobuf"));
  post("/v1development/profiles", "application/json", "{\"resourceProfiles\":7}", 22, &a);
  assert_int_equal(a.status, 400);
  assert_int_equal(a.body[0], '{');
  read_counts(&s1);
  assert_int_equal(s1.partial - s0.partial, 1);
  /* one rejected alone (partial success), two uploads refused whole, each by its reason */
  assert_int_equal(s1.profiles_rejected - s0.profiles_rejected, 3);
  assert_int_equal(spaa_metrics_sum(metrics, SPAA_METRIC_PROFILES_REJECTED, "otlp", "media_type"),
                   1);
  assert_true(spaa_metrics_sum(metrics, SPAA_METRIC_PROFILES_REJECTED, "otlp", "bad_json") +
                  spaa_metrics_sum(metrics, SPAA_METRIC_PROFILES_REJECTED, "otlp", "invalid") >=
              1);
  assert_int_equal(s1.refused - s0.refused, 1);
  assert_int_equal(s1.bad_request - s0.bad_request, 1);
  free(v90);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_busy),
      cmocka_unit_test(test_shared_profile_id),
      cmocka_unit_test(test_counters),
  };
  if (!spaa_test_have_fixtures("otlp", "the OTLP server tests"))
    return SPAA_TEST_SKIP;
  return cmocka_run_group_tests(tests, start, stop);
}
