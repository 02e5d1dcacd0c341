/* Subcommand dispatch for the spaa-relay executable, and the "bad option" report the
 * subcommands share (with a "did you mean" from config/suggest.h). */
#include "server/cli.h"

#include <stdio.h>
#include <string.h>

#include "config/suggest.h"

static const char usage[] =
    "usage: spaa-relay COMMAND [OPTIONS]   (spaa-relay COMMAND --help: every option)\n"
    "  serve        run the server: spaa-relay serve [--config FILE] [--listen ADDR:PORT]\n"
    "               [--data-dir DIR] [--sentry-key PROJECT_ID:PUBLIC_KEY]...\n"
    "               [--ingest-token TOKEN]... [--read-token TOKEN]... [--allow-open] ...\n"
    "  validate     check SPAA files: spaa-relay validate [--max-errors N] [--quiet] FILE...\n"
    "               exit 0 valid, 1 invalid, 2 usage or I/O error\n"
    "  convert      spaa-relay convert --from sentry|otlp|pprof|folded|spaa\n"
    "               [--to spaa|collapsed|pprof|speedscope] IN [-o OUT] [--zstd]\n"
    "  top          spaa-relay top [--from FORMAT] [--event E] [--metric M] [--limit N] FILE\n"
    "  healthcheck  spaa-relay healthcheck [--url http://127.0.0.1:8080/readyz]\n"
    "               exit 0 when the server answers 200 (a container HEALTHCHECK)\n"
    "  spaa-relay --version | --help\n";

static const struct {
  const char *name;
  int (*fn)(int argc, char **argv);
} commands[] = {
    {"serve", spaa_cmd_serve},     {"validate", spaa_cmd_validate},
    {"convert", spaa_cmd_convert}, {"top", spaa_cmd_top},
    {"healthcheck", spaa_cmd_healthcheck},
};
#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

void spaa_cli_bad_option(const char *cmd, const char *arg, const char *const *known, size_t n,
                         const char *usage_text)
{
  const char *near;
  size_t i;
  (void)usage_text;
  for (i = 0; i < n; i++)
    if (known[i] && strcmp(known[i], arg) == 0) {
      fprintf(stderr, "spaa-relay %s: %s needs a value\n", cmd, arg);
      goto hint;
    }
  if (arg[0] != '-' || !arg[1]) {
    fprintf(stderr, "spaa-relay %s: unexpected argument '%.200s'\n", cmd, arg);
    goto hint;
  }
  {
    char name[SPAA_SUGGEST_MAX_LEN + 1];
    size_t nl = strcspn(arg, "=");
    snprintf(name, sizeof(name), "%.*s", (int)(nl < sizeof(name) ? nl : sizeof(name) - 1), arg);
    near = nl < sizeof(name) ? spaa_suggest(name, known, n) : NULL;
    if (near)
      fprintf(stderr, "spaa-relay %s: unknown option '%.200s' (did you mean %s?)\n", cmd, arg,
              near);
    else
      fprintf(stderr, "spaa-relay %s: unknown option '%.200s'\n", cmd, arg);
  }
hint:
  fprintf(stderr, "run 'spaa-relay %s --help' for every option\n", cmd);
}

int spaa_cli_main(int argc, char **argv)
{
  const char *names[N_COMMANDS + 2];
  const char *near;
  size_t i;
  if (argc < 2) {
    fputs(usage, stderr);
    return 2;
  }
  if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
    printf("spaa-relay %s\n", SPAA_RELAY_VERSION);
    return 0;
  }
  if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
      strcmp(argv[1], "help") == 0) {
    fputs(usage, stdout);
    return 0;
  }
  for (i = 0; i < N_COMMANDS; i++) {
    if (strcmp(argv[1], commands[i].name) == 0)
      return commands[i].fn(argc - 1, argv + 1);
    names[i] = commands[i].name;
  }
  names[N_COMMANDS] = "--version";
  names[N_COMMANDS + 1] = "--help";
  if ((near = spaa_suggest(argv[1], names, N_COMMANDS + 2)))
    fprintf(stderr, "spaa-relay: unknown command '%.200s' (did you mean %s?)\n%s", argv[1], near,
            usage);
  else
    fprintf(stderr, "spaa-relay: unknown command '%.200s'\n%s", argv[1], usage);
  return 2;
}
