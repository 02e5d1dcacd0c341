/* Configuration loading (see config.h): one table of settings, applied from the file, then
 * the environment, then the flags; every value is checked and every error names its origin. */
#include "config/config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/limits.h"
#include "config/suggest.h"

enum cfg_key {
  K_LISTEN,
  K_DATA_DIR,
  K_DB,
  K_STORE,
  K_MAX_BODY,
  K_MAX_DECOMPRESSED,
  K_WORKERS,
  K_QUEUE_DEPTH,
  K_IDLE_TIMEOUT,
  K_MAX_CONNECTIONS,
  K_HEADER_TIMEOUT,
  K_BODY_MIN_RATE,
  K_MEMORY_BUDGET,
  K_LOG_LEVEL,
  K_LOG_FORMAT,
  K_LOG_FILE,
  K_KEEP_ORIGINAL,
  K_DURABILITY,
  K_RETENTION,
  K_RETENTION_INTERVAL,
  K_MAX_DB_SIZE,
  K_GRPC_LISTEN,
  K_GRPC_MAX_MESSAGE,
  K_GRPC_MAX_STREAMS,
  K_SENTRY_KEY,
  K_INGEST_TOKEN,
  K_READ_TOKEN,
  K_ADMIN_TOKEN,
  K_ALLOW_OPEN,
  K__COUNT
};

/* Where a value came from; a list set at a level replaces the lists of lower levels. */
enum cfg_level { L_DEFAULT, L_FILE, L_ENV, L_FLAG };

static const struct cfg_setting {
  enum cfg_key key;
  const char *file_key; /* key in the file */
  const char *env;      /* environment variable */
  const char *flag;     /* command-line flag */
  int is_list;          /* 1: comma-separated, repeatable; 2: a boolean, whose flag may
                           stand alone (--allow-open = --allow-open=true) */
} settings[] = {
    {K_LISTEN, "listen", "SPAA_RELAY_LISTEN", "--listen", 0},
    {K_DATA_DIR, "data_dir", "SPAA_RELAY_DATA_DIR", "--data-dir", 0},
    {K_DB, "db", "SPAA_RELAY_DB", "--db", 0},
    {K_STORE, "store", "SPAA_RELAY_STORE", "--store", 0},
    {K_MAX_BODY, "max_body", "SPAA_RELAY_MAX_BODY", "--max-body", 0},
    {K_MAX_DECOMPRESSED, "max_decompressed", "SPAA_RELAY_MAX_DECOMPRESSED", "--max-decompressed",
     0},
    {K_WORKERS, "workers", "SPAA_RELAY_WORKERS", "--workers", 0},
    {K_QUEUE_DEPTH, "queue_depth", "SPAA_RELAY_QUEUE_DEPTH", "--queue-depth", 0},
    {K_IDLE_TIMEOUT, "idle_timeout", "SPAA_RELAY_IDLE_TIMEOUT", "--idle-timeout", 0},
    {K_MAX_CONNECTIONS, "max_connections", "SPAA_RELAY_MAX_CONNECTIONS", "--max-connections",
     0},
    {K_HEADER_TIMEOUT, "header_timeout", "SPAA_RELAY_HEADER_TIMEOUT", "--header-timeout", 0},
    {K_BODY_MIN_RATE, "body_min_rate", "SPAA_RELAY_BODY_MIN_RATE", "--body-min-rate", 0},
    {K_MEMORY_BUDGET, "memory_budget", "SPAA_RELAY_MEMORY_BUDGET", "--memory-budget", 0},
    {K_LOG_LEVEL, "log_level", "SPAA_RELAY_LOG_LEVEL", "--log-level", 0},
    {K_LOG_FORMAT, "log_format", "SPAA_RELAY_LOG_FORMAT", "--log-format", 0},
    {K_LOG_FILE, "log_file", "SPAA_RELAY_LOG_FILE", "--log-file", 0},
    {K_KEEP_ORIGINAL, "keep_original", "SPAA_RELAY_KEEP_ORIGINAL", "--keep-original", 0},
    {K_DURABILITY, "durability", "SPAA_RELAY_DURABILITY", "--durability", 0},
    {K_RETENTION, "retention", "SPAA_RELAY_RETENTION", "--retention", 0},
    {K_RETENTION_INTERVAL, "retention_interval", "SPAA_RELAY_RETENTION_INTERVAL",
     "--retention-interval", 0},
    {K_MAX_DB_SIZE, "max_db_size", "SPAA_RELAY_MAX_DB_SIZE", "--max-db-size", 0},
    {K_GRPC_LISTEN, "grpc_listen", "SPAA_RELAY_GRPC_LISTEN", "--grpc-listen", 0},
    {K_GRPC_MAX_MESSAGE, "grpc_max_message", "SPAA_RELAY_GRPC_MAX_MESSAGE", "--grpc-max-message",
     0},
    {K_GRPC_MAX_STREAMS, "grpc_max_streams", "SPAA_RELAY_GRPC_MAX_STREAMS", "--grpc-max-streams",
     0},
    {K_SENTRY_KEY, "sentry_key", "SPAA_RELAY_SENTRY_KEYS", "--sentry-key", 1},
    {K_INGEST_TOKEN, "ingest_token", "SPAA_RELAY_INGEST_TOKENS", "--ingest-token", 1},
    {K_READ_TOKEN, "read_token", "SPAA_RELAY_READ_TOKENS", "--read-token", 1},
    {K_ADMIN_TOKEN, "admin_token", "SPAA_RELAY_ADMIN_TOKENS", "--admin-token", 1},
    {K_ALLOW_OPEN, "allow_open", "SPAA_RELAY_ALLOW_OPEN", "--allow-open", 2},
};
#define IS_LIST(s) ((s)->is_list == 1)
#define IS_BOOL(s) ((s)->is_list == 2)
#define N_SETTINGS (sizeof(settings) / sizeof(settings[0]))

#define CONFIG_ENV "SPAA_RELAY_CONFIG"
#define CONFIG_FLAG "--config"

/* Loader state beside the config being built. */
struct cfg_load {
  struct spaa_config *c;          /* being filled */
  enum cfg_level list_level[K__COUNT]; /* level that last set each list */
  size_t file_line[K__COUNT];     /* line of the file that set a scalar, 0 if none */
  int db_set;                     /* db given explicitly at some level */
};

