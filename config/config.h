/* The server's configuration: a `key = value` file, SPAA_RELAY_* environment variables and
 * command-line flags, merged (flags over environment over file over defaults) into one
 * struct spaa_config that the rest of the program only reads. Never exits, never prints. */
#ifndef SPAA_CONFIG_H
#define SPAA_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "base/limits.h"

/* Defaults (documented in config/example.conf); the size defaults and the bounds checked on
 * every value are in base/limits.h (SPAA_CONFIG_DEFAULT_MAX_*, SPAA_CONFIG_MAX_*). */
#define SPAA_CONFIG_DEFAULT_HOST "127.0.0.1"
#define SPAA_CONFIG_DEFAULT_PORT 8080
#define SPAA_CONFIG_DEFAULT_DATA_DIR "./data"
#define SPAA_CONFIG_DB_NAME "spaa-relay.db"
#define SPAA_CONFIG_DEFAULT_WORKERS 8 /* threads decoding, converting, storing bodies */
#define SPAA_CONFIG_DEFAULT_MAX_CONNECTIONS 4096
#define SPAA_CONFIG_DEFAULT_HEADER_TIMEOUT 10 /* seconds */
#define SPAA_CONFIG_DEFAULT_BODY_MIN_RATE 1024 /* bytes/s */
#define SPAA_CONFIG_DEFAULT_QUEUE_DEPTH 256
#define SPAA_CONFIG_DEFAULT_IDLE_TIMEOUT 30 /* seconds */
#define SPAA_CONFIG_DEFAULT_RETENTION (30 * 86400) /* seconds: 30 days */
#define SPAA_CONFIG_MIN_SANE_DB_SIZE (1u << 20) /* below it, max_db_size is warned of */
#define SPAA_CONFIG_DEFAULT_RETENTION_INTERVAL 60  /* seconds between retention passes */

/* the OTLP/gRPC listener (server/grpc.h) */
#define SPAA_CONFIG_DEFAULT_GRPC_LISTEN "127.0.0.1:4317"
#define SPAA_CONFIG_DEFAULT_GRPC_MAX_MESSAGE ((size_t)64 << 20) /* bytes of one gRPC message */
#define SPAA_CONFIG_DEFAULT_GRPC_MAX_STREAMS 128 /* concurrent streams per connection */
#define SPAA_CONFIG_MAX_GRPC_STREAMS 4096

enum spaa_log_level {
  SPAA_LOG_DEBUG = 0,
  SPAA_LOG_INFO = 1,
  SPAA_LOG_WARN = 2,
  SPAA_LOG_ERROR = 3,
};

/* keep_original: whether the upload itself is stored beside its conversion. */
enum spaa_keep_original {
  SPAA_KEEP_NEVER = 0,  /* the default: the conversion is lossless */
  SPAA_KEEP_ALWAYS = 1, /* also the upload, zstd-compressed (about its gzip size again) */
};

/* durability: what an acknowledged profile survives. */
enum spaa_config_durability {
  SPAA_CONFIG_DURABILITY_FULL = 0,   /* the default: power loss (synchronous=FULL) */
  SPAA_CONFIG_DURABILITY_NORMAL = 1, /* a crash of the process, not power loss (synchronous=NORMAL) */
};

/* One Sentry DSN public key allowed for one project. */
struct spaa_sentry_key {
  char *project;  /* project id, decimal digits (owned) */
  char *key;      /* the DSN's public key (owned) */
};

