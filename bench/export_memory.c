/* Memory of exports: the real server (routing table, HTTP core, worker pool, a store in a
 * temp dir) in this process holds google-pprof_large.cpu; for each export (/spaa, /pprof,
 * /collapsed, /speedscope) one client fetches it alone (the floor: what writing that answer
 * costs once), then 20 clients fetch it at the same time. Printed per export: the answer's
 * size, the peak RSS above the idle server for one and for 20 (VmHWM, reset between phases),
 * the ratio 20 / one (what concurrency multiplies; the worker pool bounds it), the 20-client
 * peak against 20 whole answers (what buffering each answer would need at least), and the RSS
 * still held after. Usage: bench_export_memory [CLIENTS] [FIXTURE] */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/config.h"
#include "fixture.h"
#include "server/http.h"
#include "server/log.h"
#include "server/routes.h"
#include "storage/storage.h"

#define MAX_CLIENTS 64

static int dial(uint16_t port)
{
  struct sockaddr_in sa;
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  memset(&sa, 0, sizeof(sa));
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
    close(fd);
    return -1;
  }
  return fd;
}

/* One request on its own connection (Connection: close); the answer's head into head (cut
 * to its size), the body counted and dropped. Body bytes, or -1. */
static long fetch(uint16_t port, const char *req, size_t req_len, const void *body,
                  size_t body_len, char *head, size_t head_cap)
{
  static __thread char buf[1 << 16];
  size_t got = 0, hl = 0;
  long total = 0;
  int fd = dial(port);
  ssize_t r;
  if (fd < 0 || write(fd, req, req_len) != (ssize_t)req_len ||
      (body_len && write(fd, body, body_len) != (ssize_t)body_len)) {
    if (fd >= 0)
      close(fd);
    return -1;
  }
  while ((r = read(fd, buf, sizeof(buf))) > 0) {
    if (!hl) { /* the head: up to head_cap - 1 bytes of it are kept */
      size_t take = (size_t)r < head_cap - 1 - got ? (size_t)r : head_cap - 1 - got;
      size_t before = got;
      char *end;
      memcpy(head + got, buf, take);
      got += take;
      head[got] = 0;
      if ((end = strstr(head, "\r\n\r\n"))) {
        hl = (size_t)(end - head) + 4;
        total = (long)((size_t)r - (hl - before));
      }
      continue;
    }
    total += r;
  }
  close(fd);
  return hl ? total : -1;
}

static long rss_kb(const char *field)
{
  char line[256];
  long v = -1;
  FILE *f = fopen("/proc/self/status", "r");
  size_t n = strlen(field);
  while (f && fgets(line, sizeof(line), f))
    if (strncmp(line, field, n) == 0)
      v = strtol(line + n + 1, NULL, 10);
  if (f)
    fclose(f);
  return v;
}

static void reset_peak(void)
{
  FILE *f = fopen("/proc/self/clear_refs", "w");
  if (f) {
    fputs("5", f);
    fclose(f);
  }
}

struct client {
  pthread_t th;
  uint16_t port;
  const char *req;
  long bytes;
};

static void *client_main(void *arg)
{
  struct client *c = arg;
  char head[8192];
  c->bytes = fetch(c->port, c->req, strlen(c->req), NULL, 0, head, sizeof(head));
  return NULL;
}

static struct spaa_http *start(struct spaa_config **cfg, struct spaa_store **store,
                               struct spaa_app *app, const char *dir)
{
  char *argv[] = {"serve", "--listen", "127.0.0.1:0", "--data-dir", (char *)dir,
                  "--log-level", "error", "--grpc-listen", "", NULL};
  struct spaa_store_opts so;
  struct spaa_http *h = NULL;
  struct spaa_err err;
  if (spaa_config_load(9, argv, environ, cfg, &err))
    return NULL;
  spaa_log_set_level(SPAA_LOG_ERROR);
  memset(&so, 0, sizeof(so));
  so.path = (*cfg)->db_path;
  so.queue_depth = (*cfg)->queue_depth;
  so.readers = 4;
  if (spaa_store_open(&so, store, &err))
    return NULL;
  memset(app, 0, sizeof(*app));
  app->cfg = *cfg;
  app->store = *store;
  app->metrics = NULL;
  app->retention = NULL;
  if (spaa_http_start(app, spaa_routes, spaa_n_routes, &h, &err))
    return NULL;
  return h;
}