static const char usage_text[] =
    "options (each also an environment variable and a config file key):\n"
    "  --config FILE                  SPAA_RELAY_CONFIG      key = value file (see example.conf)\n"
    "  --listen ADDR:PORT             SPAA_RELAY_LISTEN      listen      [127.0.0.1:8080]\n"
    "  --data-dir DIR                 SPAA_RELAY_DATA_DIR    data_dir    [./data]\n"
    "  --db PATH                      SPAA_RELAY_DB          db          [DATA_DIR/spaa-relay.db]\n"
    "  --store LOCATION               SPAA_RELAY_STORE       store       [sqlite:DB]\n"
    "                                 (or postgres://USER@HOST:PORT/DB?...)\n"
    "  --max-body BYTES               SPAA_RELAY_MAX_BODY    max_body    [50m]\n"
    "  --max-decompressed BYTES       SPAA_RELAY_MAX_DECOMPRESSED        [50m]\n"
    "  --workers N                    SPAA_RELAY_WORKERS     workers     [8]\n"
    "  --queue-depth N                SPAA_RELAY_QUEUE_DEPTH queue_depth [256]\n"
    "  --idle-timeout SECONDS         SPAA_RELAY_IDLE_TIMEOUT            [30]\n"
    "  --max-connections N            SPAA_RELAY_MAX_CONNECTIONS         [4096]\n"
    "  --header-timeout SECONDS       SPAA_RELAY_HEADER_TIMEOUT          [10]\n"
    "  --body-min-rate BYTES          SPAA_RELAY_BODY_MIN_RATE           [1k] (0: off)\n"
    "  --memory-budget BYTES          SPAA_RELAY_MEMORY_BUDGET           [RAM/4] (0: RAM/4)\n"
    "  --log-level debug|info|warn|error  SPAA_RELAY_LOG_LEVEL log_level [info]\n"
    "  --log-format text|json         SPAA_RELAY_LOG_FORMAT  log_format  [text]\n"
    "  --log-file PATH                SPAA_RELAY_LOG_FILE    log_file    [stderr] (SIGHUP reopens)\n"
    "  --keep-original never|always   SPAA_RELAY_KEEP_ORIGINAL keep_original [never]\n"
    "  --durability full|normal       SPAA_RELAY_DURABILITY  durability  [full]\n"
    "  --retention DURATION           SPAA_RELAY_RETENTION   retention   [30d] (0 = forever)\n"
    "  --retention-interval DURATION  SPAA_RELAY_RETENTION_INTERVAL      [60s]\n"
    "  --max-db-size BYTES            SPAA_RELAY_MAX_DB_SIZE max_db_size [0 = no cap]\n"
    "  --grpc-listen ADDR:PORT|off    SPAA_RELAY_GRPC_LISTEN grpc_listen [127.0.0.1:4317]\n"
    "  --grpc-max-message BYTES       SPAA_RELAY_GRPC_MAX_MESSAGE        [64m]\n"
    "  --grpc-max-streams N           SPAA_RELAY_GRPC_MAX_STREAMS        [128]\n"
    "  --sentry-key PROJECT_ID:KEY... SPAA_RELAY_SENTRY_KEYS sentry_key  (comma-separated)\n"
    "  --ingest-token TOKEN...        SPAA_RELAY_INGEST_TOKENS ingest_token\n"
    "  --read-token TOKEN...          SPAA_RELAY_READ_TOKENS read_token\n"
    "  --admin-token TOKEN...         SPAA_RELAY_ADMIN_TOKENS admin_token (deletes; none = off)\n"
    "  --allow-open[=true|false]      SPAA_RELAY_ALLOW_OPEN  allow_open  [false]\n"
    "                                 start with no keys or tokens on a non-loopback address\n"
    "sizes take k, m or g (binary: 1k = 1024; max_db_size also t);\n"
    "durations s, m, h, d or w (30d);\n"
    "addresses: ADDR:PORT, [IPv6]:PORT, localhost:PORT, :PORT or *:PORT (every interface);\n"
    "booleans: true|false (also yes|no, on|off, 1|0). Flags override the environment, which\n"
    "overrides the file; with no keys or tokens the server is open to everyone, which it\n"
    "refuses on a non-loopback address unless allow_open is true.\n";

const char *spaa_config_usage(void) { return usage_text; }

static const char *const level_names[] = {"debug", "info", "warn", "error"};

int spaa_config_parse_level(const char *s)
{
  size_t i;
  for (i = 0; s && i < sizeof(level_names) / sizeof(level_names[0]); i++)
    if (strcasecmp(s, level_names[i]) == 0)
      return (int)i;
  if (s && strcasecmp(s, "warning") == 0)
    return SPAA_LOG_WARN;
  return -1;
}

const char *spaa_config_level_name(enum spaa_log_level l)
{
  if ((unsigned)l < sizeof(level_names) / sizeof(level_names[0]))
    return level_names[l];
  return "info";
}

int spaa_config_parse_size(const char *s, size_t *out)
{
  unsigned long long v = 0, mult = 1;
  const char *p = s;
  if (!s || !isdigit((unsigned char)*p))
    return -1;
  for (; isdigit((unsigned char)*p); p++) {
    if (v > (unsigned long long)SPAA_CONFIG_MAX_SIZE)
      return -1; /* keeps v * 10 from overflowing */
    v = v * 10 + (unsigned long long)(*p - '0');
  }
  while (*p == ' ')
    p++;
  if (*p) {
    char c = (char)tolower((unsigned char)*p);
    const char *rest = p + 1;
    if (c == 'k')
      mult = 1024ull;
    else if (c == 'm')
      mult = 1024ull * 1024;
    else if (c == 'g')
      mult = 1024ull * 1024 * 1024;
    else if (c == 'b' && !rest[0])
      rest = "";
    else
      return -1;
    if (c != 'b' && *rest && strcasecmp(rest, "b") != 0 && strcasecmp(rest, "ib") != 0)
      return -1;
  }
  if (v > (unsigned long long)SPAA_CONFIG_MAX_SIZE / mult)
    return -1;
  *out = (size_t)(v * mult);
  return 0;
}

