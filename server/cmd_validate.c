/* spaa-relay validate (being written). */
#include <stdio.h>
#include "server/cli.h"

int spaa_cmd_validate(int argc, char **argv)
{
  fprintf(stderr, "spaa-relay: validate is not built yet\n");
  return 2;
}
