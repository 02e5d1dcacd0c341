/* spaa-relay serve: load the configuration, open the store, start the HTTP daemon, and on
 * SIGTERM/SIGINT stop accepting, let requests in flight finish, drain the store, exit 0. */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/limits.h"
#include "config/config.h"
#include "server/budget.h"
#include "server/cli.h"
#include "server/grpc.h"
#include "server/http.h"
#include "server/log.h"
#include "server/metrics.h"
#include "server/retention.h"
#include "server/routes.h"
#include "storage/storage.h"

#define SERVE_GRACE_S 60      /* longest wait for requests in flight after a signal */
#define SERVE_STOP_S 10       /* then the longest wait for their workers before exiting */
#define SERVE_READERS 4       /* store reader connections */

static const char serve_usage[] =
    "usage: spaa-relay serve [--config FILE] [--listen ADDR:PORT] [--data-dir DIR]\n"
    "                        [--sentry-key PROJECT_ID:PUBLIC_KEY]... [--ingest-token TOKEN]...\n"
    "                        [--read-token TOKEN]... [--log-level debug|info|warn|error]\n"
    "                        [--db PATH] [--store LOCATION] [--max-body BYTES]\n"
    "                        [--max-decompressed BYTES] [--workers N] [--queue-depth N]\n"
    "                        [--idle-timeout SECONDS] [--max-connections N]\n"
    "                        [--header-timeout SECONDS] [--body-min-rate BYTES]\n"
    "                        [--memory-budget BYTES] [--allow-open] ... (every option below)\n"
    "  Runs the server until SIGTERM or SIGINT. Exit 0 after a clean stop, 2 on a bad\n"
    "  setting (FILE:LINE: message, or the flag or variable named) or a failed start.\n";

/* mkdir -p; 0 or -1 with errno set. */
static int mkdir_p(const char *path)
{
  char buf[4096];
  size_t i, n = strlen(path);
  if (n == 0 || n >= sizeof(buf)) {
    errno = ENAMETOOLONG;
    return -1;
  }
  memcpy(buf, path, n + 1);
  for (i = 1; i <= n; i++) {
    if (buf[i] != '/' && buf[i] != 0)
      continue;
    buf[i] = 0;
    if (mkdir(buf, 0750) && errno != EEXIST)
      return -1;
    buf[i] = i < n ? '/' : 0;
  }
  return 0;
}

/* The directory part of `path` into out ("." when none). */
static void dir_of(const char *path, char *out, size_t n)
{
  const char *slash = strrchr(path, '/');
  if (!slash)
    snprintf(out, n, ".");
  else if (slash == path)
    snprintf(out, n, "/");
  else
    snprintf(out, n, "%.*s", (int)(slash - path), path);
}

/* What the configuration leaves open to anyone, as warnings (at start and after a reload). */
static void warn_open(const struct spaa_config *c)
{
  if (spaa_config_is_open(c))
    spaa_log(SPAA_LOG_WARN, "open mode: no sentry keys, ingest tokens or read tokens are "
             "configured; anyone who can reach the port may upload and read profiles", NULL);
  else {
    if (!c->n_sentry_keys)
      spaa_log(SPAA_LOG_WARN, "no sentry keys configured: any Sentry key is accepted", NULL);
    if (!c->n_ingest_tokens)
      spaa_log(SPAA_LOG_WARN, "no ingest tokens configured: OTLP, pprof and SPAA uploads "
               "need no token", NULL);
    if (!c->n_read_tokens)
      spaa_log(SPAA_LOG_WARN, "no read tokens configured: the query API is open", NULL);
  }
}

/* A cap below what an empty store takes deletes every profile at each pass. */
static void warn_db_size(const struct spaa_config *c)
{
  if (c->max_db_size && c->max_db_size < SPAA_CONFIG_MIN_SANE_DB_SIZE)
    spaa_log(SPAA_LOG_WARN, "max_db_size is below 1 MiB, less than an empty store holds: "
             "every profile will be deleted at each retention pass", "max_db_size=%llu",
             (unsigned long long)c->max_db_size);
}

