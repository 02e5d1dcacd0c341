/* config/config.c: defaults, precedence (flags > env > file > defaults), list replacement,
 * value parsing, and every error message with its origin. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "config/config.h"

static char tmpdir[256];

/* Write a config file and return its path (static buffer per call index). */
static const char *write_file(const char *name, const char *text)
{
  static char paths[8][512];
  static int next;
  char *p = paths[next++ % 8];
  FILE *f;
  snprintf(p, 512, "%s/%s", tmpdir, name);
  f = fopen(p, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
  return p;
}

/* Load with argv (NULL-terminated, "serve" first) and env; returns the code. */
static int load(char **argv, char **env, struct spaa_config **out, struct spaa_err *err)
{
  int argc = 0;
  while (argv[argc])
    argc++;
  spaa_err_clear(err);
  return spaa_config_load(argc, argv, env, out, err);
}

static void test_defaults(void **state)
{
  char *argv[] = {"serve", NULL};
  char *env[] = {"HOME=/root", NULL};
  struct spaa_config *c;
  struct spaa_err err;
  assert_int_equal(load(argv, env, &c, &err), 0);
  assert_string_equal(c->listen_host, "127.0.0.1");
  assert_int_equal(c->listen_port, 8080);
  assert_string_equal(c->data_dir, "./data");
  assert_string_equal(c->db_path, "./data/spaa-relay.db");
  assert_int_equal(c->max_body, 52428800);
  assert_int_equal(c->max_decompressed, 52428800);
  assert_int_equal(c->workers, SPAA_CONFIG_DEFAULT_WORKERS);
  assert_int_equal(c->queue_depth, SPAA_CONFIG_DEFAULT_QUEUE_DEPTH);
  assert_int_equal(c->idle_timeout, 30);
  assert_int_equal(c->max_connections, 4096);
  assert_int_equal(c->header_timeout, 10);
  assert_int_equal(c->body_min_rate, 1024);
  assert_int_equal(c->memory_budget, 0);
  assert_int_equal(c->log_level, SPAA_LOG_INFO);
  assert_int_equal(c->keep_original, SPAA_KEEP_NEVER);
  assert_int_equal(c->durability, SPAA_CONFIG_DURABILITY_FULL);
  assert_int_equal(c->n_sentry_keys, 0);
  assert_int_equal(c->n_ingest_tokens, 0);
  assert_int_equal(c->n_read_tokens, 0);
  assert_null(c->config_file);
  assert_true(spaa_config_is_open(c));
  spaa_config_free(c);
}

/* The serving settings from a file, the environment and flags, flags last. */
static void test_serving_settings(void **state)
{
  char *argv[] = {"serve", "--header-timeout", "3s", "--memory-budget", "2g", NULL};
  char *env[] = {"SPAA_RELAY_MAX_CONNECTIONS=100", "SPAA_RELAY_BODY_MIN_RATE=0",
                 "SPAA_RELAY_HEADER_TIMEOUT=7", NULL};
  struct spaa_config *c;
  struct spaa_err err;
  (void)state;
  assert_int_equal(load(argv, env, &c, &err), 0);
  assert_int_equal(c->max_connections, 100);
  assert_int_equal(c->header_timeout, 3);
  assert_int_equal(c->body_min_rate, 0);
  assert_int_equal(c->memory_budget, (size_t)2 << 30);
  spaa_config_free(c);
}

static void test_precedence(void **state)
{
  const char *file = write_file("prec.conf",
                                "# every setting from the file\n"
                                "listen = 10.0.0.1:1000\n"
                                "data_dir = /file/data\n"
                                "max_body = 1m\n"
                                "max_decompressed = 2m\n"
                                "workers = 3\n"
                                "queue_depth = 4\n"
                                "idle_timeout = 5\n"
                                "log_level = debug\n"
                                "keep_original = always\n"
                                "durability = full\n"
                                "sentry_key = 1:filekey\n"
                                "ingest_token = file-ingest\n"
                                "read_token = file-read\n");
  char cfgflag[600];
  char *argv[] = {"serve", cfgflag, "--listen", "127.0.0.2:3000", "--workers=9",
                  "--read-token", "flag-read-1", "--read-token", "flag-read-2", NULL};
  char *env[] = {"SPAA_RELAY_LISTEN=127.0.0.3:2000", "SPAA_RELAY_DATA_DIR=/env/data",
                 "SPAA_RELAY_WORKERS=7", "SPAA_RELAY_INGEST_TOKENS=env-a, env-b",
                 "SPAA_RELAY_LOG_LEVEL=warn", "SPAA_RELAY_MAX_BODY=",
                 "SPAA_RELAY_DURABILITY=normal", NULL};
  struct spaa_config *c;
  struct spaa_err err;
  snprintf(cfgflag, sizeof(cfgflag), "--config=%s", file);
  assert_int_equal(load(argv, env, &c, &err), 0);
  assert_string_equal(c->config_file, file);
  /* flag over env over file */
  assert_string_equal(c->listen_host, "127.0.0.2");
  assert_int_equal(c->listen_port, 3000);
  assert_int_equal(c->workers, 9);
  /* env over file */
  assert_string_equal(c->data_dir, "/env/data");
  assert_string_equal(c->db_path, "/env/data/spaa-relay.db");
  assert_int_equal(c->log_level, SPAA_LOG_WARN);
  assert_int_equal(c->durability, SPAA_CONFIG_DURABILITY_NORMAL);
  assert_int_equal(c->keep_original, SPAA_KEEP_ALWAYS); /* the file's */
  /* file over defaults; an empty env variable counts as unset */
  assert_int_equal(c->max_body, 1024 * 1024);
  assert_int_equal(c->max_decompressed, 2 * 1024 * 1024);
  assert_int_equal(c->queue_depth, 4);
  assert_int_equal(c->idle_timeout, 5);
  /* lists: a level replaces the lists below it */
  assert_int_equal(c->n_sentry_keys, 1);
  assert_string_equal(c->sentry_keys[0].project, "1");
  assert_string_equal(c->sentry_keys[0].key, "filekey");
  assert_int_equal(c->n_ingest_tokens, 2);
  assert_string_equal(c->ingest_tokens[0], "env-a");
  assert_string_equal(c->ingest_tokens[1], "env-b");
  assert_int_equal(c->n_read_tokens, 2);
  assert_string_equal(c->read_tokens[0], "flag-read-1");
  assert_string_equal(c->read_tokens[1], "flag-read-2");
  assert_false(spaa_config_is_open(c));
  spaa_config_free(c);
}

static void test_config_from_env_and_db(void **state)
{
  const char *file = write_file("envfile.conf", "db = /from/file.db\n\n   # indented comment\n"
                                                "sentry_key = 42:abc, 43:def\n"
                                                "sentry_key = \"44:ghi\"\n");
  char envcfg[600];
  char *argv[] = {"serve", "--data-dir", "/flag/dir/", NULL};
  char *env[] = {envcfg, NULL};
  struct spaa_config *c;
  struct spaa_err err;
  snprintf(envcfg, sizeof(envcfg), "SPAA_RELAY_CONFIG=%s", file);
  assert_int_equal(load(argv, env, &c, &err), 0);
  assert_string_equal(c->data_dir, "/flag/dir/");
  assert_string_equal(c->db_path, "/from/file.db"); /* explicit db is kept */
  assert_int_equal(c->n_sentry_keys, 3);
  assert_string_equal(c->sentry_keys[1].project, "43");
  assert_string_equal(c->sentry_keys[2].key, "ghi");
  spaa_config_free(c);
  {
    char *argv2[] = {"serve", "--data-dir", "/flag/dir/", NULL};
    char *env2[] = {NULL};
    assert_int_equal(load(argv2, env2, &c, &err), 0);
    assert_string_equal(c->db_path, "/flag/dir/spaa-relay.db");
    spaa_config_free(c);
  }
  { /* gRPC off from the environment: "off" (an empty variable counts as unset) */
    const char *gf = write_file("grpc.conf", "grpc_listen = 127.0.0.1:4999\n");
    char cfgv[600], off[] = "SPAA_RELAY_GRPC_LISTEN=off", empty[] = "SPAA_RELAY_GRPC_LISTEN=";
    char *argv3[] = {"serve", NULL};
    char *env3[] = {cfgv, off, NULL}, *env4[] = {cfgv, empty, NULL};
    snprintf(cfgv, sizeof(cfgv), "SPAA_RELAY_CONFIG=%s", gf);
    assert_int_equal(load(argv3, env3, &c, &err), 0);
    assert_null(c->grpc_host);
    spaa_config_free(c);
    assert_int_equal(load(argv3, env4, &c, &err), 0);
    assert_non_null(c->grpc_host); /* the file's */
    assert_int_equal(c->grpc_port, 4999);
    spaa_config_free(c);
  }
}

static void test_listen_forms(void **state)
{
  static const struct {
    const char *in, *host;
    int port, v6;
  } t[] = {
      {"127.0.0.1:0", "127.0.0.1", 0, 0},     {"0.0.0.0:80", "0.0.0.0", 80, 0},
      {":9000", "0.0.0.0", 9000, 0},          {"*:9001", "0.0.0.0", 9001, 0},
      {"localhost:8081", "127.0.0.1", 8081, 0}, {"[::1]:8082", "::1", 8082, 1},
      {"[::]:65535", "::", 65535, 1},
  };
  size_t i;
  for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
    char *argv[] = {"serve", "--listen", (char *)t[i].in, "--allow-open", NULL};
    char *env[] = {NULL};
    struct spaa_config *c;
    struct spaa_err err;
    assert_int_equal(load(argv, env, &c, &err), 0);
    assert_string_equal(c->listen_host, t[i].host);
    assert_int_equal(c->listen_port, t[i].port);
    assert_int_equal(c->listen_ipv6, t[i].v6);
    spaa_config_free(c);
  }
}

