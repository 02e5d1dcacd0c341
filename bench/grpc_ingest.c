/* Benchmark: OTLP exports per second over gRPC against the same over OTLP/HTTP, both into
 * the real server in this process (the product's routes and gRPC listener, a store in a temp
 * dir; loopback only), the eBPF profiler fixture (82 profiles per request) at 64 concurrent
 * requests: 64 streams on one HTTP/2 connection (an nghttp2 client session) against 64
 * keep-alive HTTP/1.1 connections (the floor: the route the gRPC path must keep up with).
 * Every request is checked (200 / grpc-status 0); the ratio gRPC / HTTP is printed.
 * Usage: bench_grpc_ingest [SECONDS_PER_PHASE] [full|normal (durability, default normal)] */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <nghttp2/nghttp2.h>

#include "config/config.h"
#include "server/grpc.h"
#include "server/http.h"
#include "server/log.h"
#include "server/routes.h"
#include "storage/storage.h"

#include "fixture.h"

#define CONC 64     /* requests in flight */
#define ROUNDS 4    /* rounds of each phase (each transport first in half); the best rate
                     * is reported */
#define EXPORT "/opentelemetry.proto.collector.profiles.v1development.ProfilesService/Export"

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int dial(uint16_t port)
{
  struct sockaddr_in a;
  int one = 1, fd = socket(AF_INET, SOCK_STREAM, 0);
  memset(&a, 0, sizeof(a));
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a))) {
    if (fd >= 0)
      close(fd);
    return -1;
  }
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return fd;
}

/* ---- OTLP/HTTP: CONC keep-alive connections, one thread each ------------------------------- */

struct http_load {
  uint16_t port;
  const uint8_t *body;
  size_t len;
  double until;             /* stop starting requests after this time */
  long ok, bad;             /* answers (atomic) */
};

/* One request/answer on fd: 1 for a 200, 0 for another status, -1 when the connection broke. */
static int http_once(int fd, const struct http_load *l)
{
  char head[256], buf[8192];
  size_t got = 0, need;
  char *end, *cl;
  int n = snprintf(head, sizeof(head), "POST /v1development/profiles HTTP/1.1\r\nHost: bench"
                   "\r\nContent-Type: application/x-protobuf\r\nContent-Length: %zu\r\n\r\n",
                   l->len);
  if (send(fd, head, (size_t)n, MSG_NOSIGNAL) != n ||
      send(fd, l->body, l->len, MSG_NOSIGNAL) != (ssize_t)l->len)
    return -1;
  for (;;) {
    ssize_t r = recv(fd, buf + got, sizeof(buf) - 1 - got, 0);
    if (r <= 0)
      return -1;
    got += (size_t)r;
    buf[got] = 0;
    if ((end = strstr(buf, "\r\n\r\n")))
      break;
    if (got == sizeof(buf) - 1)
      return -1;
  }
  cl = strcasestr(buf, "Content-Length:");
  need = (size_t)(end + 4 - buf) + (cl ? strtoul(cl + 15, NULL, 10) : 0);
  while (got < need) { /* the rest of the (small) answer */
    ssize_t r = recv(fd, buf, sizeof(buf) - 1 < need - got ? sizeof(buf) - 1 : need - got, 0);
    if (r <= 0)
      return -1;
    got += (size_t)r;
  }
  return strncmp(buf, "HTTP/1.1 200", 12) == 0;
}

static void *http_thread(void *arg)
{
  struct http_load *l = arg;
  int fd = dial(l->port);
  while (fd >= 0 && now_s() < l->until) {
    int r = http_once(fd, l);
    __atomic_add_fetch(r == 1 ? &l->ok : &l->bad, 1, __ATOMIC_RELAXED);
    if (r < 0) {
      close(fd);
      fd = dial(l->port);
    }
  }
  if (fd >= 0)
    close(fd);
  return NULL;
}

static double http_phase(uint16_t port, const uint8_t *body, size_t len, double secs, long *bad)
{
  struct http_load l = {port, body, len, 0, 0, 0};
  pthread_t t[CONC];
  double t0 = now_s();
  int i;
  l.until = t0 + secs;
  for (i = 0; i < CONC; i++)
    pthread_create(&t[i], NULL, http_thread, &l);
  for (i = 0; i < CONC; i++)
    pthread_join(t[i], NULL);
  *bad += l.bad;
  return (double)l.ok / (now_s() - t0);
}

/* ---- OTLP/gRPC: CONC streams on one HTTP/2 connection ------------------------------------- */

struct grpc_load {
  const uint8_t *msg;       /* the framed message: prefix + request */
  size_t len;
  double until;
  long ok, bad, inflight;
};

