/* Benchmark: Sentry envelopes per second through the real HTTP server (the product's routing
 * table, HTTP core, store in a temp dir; loopback only) at 32 keep-alive connections, each
 * a client thread with a plain socket, against a floor measured in the same run: the same
 * body POSTed to a bench-only route whose handler answers 200 at once (same core, same body
 * bytes received; only the Sentry work differs). Envelopes are SDK-shaped: key in the query
 * string, no Content-Type, items without length, no final newline.
 * Phases: 0 floor with the profile envelope's body, 1 GET /healthz, 2 transaction-only
 * envelopes, 3 transaction + V1 profile envelopes (each stored: unique ids), 4 floor with the
 * transaction envelope's body. Ratios compare each envelope kind with the floor of its body.
 * Usage: bench_sentry_server [FIXTURES_DIR] [SECONDS_PER_PHASE] [PHASES, e.g. "0234"] */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>

#include <jansson.h>

#include "config/config.h"
#include "server/http.h"
#include "server/log.h"
#include "server/routes.h"
#include "storage/storage.h"

#include "fixture.h"

#define CONNS 32                  /* client connections, one thread each */
#define MAX_REQ_PER_CONN 200000   /* bound on requests per connection and phase */
#define RESP_BUF 65536
#define ROUNDS 2                  /* rounds of every phase; the best rate is reported */

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- the bench-only floor route ------------------------------------------------------- */

static void discard(const struct spaa_req *req, struct spaa_resp *resp)
{
  (void)req;
  spaa_resp_bytes(resp, 200, "application/json", "{}", 2);
}

/* ---- load client ------------------------------------------------------------------------- */

struct phase {
  const char *name;        /* for the report */
  const char *method;      /* "POST" or "GET" */
  const char *path;        /* request target */
  const char *body;        /* template (NULL for GET) */
  size_t body_len;
  size_t id_off[2];        /* offsets of 32-hex ids to make unique per request (0 = none) */
  size_t n_ids;
  double seconds;          /* time bound */
  uint16_t port;
  /* results */
  size_t ok, bad;
  double elapsed;
};

static uint64_t id_counter; /* atomic: unique ids across threads and phases */

static void put_hex(char *dst, uint64_t hi, uint64_t lo)
{
  static const char hex[] = "0123456789abcdef";
  int i;
  for (i = 0; i < 16; i++) {
    dst[i] = hex[(hi >> (60 - 4 * i)) & 15];
    dst[16 + i] = hex[(lo >> (60 - 4 * i)) & 15];
  }
}

