/* Subcommand dispatch for the spaa-relay executable. */
#include "server/cli.h"

#include <stdio.h>
#include <string.h>

static const char usage[] =
    "usage:\n"
    "  spaa-relay serve [--config FILE] [--listen ADDR:PORT] [--data-dir DIR]\n"
    "                   [--sentry-key PROJECT_ID:PUBLIC_KEY]... [--ingest-token TOKEN]...\n"
    "                   [--read-token TOKEN]... [--log-level debug|info|warn|error]\n"
    "  spaa-relay validate FILE...      exit 0 valid, 1 invalid, 2 usage or I/O error\n"
    "  spaa-relay convert --from FORMAT [--to spaa|collapsed|pprof|speedscope] IN [-o OUT]\n"
    "                     [--zstd]\n"
    "  spaa-relay top [--from FORMAT] [--event E] [--metric M] [--limit N] FILE\n"
    "  spaa-relay --version | --help\n";

int spaa_cli_main(int argc, char **argv)
{
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
  if (strcmp(argv[1], "serve") == 0)
    return spaa_cmd_serve(argc - 1, argv + 1);
  if (strcmp(argv[1], "validate") == 0)
    return spaa_cmd_validate(argc - 1, argv + 1);
  if (strcmp(argv[1], "convert") == 0)
    return spaa_cmd_convert(argc - 1, argv + 1);
  if (strcmp(argv[1], "top") == 0)
    return spaa_cmd_top(argc - 1, argv + 1);
  fprintf(stderr, "spaa-relay: unknown command '%s'\n%s", argv[1], usage);
  return 2;
}
