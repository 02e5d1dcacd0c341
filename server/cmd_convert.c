/* spaa-relay convert (being written). */
#include <stdio.h>
#include "server/cli.h"

int spaa_cmd_convert(int argc, char **argv)
{
  fprintf(stderr, "spaa-relay: convert is not built yet\n");
  return 2;
}
