/* tprof: the command-line tool. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tprof.h>

#include "cli/check/check.h"
#include "cli/convert/convert.h"
#include "dump.h"
#include "env_check.h"
#include "cli/merge/merge.h"
#include "cli/recover/recover.h"
#include "cli/report/report.h"

static void usage(FILE *f)
{
	fputs("usage: tprof COMMAND [ARGS...]\n\n"
	      "commands:\n"
	      "  check FILE...   validate traces as Perfetto and HTA read "
	      "them\n"
	      "  convert IN -o OUT\n"
	      "                  a JSON(.gz) trace as Perfetto protobuf "
	      "(.pftrace[.gz])\n"
	      "  dump PID...     ask running processes for a flight "
	      "recorder / hang dump\n"
	      "  env-check       validate the TPROF_* environment (used by "
	      "tprof-run)\n"
	      "  merge PATH... -o OUT\n"
	      "                  one Perfetto trace of many ranks' traces\n"
	      "  report PATH...  one report (Markdown, --json, --html) over "
	      "many ranks'\n"
	      "                  summaries or traces\n"
	      "  recover DIR...  turn the .tmp traces of killed processes into "
	      "valid traces\n"
	      "  version         print the version\n", f);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "check"))
		return tp_cmd_check(argc - 1, argv + 1);
	if (!strcmp(argv[1], "report"))
		return tp_cmd_report(argc - 1, argv + 1);
	if (!strcmp(argv[1], "merge"))
		return tp_cmd_merge(argc - 1, argv + 1);
	if (!strcmp(argv[1], "convert"))
		return tp_cmd_convert(argc - 1, argv + 1);
	if (!strcmp(argv[1], "dump"))
		return tp_cmd_dump(argc - 1, argv + 1);
	if (!strcmp(argv[1], "recover"))
		return tp_cmd_recover(argc - 1, argv + 1);
	if (!strcmp(argv[1], "env-check"))
		return tp_cmd_env_check(argc - 1, argv + 1);
	if (!strcmp(argv[1], "version")) {
		puts("tprof " TPROF_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	fprintf(stderr, "tprof: error: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