static void log_config(const struct spaa_config *c)
{
  char projects[512], store[SPAA_STORE_MAX_LOCATION], grpc[300];
  size_t i, o = 0;
  spaa_store_redact(c->store, store, sizeof(store));
  if (c->grpc_host)
    snprintf(grpc, sizeof(grpc), "%s%s%s:%u", c->grpc_ipv6 ? "[" : "", c->grpc_host,
             c->grpc_ipv6 ? "]" : "", c->grpc_port);
  else
    snprintf(grpc, sizeof(grpc), "off");
  projects[0] = 0;
  for (i = 0; i < c->n_sentry_keys && o + 24 < sizeof(projects); i++) {
    int w = snprintf(projects + o, sizeof(projects) - o, "%s%s", i ? "," : "",
                     c->sentry_keys[i].project);
    if (w > 0)
      o += (size_t)w;
  }
  spaa_log(SPAA_LOG_INFO, "configuration",
           "file=\"%s\" listen=%s%s%s:%u data_dir=\"%s\" store=\"%s\" max_body=%zu "
           "max_decompressed=%zu workers=%u queue_depth=%zu idle_timeout=%u log_level=%s "
           "keep_original=%s durability=%s retention=%llus retention_interval=%llus "
           "max_db_size=%llu max_connections=%u memory_budget=%zu header_timeout=%u "
           "body_min_rate=%zu grpc_listen=%s grpc_max_message=%zu grpc_max_streams=%u "
           "log_format=%s log_file=\"%s\" "
           "sentry_projects=\"%s\" ingest_tokens=%zu read_tokens=%zu admin_tokens=%zu "
           "allow_open=%s",
           c->config_file ? c->config_file : "", c->listen_ipv6 ? "[" : "", c->listen_host,
           c->listen_ipv6 ? "]" : "", c->listen_port, c->data_dir, store, c->max_body,
           c->max_decompressed, c->workers, c->queue_depth, c->idle_timeout,
           spaa_config_level_name(c->log_level), c->keep_original ? "always" : "never",
           c->durability == SPAA_CONFIG_DURABILITY_NORMAL ? "normal" : "full",
           (unsigned long long)c->retention, (unsigned long long)c->retention_interval,
           (unsigned long long)c->max_db_size, c->max_connections, c->memory_budget,
           c->header_timeout, c->body_min_rate, grpc, c->grpc_max_message, c->grpc_max_streams, c->log_json ? "json" : "text",
           c->log_file ? c->log_file : "", projects, c->n_ingest_tokens, c->n_read_tokens,
           c->n_admin_tokens, c->allow_open ? "true" : "false");
  warn_open(c);
  warn_db_size(c);
  if (c->max_db_size && strncmp(c->store, "sqlite:", 7) != 0)
    spaa_log(SPAA_LOG_WARN, "max_db_size applies to a SQLite store only: not applied to this "
             "store (its database's size is the database's to manage)", NULL);
}

static const char *sig_name(int sig)
{
  return sig == SIGTERM ? "SIGTERM" : sig == SIGINT ? "SIGINT" : "signal";
}

/* A request still running past the grace period (a conversion or a view spinning on some
 * input) would hold the stop below forever, waiting for its worker: the process then exits
 * SERVE_STOP_S later without it. Nothing acknowledged is lost (a put is answered once
 * committed); the requests cut get no answer, as with kill -9. */
static int g_workers_stopped; /* set once the HTTP and gRPC workers are joined */

static void *stop_watchdog(void *arg)
{
  (void)arg;
  sleep(SERVE_STOP_S);
  if (__atomic_load_n(&g_workers_stopped, __ATOMIC_ACQUIRE))
    return NULL; /* the store is closing: it commits or fails what is queued */
  spaa_log(SPAA_LOG_ERROR, "requests still running after the grace period: exiting without "
           "them", "stop_s=%d", SERVE_STOP_S);
  fflush(NULL);
  _exit(1);
  return NULL;
}