int spaa_config_parse_duration(const char *s, uint64_t *seconds)
{
  static const struct {
    char unit;
    uint64_t secs;
  } units[] = {{'s', 1}, {'m', 60}, {'h', 3600}, {'d', 86400}, {'w', 7 * 86400}};
  uint64_t v = 0, mult = 1;
  const char *p = s;
  size_t i;
  if (!s || !isdigit((unsigned char)*p))
    return -1;
  for (; isdigit((unsigned char)*p); p++) {
    if (v > SPAA_CONFIG_MAX_DURATION)
      return -1;
    v = v * 10 + (uint64_t)(*p - '0');
  }
  if (*p) {
    for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
      if (tolower((unsigned char)*p) == units[i].unit)
        mult = units[i].secs;
    if (mult == 1 && tolower((unsigned char)*p) != 's')
      return -1;
    if (p[1])
      return -1;
  }
  if (v > SPAA_CONFIG_MAX_DURATION / mult)
    return -1;
  *seconds = v * mult;
  return 0;
}

/* true|yes|on|1 -> 1, false|no|off|0 -> 0, else -1 (case-insensitive). */
static int parse_bool(const char *v)
{
  static const char *const yes[] = {"true", "yes", "on", "1"}, *const no[] = {"false", "no",
                                                                             "off", "0"};
  size_t i;
  for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
    if (strcasecmp(v, yes[i]) == 0)
      return 1;
    if (strcasecmp(v, no[i]) == 0)
      return 0;
  }
  return -1;
}

/* A store size: digits with an optional k, m, g or t (binary), spaces and a B allowed as in
 * spaa_config_parse_size ("50 MB", "2tib", "100b"); 0 allowed. 0 or -1. */
static int parse_db_size(const char *s, uint64_t *out)
{
  char *end;
  unsigned long long v;
  uint64_t mult = 1;
  if (!s || !isdigit((unsigned char)*s))
    return -1;
  errno = 0;
  v = strtoull(s, &end, 10);
  if (errno)
    return -1;
  while (*end == ' ')
    end++;
  if (*end && !strcasecmp(end, "b"))
    end += 1;
  if (*end) {
    const char *u = "kmgt";
    const char *f = strchr(u, tolower((unsigned char)*end));
    if (!f || !*f || (end[1] && strcasecmp(end + 1, "b") && strcasecmp(end + 1, "ib")))
      return -1;
    mult = (uint64_t)1 << (10 * (f - u + 1));
  }
  if (v > (1ull << 60) / mult)
    return -1;
  *out = (uint64_t)v * mult;
  return 0;
}

/* The retention settings (apply's share). */
static int apply_retention(struct spaa_config *c, enum cfg_key key, const char *v,
                           const char *where, struct spaa_err *err)
{
  uint64_t n;
  if (key == K_MAX_DB_SIZE) {
    if (parse_db_size(v, &n))
      return spaa_err_set(err, SPAA_E_USAGE, 0, 0,
                          "%s: bad size '%s': expected bytes with an optional k, m, g or t "
                          "suffix (0 = no cap)", where, v);
    c->max_db_size = n;
    return 0;
  }
  if (spaa_config_parse_duration(v, &n) || (key == K_RETENTION_INTERVAL && n == 0))
    return spaa_err_set(err, SPAA_E_USAGE, 0, 0,
                        "%s: bad duration '%s': expected a number with s, m, h, d or w "
                        "(30d)%s", where, v, key == K_RETENTION ? "; 0 keeps forever" : "");
  if (key == K_RETENTION && n && isdigit((unsigned char)v[strlen(v) - 1]))
    /* a bare number reads as seconds elsewhere; here that deletes the store at once */
    return spaa_err_set(err, SPAA_E_USAGE, 0, 0,
                        "%s: retention '%s' has no unit: write %sd for days (or %ss if "
                        "seconds are meant); 0 keeps forever", where, v, v, v);
  if (key == K_RETENTION)
    c->retention = n;
  else
    c->retention_interval = n;
  return 0;
}

/* Decimal integer in [lo, hi]; 0 or -1. */
static int parse_uint(const char *s, unsigned long lo, unsigned long hi, unsigned long *out)
{
  unsigned long long v = 0;
  const char *p = s;
  if (!isdigit((unsigned char)*p))
    return -1;
  for (; isdigit((unsigned char)*p); p++) {
    v = v * 10 + (unsigned long long)(*p - '0');
    if (v > hi)
      return -1;
  }
  if (*p || v < lo)
    return -1;
  *out = (unsigned long)v;
  return 0;
}

/* "ADDR:PORT", "[V6]:PORT", ":PORT" (all interfaces) or "localhost:PORT". */
static int parse_listen(struct spaa_config *c, const char *v, const char *where,
                        struct spaa_err *err)
{
  char host[128];
  const char *colon, *port_s, *h;
  size_t hl;
  unsigned long port;
  int v6 = 0;
  unsigned char addr[16];
  if (v[0] == '[') {
    const char *close = strchr(v, ']');
    if (!close || close[1] != ':')
      goto bad;
    h = v + 1;
    hl = (size_t)(close - h);
    port_s = close + 2;
    v6 = 1;
  } else {
    colon = strrchr(v, ':');
    if (!colon || memchr(v, ':', (size_t)(colon - v)))
      goto bad;
    h = v;
    hl = (size_t)(colon - v);
    port_s = colon + 1;
  }
  if (hl >= sizeof(host))
    goto bad;
  memcpy(host, h, hl);
  host[hl] = 0;
  if (parse_uint(port_s, 0, 65535, &port))
    return spaa_err_set(err, SPAA_E_USAGE, 0, 0,
                        "%s: bad port in '%s': expected a number from 0 to 65535", where, v);
  if (!v6) {
    if (!host[0] || strcmp(host, "*") == 0)
      strcpy(host, "0.0.0.0");
    else if (strcasecmp(host, "localhost") == 0)
      strcpy(host, "127.0.0.1");
    if (inet_pton(AF_INET, host, addr) != 1)
      return spaa_err_set(err, SPAA_E_USAGE, 0, 0,
                          "%s: bad address '%s': expected a numeric IPv4 address, "
                          "[IPv6], localhost or nothing (all interfaces)",
                          where, host);
  } else if (inet_pton(AF_INET6, host, addr) != 1) {
    return spaa_err_set(err, SPAA_E_USAGE, 0, 0, "%s: bad IPv6 address '%s'", where, host);
  }
  {
    char *nh = strdup(host);
    if (!nh)
      return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
    free(c->listen_host);
    c->listen_host = nh;
  }
  c->listen_port = (uint16_t)port;
  c->listen_ipv6 = v6;
  return 0;
bad:
  return spaa_err_set(err, SPAA_E_USAGE, 0, 0,
                      "%s: bad listen address '%s': expected ADDR:PORT "
                      "(127.0.0.1:8080, [::1]:8080, :8080)",
                      where, v);
}

