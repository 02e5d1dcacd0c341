/* The command line of spaa-relay: subcommands serve, validate, convert, top and healthcheck.
 * Each returns the process exit code: 0 ok, 1 invalid input, 2 usage or I/O error. */
#ifndef SPAA_SERVER_CLI_H
#define SPAA_SERVER_CLI_H

int spaa_cli_main(int argc, char **argv);
/* argv[0] is the subcommand name. */
int spaa_cmd_serve(int argc, char **argv);
int spaa_cmd_validate(int argc, char **argv);
int spaa_cmd_convert(int argc, char **argv);
int spaa_cmd_top(int argc, char **argv);
int spaa_cmd_healthcheck(int argc, char **argv);

#include <stddef.h>

/* Report a bad argument `arg` of subcommand `cmd` on stderr: "needs a value" when it is one
 * of the `n` flags in `known`, else "unknown option" with the nearest known flag ("did you
 * mean --to?") or "unexpected argument"; then where the help is. The caller returns 2. */
void spaa_cli_bad_option(const char *cmd, const char *arg, const char *const *known, size_t n,
                         const char *usage);

#endif