/* Open mode (no keys, no tokens) on a non-loopback address is refused unless allow_open. */
static void test_allow_open(void **state)
{
  static const struct {
    const char *a[5]; /* argv after "serve" (NULL-terminated) */
    const char *env;  /* one environment entry, or NULL */
    const char *msg;  /* expected error prefix, or NULL: loads, allow_open == open */
    int open;
  } t[] = {
      {{"--listen", "0.0.0.0:80"}, NULL,
       "refusing to start open: listen is 0.0.0.0:80, not loopback, and no sentry keys, "
       "ingest tokens or read tokens are set; set some, or allow_open = true "
       "(SPAA_RELAY_ALLOW_OPEN=true, --allow-open) to run open", 0},
      {{"--listen", ":9000"}, NULL, "refusing to start open: listen is 0.0.0.0:9000", 0},
      {{"--listen", "[::]:81"}, NULL, "refusing to start open: listen is [::]:81", 0},
      {{"--listen", "10.1.2.3:80", "--allow-open=false"}, NULL,
       "refusing to start open: listen is 10.1.2.3:80", 0},
      {{"--grpc-listen", "0.0.0.0:4317"}, NULL,
       "refusing to start open: grpc_listen is 0.0.0.0:4317", 0},
      {{"--listen", "0.0.0.0:80"}, "SPAA_RELAY_ALLOW_OPEN=no", "refusing to start open", 0},
      {{"--allow-open=maybe"}, NULL, "--allow-open: bad value 'maybe': expected true or false",
       0},
      {{"--listen", "0.0.0.0:80", "--allow-open"}, NULL, NULL, 1},
      {{"--allow-open", "--listen", "0.0.0.0:80"}, NULL, NULL, 1},
      {{"--listen", "0.0.0.0:80", "--allow-open=TRUE"}, NULL, NULL, 1},
      {{"--listen", "0.0.0.0:80"}, "SPAA_RELAY_ALLOW_OPEN=true", NULL, 1},
      {{"--listen", "0.0.0.0:80"}, "SPAA_RELAY_ALLOW_OPEN=1", NULL, 1},
      {{"--listen", "0.0.0.0:80", "--ingest-token", "t"}, NULL, NULL, 0},
      {{"--listen", "0.0.0.0:80", "--sentry-key", "1:abc"}, NULL, NULL, 0},
      {{"--listen", "127.0.0.2:80"}, NULL, NULL, 0},
      {{"--listen", "[::1]:80", "--grpc-listen", ""}, NULL, NULL, 0},
      {{"--listen", "localhost:80"}, NULL, NULL, 0},
  };
  size_t i, k;
  for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
    char *argv[7] = {"serve"};
    char *env[2] = {(char *)t[i].env, NULL};
    struct spaa_config *c = NULL;
    struct spaa_err err;
    int rc;
    for (k = 0; k < 5 && t[i].a[k]; k++)
      argv[k + 1] = (char *)t[i].a[k];
    rc = load(argv, env, &c, &err);
    if (t[i].msg) {
      if (rc != SPAA_E_USAGE || strncmp(err.msg, t[i].msg, strlen(t[i].msg)) != 0)
        fail_msg("case %zu: rc=%d msg='%s', want '%s'", i, rc, err.msg, t[i].msg);
      assert_null(c);
      continue;
    }
    if (rc)
      fail_msg("case %zu: rc=%d msg='%s'", i, rc, err.msg);
    assert_int_equal(c->allow_open, t[i].open);
    spaa_config_free(c);
  }
  /* the file key */
  {
    const char *path = write_file("open.conf", "listen = 0.0.0.0:80\nallow_open = yes\n");
    char *argv[] = {"serve", "--config", (char *)path, NULL};
    char *env[] = {NULL};
    struct spaa_config *c;
    struct spaa_err err;
    assert_int_equal(load(argv, env, &c, &err), 0);
    assert_int_equal(c->allow_open, 1);
    spaa_config_free(c);
  }
}