static void arm_stop_watchdog(void)
{
  pthread_t t;
  if (pthread_create(&t, NULL, stop_watchdog, NULL) == 0)
    pthread_detach(t);
}

/* After a signal: wait for requests in flight, at most SERVE_GRACE_S, or until a second
 * signal says "now"; past that, the watchdog is armed. */
static void drain(struct spaa_http *h, const sigset_t *set)
{
  struct timespec tick = {0, 50 * 1000 * 1000};
  time_t deadline = time(NULL) + SERVE_GRACE_S;
  size_t n;
  while ((n = spaa_http_inflight(h)) > 0) {
    int sig;
    if (time(NULL) >= deadline) {
      spaa_log(SPAA_LOG_WARN, "grace period over: closing requests still in flight",
               "inflight=%zu grace_s=%d", n, SERVE_GRACE_S);
      arm_stop_watchdog();
      return;
    }
    sig = sigtimedwait(set, NULL, &tick);
    if (sig > 0) {
      spaa_log(SPAA_LOG_WARN, "second signal: closing requests still in flight",
               "signal=%s inflight=%zu", sig_name(sig), n);
      arm_stop_watchdog();
      return;
    }
  }
}

/* Configurations replaced by reloads: requests in flight may still read them, so they live
 * until exit. */
struct old_cfgs {
  struct spaa_config **v;
  size_t n;
};

/* What a restart would need to change: named in the reload's log line. */
/* The settings read once at start that differ between a and b, comma-separated into out
 * (cap bytes); "" when none did. */