struct gstream {
  size_t off;               /* bytes of msg sent */
  int status_ok;            /* grpc-status 0 seen */
};

static ssize_t g_read(nghttp2_session *s, int32_t id, uint8_t *buf, size_t len, uint32_t *flags,
                      nghttp2_data_source *src, void *user)
{
  struct grpc_load *l = user;
  struct gstream *st = src->ptr;
  size_t n = l->len - st->off < len ? l->len - st->off : len;
  (void)s;
  (void)id;
  memcpy(buf, l->msg + st->off, n);
  st->off += n;
  if (st->off == l->len)
    *flags |= NGHTTP2_DATA_FLAG_EOF;
  return (ssize_t)n;
}

static int g_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name,
                    size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags,
                    void *user)
{
  struct gstream *st = nghttp2_session_get_stream_user_data(s, f->hd.stream_id);
  (void)flags;
  (void)user;
  if (st && namelen == 11 && memcmp(name, "grpc-status", 11) == 0)
    st->status_ok = valuelen == 1 && value[0] == '0';
  return 0;
}

static int g_close(nghttp2_session *s, int32_t id, uint32_t code, void *user)
{
  struct grpc_load *l = user;
  struct gstream *st = nghttp2_session_get_stream_user_data(s, id);
  if (st) {
    if (st->status_ok && code == NGHTTP2_NO_ERROR)
      l->ok++;
    else
      l->bad++;
    free(st);
  }
  l->inflight--;
  return 0;
}

static int g_submit(nghttp2_session *s, struct grpc_load *l)
{
#define NV(n, v) {(uint8_t *)n, (uint8_t *)v, sizeof(n) - 1, sizeof(v) - 1, NGHTTP2_NV_FLAG_NONE}
  static const nghttp2_nv hdrs[] = {NV(":method", "POST"), NV(":scheme", "http"),
                                    NV(":authority", "bench"), NV(":path", EXPORT),
                                    NV("content-type", "application/grpc"), NV("te", "trailers")};
#undef NV
  struct gstream *st = calloc(1, sizeof(*st));
  nghttp2_data_provider prd;
  prd.source.ptr = st;
  prd.read_callback = g_read;
  if (!st || nghttp2_submit_request(s, NULL, hdrs, sizeof(hdrs) / sizeof(hdrs[0]), &prd, st) < 0) {
    free(st);
    return -1;
  }
  l->inflight++;
  return 0;
}

/* Write what the session has; -1 when the socket broke. */
static int g_flush(nghttp2_session *s, int fd)
{
  const uint8_t *p;
  ssize_t n;
  while ((n = nghttp2_session_mem_send(s, &p)) > 0)
    while (n > 0) {
      ssize_t w = send(fd, p, (size_t)n, MSG_NOSIGNAL);
      if (w <= 0)
        return -1;
      p += w;
      n -= w;
    }
  return n < 0 ? -1 : 0;
}

static double grpc_phase(uint16_t port, const uint8_t *msg, size_t len, double secs, long *bad)
{
  nghttp2_settings_entry iv[] = {{NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 1 << 20}};
  struct grpc_load l = {msg, len, 0, 0, 0, 0};
  nghttp2_session_callbacks *cb;
  nghttp2_session *s;
  double t0 = now_s();
  uint8_t buf[65536];
  int fd = dial(port);
  l.until = t0 + secs;
  nghttp2_session_callbacks_new(&cb);
  nghttp2_session_callbacks_set_on_header_callback(cb, g_header);
  nghttp2_session_callbacks_set_on_stream_close_callback(cb, g_close);
  nghttp2_session_client_new(&s, cb, &l);
  nghttp2_session_callbacks_del(cb);
  nghttp2_submit_settings(s, NGHTTP2_FLAG_NONE, iv, 1);
  while (fd >= 0) {
    struct pollfd p = {fd, POLLIN, 0};
    while (l.inflight < CONC && now_s() < l.until && g_submit(s, &l) == 0)
      ;
    if (l.inflight == 0 || g_flush(s, fd))
      break;
    if (poll(&p, 1, 100) > 0) {
      ssize_t r = recv(fd, buf, sizeof(buf), 0);
      if (r <= 0 || nghttp2_session_mem_recv(s, buf, (size_t)r) < 0)
        break;
    }
  }
  l.bad += l.inflight; /* never answered */
  nghttp2_session_del(s);
  if (fd >= 0)
    close(fd);
  *bad += l.bad;
  return (double)l.ok / (now_s() - t0);
}

/* ---- main ------------------------------------------------------------------------------------ */

struct server {
  struct spaa_config *cfg;
  struct spaa_store *store;
  struct spaa_http *http;
  struct spaa_grpc *grpc;
  struct spaa_app app;
};