/* An unknown flag or key names the nearest known one. */
static void test_suggestions(void **state)
{
  static const struct {
    const char *a, *b;
    const char *msg;
  } t[] = {
      {"--retentoin", "3d", "--retentoin: unknown option (did you mean --retention?)"},
      {"--retention-intreval=5s", NULL,
       "--retention-intreval: unknown option (did you mean --retention-interval?)"},
      {"--data_dir", "x", "--data_dir: unknown option (did you mean --data-dir?)"},
      {"--allow-opne", NULL, "--allow-opne: unknown option (did you mean --allow-open?)"},
      {"--confg", "x", "--confg: unknown option (did you mean --config?)"},
      {"--grpc-listn", "x", "--grpc-listn: unknown option (did you mean --grpc-listen?)"},
      {"--max-db", "1g", "--max-db: unknown option (did you mean --max-db-size?)"},
      {"--grpc", "x", "--grpc: unknown option"}, /* three flags start so */
      {"--zzzzzzzz", "1", "--zzzzzzzz: unknown option"},
  };
  size_t i;
  for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
    char *argv[] = {"serve", (char *)t[i].a, (char *)t[i].b, NULL};
    char *env[] = {NULL};
    struct spaa_config *c = NULL;
    struct spaa_err err;
    int rc = load(argv, env, &c, &err);
    if (rc != SPAA_E_USAGE || strcmp(err.msg, t[i].msg) != 0)
      fail_msg("case %zu: rc=%d msg='%s', want '%s'", i, rc, err.msg, t[i].msg);
  }
  {
    const char *path = write_file("typo.conf", "# typo\nretenton = 3d\n");
    char *argv[] = {"serve", "--config", (char *)path, NULL};
    char *env[] = {NULL};
    struct spaa_config *c = NULL;
    struct spaa_err err;
    char want[600];
    assert_int_equal(load(argv, env, &c, &err), SPAA_E_USAGE);
    snprintf(want, sizeof(want), "%s:2: unknown key 'retenton' (did you mean retention?)", path);
    assert_string_equal(err.msg, want);
  }
}

