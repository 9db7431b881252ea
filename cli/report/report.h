/* tprof report: one report over many ranks' summaries or traces
 * (docs/guide/report.md). */
#ifndef TP_CLI_REPORT_H
#define TP_CLI_REPORT_H

/* `tprof report DIR_OR_FILES... [--html FILE] [--json]`; argv[0] is the
 * subcommand name. Returns the exit status: 0 done, 1 an input or the
 * output failed, 2 usage error. */
int tp_cmd_report(int argc, char **argv);

#endif
