/* tprof diff: what changed between two runs (docs/guide/diff.md). */
#ifndef TP_CLI_DIFF_H
#define TP_CLI_DIFF_H

/* `tprof diff A B [--json] [-o FILE] [--top N]`; argv[0] is the
 * subcommand name. Returns the exit status: 0 done, 1 an input or the
 * output failed, 2 usage error. */
int tp_cmd_diff(int argc, char **argv);

#endif