static void test_sizes(void **state)
{
  static const struct {
    const char *in;
    size_t v;
    int ok;
  } t[] = {
      {"1", 1, 0},
      {"52428800", 52428800, 0},
      {"10k", 10240, 0},
      {"10K", 10240, 0},
      {"10kb", 10240, 0},
      {"10KiB", 10240, 0},
      {"50m", 52428800, 0},
      {"50MB", 52428800, 0},
      {"50 MiB", 52428800, 0},
      {"2g", (size_t)2 << 30, 0},
      {"16g", (size_t)16 << 30, 0},
      {"100b", 100, 0},
      {"17g", 0, -1},
      {"99999999999999999999999", 0, -1},
      {"", 0, -1},
      {"m", 0, -1},
      {"-1", 0, -1},
      {"1.5m", 0, -1},
      {"10x", 0, -1},
      {"10mm", 0, -1},
      {"10bb", 0, -1},
  };
  size_t i, v;
  for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
    v = 12345;
    assert_int_equal(spaa_config_parse_size(t[i].in, &v), t[i].ok);
    if (t[i].ok == 0)
      assert_int_equal(v, t[i].v);
  }
}

static void test_levels(void **state)
{
  assert_int_equal(spaa_config_parse_level("debug"), SPAA_LOG_DEBUG);
  assert_int_equal(spaa_config_parse_level("INFO"), SPAA_LOG_INFO);
  assert_int_equal(spaa_config_parse_level("warning"), SPAA_LOG_WARN);
  assert_int_equal(spaa_config_parse_level("error"), SPAA_LOG_ERROR);
  assert_int_equal(spaa_config_parse_level("loud"), -1);
  assert_string_equal(spaa_config_level_name(SPAA_LOG_WARN), "warn");
  { /* the log format ignores case too */
    char *argv[] = {"serve", "--log-format", "JSON", NULL};
    char *env[] = {NULL};
    struct spaa_config *c;
    struct spaa_err err;
    assert_int_equal(load(argv, env, &c, &err), 0);
    assert_int_equal(c->log_json, 1);
    spaa_config_free(c);
  }
}

