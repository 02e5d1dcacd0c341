/* The command line of spaa-relay: subcommands serve, validate, convert and top. Each returns the
 * process exit code: 0 ok, 1 invalid input, 2 usage or I/O error. */
#ifndef SPAA_SERVER_CLI_H
#define SPAA_SERVER_CLI_H

int spaa_cli_main(int argc, char **argv);
/* argv[0] is the subcommand name. */
int spaa_cmd_serve(int argc, char **argv);
int spaa_cmd_validate(int argc, char **argv);
int spaa_cmd_convert(int argc, char **argv);
int spaa_cmd_top(int argc, char **argv);

#endif