static int server_start(struct server *sv, const char *dir, const char *durability)
{
  char *argv[] = {"serve", "--listen", "127.0.0.1:0", "--grpc-listen", "127.0.0.1:0",
                  "--data-dir", (char *)dir, "--queue-depth", "65536", "--workers", "80",
                  "--durability", (char *)durability, "--log-level", "error", NULL};
  char *env[] = {NULL};
  struct spaa_store_opts so;
  struct spaa_err err;
  char db[700];
  memset(sv, 0, sizeof(*sv));
  if (spaa_config_load(15, argv, env, &sv->cfg, &err))
    goto fail;
  spaa_log_set_level(sv->cfg->log_level);
  snprintf(db, sizeof(db), "%s/bench.db", dir);
  memset(&so, 0, sizeof(so));
  so.path = db;
  so.queue_depth = sv->cfg->queue_depth;
  so.batch_max = 64; /* as `serve` */
  so.readers = 4;
  so.durability = strcmp(durability, "full") ? SPAA_DURABILITY_NORMAL : SPAA_DURABILITY_FULL;
  if (spaa_store_open(&so, &sv->store, &err))
    goto fail;
  sv->app.cfg = sv->cfg;
  sv->app.store = sv->store;
  if (spaa_http_start(&sv->app, spaa_routes, spaa_n_routes, &sv->http, &err) ||
      spaa_grpc_start(&sv->app, &sv->grpc, &err))
    goto fail;
  return 0;
fail:
  fprintf(stderr, "bench_grpc_ingest: %s\n", err.msg);
  return -1;
}

static void server_stop(struct server *sv)
{
  spaa_grpc_stop(sv->grpc);
  spaa_http_stop(sv->http);
  if (sv->store)
    spaa_store_close(sv->store);
  spaa_config_free(sv->cfg);
}

int main(int argc, char **argv)
{
  double secs = argc > 1 ? atof(argv[1]) : 5, best_g = 0, best_h = 0;
  const char *durability = argc > 2 ? argv[2] : "normal";
  uint8_t *req, *msg;
  size_t len;
  long bad = 0;
  struct server sv;
  char tmp[600];
  int r, rc = 1;
  signal(SIGPIPE, SIG_IGN);
  if (!spaa_test_have_fixtures("otlp", "bench_grpc_ingest"))
    return SPAA_TEST_SKIP;
  if (!(req = spaa_test_fixture_in("otlp", "pyroscope_otel-ebpf-profile.pb.bin", &len)) ||
      !(msg = malloc(len + 5)))
    return 2;
  msg[0] = 0;
  msg[1] = (uint8_t)(len >> 24), msg[2] = (uint8_t)(len >> 16);
  msg[3] = (uint8_t)(len >> 8), msg[4] = (uint8_t)len;
  memcpy(msg + 5, req, len);
  snprintf(tmp, sizeof(tmp), "%.500s/bench-grpc.XXXXXX",
           getenv("TMPDIR") && getenv("TMPDIR")[0] ? getenv("TMPDIR") : "/tmp");
  if (!mkdtemp(tmp) || server_start(&sv, tmp, durability))
    goto out;
  for (r = 0; r < ROUNDS; r++) { /* the store grows as it goes: each transport goes first once */
    double h = 0, g = 0;
    if (r % 2)
      g = grpc_phase(spaa_grpc_port(sv.grpc), msg, len + 5, secs, &bad);
    h = http_phase(spaa_http_port(sv.http), req, len, secs, &bad);
    if (!(r % 2))
      g = grpc_phase(spaa_grpc_port(sv.grpc), msg, len + 5, secs, &bad);
    printf("round %d: OTLP/HTTP %8.1f req/s   OTLP/gRPC %8.1f req/s\n", r + 1, h, g);
    best_h = h > best_h ? h : best_h;
    best_g = g > best_g ? g : best_g;
  }
  printf("eBPF fixture (%zu bytes, 82 profiles), %d concurrent, durability %s, best of %d x "
         "%.0f s:\n", len, CONC, durability, ROUNDS, secs);
  printf("  OTLP/HTTP (floor) %8.1f req/s  %9.0f profiles/s\n", best_h, best_h * 82);
  printf("  OTLP/gRPC         %8.1f req/s  %9.0f profiles/s\n", best_g, best_g * 82);
  printf("  ratio gRPC / HTTP %8.2f\n", best_h > 0 ? best_g / best_h : 0.0);
  printf("  failed requests   %8ld\n", bad);
  rc = bad ? 1 : 0;
out:
  server_stop(&sv);
  {
    char cmd[700];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
    if (system(cmd) != 0)
      fprintf(stderr, "could not remove %s\n", tmp);
  }
  free(req);
  free(msg);
  return rc;
}