/* Every error: from a flag, an environment variable and a file line. */
/* keep_original and durability from each level: the flag wins over env over file. */
static void test_storage_settings(void **state)
{
  char *argv[] = {"serve", "--keep-original", "always", NULL};
  char *argv0[] = {"serve", NULL};
  char *env[] = {"SPAA_RELAY_KEEP_ORIGINAL=never", "SPAA_RELAY_DURABILITY=normal", NULL};
  struct spaa_config *c;
  struct spaa_err err;
  (void)state;
  assert_int_equal(load(argv, env, &c, &err), 0);
  assert_int_equal(c->keep_original, SPAA_KEEP_ALWAYS);
  assert_int_equal(c->durability, SPAA_CONFIG_DURABILITY_NORMAL);
  spaa_config_free(c);
  assert_int_equal(load(argv0, env, &c, &err), 0);
  assert_int_equal(c->keep_original, SPAA_KEEP_NEVER);
  assert_int_equal(c->retention, 30 * 86400);
  assert_int_equal(c->retention_interval, 60);
  assert_int_equal(c->max_db_size, 0);
  spaa_config_free(c);
}

/* retention, its interval and the store's cap: units, 0, and the largest values. */
static void test_retention_settings(void **state)
{
  char *argv[] = {"serve", "--retention", "2w", "--retention-interval=90",
                  "--max-db-size", "2t", NULL};
  char *env[] = {"SPAA_RELAY_RETENTION=0", "SPAA_RELAY_MAX_DB_SIZE=512m", NULL};
  char *argv0[] = {"serve", NULL};
  struct spaa_config *c;
  struct spaa_err err;
  uint64_t secs;
  (void)state;
  assert_int_equal(load(argv, env, &c, &err), 0);
  assert_int_equal(c->retention, 14 * 86400);
  assert_int_equal(c->retention_interval, 90);
  assert_int_equal(c->max_db_size, 2ull << 40);
  spaa_config_free(c);
  assert_int_equal(load(argv0, env, &c, &err), 0);
  assert_int_equal(c->retention, 0); /* forever */
  assert_int_equal(c->max_db_size, 512ull << 20);
  spaa_config_free(c);
  { /* the size forms max_body takes: a space, a B */
    static const struct {
      const char *v;
      uint64_t want;
    } forms[] = {{"50 MB", 50ull << 20}, {"2 TiB", 2ull << 40}, {"100b", 100}, {"7 k", 7168}};
    size_t i;
    for (i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
      char flag[64];
      char *argv1[] = {"serve", flag, NULL};
      char *env1[] = {NULL};
      snprintf(flag, sizeof(flag), "--max-db-size=%s", forms[i].v);
      if (load(argv1, env1, &c, &err))
        fail_msg("max_db_size '%s': %s", forms[i].v, err.msg);
      assert_int_equal(c->max_db_size, forms[i].want);
      spaa_config_free(c);
    }
  }
  { /* a SPAA_RELAY_ name that is no setting: refused, with the nearest one */
    char *argv3[] = {"serve", NULL};
    char *env3[] = {"SPAA_RELAY_MAX_BDY=5m", NULL};
    assert_int_not_equal(load(argv3, env3, &c, &err), 0);
    assert_string_equal(err.msg, "SPAA_RELAY_MAX_BDY: unknown environment variable (did you "
                                 "mean SPAA_RELAY_MAX_BODY?)");
  }
  { /* a bare retention number would keep seconds: refused, with the fix named */
    char *argv2[] = {"serve", "--retention", "30", NULL};
    char *env2[] = {NULL};
    assert_int_not_equal(load(argv2, env2, &c, &err), 0);
    assert_non_null(strstr(err.msg, "retention '30' has no unit: write 30d"));
  }
  assert_int_equal(spaa_config_parse_duration("36h", &secs), 0);
  assert_int_equal(secs, 36 * 3600);
  assert_int_equal(spaa_config_parse_duration("15m", &secs), 0);
  assert_int_equal(secs, 900);
  assert_int_equal(spaa_config_parse_duration("7", &secs), 0);
  assert_int_equal(secs, 7);
  assert_int_equal(spaa_config_parse_duration("1y", &secs), -1);
  assert_int_equal(spaa_config_parse_duration("3dd", &secs), -1);
  assert_int_equal(spaa_config_parse_duration("", &secs), -1);
  assert_int_equal(spaa_config_parse_duration("99999999999999999999d", &secs), -1);
}

