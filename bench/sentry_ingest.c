/* Benchmark: a >= 5 MB Sentry V1 profile envelope (vroom_node_v1.json's shapes, scaled up
 * deterministically in memory) (a) from bytes to SPAA text (envelope parse + decode +
 * normalize + spaa_write_buf) and (b) from bytes to COMMITTED: the server's envelope handler
 * (credentials, parse, convert, spaa_store_put waiting for the commit) on a real store in
 * TMPDIR (default /tmp), a new profile id each time; both against jansson's bare json_loadb
 * of the same profile JSON in the same run. Prints the times and ratios.
 * Usage: bench_sentry_ingest [FIXTURES_DIR] [MIN_MB] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "sentry/sentry.h"
#include "spaa/spaa_io.h"
#include "server/log.h"
#include "server/routes.h"
#include "storage/storage.h"

#include "fixture.h"

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Replicate the node profile's frames, stacks and samples `reps` times: replica r renames
 * its functions and shifts its indices; samples are 100 us apart (well inside 30 s). */
static json_t *scale_profile(json_t *src, size_t reps)
{
  json_t *root = json_deep_copy(src), *prof = json_object_get(root, "profile");
  json_t *frames0 = json_object_get(prof, "frames"), *stacks0 = json_object_get(prof, "stacks");
  json_t *samples0 = json_object_get(prof, "samples");
  json_t *frames = json_array(), *stacks = json_array(), *samples = json_array();
  size_t nf = json_array_size(frames0), ns = json_array_size(stacks0), r, i, j, k = 0;
  for (r = 0; r < reps; r++) {
    for (i = 0; i < nf; i++) {
      json_t *f = json_deep_copy(json_array_get(frames0, i));
      const char *fn = json_string_value(json_object_get(f, "function"));
      char name[512];
      snprintf(name, sizeof(name), "%s_r%zu", fn ? fn : "anon", r);
      json_object_set_new(f, "function", json_string(name));
      json_array_append_new(frames, f);
    }
    for (i = 0; i < ns; i++) {
      json_t *s = json_array_get(stacks0, i), *o = json_array();
      for (j = 0; j < json_array_size(s); j++)
        json_array_append_new(o, json_integer(json_integer_value(json_array_get(s, j)) +
                                              (json_int_t)(r * nf)));
      json_array_append_new(stacks, o);
    }
    for (i = 0; i < json_array_size(samples0); i++, k++) {
      json_t *s = json_deep_copy(json_array_get(samples0, i));
      json_object_set_new(s, "stack_id",
                          json_integer(json_integer_value(json_object_get(s, "stack_id")) +
                                       (json_int_t)(r * ns)));
      json_object_set_new(s, "elapsed_since_start_ns", json_integer((json_int_t)(k * 100000 + 1000)));
      json_array_append_new(samples, s);
    }
  }
  json_object_set_new(prof, "frames", frames);
  json_object_set_new(prof, "stacks", stacks);
  json_object_set_new(prof, "samples", samples);
  json_object_set_new(json_array_get(json_object_get(root, "transactions"), 0), "relative_end_ns",
                      json_integer(29000000000LL));
  return root;
}

/* The routing table's envelope route. */
static const struct spaa_route *sentry_route(void)
{
  size_t i;
  for (i = 0; i < spaa_n_routes; i++)
    if (strcmp(spaa_routes[i].pattern, "/api/{project_id}/envelope") == 0)
      return &spaa_routes[i];
  abort();
}

