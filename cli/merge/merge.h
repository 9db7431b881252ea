/* tprof merge: one Chrome/Perfetto trace out of every rank's trace.
 * See docs/reference/cli.md ("tprof merge") and
 * docs/reference/trace-format.md ("Merged
 * traces") for what is rewritten and how.
 */
#ifndef TP_CLI_MERGE_H
#define TP_CLI_MERGE_H

/* `tprof merge DIR_OR_FILE... -o OUT`; argv[0] is the subcommand name.
 * Returns the exit status: 0 written, 1 error (no OUT left behind),
 * 2 usage error. */
int tp_cmd_merge(int argc, char **argv);

#endif