static void test_flag_errors(void **state)
{
  static const struct {
    const char *a, *b; /* argv[1], argv[2] (b may be NULL) */
    const char *msg;
  } t[] = {
      {"--listen", "1.2.3.4", "--listen: bad listen address '1.2.3.4': expected ADDR:PORT"},
      {"--listen", "1.2.3.4:70000", "--listen: bad port in '1.2.3.4:70000'"},
      {"--listen", "1.2.3.4:", "--listen: bad port in '1.2.3.4:'"},
      {"--listen", "example.com:80", "--listen: bad address 'example.com'"},
      {"--listen", "[::1:80", "--listen: bad listen address '[::1:80'"},
      {"--listen", "[zz]:80", "--listen: bad IPv6 address 'zz'"},
      {"--listen", "::1:80", "--listen: bad listen address '::1:80'"},
      {"--data-dir", "", "--data-dir: empty value"},
      {"--db", "", "--db: empty value"},
      {"--max-body", "0", "--max-body: bad size '0'"},
      {"--max-body", "lots", "--max-body: bad size 'lots'"},
      {"--max-decompressed", "20g", "--max-decompressed: bad size '20g'"},
      {"--workers", "0", "--workers: bad number '0': expected an integer from 1 to 4096"},
      {"--keep-original", "sometimes",
       "--keep-original: bad value 'sometimes': expected never or always"},
      {"--durability", "FULL", "--durability: bad value 'FULL': expected full or normal"},
      {"--workers", "5000", "--workers: bad number '5000'"},
      {"--workers", "2x", "--workers: bad number '2x'"},
      {"--queue-depth", "-3", "--queue-depth: bad number '-3'"},
      {"--idle-timeout", "0", "--idle-timeout: bad timeout '0'"},
      {"--idle-timeout", "forever", "--idle-timeout: bad timeout 'forever'"},
      {"--log-level", "loud", "--log-level: bad log level 'loud': expected debug, info, warn "
                              "or error"},
      {"--durability", "max", "--durability: bad value 'max': expected full or normal"},
      {"--retention", "-1d", "--retention: bad duration '-1d'"},
      {"--retention-interval", "0", "--retention-interval: bad duration '0'"},
      {"--max-db-size", "10x", "--max-db-size: bad size '10x'"},
      {"--max-db-size", "99999999t", "--max-db-size: bad size '99999999t'"},
      {"--max-connections", "0", "--max-connections: bad number '0': expected an integer "
                                 "from 1 to 65536"},
      {"--header-timeout", "0", "--header-timeout: bad timeout '0'"},
      {"--body-min-rate", "fast", "--body-min-rate: bad size 'fast'"},
      {"--memory-budget", "-1", "--memory-budget: bad size '-1'"},
      {"--sentry-key", "abc", "--sentry-key: bad sentry key 'abc': expected "
                              "PROJECT_ID:PUBLIC_KEY"},
      {"--sentry-key", "x1:abc", "--sentry-key: bad sentry key 'x1:abc'"},
      {"--sentry-key", "1:", "--sentry-key: bad sentry key '1:'"},
      {"--sentry-key", "1:a:b", "--sentry-key: bad sentry key '1:a:b'"},
      {"--sentry-key", ",", "--sentry-key: empty value"},
      {"--ingest-token", "has space", "--ingest-token: bad token"},
      {"--read-token", "", "--read-token: empty value"},
      {"--listen", NULL, "--listen: missing value"},
      {"--bogus", "1", "--bogus: unknown option"},
      {"--bogus=1", NULL, "--bogus: unknown option"},
      {"--bogus", NULL, "--bogus: unknown option"},
      {"--config", NULL, "--config: missing value"},
      {"stray", NULL, "stray: unexpected argument"},
      {"--config", "", "--config: empty value"},
      {"--config", "/nonexistent/spaa.conf", "/nonexistent/spaa.conf: cannot open: No such file"},
  };
  size_t i;
  for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
    char *argv[] = {"serve", (char *)t[i].a, (char *)t[i].b, NULL};
    char *env[] = {NULL};
    struct spaa_config *c = (struct spaa_config *)1;
    struct spaa_err err;
    int rc = load(argv, env, &c, &err);
    if (rc == 0 || strncmp(err.msg, t[i].msg, strlen(t[i].msg)) != 0)
      fail_msg("case %zu (%s %s): rc=%d msg='%s', want '%s'", i, t[i].a, t[i].b ? t[i].b : "",
               rc, err.msg, t[i].msg);
    assert_true(rc == SPAA_E_USAGE || rc == SPAA_E_IO);
    assert_null(c);
  }
}