/* Post the envelope to the handler as the server would; the answer's status. */
static int post(const struct spaa_app *app, const char *env, size_t len)
{
  struct spaa_req req;
  struct spaa_resp resp;
  int st;
  memset(&req, 0, sizeof(req));
  memset(&resp, 0, sizeof(resp));
  resp.status = 200;
  spaa_buf_init(&resp.body, SPAA_HTTP_RESP_MAX);
  req.method = "POST";
  req.path = "/api/42/envelope";
  req.n_params = 1;
  req.params[0].name = "project_id";
  req.params[0].name_len = 10;
  req.params[0].value = "42";
  req.body = (const uint8_t *)env;
  req.body_len = len;
  req.wire_len = len;
  req.app = app;
  req.received_ns = (int64_t)time(NULL) * 1000000000;
  req.route = sentry_route();
  req.route->fn(&req, &resp);
  st = resp.status;
  if (st != 200)
    fprintf(stderr, "handler: %d %.*s\n", st, (int)resp.body.len, resp.body.p ? resp.body.p : "");
  spaa_buf_free(&resp.body);
  return st;
}

/* (b) bytes -> committed through the handler and a real store, best of `iters`; the ratio
 * to the jansson floor best_j. 0, or 1 on a failure. */
static int bench_committed(char *env, size_t elen, size_t plen, double best_j, int iters)
{
  char tmp[600], db[700], cmd[800], *idp;
  struct spaa_store *store = NULL;
  struct spaa_store_opts so;
  struct spaa_config cfg;
  struct spaa_app app;
  struct spaa_err err;
  double best_c = 1e9;
  int it;
  snprintf(tmp, sizeof(tmp), "%.500s/bench-sentry-ingest.XXXXXX",
           getenv("TMPDIR") && getenv("TMPDIR")[0] ? getenv("TMPDIR") : "/tmp");
  if (!mkdtemp(tmp)) {
    perror("mkdtemp");
    return 1;
  }
  snprintf(db, sizeof(db), "%s/bench.db", tmp);
  memset(&so, 0, sizeof(so));
  so.path = db;
  so.queue_depth = 16;
  if (spaa_store_open(&so, &store, &err)) {
    fprintf(stderr, "store: %s\n", err.msg);
    return 1;
  }
  memset(&cfg, 0, sizeof(cfg));
  memset(&app, 0, sizeof(app));
  app.cfg = &cfg;
  app.store = store;
  app.metrics = NULL;
  spaa_log_set_level(SPAA_LOG_WARN);
  /* the profile's own event_id, made new each round so that every round stores */
  idp = strstr(env + elen - plen, "18bc5f6674d9432a8d30daf22a0c16bc");
  for (it = 0; it < iters && idp; it++) {
    double t0, t1;
    char hex[9], *body = malloc(elen);
    int st;
    snprintf(hex, sizeof(hex), "%08x", (unsigned)it);
    memcpy(idp, hex, 8);
    /* a body of its own, as the server gives each request: the handler gives back the
     * pages it has read (spaa_req.body) */
    if (!body)
      return 1;
    memcpy(body, env, elen);
    t0 = now_s();
    st = post(&app, body, elen);
    t1 = now_s();
    free(body);
    if (st != 200)
      return 1;
    if (t1 - t0 < best_c)
      best_c = t1 - t0;
  }
  printf("envelope -> COMMITTED (handler + store):  %8.2f ms  %7.1f MB/s  (store in %s)\n",
         best_c * 1e3, (double)elen / 1048576.0 / best_c, tmp);
  printf("ratio bytes->committed / jansson parse: %.2fx (best of %d; target <= 3x)\n",
         best_c / best_j, iters);
  spaa_store_close(store);
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
  if (system(cmd) != 0)
    fprintf(stderr, "could not remove %s\n", tmp);
  return 0;
}

