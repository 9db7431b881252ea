/* tprof: the command-line tool. Finds the command and hands it its
 * arguments; `help`, `version` and the options of tprof itself are
 * answered here. The conventions every command keeps (--help, usage
 * errors, exit statuses) are cli/usage/'s. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tprof.h>

#include "cli/check/check.h"
#include "cli/convert/convert.h"
#include "cli/diff/diff.h"
#include "cli/merge/merge.h"
#include "cli/recover/recover.h"
#include "cli/report/report.h"
#include "cli/usage/usage.h"
#include "dump.h"
#include "env_check.h"

static const char help_text[] =
	"usage: tprof COMMAND [ARGS...]\n"
	"       tprof help COMMAND   (or tprof COMMAND --help)\n"
	"\n"
	"Checks, converts and reports on the traces libtprof.so writes (run\n"
	"a program under it with tprof-run).\n"
	"\n"
	"commands:\n"
	"  report PATH...    one report over many ranks' summaries or\n"
	"                    traces (Markdown, --json, --html)\n"
	"  diff A B          what changed between two runs, per step\n"
	"  check PATH...     validate traces as Perfetto and HTA read them\n"
	"  merge PATH... -o OUT\n"
	"                    one Perfetto trace of many ranks' traces\n"
	"  convert IN -o OUT a JSON trace as Perfetto protobuf, or back\n"
	"  recover DIR...    turn the .tmp traces of killed processes into\n"
	"                    valid traces\n"
	"  dump PID...       ask running processes for a flight recorder /\n"
	"                    hang dump\n"
	"  env-check         validate the TPROF_* environment (tprof-run\n"
	"                    runs it)\n"
	"  version           print the version (also tprof --version)\n"
	"  help [COMMAND]    this help, or COMMAND's\n"
	"\n"
	"Exit status: 0 done, 1 failed (each command's help says how), 2\n"
	"usage error.\n";

static const char version_help[] =
	"usage: tprof version   (or tprof --version)\n"
	"\n"
	"Prints \"tprof VERSION\" on stdout: the version of this tprof, the\n"
	"one its library writes into traces and summaries.\n"
	"\n"
	"Exit status: 0, 2 usage error.\n";

static int cmd_version(int argc, char **argv)
{
	int rc = tp_help_if_asked(argc, argv, version_help);

	if (rc >= 0)
		return rc;
	if (argc > 1)
		return tp_usage_error("version", "unexpected argument '%s'",
				      argv[1]);
	return tp_help("tprof " TPROF_VERSION "\n");
}

static int cmd_help(int argc, char **argv);

static const struct cmd {
	const char *name;
	int (*run)(int argc, char **argv);
} cmds[] = {
	{ "report", tp_cmd_report },
	{ "diff", tp_cmd_diff },
	{ "check", tp_cmd_check },
	{ "merge", tp_cmd_merge },
	{ "convert", tp_cmd_convert },
	{ "recover", tp_cmd_recover },
	{ "dump", tp_cmd_dump },
	{ "env-check", tp_cmd_env_check },
	{ "version", cmd_version },
	{ "help", cmd_help },
};

static const struct cmd *find(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(cmds[i].name, name))
			return &cmds[i];
	return NULL;
}

/* `tprof help CMD` is `tprof CMD --help`, so the two never differ. */
static int cmd_help(int argc, char **argv)
{
	char *args[3] = { NULL, "--help", NULL };
	const struct cmd *c;
	int rc = tp_help_if_asked(argc, argv, help_text);

	if (rc >= 0)
		return rc;
	if (argc < 2)
		return tp_help(help_text);
	if (argc > 2)
		return tp_usage_error("help", "one command at a time, not '%s "
				      "%s'", argv[1], argv[2]);
	c = find(argv[1]);
	if (!c)
		return tp_usage_error("help", "unknown command '%s'", argv[1]);
	args[0] = (char *)c->name;
	return c->run(2, args);
}

int main(int argc, char **argv)
{
	const struct cmd *c;

	if (argc < 2) {
		/* Bare `tprof`: the list of commands, but not as success. */
		fputs(help_text, stderr);
		return TP_EXIT_USAGE;
	}
	if (tp_is_help(argv[1]))
		return tp_help(help_text);
	if (!strcmp(argv[1], "--version"))
		return cmd_version(1, argv + 1);
	c = find(argv[1]);
	if (c)
		return c->run(argc - 1, argv + 1);
	if (argv[1][0] == '-')
		return tp_usage_error(NULL, "unknown option '%s'", argv[1]);
	return tp_usage_error(NULL, "unknown command '%s'", argv[1]);
}