static const char *fixed_changed(const struct spaa_config *a, const struct spaa_config *b,
                                 char *out, size_t cap)
{
  const int grpc_a = a->grpc_host != NULL, grpc_b = b->grpc_host != NULL;
  const struct {
    int changed;
    const char *name;
  } fixed[] = {
      {strcmp(a->listen_host, b->listen_host) || a->listen_port != b->listen_port, "listen"},
      {strcmp(a->data_dir, b->data_dir) != 0, "data_dir"},
      {strcmp(a->store, b->store) != 0, "store"},
      {a->workers != b->workers, "workers"},
      {a->max_connections != b->max_connections, "max_connections"},
      {a->memory_budget != b->memory_budget, "memory_budget"},
      {a->header_timeout != b->header_timeout, "header_timeout"},
      {a->body_min_rate != b->body_min_rate, "body_min_rate"},
      {a->idle_timeout != b->idle_timeout, "idle_timeout"},
      {a->queue_depth != b->queue_depth, "queue_depth"},
      {a->durability != b->durability, "durability"},
      {grpc_a != grpc_b || (grpc_a && (strcmp(a->grpc_host, b->grpc_host) ||
                                       a->grpc_port != b->grpc_port)), "grpc_listen"},
      {a->grpc_max_streams != b->grpc_max_streams, "grpc_max_streams"},
      {(a->retention || a->max_db_size) != (b->retention || b->max_db_size),
       "retention_on_off"},
  };
  size_t i, n = 0;
  out[0] = 0;
  for (i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
    if (fixed[i].changed && n < cap)
      n += (size_t)snprintf(out + n, cap - n, "%s%s", n ? "," : "", fixed[i].name);
  return out;
}

/* SIGHUP: the log file reopened, then the configuration read again as at start. What may
 * change while running takes effect for the next requests (keys and tokens, log level and
 * format, the retention rules, limits read per request); what needs a restart is named. */
static void reload(int argc, char **argv, struct spaa_app *app, struct old_cfgs *old)
{
  struct spaa_config *nc = NULL, **v;
  struct spaa_retention_opts ro;
  struct spaa_err err;
  char fixed[256];
  int opened;
  spaa_err_clear(&err);
  if (spaa_log_open(app->cfg->log_file, app->cfg->log_json))
    spaa_log(SPAA_LOG_WARN, "cannot reopen the log file", "file=\"%s\" error=\"%s\"",
             app->cfg->log_file, strerror(errno));
  if (spaa_config_load(argc, argv, environ, &nc, &err)) {
    spaa_log(SPAA_LOG_WARN, "configuration not reloaded: keeping the running one",
             "detail=\"%s\"", err.msg);
    return;
  }
  if (!(v = realloc(old->v, (old->n + 1) * sizeof(*v)))) {
    spaa_config_free(nc);
    return;
  }
  old->v = v;
  old->v[old->n++] = (struct spaa_config *)app->cfg;
  /* restart-only settings still run as they were at start: compare with those */
  fixed_changed(old->v[0], nc, fixed, sizeof(fixed));
  opened = (!nc->n_read_tokens && app->cfg->n_read_tokens) ||
           (!nc->n_ingest_tokens && app->cfg->n_ingest_tokens) ||
           (!nc->n_sentry_keys && app->cfg->n_sentry_keys);
  spaa_log_set_level(nc->log_level);
  if (nc->log_json != app->cfg->log_json ||
      (nc->log_file ? 1 : 0) != (app->cfg->log_file ? 1 : 0) ||
      (nc->log_file && strcmp(nc->log_file, app->cfg->log_file)))
    spaa_log_open(nc->log_file, nc->log_json);
  ro.keep_s = nc->retention;
  ro.max_bytes = nc->max_db_size;
  ro.every_s = nc->retention_interval;
  spaa_retention_set(app->retention, &ro);
  __atomic_store_n(&app->cfg, nc, __ATOMIC_RELEASE);
  spaa_log(SPAA_LOG_INFO, "configuration reloaded", "sentry_keys=%zu ingest_tokens=%zu "
           "read_tokens=%zu admin_tokens=%zu log_level=%s retention=%llus max_db_size=%llu%s%s",
           nc->n_sentry_keys, nc->n_ingest_tokens, nc->n_read_tokens, nc->n_admin_tokens,
           spaa_config_level_name(nc->log_level), (unsigned long long)nc->retention,
           (unsigned long long)nc->max_db_size, fixed[0] ? " needs_restart=" : "", fixed);
  if (opened)
    warn_open(nc); /* a list emptied: say what is open now */
  warn_db_size(nc);
}

/* Wait for SIGTERM or SIGINT (returned), reloading on each SIGHUP meanwhile. */
static int wait_for_stop(int argc, char **argv, const sigset_t *set, struct spaa_app *app,
                         struct old_cfgs *old)
{
  int sig = 0;
  while (sigwait(set, &sig) != 0 || (sig != SIGTERM && sig != SIGINT)) {
    if (sig == SIGHUP) {
      spaa_log(SPAA_LOG_INFO, "SIGHUP: reopening the log, reloading the configuration", NULL);
      reload(argc, argv, app, old);
    }
  }
  return sig;
}

/* The data directory, and a SQLite store's folder (a database server's location names
 * none). 0, or -1 logged. */
static int make_dirs(const struct spaa_config *cfg)
{
  char dir[4096];
  if (mkdir_p(cfg->data_dir)) {
    spaa_log(SPAA_LOG_ERROR, "cannot create the data directory", "dir=\"%s\" error=\"%s\"",
             cfg->data_dir, strerror(errno));
    return -1;
  }
  /* a SQLite store's folder is made here; a database server's location names no folder */
  if (strncmp(cfg->store, "sqlite:", 7) == 0)
    dir_of(cfg->store + 7, dir, sizeof(dir));
  else if (!strstr(cfg->store, "://"))
    dir_of(cfg->store, dir, sizeof(dir));
  else
    snprintf(dir, sizeof(dir), ".");
  if (mkdir_p(dir)) {
    spaa_log(SPAA_LOG_ERROR, "cannot create the database directory", "dir=\"%s\" error=\"%s\"",
             dir, strerror(errno));
    return -1;
  }
  return 0;
}

/* The store's messages (storage.h: spaa_store_log_cb) into the server's log. */
static void store_log(void *ctx, enum spaa_store_log_level level, const char *msg,
                      const char *kv)
{
  (void)ctx;
  spaa_log(level == SPAA_STORE_LOG_ERROR  ? SPAA_LOG_ERROR
           : level == SPAA_STORE_LOG_WARN ? SPAA_LOG_WARN
                                          : SPAA_LOG_INFO,
           msg, "%s", kv ? kv : "");
}

/* As many malloc arenas as CPUs (at least 2), unless the operator set a number
 * (MALLOC_ARENA_MAX, or arena_max in GLIBC_TUNABLES). glibc makes up to 8 per CPU, a new one
 * whenever a thread finds the others' locked, and each keeps the high-water mark of what its
 * threads built: with 8 workers, the I/O threads and the writer, a server that had converted
 * 256 KB profiles for 60 services held 102 MiB, 8-9 MiB of it in each worker's arena; with
 * 2 arenas on 2 CPUs, 64 MiB. Threads that cannot run at once gain nothing from arenas of
 * their own: the throughput benchmarks did not move (bench_sentry_server stored rate rose). */
static void arenas_per_cpu(void)
{
  const char *t = getenv("GLIBC_TUNABLES");
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  if (getenv("MALLOC_ARENA_MAX") || (t && strstr(t, "arena_max")))
    return;
  mallopt(M_ARENA_MAX, n < 2 ? 2 : n > 64 ? 64 : (int)n);
}

/* Blocks of 128 KiB and more get pages of their own (mmap), returned when freed and grown
 * without a copy (mremap), unless the operator set the threshold (MALLOC_MMAP_THRESHOLD_, or
 * mmap_threshold in GLIBC_TUNABLES). glibc starts there but raises the threshold to the size
 * of each such block freed, up to 32 MiB: after the first large upload, its body, records and
 * blocks come from the arenas, whose freed space stays resident for the rest of the upload
 * (the converter's arena is not the writer's) and whose growth copies. Fixed, a 16 MiB pprof
 * pushed uncompressed peaked at 63 MiB instead of 73, a Sentry chunk of 60 k stacks at 101
 * instead of 113 (bench/upload_memory.sh). */
static void mmap_large_blocks(void)
{
  const char *t = getenv("GLIBC_TUNABLES");
  if (getenv("MALLOC_MMAP_THRESHOLD_") || (t && strstr(t, "mmap_threshold")))
    return;
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);
}