static void test_env_errors(void **state)
{
  static const struct {
    const char *env, *msg;
  } t[] = {
      {"SPAA_RELAY_LISTEN=nowhere", "SPAA_RELAY_LISTEN: bad listen address 'nowhere'"},
      {"SPAA_RELAY_MAX_BODY=1t", "SPAA_RELAY_MAX_BODY: bad size '1t'"},
      {"SPAA_RELAY_MAX_DECOMPRESSED=0", "SPAA_RELAY_MAX_DECOMPRESSED: bad size '0'"},
      {"SPAA_RELAY_WORKERS=many", "SPAA_RELAY_WORKERS: bad number 'many'"},
      {"SPAA_RELAY_QUEUE_DEPTH=0", "SPAA_RELAY_QUEUE_DEPTH: bad number '0'"},
      {"SPAA_RELAY_IDLE_TIMEOUT=86401", "SPAA_RELAY_IDLE_TIMEOUT: bad timeout '86401'"},
      {"SPAA_RELAY_LOG_LEVEL=trace", "SPAA_RELAY_LOG_LEVEL: bad log level 'trace'"},
      {"SPAA_RELAY_SENTRY_KEYS=1:ok,bad", "SPAA_RELAY_SENTRY_KEYS: bad sentry key 'bad'"},
      {"SPAA_RELAY_INGEST_TOKENS= , ", "SPAA_RELAY_INGEST_TOKENS: empty value"},
      {"SPAA_RELAY_READ_TOKENS=a\tb", "SPAA_RELAY_READ_TOKENS: bad token"},
      {"SPAA_RELAY_CONFIG=/nonexistent/x.conf", "/nonexistent/x.conf: cannot open"},
  };
  size_t i;
  for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
    char *argv[] = {"serve", NULL};
    char *env[] = {(char *)t[i].env, NULL};
    struct spaa_config *c;
    struct spaa_err err;
    int rc = load(argv, env, &c, &err);
    if (rc == 0 || strncmp(err.msg, t[i].msg, strlen(t[i].msg)) != 0)
      fail_msg("case %zu (%s): rc=%d msg='%s', want '%s'", i, t[i].env, rc, err.msg, t[i].msg);
  }
}

static void test_file_errors(void **state)
{
  static const struct {
    const char *text;
    size_t line;
    const char *msg; /* after "PATH:" */
  } t[] = {
      {"listen 127.0.0.1:80\n", 1, "1: expected 'key = value'"},
      {"# ok\n\n = 3\n", 3, "3: missing key before '='"},
      {"colour = blue\n", 1, "1: unknown key 'colour'"},
      {"workers = 2\nworkers = 3\n", 2, "2: 'workers' already set on line 1"},
      {"listen =\n", 1, "1: empty value"},
      {"listen = 1.2.3.4:99999\n", 1, "1: bad port in '1.2.3.4:99999'"},
      {"max_body = 1q\n", 1, "1: bad size '1q'"},
      {"max_decompressed = 0\n", 1, "1: bad size '0'"},
      {"workers = 0\n", 1, "1: bad number '0'"},
      {"queue_depth = 2000000\n", 1, "1: bad number '2000000'"},
      {"idle_timeout = 1h\n", 1, "1: bad timeout '1h'"},
      {"log_level = verbose\n", 1, "1: bad log level 'verbose'"},
      {"\n\nsentry_key = nokey\n", 3, "3: bad sentry key 'nokey'"},
      {"ingest_token = ,,\n", 1, "1: empty value"},
      {"read_token = \"a b\"\n", 1, "1: bad token"},
  };
  size_t i;
  for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
    const char *path = write_file("bad.conf", t[i].text);
    char want[700], flag[600];
    char *argv[] = {"serve", "--config", flag, NULL};
    char *env[] = {NULL};
    struct spaa_config *c;
    struct spaa_err err;
    int rc;
    snprintf(flag, sizeof(flag), "%s", path);
    snprintf(want, sizeof(want), "%s:%s", path, t[i].msg);
    rc = load(argv, env, &c, &err);
    if (rc != SPAA_E_USAGE || strncmp(err.msg, want, strlen(want)) != 0)
      fail_msg("case %zu: rc=%d msg='%s', want '%s'", i, rc, err.msg, want);
    assert_int_equal(err.line, t[i].line);
  }
}

