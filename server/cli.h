/* The command line of spaa-relay: subcommands serve, validate and convert. */
#ifndef SPAA_SERVER_CLI_H
#define SPAA_SERVER_CLI_H

/* Run the command line; returns the process exit code (0 ok, 1 invalid input, 2 usage/IO). */
int spaa_cli_main(int argc, char **argv);

#endif
