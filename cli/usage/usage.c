/* The conventions every command shares (usage.h). */
#include "usage.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int tp_is_help(const char *arg)
{
	return !strcmp(arg, "-h") || !strcmp(arg, "--help");
}

int tp_help(const char *help)
{
	/* A help cut short (a full disk, a closed pipe) is not a success. */
	if (fputs(help, stdout) < 0 || fflush(stdout)) {
		fprintf(stderr, "tprof: cannot write to stdout: %s\n",
			strerror(errno));
		return 1;
	}
	return 0;
}

int tp_help_if_asked(int argc, char **argv, const char *help)
{
	int i;

	for (i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (tp_is_help(argv[i]))
			return tp_help(help);
	return -1;
}

int tp_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fputs(cmd ? "tprof " : "tprof", stderr);
	fputs(cmd ? cmd : "", stderr);
	fputs(": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "; see 'tprof%s%s --help'\n", cmd ? " " : "",
		cmd ? cmd : "");
	return TP_EXIT_USAGE;
}

int tp_operands(const char *cmd, int argc, char **argv,
		int (*opt)(void *ctx, const char *arg), void *ctx)
{
	int i, n = 0, opts = 1;

	for (i = 1; i < argc; i++) {
		if (opts && !strcmp(argv[i], "--")) {
			opts = 0;
		} else if (opts && argv[i][0] == '-' && argv[i][1]) {
			if (!opt || opt(ctx, argv[i]) < 0) {
				tp_usage_error(cmd, "unknown option '%s'",
					       argv[i]);
				return -1;
			}
		} else {
			argv[++n] = argv[i];
		}
	}
	return n;
}

int tp_cmd_args(const struct tp_cmd_args *a, int argc, char **argv, int *n)
{
	int rc = tp_help_if_asked(argc, argv, a->help);

	if (rc >= 0)
		return rc;
	*n = tp_operands(a->name, argc, argv, a->opt, a->ctx);
	if (*n < 0)
		return TP_EXIT_USAGE;
	if (!*n)
		return tp_usage_error(a->name, "%s", a->missing);
	return -1;
}
