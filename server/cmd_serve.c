/* spaa-relay serve (being written). */
#include <stdio.h>
#include "server/cli.h"

int spaa_cmd_serve(int argc, char **argv)
{
  fprintf(stderr, "spaa-relay: serve is not built yet\n");
  return 2;
}
