/* tprof check: validate trace files the way Perfetto's JSON importer and
 * HTA read them. See docs/reference/trace-format.md for the format.
 */
#ifndef TP_CLI_CHECK_H
#define TP_CLI_CHECK_H

#include <stdio.h>

/* Skip the tprof-only rules (the "tprof" and "baseTimeNanoseconds" keys,
 * three-decimal ts/dur, pid/tid on every event) so that Kineto /
 * torch.profiler traces can be checked too. */
#define TP_CHECK_FOREIGN 0x1u

/* Checks one plain or gzipped trace and prints "PATH: error: ..." lines (at
 * most 20, then a count of the rest) or "PATH: ok (N events)" to out.
 * Returns the number of problems, or -1 if the file could not be read or
 * parsed (that is reported as a problem too). */
int tp_check_file(const char *path, unsigned flags, FILE *out);

/* `tprof check [--foreign] FILE...`; argv[0] is the subcommand name.
 * Returns the exit status: 0 all files ok, 1 problems, 2 usage error. */
int tp_cmd_check(int argc, char **argv);

#endif