int main(int argc, char **argv)
{
  const char *dir = argc > 1 ? argv[1] : NULL;
  char fixdir[1024], path[1100];
  json_error_t je;
  json_t *src, *big;
  char *payload, *env;
  size_t plen, elen, reps = 1, min_bytes = (size_t)(argc > 2 ? atof(argv[2]) : 5.0) * 1024 * 1024;
  double best_j = 1e9, best_s = 1e9, best_m = 1e9, spaa_bytes = 0;
  int it, iters = 5;
  static const char txn[] = "{\"type\":\"transaction\",\"transaction\":\"bench\"}";
  if (!dir) {
    if (spaa_test_fixture_path(fixdir, sizeof(fixdir), "sentry")) {
      fprintf(stderr, "bench_sentry_ingest: no shared fixtures folder (give FIXTURES_DIR or set "
                      "SPAA_SHARED)\n");
      return 2;
    }
    dir = fixdir;
  }
  snprintf(path, sizeof(path), "%s/vroom_node_v1.json", dir);
  if (!(src = json_load_file(path, 0, &je))) {
    fprintf(stderr, "bench_sentry_ingest: cannot load %s: %s\n", path, je.text);
    return 2;
  }
  /* grow until the payload is at least min_bytes */
  for (;;) {
    big = scale_profile(src, reps);
    payload = json_dumps(big, JSON_COMPACT);
    plen = strlen(payload);
    json_decref(big);
    if (plen >= min_bytes)
      break;
    free(payload);
    reps = reps * 2 > (min_bytes / (plen ? plen : 1)) * reps ? reps * 2
                                                              : (min_bytes / (plen ? plen : 1) + 1) * reps;
  }
  env = malloc(plen + 512);
  elen = (size_t)sprintf(env, "{\"event_id\":\"18bc5f6674d9432a8d30daf22a0c16bc\","
                              "\"dsn\":\"https://bench@localhost/42\"}\n"
                              "{\"type\":\"transaction\",\"length\":%zu}\n%s\n"
                              "{\"type\":\"profile\",\"length\":%zu}\n",
                         strlen(txn), txn, plen);
  memcpy(env + elen, payload, plen);
  elen += plen;
  for (it = 0; it < iters; it++) {
    double t0 = now_s(), t1, t2, tc;
    json_t *j = json_loadb(payload, plen, 0, &je);
    struct sentry_envelope e;
    struct spaa_conv_list l = {0};
    struct spaa_err err;
    struct spaa_buf out;
    if (!j) {
      fprintf(stderr, "jansson: %s\n", je.text);
      return 1;
    }
    json_decref(j);
    t1 = now_s();
    spaa_buf_init(&out, 0);
    if (sentry_envelope_parse((const uint8_t *)env, elen, &e, &err) ||
        sentry_envelope_convert(&e, NULL, &l, &err) || l.n != 1 || !l.v[0].profile ||
        ((tc = now_s()), 0) || spaa_write_buf(l.v[0].profile, 0, &out, &err)) {
      fprintf(stderr, "convert failed: %s %s\n", err.msg, l.n ? l.v[0].err.msg : "");
      return 1;
    }
    t2 = now_s();
    spaa_bytes = (double)out.len;
    spaa_buf_free(&out);
    spaa_conv_list_free(&l);
    sentry_envelope_free(&e);
    if (t1 - t0 < best_j)
      best_j = t1 - t0;
    if (t2 - t1 < best_s)
      best_s = t2 - t1;
    if (tc - t1 < best_m)
      best_m = tc - t1;
  }
  printf("profile JSON: %.2f MB (%zu replicas of vroom_node_v1), envelope %.2f MB, SPAA %.2f MB\n",
         (double)plen / 1048576.0, reps, (double)elen / 1048576.0, spaa_bytes / 1048576.0);
  printf("jansson json_loadb (floor):              %8.2f ms  %7.1f MB/s\n", best_j * 1e3,
         (double)plen / 1048576.0 / best_j);
  printf("envelope -> SPAA (parse+convert+write):   %8.2f ms  %7.1f MB/s\n", best_s * 1e3,
         (double)elen / 1048576.0 / best_s);
  printf("  of which envelope -> SPAA model:        %8.2f ms\n", best_m * 1e3);
  printf("ratio bytes->SPAA / jansson parse: %.2fx (best of %d)\n", best_s / best_j, iters);
  if (bench_committed(env, elen, plen, best_j, iters))
    return 1;
  free(env);
  free(payload);
  json_decref(src);
  return 0;
}
