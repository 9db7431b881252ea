/* tprof dump: asks running processes for a flight recorder / hang dump. */
#ifndef TP_CLI_DUMP_H
#define TP_CLI_DUMP_H

/* `tprof dump PID...`; argv[0] is the subcommand name. 0: every process
 * was asked, 1: one could not be, 2: usage error. */
int tp_cmd_dump(int argc, char **argv);

#endif
