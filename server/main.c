/* spaa-relay: the command line (serve, validate, convert). */
#include <stdio.h>
#include <string.h>

#include "server/cli.h"

int main(int argc, char **argv) { return spaa_cli_main(argc, argv); }