static int set_str(char **dst, const char *v, struct spaa_err *err)
{
  char *n = strdup(v);
  if (!n)
    return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
  free(*dst);
  *dst = n;
  return 0;
}

static void free_tokens(char **v, size_t n)
{
  size_t i;
  for (i = 0; i < n; i++)
    free(v[i]);
  free(v);
}

static void free_keys(struct spaa_sentry_key *k, size_t n)
{
  size_t i;
  for (i = 0; i < n; i++) {
    free(k[i].project);
    free(k[i].key);
  }
  free(k);
}

/* A token or key: non-empty, printable, no spaces or commas. */
static int token_ok(const char *s, size_t n)
{
  size_t i;
  if (!n)
    return 0;
  for (i = 0; i < n; i++)
    if ((unsigned char)s[i] <= ' ' || s[i] == ',' || (unsigned char)s[i] == 0x7f)
      return 0;
  return 1;
}

/* The token list of `key` (ingest, read or admin). */
static char ***token_list(struct spaa_config *c, enum cfg_key key, size_t **count)
{
  if (key == K_INGEST_TOKEN) {
    *count = &c->n_ingest_tokens;
    return &c->ingest_tokens;
  }
  if (key == K_ADMIN_TOKEN) {
    *count = &c->n_admin_tokens;
    return &c->admin_tokens;
  }
  *count = &c->n_read_tokens;
  return &c->read_tokens;
}

/* Add one list item (already trimmed, not empty) of `key`. */
static int add_item(struct spaa_config *c, enum cfg_key key, const char *s, size_t n,
                    const char *where, struct spaa_err *err)
{
  size_t *count = &c->n_sentry_keys;
  if (key != K_SENTRY_KEY)
    token_list(c, key, &count);
  if (*count >= SPAA_CONFIG_MAX_LIST)
    return spaa_err_set(err, SPAA_E_USAGE, 0, 0, "%s: more than %d entries", where,
                        SPAA_CONFIG_MAX_LIST);
  if (key == K_SENTRY_KEY) {
    const char *colon = memchr(s, ':', n);
    size_t pl = colon ? (size_t)(colon - s) : 0, i;
    struct spaa_sentry_key *nv;
    int ok = colon && pl > 0 && pl <= 20 && token_ok(colon + 1, n - pl - 1) &&
             !memchr(colon + 1, ':', n - pl - 1);
    for (i = 0; ok && i < pl; i++)
      ok = isdigit((unsigned char)s[i]);
    if (!ok)
      return spaa_err_set(err, SPAA_E_USAGE, 0, 0,
                          "%s: bad sentry key '%.*s': expected PROJECT_ID:PUBLIC_KEY with a "
                          "numeric project id",
                          where, (int)(n > 80 ? 80 : n), s);
    nv = realloc(c->sentry_keys, (c->n_sentry_keys + 1) * sizeof(*nv));
    if (!nv)
      return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
    c->sentry_keys = nv;
    nv[c->n_sentry_keys].project = strndup(s, pl);
    nv[c->n_sentry_keys].key = strndup(colon + 1, n - pl - 1);
    if (!nv[c->n_sentry_keys].project || !nv[c->n_sentry_keys].key) {
      free(nv[c->n_sentry_keys].project);
      free(nv[c->n_sentry_keys].key);
      return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
    }
    c->n_sentry_keys++;
  } else {
    char ***vec = token_list(c, key, &count);
    char **nv;
    if (!token_ok(s, n))
      return spaa_err_set(err, SPAA_E_USAGE, 0, 0,
                          "%s: bad token: tokens may not contain spaces or control characters",
                          where);
    nv = realloc(*vec, (*count + 1) * sizeof(*nv));
    if (!nv)
      return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
    *vec = nv;
    if (!(nv[*count] = strndup(s, n)))
      return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
    (*count)++;
  }
  return 0;
}

static void clear_list(struct spaa_config *c, enum cfg_key key)
{
  if (key == K_SENTRY_KEY) {
    free_keys(c->sentry_keys, c->n_sentry_keys);
    c->sentry_keys = NULL;
    c->n_sentry_keys = 0;
  } else {
    size_t *count;
    char ***vec = token_list(c, key, &count);
    free_tokens(*vec, *count);
    *vec = NULL;
    *count = 0;
  }
}

/* grpc_listen: the same grammar as listen, into the grpc_* fields; "off" or "" turns the
 * listener off ("off" also from the environment, where an empty value counts as unset). */
static int parse_grpc_listen(struct spaa_config *c, const char *v, const char *where,
                             struct spaa_err *err)
{
  char *host = c->listen_host; /* parse_listen fills the listen_* fields: borrow them */
  uint16_t port = c->listen_port;
  int v6 = c->listen_ipv6, rc = 0;
  free(c->grpc_host);
  c->grpc_host = NULL;
  if (!v[0] || strcmp(v, "off") == 0)
    return 0;
  c->listen_host = NULL;
  if (!(rc = parse_listen(c, v, where, err))) {
    c->grpc_host = c->listen_host;
    c->grpc_port = c->listen_port;
    c->grpc_ipv6 = c->listen_ipv6;
  }
  c->listen_host = host;
  c->listen_port = port;
  c->listen_ipv6 = v6;
  return rc;
}