static int send_all(int fd, const char *p, size_t n)
{
  while (n) {
    ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
    if (w <= 0) {
      if (w < 0 && errno == EINTR)
        continue;
      return -1;
    }
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

/* Read one response; returns its status or -1. */
static int read_response(int fd, char *buf)
{
  size_t have = 0, need;
  char *end = NULL, *cl;
  long clen;
  int status;
  for (;;) {
    ssize_t r = recv(fd, buf + have, RESP_BUF - 1 - have, 0);
    if (r <= 0)
      return -1;
    have += (size_t)r;
    buf[have] = 0;
    if ((end = strstr(buf, "\r\n\r\n")))
      break;
    if (have >= RESP_BUF - 1)
      return -1;
  }
  if (sscanf(buf, "HTTP/1.%*d %d", &status) != 1)
    return -1;
  cl = strcasestr(buf, "\r\nContent-Length:");
  clen = cl && cl < end ? strtol(cl + 17, NULL, 10) : 0;
  need = (size_t)(end + 4 - buf) + (size_t)clen;
  while (have < need) {
    size_t room = RESP_BUF - 1 - (have > RESP_BUF / 2 ? 0 : have);
    ssize_t r;
    if (have > RESP_BUF / 2) { /* a long body: only count bytes */
      char sink[4096];
      r = recv(fd, sink, need - have < sizeof(sink) ? need - have : sizeof(sink), 0);
    } else {
      r = recv(fd, buf + have, room, 0);
    }
    if (r <= 0)
      return -1;
    have += (size_t)r;
  }
  return status;
}

struct worker {
  struct phase *ph;
  size_t ok, bad;
};

static void *client(void *arg)
{
  struct worker *w = arg;
  struct phase *ph = w->ph;
  struct sockaddr_in sa;
  char head[512], *body = NULL, *resp = malloc(RESP_BUF);
  size_t hl, i, k;
  double deadline = now_s() + ph->seconds;
  int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
  memset(&sa, 0, sizeof(sa));
  sa.sin_family = AF_INET;
  sa.sin_port = htons(ph->port);
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || !resp) {
    w->bad++;
    goto out;
  }
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  if (ph->body && !(body = malloc(ph->body_len))) {
    w->bad++;
    goto out;
  }
  if (ph->body)
    memcpy(body, ph->body, ph->body_len);
  hl = (size_t)snprintf(head, sizeof(head),
                        ph->body ? "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: %zu\r\n\r\n"
                                 : "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
                        ph->method, ph->path, ph->body_len);
  for (i = 0; i < MAX_REQ_PER_CONN && now_s() < deadline; i++) {
    int st;
    if (ph->n_ids) {
      uint64_t n = __atomic_add_fetch(&id_counter, 1, __ATOMIC_RELAXED);
      for (k = 0; k < ph->n_ids; k++)
        put_hex(body + ph->id_off[k], 0xbe0c000000000000ull | (uint64_t)getpid(), n);
    }
    if (send_all(fd, head, hl) || (body && send_all(fd, body, ph->body_len))) {
      w->bad++;
      break;
    }
    st = read_response(fd, resp);
    if (st == 200) {
      w->ok++;
    } else {
      w->bad++;
      if (st < 0)
        break;
    }
  }
out:
  if (fd >= 0)
    close(fd);
  free(body);
  free(resp);
  return NULL;
}

static void run_phase(struct phase *ph)
{
  pthread_t th[CONNS];
  struct worker w[CONNS];
  double t0;
  int i;
  memset(w, 0, sizeof(w));
  t0 = now_s();
  for (i = 0; i < CONNS; i++) {
    w[i].ph = ph;
    pthread_create(&th[i], NULL, client, &w[i]);
  }
  ph->ok = ph->bad = 0;
  for (i = 0; i < CONNS; i++) {
    pthread_join(th[i], NULL);
    ph->ok += w[i].ok;
    ph->bad += w[i].bad;
  }
  ph->elapsed = now_s() - t0;
}

/* ---- envelopes ------------------------------------------------------------------------------ */

/* The compact JSON of a fixture file, or NULL. */
static char *compact_fixture(const char *dir, const char *name)
{
  char path[1300];
  json_error_t je;
  json_t *j;
  char *s;
  snprintf(path, sizeof(path), "%.1024s/%s", dir, name);
  if (!(j = json_load_file(path, 0, &je))) {
    fprintf(stderr, "bench_sentry_server: cannot load %s: %s\n", path, je.text);
    return NULL;
  }
  s = json_dumps(j, JSON_COMPACT);
  json_decref(j);
  return s;
}

static const char TXN[] = "{\"type\":\"transaction\",\"transaction\":\"GET /bench\","
                          "\"contexts\":{\"trace\":{\"trace_id\":\"4b25bc58f14243d8b208d1e22a054164\","
                          "\"op\":\"http.server\"}}}";
#define HDR_FMT "{\"event_id\":\"%s\",\"sent_at\":\"2026-01-01T00:00:00Z\"," \
                "\"sdk\":{\"name\":\"sentry.javascript.node\",\"version\":\"10.0.0\"}}\n"

/* ROUNDS rounds of every phase (those named in `only`, when given), interleaved, the best
 * rate kept: the machine is shared. The server's request log goes to /dev/null meanwhile. */
static void run_rounds(struct phase *ph, uint16_t port, const char *only)
{
  int saved_err, devnull;
  fflush(stderr);
  saved_err = dup(2);
  devnull = open("/dev/null", O_WRONLY);
  dup2(devnull, 2);
  for (int r = 0; r < ROUNDS; r++)
    for (int i = 0; i < 5; i++) {
      struct phase t = ph[i];
      size_t bad = ph[i].bad;
      if (only && !strchr(only, '0' + i))
        continue;
      t.port = port;
      run_phase(&t);
      if (!ph[i].elapsed || (double)t.ok / t.elapsed > (double)ph[i].ok / ph[i].elapsed)
        ph[i] = t;
      ph[i].bad = bad + t.bad;
    }
  for (int i = 0; i < 5; i++)
    if (!ph[i].elapsed)
      ph[i].elapsed = 1;
  fflush(stderr);
  dup2(saved_err, 2);
  close(devnull);
  close(saved_err);
}

/* Rates per phase and the ratios to their floors. */
static void report(const struct phase *ph, struct spaa_store *store, double secs, size_t lp,
                   size_t lt)
{
  printf("%d connections, best of %d rounds of %.1f s per phase, envelope with profile %zu bytes, without %zu bytes\n",
         CONNS, ROUNDS, secs, lp, lt);
  for (int i = 0; i < 5; i++)
    printf("%-48s %9.0f req/s  (%zu ok, %zu failed)\n", ph[i].name, (double)ph[i].ok / ph[i].elapsed,
           ph[i].ok, ph[i].bad);
  {
    double floor_p = (double)ph[0].ok / ph[0].elapsed, floor_t = (double)ph[4].ok / ph[4].elapsed;
    struct spaa_store_stats st;
    spaa_store_stats(store, &st);
    printf("ratio transaction-only envelopes / its floor: %5.1f%%  (target >= 60%%)\n",
           100.0 * (double)ph[2].ok / ph[2].elapsed / floor_t);
    printf("ratio profile envelopes (stored) / its floor: %5.1f%%  (target >= 60%%)\n",
           100.0 * (double)ph[3].ok / ph[3].elapsed / floor_p);
    printf("store: %llu profiles in %llu transactions, %llu busy\n",
           (unsigned long long)st.stored, (unsigned long long)st.transactions,
           (unsigned long long)st.busy);
  }
}

int main(int argc, char **argv)
{
  const char *dir = argc > 1 && argv[1][0] ? argv[1] : NULL;
  double secs = argc > 2 ? atof(argv[2]) : 3.0;
  const char *only = argc > 3 ? argv[3] : NULL;
  char fixdir[1024], tmp[600], db[700], *profile, *pos;
  char *env_prof, *env_txn;
  size_t lp, lt, id_in_profile;
  struct spaa_config *cfg = NULL;
  struct spaa_store *store = NULL;
  struct spaa_store_opts so;
  struct spaa_http *http = NULL;
  struct spaa_app app;
  struct spaa_err err;
  struct spaa_route *routes;
  char *cargv[] = {"serve", "--listen", "127.0.0.1:0", "--data-dir", tmp, NULL};
  char *cenv[] = {NULL};
  int rc = 1;
  const char *qs = "/api/42/envelope/?sentry_key=bench&sentry_version=7&sentry_client=bench%2F1";
  struct phase ph[5];

  if (!dir) {
    if (spaa_test_fixture_path(fixdir, sizeof(fixdir), "sentry")) {
      fprintf(stderr, "bench_sentry_server: no shared fixtures folder (give FIXTURES_DIR or set "
                      "SPAA_SHARED)\n");
      return 2;
    }
    dir = fixdir;
  }
  signal(SIGPIPE, SIG_IGN);
  if (!(profile = compact_fixture(dir, "relay_sample_v1_valid_cocoa.json")))
    return 2;
  if (!(pos = strstr(profile, "41fed0925670468bb0457f61a74688ec"))) {
    fprintf(stderr, "bench_sentry_server: the fixture's event_id is not where expected\n");
    return 2;
  }
  id_in_profile = (size_t)(pos - profile);
  /* envelope 1: transaction + V1 profile, unique event and profile ids per request */
  env_prof = malloc(strlen(profile) + 1024);
  lp = (size_t)sprintf(env_prof, HDR_FMT "{\"type\":\"transaction\"}\n%s\n{\"type\":\"profile\"}\n",
                       "00000000000000000000000000000000", TXN);
  id_in_profile += lp;
  lp += (size_t)sprintf(env_prof + lp, "%s", profile);
  /* envelope 2: a transaction alone (most SDK traffic: nothing to store) */
  env_txn = malloc(1024);
  lt = (size_t)sprintf(env_txn, HDR_FMT "{\"type\":\"transaction\"}\n%s",
                       "00000000000000000000000000000000", TXN);

  /* the store goes where TMPDIR says (default /tmp): a disk, so commits pay for fsync */
  snprintf(tmp, sizeof(tmp), "%.500s/bench-sentry-server.XXXXXX",
           getenv("TMPDIR") && getenv("TMPDIR")[0] ? getenv("TMPDIR") : "/tmp");
  if (!mkdtemp(tmp)) {
    perror("mkdtemp");
    return 2;
  }
  if (spaa_config_load(5, cargv, cenv, &cfg, &err)) {
    fprintf(stderr, "config: %s\n", err.msg);
    goto out;
  }
  snprintf(db, sizeof(db), "%s/bench.db", tmp);
  memset(&so, 0, sizeof(so));
  so.path = db;
  so.queue_depth = cfg->queue_depth;
  so.batch_max = 64; /* as `serve` */
  so.readers = 4;
  if (spaa_store_open(&so, &store, &err)) {
    fprintf(stderr, "store: %s\n", err.msg);
    goto out;
  }
  /* the product's routes plus the floor route */
  routes = calloc(spaa_n_routes + 1, sizeof(*routes));
  memcpy(routes, spaa_routes, spaa_n_routes * sizeof(*routes));
  routes[spaa_n_routes].method = "POST";
  routes[spaa_n_routes].pattern = "/bench/discard";
  routes[spaa_n_routes].fn = discard;
  memset(&app, 0, sizeof(app));
  app.cfg = cfg;
  app.store = store;
  app.metrics = NULL;
  if (spaa_http_start(&app, routes, spaa_n_routes + 1, &http, &err)) {
    fprintf(stderr, "http: %s\n", err.msg);
    goto out;
  }
  memset(ph, 0, sizeof(ph));
  ph[0] = (struct phase){"floor: profile envelope body to a 200 route", "POST", "/bench/discard",
                         env_prof, lp, {0, 0}, 0, secs, 0, 0, 0, 0};
  ph[4] = (struct phase){"floor: transaction envelope body to a 200 route", "POST",
                         "/bench/discard", env_txn, lt, {0, 0}, 0, secs, 0, 0, 0, 0};
  ph[1] = (struct phase){"GET /healthz (reference)", "GET", "/healthz", NULL, 0, {0, 0}, 0, secs,
                         0, 0, 0, 0};
  ph[2] = (struct phase){"envelopes: transaction only", "POST", qs, env_txn, lt, {13, 0}, 1, secs,
                         0, 0, 0, 0};
  ph[3].name = "envelopes: transaction + V1 profile, stored";
  ph[3].method = "POST";
  ph[3].path = qs;
  ph[3].body = env_prof;
  ph[3].body_len = lp;
  ph[3].n_ids = 2;
  ph[3].id_off[0] = 13; /* after {"event_id":" */
  ph[3].id_off[1] = id_in_profile;
  ph[3].seconds = secs;
  run_rounds(ph, spaa_http_port(http), only);
  report(ph, store, secs, lp, lt);
  rc = ph[0].bad + ph[2].bad + ph[3].bad + ph[4].bad ? 1 : 0;
out:
  spaa_http_stop(http);
  spaa_store_close(store);
  spaa_config_free(cfg);
  {
    char cmd[1200];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
    if (system(cmd) != 0)
      fprintf(stderr, "could not remove %s\n", tmp);
  }
  free(env_prof);
  free(env_txn);
  free(profile);
  return rc;
}