int spaa_cmd_serve(int argc, char **argv)
{
  struct spaa_config *cfg = NULL;
  struct spaa_store *store = NULL;
  struct spaa_retention *retention = NULL;
  struct old_cfgs old = {NULL, 0};
  struct spaa_http *http = NULL;
  struct spaa_grpc *grpc = NULL;
  struct spaa_metrics *metrics = NULL;
  struct spaa_budget *budget = NULL;
  struct spaa_store_opts so;
  struct spaa_app app;
  struct spaa_err err;
  sigset_t set;
  int i, sig = 0, rc = 2;
  for (i = 1; i < argc; i++)
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      fputs(serve_usage, stdout);
      fputs(spaa_config_usage(), stdout);
      return 0;
    }
  arenas_per_cpu(); /* before any thread allocates */
  mmap_large_blocks();
  spaa_err_clear(&err);
  if (spaa_config_load(argc, argv, environ, &cfg, &err)) {
    fprintf(stderr, "spaa-relay serve: %s\n", err.msg);
    return 2;
  }
  spaa_log_set_level(cfg->log_level);
  if (spaa_log_open(cfg->log_file, cfg->log_json)) {
    fprintf(stderr, "spaa-relay serve: cannot open the log file %s: %s\n", cfg->log_file,
            strerror(errno));
    spaa_config_free(cfg);
    return 2;
  }
  spaa_log(SPAA_LOG_INFO, "starting spaa-relay", "version=%s pid=%ld", SPAA_RELAY_VERSION,
           (long)getpid());
  log_config(cfg);

  /* Signals go to this thread only (sigwait below): block them before any thread starts. */
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set, NULL);
  signal(SIGPIPE, SIG_IGN);

  if (make_dirs(cfg))
    goto out;
  memset(&so, 0, sizeof(so));
  so.path = cfg->store;
  so.queue_depth = cfg->queue_depth;
  so.batch_max = SPAA_SERVE_MAX_BATCH;
  so.readers = SERVE_READERS;
  so.durability = cfg->durability == SPAA_CONFIG_DURABILITY_NORMAL ? SPAA_DURABILITY_NORMAL
                                                                 : SPAA_DURABILITY_FULL;
  so.log = store_log;
  if (spaa_store_open(&so, &store, &err)) {
    spaa_log(SPAA_LOG_ERROR, "cannot open the store", "code=%s detail=\"%s\"", /* names it */
             spaa_err_name(err.code), err.msg);
    goto out;
  }
  if (spaa_metrics_new(&metrics)) {
    spaa_log(SPAA_LOG_ERROR, "cannot create the metrics registry", "detail=\"out of memory\"");
    goto out;
  }
  {
    struct spaa_retention_opts ro = {cfg->retention, cfg->max_db_size, cfg->retention_interval};
    if (spaa_retention_start(store, &ro, &retention)) {
      spaa_log(SPAA_LOG_ERROR, "cannot start the retention thread", NULL);
      goto out;
    }
  }
  if (spaa_budget_new(cfg->memory_budget, metrics, &budget)) {
    spaa_log(SPAA_LOG_ERROR, "cannot create the memory budget", "detail=\"out of memory\"");
    goto out;
  }
  memset(&app, 0, sizeof(app));
  app.cfg = cfg;
  app.store = store;
  app.retention = retention;
  app.metrics = metrics;
  app.budget = budget; /* one budget for HTTP and gRPC requests */
  if (spaa_http_start(&app, spaa_routes, spaa_n_routes, &http, &err)) {
    spaa_log(SPAA_LOG_ERROR, "cannot start the HTTP server", "detail=\"%s\"", err.msg);
    goto out;
  }
  {
    char msg[200];
    snprintf(msg, sizeof(msg), "listening on %s%s%s:%u", cfg->listen_ipv6 ? "[" : "",
             cfg->listen_host, cfg->listen_ipv6 ? "]" : "", spaa_http_port(http));
    spaa_log_always(SPAA_LOG_INFO, msg, "port=%u workers=%u", spaa_http_port(http),
                    cfg->workers);
  }

  if (spaa_grpc_start(&app, &grpc, &err)) {
    spaa_log(SPAA_LOG_ERROR, "cannot start the gRPC listener", "detail=\"%s\"", err.msg);
    goto out;
  }
  if (grpc)
    spaa_log_always(SPAA_LOG_INFO, "listening on gRPC h2c", "addr=%s%s%s:%u", cfg->grpc_ipv6 ? "[" :
                    "", cfg->grpc_host, cfg->grpc_ipv6 ? "]" : "", spaa_grpc_port(grpc));

  sig = wait_for_stop(argc, argv, &set, &app, &old);
  cfg = (struct spaa_config *)app.cfg;
  spaa_log(SPAA_LOG_INFO, "shutting down: no new connections, finishing requests in flight",
           "signal=%s inflight=%zu", sig_name(sig), spaa_http_inflight(http));
  spaa_http_quiesce(http);
  spaa_grpc_quiesce(grpc); /* GOAWAY: calls in flight finish in spaa_grpc_stop */
  drain(http, &set);
  rc = 0;
out:
  spaa_grpc_stop(grpc);
  spaa_http_stop(http);
  __atomic_store_n(&g_workers_stopped, 1, __ATOMIC_RELEASE);
  spaa_retention_stop(retention);
  if (store) {
    spaa_store_close(store); /* commits or fails whatever is queued */
    spaa_log(SPAA_LOG_INFO, "store closed", NULL);
  }
  if (rc == 0)
    spaa_log(SPAA_LOG_INFO, "stopped", NULL);
  spaa_budget_free(budget);
  spaa_metrics_free(metrics);
  spaa_config_free(cfg);
  while (old.n)
    spaa_config_free(old.v[--old.n]);
  free(old.v);
  return rc;
}