/* Apply one value of setting `s` at `level`; `where` prefixes error messages. */
/* Apply a number, size or duration setting (the keys from max_body to memory_budget). */
static int apply_number(struct spaa_config *c, const struct cfg_setting *s, const char *v,
                        const char *where, struct spaa_err *err)
{
  unsigned long n;
  size_t sz;
  switch (s->key) {
  case K_MAX_BODY:
  case K_MAX_DECOMPRESSED:
    if (spaa_config_parse_size(v, &sz) || sz == 0)
      return spaa_err_set(err, SPAA_E_USAGE, 0, 0,
                          "%s: bad size '%s': expected a number of bytes from 1 to 16g, with "
                          "an optional k, m or g suffix",
                          where, v);
    if (s->key == K_MAX_BODY)
      c->max_body = sz;
    else
      c->max_decompressed = sz;
    return 0;
  case K_WORKERS:
    if (parse_uint(v, 1, SPAA_CONFIG_MAX_WORKERS, &n))
      return spaa_err_set(err, SPAA_E_USAGE, 0, 0,
                          "%s: bad number '%s': expected an integer from 1 to %d", where, v,
                          SPAA_CONFIG_MAX_WORKERS);
    c->workers = (unsigned)n;
    return 0;
  case K_QUEUE_DEPTH:
    if (parse_uint(v, 1, SPAA_CONFIG_MAX_QUEUE_DEPTH, &n))
      return spaa_err_set(err, SPAA_E_USAGE, 0, 0,
                          "%s: bad number '%s': expected an integer from 1 to %d", where, v,
                          SPAA_CONFIG_MAX_QUEUE_DEPTH);
    c->queue_depth = n;
    return 0;
  case K_IDLE_TIMEOUT:
  case K_HEADER_TIMEOUT: {
    char tmp[32];
    size_t l = strlen(v);
    if (l < sizeof(tmp) && l > 1 && (v[l - 1] == 's' || v[l - 1] == 'S')) {
      memcpy(tmp, v, l - 1); /* "30s" = 30 */
      tmp[l - 1] = 0;
      v = tmp;
    }
    if (parse_uint(v, 1, SPAA_CONFIG_MAX_IDLE_TIMEOUT, &n))
      return spaa_err_set(err, SPAA_E_USAGE, 0, 0,
                          "%s: bad timeout '%s': expected seconds from 1 to %d", where, v,
                          SPAA_CONFIG_MAX_IDLE_TIMEOUT);
    if (s->key == K_IDLE_TIMEOUT)
      c->idle_timeout = (unsigned)n;
    else
      c->header_timeout = (unsigned)n;
    return 0;
  }
  case K_MAX_CONNECTIONS:
    if (parse_uint(v, 1, SPAA_CONFIG_MAX_CONNECTIONS, &n))
      return spaa_err_set(err, SPAA_E_USAGE, 0, 0,
                          "%s: bad number '%s': expected an integer from 1 to %d", where, v,
                          SPAA_CONFIG_MAX_CONNECTIONS);
    c->max_connections = (unsigned)n;
    return 0;
  case K_BODY_MIN_RATE:
  case K_MEMORY_BUDGET:
    if (spaa_config_parse_size(v, &sz))
      return spaa_err_set(err, SPAA_E_USAGE, 0, 0,
                          "%s: bad size '%s': expected a number of bytes up to 16g, with an "
                          "optional k, m or g suffix (0: %s)",
                          where, v, s->key == K_BODY_MIN_RATE ? "off" : "a quarter of RAM");
    if (s->key == K_BODY_MIN_RATE)
      c->body_min_rate = sz;
    else
      c->memory_budget = sz;
    return 0;
  default:
    return spaa_err_set(err, SPAA_E_INTERNAL, 0, 0, "%s: unhandled setting", where);
  }
}

/* A list setting: its comma-separated items added (replacing the lists of lower levels). */
static int apply_list(struct cfg_load *ld, const struct cfg_setting *s, enum cfg_level level,
                      const char *v, const char *where, struct spaa_err *err)
{
  struct spaa_config *c = ld->c;
  const char *p = v;
  int any = 0;
  if (ld->list_level[s->key] < level) {
    clear_list(c, s->key);
    ld->list_level[s->key] = level;
  }
  while (*p) {
    const char *e = strchr(p, ',');
    const char *end = e ? e : p + strlen(p);
    const char *b = p;
    int rc;
    while (b < end && isspace((unsigned char)*b))
      b++;
    while (end > b && isspace((unsigned char)end[-1]))
      end--;
    if (end > b) {
      if ((rc = add_item(c, s->key, b, (size_t)(end - b), where, err)))
        return rc;
      any = 1;
    }
    if (!e)
      break;
    p = e + 1;
  }
  if (!any)
    return spaa_err_set(err, SPAA_E_USAGE, 0, 0, "%s: empty value", where);
  return 0;
}

static int apply(struct cfg_load *ld, const struct cfg_setting *s, enum cfg_level level,
                 const char *v, const char *where, struct spaa_err *err)
{
  struct spaa_config *c = ld->c;
  unsigned long n;
  size_t sz;
  int lv;
  if (IS_LIST(s))
    return apply_list(ld, s, level, v, where, err);
  if (s->key == K_GRPC_LISTEN)
    return parse_grpc_listen(c, v, where, err);
  if (!v[0])
    return spaa_err_set(err, SPAA_E_USAGE, 0, 0, "%s: empty value", where);
  switch (s->key) {
  case K_LISTEN:
    return parse_listen(c, v, where, err);
  case K_DATA_DIR:
    return set_str(&c->data_dir, v, err);
  case K_DB:
    ld->db_set = 1;
    return set_str(&c->db_path, v, err);
  case K_STORE:
    return set_str(&c->store, v, err);
  case K_MAX_BODY:
  case K_MAX_DECOMPRESSED:
  case K_WORKERS:
  case K_QUEUE_DEPTH:
  case K_IDLE_TIMEOUT:
  case K_HEADER_TIMEOUT:
  case K_MAX_CONNECTIONS:
  case K_BODY_MIN_RATE:
  case K_MEMORY_BUDGET:
    return apply_number(c, s, v, where, err);
  case K_GRPC_MAX_MESSAGE:
    if (spaa_config_parse_size(v, &sz) || sz == 0 || sz > UINT32_MAX)
      return spaa_err_set(err, SPAA_E_USAGE, 0, 0,
                          "%s: bad size '%s': expected a number of bytes from 1 to 4g - 1, "
                          "with an optional k, m or g suffix", where, v);
    c->grpc_max_message = sz;
    return 0;
  case K_GRPC_MAX_STREAMS:
    if (parse_uint(v, 1, SPAA_CONFIG_MAX_GRPC_STREAMS, &n))
      return spaa_err_set(err, SPAA_E_USAGE, 0, 0,
                          "%s: bad number '%s': expected an integer from 1 to %d", where, v,
                          SPAA_CONFIG_MAX_GRPC_STREAMS);
    c->grpc_max_streams = (unsigned)n;
    return 0;
  case K_LOG_FORMAT:
    if (strcasecmp(v, "text") && strcasecmp(v, "json"))
      return spaa_err_set(err, SPAA_E_USAGE, 0, 0, "%s: bad value '%s': expected text or json",
                          where, v);
    c->log_json = strcasecmp(v, "json") == 0;
    return 0;
  case K_LOG_FILE:
    return set_str(&c->log_file, v, err);
  case K_LOG_LEVEL:
    if ((lv = spaa_config_parse_level(v)) < 0)
      return spaa_err_set(err, SPAA_E_USAGE, 0, 0,
                          "%s: bad log level '%s': expected debug, info, warn or error", where,
                          v);
    c->log_level = (enum spaa_log_level)lv;
    return 0;
  case K_KEEP_ORIGINAL:
    if (strcmp(v, "never") && strcmp(v, "always"))
      return spaa_err_set(err, SPAA_E_USAGE, 0, 0,
                          "%s: bad value '%s': expected never or always", where, v);
    c->keep_original = strcmp(v, "always") == 0 ? SPAA_KEEP_ALWAYS : SPAA_KEEP_NEVER;
    return 0;
  case K_RETENTION:
  case K_RETENTION_INTERVAL:
  case K_MAX_DB_SIZE:
    return apply_retention(c, s->key, v, where, err);
  case K_ALLOW_OPEN:
    if ((lv = parse_bool(v)) < 0)
      return spaa_err_set(err, SPAA_E_USAGE, 0, 0,
                          "%s: bad value '%s': expected true or false", where, v);
    c->allow_open = lv;
    return 0;
  case K_DURABILITY:
    if (strcmp(v, "full") && strcmp(v, "normal"))
      return spaa_err_set(err, SPAA_E_USAGE, 0, 0,
                          "%s: bad value '%s': expected full or normal", where, v);
    c->durability =
        strcmp(v, "normal") == 0 ? SPAA_CONFIG_DURABILITY_NORMAL : SPAA_CONFIG_DURABILITY_FULL;
    return 0;
  default:
    return spaa_err_set(err, SPAA_E_INTERNAL, 0, 0, "%s: unhandled setting", where);
  }
}