static void test_long_line(void **state)
{
  char *text = malloc(SPAA_CONFIG_MAX_LINE + 100);
  const char *path;
  char *argv[] = {"serve", "--config", NULL, NULL};
  char *env[] = {NULL};
  struct spaa_config *c;
  struct spaa_err err;
  char want[600];
  memset(text, 'a', SPAA_CONFIG_MAX_LINE + 50);
  memcpy(text, "# ok\nread_token = ", 18);
  strcpy(text + SPAA_CONFIG_MAX_LINE + 50, "\n");
  path = write_file("long.conf", text);
  free(text);
  argv[2] = (char *)path;
  assert_int_equal(load(argv, env, &c, &err), SPAA_E_USAGE);
  snprintf(want, sizeof(want), "%s:2: line longer than 4096 bytes", path);
  assert_string_equal(err.msg, want);
  assert_int_equal(err.line, 2);
}

/* The example file in config/ must load as documented (it sets nothing unusual). */
/* log_file survives the listen addresses applied after it, from flags, a file and the
 * environment (parsing a listen address freed it: a log file named by garbage, or a double
 * free at exit). */
static void test_log_file_kept(void **state)
{
  const char *file = write_file("logfile.conf", "log_file = /tmp/from-file.log\n"
                                                "listen = 127.0.0.1:0\n"
                                                "grpc_listen = 127.0.0.1:0\n");
  char flag[600];
  char *argv1[] = {"serve", "--log-file", "/tmp/from-flag.log", "--listen", "127.0.0.1:0",
                   "--grpc-listen", "127.0.0.1:0", NULL};
  char *argv2[] = {"serve", flag, NULL};
  char *env2[] = {"SPAA_RELAY_GRPC_LISTEN=127.0.0.1:0", "SPAA_RELAY_LISTEN=127.0.0.1:0", NULL};
  char *env3[] = {"SPAA_RELAY_LOG_FILE=/tmp/from-env.log", "SPAA_RELAY_LISTEN=127.0.0.1:0",
                  "SPAA_RELAY_GRPC_LISTEN=127.0.0.1:0", NULL};
  char *argv3[] = {"serve", NULL};
  char *env1[] = {NULL};
  struct spaa_config *c;
  struct spaa_err err;
  (void)state;
  assert_int_equal(load(argv1, env1, &c, &err), 0);
  assert_string_equal(c->log_file, "/tmp/from-flag.log");
  spaa_config_free(c);
  snprintf(flag, sizeof(flag), "--config=%s", file);
  assert_int_equal(load(argv2, env2, &c, &err), 0);
  assert_string_equal(c->log_file, "/tmp/from-file.log");
  spaa_config_free(c);
  assert_int_equal(load(argv3, env3, &c, &err), 0);
  assert_string_equal(c->log_file, "/tmp/from-env.log");
  spaa_config_free(c);
}

static void test_example_file(void **state)
{
  char path[1024], flag[1100];
  char *argv[] = {"serve", flag, NULL};
  char *env[] = {NULL};
  struct spaa_config *c;
  struct spaa_err err;
  /* the source tree from this file's path: <src>/tests/config/config_test.c */
  const char *me = __FILE__, *tail = strstr(me, "tests/config/config_test.c");
  if (!tail)
    fail_msg("cannot find the source tree from %s", me);
  snprintf(path, sizeof(path), "%.*sconfig/example.conf", (int)(tail - me), me);
  snprintf(flag, sizeof(flag), "--config=%s", path);
  if (load(argv, env, &c, &err))
    fail_msg("example.conf: %s", err.msg);
  assert_string_equal(c->listen_host, "127.0.0.1");
  assert_int_equal(c->listen_port, 8080);
  assert_int_equal(c->max_body, 52428800);
  assert_int_equal(c->log_level, SPAA_LOG_INFO);
  spaa_config_free(c);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_defaults),     cmocka_unit_test(test_precedence),
      cmocka_unit_test(test_serving_settings),
      cmocka_unit_test(test_config_from_env_and_db), cmocka_unit_test(test_listen_forms),
      cmocka_unit_test(test_sizes),        cmocka_unit_test(test_levels),
      cmocka_unit_test(test_flag_errors),  cmocka_unit_test(test_env_errors),
      cmocka_unit_test(test_file_errors),  cmocka_unit_test(test_long_line),
      cmocka_unit_test(test_example_file), cmocka_unit_test(test_storage_settings),
      cmocka_unit_test(test_retention_settings), cmocka_unit_test(test_allow_open),
      cmocka_unit_test(test_suggestions),  cmocka_unit_test(test_log_file_kept),
  };
  int rc;
  snprintf(tmpdir, sizeof(tmpdir), "/tmp/spaa-config-test-XXXXXX");
  if (!mkdtemp(tmpdir))
    return 1;
  rc = cmocka_run_group_tests(tests, NULL, NULL);
  {
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
      rc = rc ? rc : 1;
  }
  return rc;
}