/* Upload the fixture as a Pyroscope push; its stored id into id. 0 or -1. */
static int upload(uint16_t port, const void *data, size_t len, char *id, size_t id_cap)
{
  char req[256], head[8192], *p;
  int n = snprintf(req, sizeof(req),
                   "POST /ingest?name=big.cpu HTTP/1.1\r\nHost: b\r\nContent-Length: %zu\r\n"
                   "Connection: close\r\n\r\n", len);
  if (fetch(port, req, (size_t)n, data, len, head, sizeof(head)) < 0 ||
      !(p = strstr(head, "X-Spaa-Profile-Ids: ")))
    return -1;
  p += 20;
  snprintf(id, id_cap, "%.*s", (int)strcspn(p, "\r\n,"), p);
  return 0;
}

/* n clients fetching path at once; the answer's size into *bytes. Peak RSS above `idle`. */
static long phase(uint16_t port, const char *req, int n, long idle, long *bytes)
{
  struct client c[MAX_CLIENTS];
  int i;
  reset_peak();
  for (i = 0; i < n; i++) {
    c[i].port = port;
    c[i].req = req;
    pthread_create(&c[i].th, NULL, client_main, &c[i]);
  }
  *bytes = 0;
  for (i = 0; i < n; i++) {
    pthread_join(c[i].th, NULL);
    if (c[i].bytes < 0 || (*bytes && c[i].bytes != *bytes))
      *bytes = -1;
    else if (*bytes >= 0)
      *bytes = c[i].bytes;
  }
  return rss_kb("VmHWM") - idle;
}

int main(int argc, char **argv)
{
  static const char *const kinds[] = {"spaa", "pprof", "collapsed", "speedscope"};
  int clients = argc > 1 ? atoi(argv[1]) : 20;
  const char *rel = argc > 2 ? argv[2] : "pprof/google-pprof_large.cpu";
  char dir[] = "/tmp/bench-export-XXXXXX", id[64], req[256];
  struct spaa_config *cfg = NULL;
  struct spaa_store *store = NULL;
  struct spaa_app app;
  struct spaa_http *h;
  size_t flen = 0, i;
  void *fix;
  uint16_t port;
  signal(SIGPIPE, SIG_IGN);
  if (clients < 1 || clients > MAX_CLIENTS)
    clients = 20;
  if (!(fix = spaa_test_fixture(rel, &flen))) {
    printf("bench_export_memory: fixture %s not found (../shared absent?)\n", rel);
    return 0;
  }
  if (!mkdtemp(dir) || !(h = start(&cfg, &store, &app, dir))) {
    fprintf(stderr, "bench_export_memory: cannot start the server\n");
    return 1;
  }
  port = spaa_http_port(h);
  if (upload(port, fix, flen, id, sizeof(id))) {
    fprintf(stderr, "bench_export_memory: the upload failed\n");
    return 1;
  }
  printf("%s (%zu bytes) stored as %s; %d clients, %u workers; RSS in MB above the idle "
         "server\n", rel, flen, id, clients, cfg->workers);
  printf("%-11s %12s %9s %9s %9s %12s %9s\n", "export", "answer", "one", "all", "all/one",
         "all/answers", "held");
  for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
    long idle, one, all, b1, bn;
    snprintf(req, sizeof(req), "GET /api/v1/profiles/%s/%s HTTP/1.1\r\nHost: b\r\n"
             "Connection: close\r\n\r\n", id, kinds[i]);
    idle = rss_kb("VmRSS");
    one = phase(port, req, 1, idle, &b1);
    all = phase(port, req, clients, idle, &bn);
    if (b1 <= 0 || bn != b1) {
      fprintf(stderr, "bench_export_memory: %s answers differ or failed\n", kinds[i]);
      return 1;
    }
    printf("%-11s %12ld %9.1f %9.1f %9.2f %12.2f %9.1f\n", kinds[i], b1, one / 1024.0,
           all / 1024.0, one > 0 ? (double)all / (double)one : 0,
           (double)all * 1024.0 / ((double)b1 * clients), (rss_kb("VmRSS") - idle) / 1024.0);
  }
  spaa_http_stop(h);
  spaa_store_close(store);
  spaa_config_free(cfg);
  free(fix);
  return 0;
}