static const struct cfg_setting *find_file_key(const char *k)
{
  size_t i;
  for (i = 0; i < N_SETTINGS; i++)
    if (strcmp(settings[i].file_key, k) == 0)
      return &settings[i];
  return NULL;
}

static const struct cfg_setting *find_flag(const char *f, size_t n)
{
  size_t i;
  for (i = 0; i < N_SETTINGS; i++)
    if (strlen(settings[i].flag) == n && memcmp(settings[i].flag, f, n) == 0)
      return &settings[i];
  return NULL;
}

/* "--flag: unknown option", with the nearest known flag when one is close. */
static int unknown_flag(const char *arg, size_t nl, struct spaa_err *err)
{
  const char *flags[N_SETTINGS + 2];
  char name[SPAA_SUGGEST_MAX_LEN + 1];
  const char *near = NULL;
  size_t i;
  for (i = 0; i < N_SETTINGS; i++)
    flags[i] = settings[i].flag;
  flags[N_SETTINGS] = CONFIG_FLAG;
  flags[N_SETTINGS + 1] = "--help";
  if (nl < sizeof(name)) {
    memcpy(name, arg, nl);
    name[nl] = 0;
    near = spaa_suggest(name, flags, N_SETTINGS + 2);
  }
  if (near)
    return spaa_err_set(err, SPAA_E_USAGE, 0, 0, "%.*s: unknown option (did you mean %s?)",
                        (int)(nl > 100 ? 100 : nl), arg, near);
  return spaa_err_set(err, SPAA_E_USAGE, 0, 0, "%.*s: unknown option",
                      (int)(nl > 100 ? 100 : nl), arg);
}

/* A SPAA_RELAY_* variable that names no setting (a typo would leave the default in force
 * silently, as an unknown flag or key would): an error, with the nearest name. */
static int unknown_env(char *const *envp, struct spaa_err *err)
{
  static const char prefix[] = "SPAA_RELAY_";
  const char *names[N_SETTINGS + 1];
  size_t i, k;
  for (i = 0; i < N_SETTINGS; i++)
    names[i] = settings[i].env;
  names[N_SETTINGS] = CONFIG_ENV;
  for (; envp && *envp; envp++) {
    const char *e = *envp, *eq = strchr(e, '='), *near = NULL;
    char name[SPAA_SUGGEST_MAX_LEN + 1];
    size_t nl = eq ? (size_t)(eq - e) : strlen(e);
    if (strncmp(e, prefix, sizeof(prefix) - 1) != 0)
      continue;
    for (k = 0; k <= N_SETTINGS; k++)
      if (strlen(names[k]) == nl && memcmp(names[k], e, nl) == 0)
        break;
    if (k <= N_SETTINGS)
      continue;
    if (nl < sizeof(name)) {
      memcpy(name, e, nl);
      name[nl] = 0;
      near = spaa_suggest(name, names, N_SETTINGS + 1);
    }
    if (near)
      return spaa_err_set(err, SPAA_E_USAGE, 0, 0, "%.*s: unknown environment variable (did "
                          "you mean %s?)", (int)(nl > 100 ? 100 : nl), e, near);
    return spaa_err_set(err, SPAA_E_USAGE, 0, 0, "%.*s: unknown environment variable (the "
                        "SPAA_RELAY_ names are listed by serve --help)",
                        (int)(nl > 100 ? 100 : nl), e);
  }
  return 0;
}

/* listen address is loopback: 127.0.0.0/8 or ::1 (NULL: no listener, counts as loopback). */
static int is_loopback(const char *host, int v6)
{
  if (!host)
    return 1;
  return v6 ? strcmp(host, "::1") == 0 : strncmp(host, "127.", 4) == 0;
}