struct spaa_config {
  char *config_file;            /* the file read, or NULL (owned) */
  char *listen_host;            /* numeric IPv4 or IPv6 address, no brackets (owned) */
  uint16_t listen_port;         /* 0 = let the kernel pick a free port */
  int listen_ipv6;              /* 1 when listen_host is an IPv6 address */
  char *data_dir;               /* data directory, created at start (owned) */
  char *db_path;                /* SQLite file; default DATA_DIR/spaa-relay.db (owned) */
  char *store;                  /* the store's location (storage.h): default "sqlite:" + db_path,
                                   or postgres://... (owned) */
  size_t max_body;              /* cap on a request body as received, bytes */
  size_t max_decompressed;      /* cap on a request body after Content-Encoding, bytes */
  unsigned workers;             /* threads that decode, convert and store finished bodies */
  unsigned max_connections;     /* connections held open at once (503 beyond) */
  unsigned header_timeout;      /* seconds from a request head's first byte to its end */
  size_t body_min_rate;         /* bytes/s a body must average after header_timeout s; 0 off */
  size_t memory_budget;         /* bytes requests in flight may hold; 0 = a quarter of RAM */
  size_t queue_depth;           /* store writer queue depth before 503 */
  unsigned idle_timeout;        /* seconds a connection may stay silent */
  enum spaa_log_level log_level;/* lowest level logged */
  int log_json;                 /* log_format = json: one JSON object per line */
  char *log_file;               /* log_file: append there (reopened on SIGHUP), or NULL: stderr
                                   (owned) */
  enum spaa_keep_original keep_original; /* store uploads beside their conversion or not */
  enum spaa_config_durability durability;     /* commit mode of the store */
  uint64_t retention;           /* seconds a profile is kept after it was received; 0 =
                                   forever */
  uint64_t retention_interval;  /* seconds between retention passes (>= 1) */
  uint64_t max_db_size;         /* bytes the store may take on disk before the oldest
                                   profiles go; 0 = no cap */

  char *grpc_host;              /* gRPC (h2c) listener address, or NULL: no listener (owned) */
  uint16_t grpc_port;           /* its port; 0 = let the kernel pick */
  int grpc_ipv6;                /* 1 when grpc_host is an IPv6 address */
  size_t grpc_max_message;      /* cap on one gRPC message, compressed or not, bytes */
  unsigned grpc_max_streams;    /* SETTINGS_MAX_CONCURRENT_STREAMS of each connection */
  int allow_open;               /* 1: start open (no keys, no tokens) on a non-loopback
                                   address too */
  struct spaa_sentry_key *sentry_keys; /* n_sentry_keys entries (owned) */
  size_t n_sentry_keys;
  char **ingest_tokens;         /* bearer tokens for ingest routes (owned) */
  size_t n_ingest_tokens;
  char **read_tokens;           /* bearer tokens for query routes (owned) */
  size_t n_read_tokens;
  char **admin_tokens;          /* bearer tokens for deletes (owned); none: deletes are off */
  size_t n_admin_tokens;
};

/* A duration: digits with an optional unit s, m, h, d or w ("30d"; none = seconds) into
 * *seconds. 0 or -1. */
int spaa_config_parse_duration(const char *s, uint64_t *seconds);

/* Build the configuration from the serve command's arguments (argv[0] is skipped: it is the
 * subcommand name) and an environment given as "NAME=VALUE" strings (NULL-terminated;
 * pass `environ` in production). The file named by --config (or SPAA_RELAY_CONFIG) is read
 * first; then environment variables override it; then flags override both. A list (sentry
 * keys, ingest tokens, read tokens) given at a level replaces the list of lower levels.
 * Empty environment variables count as unset.
 * Returns 0 with *out set (free it with spaa_config_free), or SPAA_E_USAGE with err->msg
 * "FILE:LINE: message", "--flag: message" or "SPAA_RELAY_X: message" (and err->line set for
 * file errors; an unknown flag or key names the nearest known one, "did you mean ...?"), or
 * SPAA_E_USAGE "refusing to start open ..." when no keys or tokens are set, the HTTP or gRPC
 * listener is not on a loopback address and allow_open is false, or SPAA_E_IO when the
 * file cannot be read, or SPAA_E_NOMEM. */
int spaa_config_load(int argc, char *const *argv, char *const *envp, struct spaa_config **out,
                     struct spaa_err *err);

/* NULL-safe; frees the struct and everything it owns. */
void spaa_config_free(struct spaa_config *c);

/* Parse a size: decimal digits with an optional suffix, case-insensitive and all binary:
 * k/kb/kib = 1024, m/mb/mib = 1024^2, g/gb/gib = 1024^3 (b = bytes). 0 on success, -1 on a
 * malformed value or one above SPAA_CONFIG_MAX_SIZE. */
int spaa_config_parse_size(const char *s, size_t *out);

/* "debug" | "info" | "warn" | "error" -> level; -1 when unknown. */
int spaa_config_parse_level(const char *s);
/* The name of a level ("info"); never NULL. */
const char *spaa_config_level_name(enum spaa_log_level l);

/* 1 when nothing restricts access (no sentry keys, no ingest tokens, no read tokens). */
int spaa_config_is_open(const struct spaa_config *c);

/* The help text for the serve flags, environment variables and file keys. */
const char *spaa_config_usage(void);

#endif
