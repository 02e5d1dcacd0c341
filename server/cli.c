/* Subcommand dispatch (placeholder until serve/validate/convert land). */
#include "server/cli.h"

#include <stdio.h>
#include <string.h>

int spaa_cli_main(int argc, char **argv)
{
  if (argc > 1 && strcmp(argv[1], "--version") == 0) {
    printf("spaa-relay %s\n", SPAA_RELAY_VERSION);
    return 0;
  }
  fprintf(stderr, "usage: spaa-relay serve|validate|convert ...\n");
  return 2;
}