/* Open mode (no keys, no tokens) on a non-loopback address needs allow_open. */
static int check_open(const struct spaa_config *c, struct spaa_err *err)
{
  const char *what, *host;
  unsigned port;
  int v6;
  if (!spaa_config_is_open(c) || c->allow_open)
    return 0;
  if (!is_loopback(c->listen_host, c->listen_ipv6)) {
    what = "listen";
    host = c->listen_host;
    port = c->listen_port;
    v6 = c->listen_ipv6;
  } else if (!is_loopback(c->grpc_host, c->grpc_ipv6)) {
    what = "grpc_listen";
    host = c->grpc_host;
    port = c->grpc_port;
    v6 = c->grpc_ipv6;
  } else {
    return 0;
  }
  return spaa_err_set(err, SPAA_E_USAGE, 0, 0,
                      "refusing to start open: %s is %s%s%s:%u, not loopback, and no sentry keys, "
                      "ingest tokens or read tokens are set; set some, or allow_open = true "
                      "(SPAA_RELAY_ALLOW_OPEN=true, --allow-open) to run open",
                      what, v6 ? "[" : "", host, v6 ? "]" : "", port);
}

static char *trim(char *s)
{
  char *e;
  while (isspace((unsigned char)*s))
    s++;
  e = s + strlen(s);
  while (e > s && isspace((unsigned char)e[-1]))
    *--e = 0;
  return s;
}

/* Parse one file line (NUL-terminated, no newline). */
static int file_line(struct cfg_load *ld, const char *path, size_t lineno, char *line,
                     struct spaa_err *err)
{
  char where[512];
  char *eq, *key, *val, *p;
  const struct cfg_setting *s;
  int rc;
  line = trim(line);
  if (!line[0] || line[0] == '#')
    return 0;
  snprintf(where, sizeof(where), "%s:%zu", path, lineno);
  if (!(eq = strchr(line, '=')))
    return spaa_err_set(err, SPAA_E_USAGE, lineno, 0, "%s: expected 'key = value'", where);
  *eq = 0;
  key = trim(line);
  val = trim(eq + 1);
  for (p = key; *p; p++)
    if (*p == '-')
      *p = '_';
  if (!key[0])
    return spaa_err_set(err, SPAA_E_USAGE, lineno, 0, "%s: missing key before '='", where);
  if (!(s = find_file_key(key))) {
    const char *keys[N_SETTINGS];
    const char *near;
    size_t i;
    for (i = 0; i < N_SETTINGS; i++)
      keys[i] = settings[i].file_key;
    if ((near = spaa_suggest(key, keys, N_SETTINGS)))
      return spaa_err_set(err, SPAA_E_USAGE, lineno, 0,
                          "%s: unknown key '%.64s' (did you mean %s?)", where, key, near);
    return spaa_err_set(err, SPAA_E_USAGE, lineno, 0, "%s: unknown key '%.64s'", where, key);
  }
  if (strlen(val) >= 2 && val[0] == '"' && val[strlen(val) - 1] == '"') {
    val[strlen(val) - 1] = 0;
    val++;
  }
  if (!IS_LIST(s) && ld->file_line[s->key])
    return spaa_err_set(err, SPAA_E_USAGE, lineno, 0, "%s: '%s' already set on line %zu",
                        where, key, ld->file_line[s->key]);
  ld->file_line[s->key] = lineno;
  rc = apply(ld, s, L_FILE, val, where, err);
  if (rc && err)
    err->line = lineno;
  return rc;
}

static int load_file(struct cfg_load *ld, const char *path, struct spaa_err *err)
{
  char line[SPAA_CONFIG_MAX_LINE + 2];
  size_t lineno = 0;
  int rc = 0;
  FILE *f = fopen(path, "r");
  if (!f)
    return spaa_err_set(err, SPAA_E_IO, 0, 0, "%s: cannot open: %s", path, strerror(errno));
  while (fgets(line, sizeof(line), f)) {
    size_t l = strlen(line);
    lineno++;
    if (l && line[l - 1] == '\n')
      line[--l] = 0;
    else if (!feof(f)) {
      rc = spaa_err_set(err, SPAA_E_USAGE, lineno, 0, "%s:%zu: line longer than %d bytes",
                        path, lineno, SPAA_CONFIG_MAX_LINE);
      goto out;
    }
    if (l > SPAA_CONFIG_MAX_LINE) {
      rc = spaa_err_set(err, SPAA_E_USAGE, lineno, 0, "%s:%zu: line longer than %d bytes",
                        path, lineno, SPAA_CONFIG_MAX_LINE);
      goto out;
    }
    if (lineno == 1 && (unsigned char)line[0] == 0xef && (unsigned char)line[1] == 0xbb &&
        (unsigned char)line[2] == 0xbf)
      memmove(line, line + 3, l - 2); /* UTF-8 byte order mark */
    if ((rc = file_line(ld, path, lineno, line, err)))
      goto out;
  }
  if (ferror(f))
    rc = spaa_err_set(err, SPAA_E_IO, 0, 0, "%s: read error: %s", path, strerror(errno));
out:
  fclose(f);
  return rc;
}

static const char *env_get(char *const *envp, const char *name)
{
  size_t n = strlen(name);
  for (; envp && *envp; envp++)
    if (strncmp(*envp, name, n) == 0 && (*envp)[n] == '=')
      return (*envp)[n + 1] ? *envp + n + 1 : NULL;
  return NULL;
}

/* Split "--flag=value" / "--flag value"; advances *i past a separate value. */
static int flag_value(int argc, char *const *argv, int *i, const char **name, size_t *name_len,
                      const char **value, struct spaa_err *err)
{
  const char *a = argv[*i];
  const char *eq = strchr(a, '=');
  *name = a;
  *name_len = eq ? (size_t)(eq - a) : strlen(a);
  if (eq) {
    *value = eq + 1;
    return 0;
  }
  if (*i + 1 >= argc)
    return spaa_err_set(err, SPAA_E_USAGE, 0, 0, "%s: missing value", a);
  *value = argv[++*i];
  return 0;
}

void spaa_config_free(struct spaa_config *c)
{
  if (!c)
    return;
  free(c->config_file);
  free(c->listen_host);
  free(c->grpc_host);
  free(c->data_dir);
  free(c->db_path);
  free(c->store);
  free(c->log_file);
  free_keys(c->sentry_keys, c->n_sentry_keys);
  free_tokens(c->ingest_tokens, c->n_ingest_tokens);
  free_tokens(c->read_tokens, c->n_read_tokens);
  free_tokens(c->admin_tokens, c->n_admin_tokens);
  free(c);
}

int spaa_config_is_open(const struct spaa_config *c)
{
  return !c->n_sentry_keys && !c->n_ingest_tokens && !c->n_read_tokens;
}

/* Every setting at its default. 0 or SPAA_E_NOMEM. */
static int set_defaults(struct spaa_config *c, struct spaa_err *err)
{
  int rc;
  c->listen_port = SPAA_CONFIG_DEFAULT_PORT;
  c->max_body = SPAA_CONFIG_DEFAULT_MAX_BODY;
  c->max_decompressed = SPAA_CONFIG_DEFAULT_MAX_DECOMPRESSED;
  c->workers = SPAA_CONFIG_DEFAULT_WORKERS;
  c->queue_depth = SPAA_CONFIG_DEFAULT_QUEUE_DEPTH;
  c->idle_timeout = SPAA_CONFIG_DEFAULT_IDLE_TIMEOUT;
  c->max_connections = SPAA_CONFIG_DEFAULT_MAX_CONNECTIONS;
  c->header_timeout = SPAA_CONFIG_DEFAULT_HEADER_TIMEOUT;
  c->body_min_rate = SPAA_CONFIG_DEFAULT_BODY_MIN_RATE;
  c->log_level = SPAA_LOG_INFO;
  c->keep_original = SPAA_KEEP_NEVER;
  c->durability = SPAA_CONFIG_DURABILITY_FULL;
  c->retention = SPAA_CONFIG_DEFAULT_RETENTION;
  c->retention_interval = SPAA_CONFIG_DEFAULT_RETENTION_INTERVAL;
  c->grpc_max_message = SPAA_CONFIG_DEFAULT_GRPC_MAX_MESSAGE;
  c->grpc_max_streams = SPAA_CONFIG_DEFAULT_GRPC_MAX_STREAMS;
  if ((rc = parse_grpc_listen(c, SPAA_CONFIG_DEFAULT_GRPC_LISTEN, "grpc_listen", err)))
    return rc;
  if ((rc = set_str(&c->listen_host, SPAA_CONFIG_DEFAULT_HOST, err)))
    return rc;
  return set_str(&c->data_dir, SPAA_CONFIG_DEFAULT_DATA_DIR, err);
}

int spaa_config_load(int argc, char *const *argv, char *const *envp, struct spaa_config **out,
                     struct spaa_err *err)
{
  struct cfg_load ld;
  struct spaa_config *c;
  const char *file = env_get(envp, CONFIG_ENV);
  int i, rc = 0;
  size_t k;
  *out = NULL;
  memset(&ld, 0, sizeof(ld));
  if (!(c = calloc(1, sizeof(*c))))
    return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
  ld.c = c;
  if ((rc = set_defaults(c, err)))
    goto out;

  /* First pass over the flags: only --config, which decides the file. Other flags are
   * checked in the second pass. */
  for (i = 1; i < argc; i++) {
    const char *a = argv[i], *eq = strchr(a, '=');
    size_t nl = eq ? (size_t)(eq - a) : strlen(a);
    if (nl == strlen(CONFIG_FLAG) && memcmp(a, CONFIG_FLAG, nl) == 0) {
      const char *value = eq ? eq + 1 : i + 1 < argc ? argv[++i] : NULL;
      if (!value) {
        rc = spaa_err_set(err, SPAA_E_USAGE, 0, 0, "--config: missing value");
        goto out;
      }
      if (!value[0]) {
        rc = spaa_err_set(err, SPAA_E_USAGE, 0, 0, "--config: empty value");
        goto out;
      }
      file = value;
    } else if (!eq && find_flag(a, nl) && !IS_BOOL(find_flag(a, nl))) {
      i++; /* skip its value */
    }
  }
  if (file) {
    if ((rc = set_str(&c->config_file, file, err)) || (rc = load_file(&ld, file, err)))
      goto out;
  }

  if ((rc = unknown_env(envp, err)))
    goto out;
  for (k = 0; k < N_SETTINGS; k++) {
    const char *v = env_get(envp, settings[k].env);
    if (v && (rc = apply(&ld, &settings[k], L_ENV, v, settings[k].env, err)))
      goto out;
  }

  for (i = 1; i < argc; i++) {
    const char *name = NULL, *value = NULL;
    const struct cfg_setting *s;
    size_t nl;
    char where[64];
    if (strncmp(argv[i], "--", 2) != 0) {
      rc = spaa_err_set(err, SPAA_E_USAGE, 0, 0, "%.100s: unexpected argument", argv[i]);
      goto out;
    }
    if (strcmp(argv[i], "--") == 0 || argv[i][2] == '=') {
      rc = spaa_err_set(err, SPAA_E_USAGE, 0, 0, "%.100s: unknown option", argv[i]);
      goto out;
    }
    {
      const char *eq = strchr(argv[i], '=');
      nl = eq ? (size_t)(eq - argv[i]) : strlen(argv[i]);
      s = find_flag(argv[i], nl);
      if (!s && !(nl == strlen(CONFIG_FLAG) && memcmp(argv[i], CONFIG_FLAG, nl) == 0)) {
        rc = unknown_flag(argv[i], nl, err);
        goto out;
      }
    }
    if (s && IS_BOOL(s) && !strchr(argv[i], '='))
      value = "true"; /* a boolean flag alone */
    else if ((rc = flag_value(argc, argv, &i, &name, &nl, &value, err)))
      goto out;
    if (!s)
      continue; /* --config, done in the first pass */
    snprintf(where, sizeof(where), "%s", s->flag);
    if ((rc = apply(&ld, s, L_FLAG, value, where, err)))
      goto out;
  }

  if (!ld.db_set) {
    size_t dl = strlen(c->data_dir);
    int slash = dl && c->data_dir[dl - 1] == '/';
    size_t n = dl + 1 + sizeof(SPAA_CONFIG_DB_NAME);
    free(c->db_path);
    if (!(c->db_path = malloc(n))) {
      rc = spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
      goto out;
    }
    snprintf(c->db_path, n, "%s%s%s", c->data_dir, slash ? "" : "/", SPAA_CONFIG_DB_NAME);
  }
  if (!c->store) { /* the default store: the SQLite file db names */
    size_t n = strlen(c->db_path) + sizeof("sqlite:");
    if (!(c->store = malloc(n))) {
      rc = spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
      goto out;
    }
    snprintf(c->store, n, "sqlite:%s", c->db_path);
  }
  rc = check_open(c, err);
out:
  if (rc) {
    spaa_config_free(c);
    return rc;
  }
  *out = c;
  return 0;
}
