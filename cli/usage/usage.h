/* cli/usage/: what every tprof command does the same way, so that none
 * has its own habits (docs/reference/cli.md): -h or --help prints the
 * command's help on stdout and exits 0; a usage error is one line on
 * stderr that names the help, and exit status 2. The lowest of the CLI's
 * folders: it calls nothing of tprof's. */
#ifndef TP_CLI_USAGE_H
#define TP_CLI_USAGE_H

/* The exit status of a usage error, for every command. */
#define TP_EXIT_USAGE 2

/* Nonzero when arg asks for help: -h or --help. */
int tp_is_help(const char *arg);

/* When argv[1..argc) holds -h or --help before any "--": prints help on
 * stdout and returns the exit status (0, or 1 with one line on stderr
 * when stdout cannot be written). Otherwise -1: go on. */
int tp_help_if_asked(int argc, char **argv, const char *help);

/* Prints help on stdout; the exit status as above. */
int tp_help(const char *help);

/* "tprof CMD: MESSAGE; see 'tprof CMD --help'" on stderr (cmd NULL: the
 * tprof command itself); returns TP_EXIT_USAGE. */
int tp_usage_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Moves the operands of argv[1..argc) (the arguments that are not
 * options: "-" is one, and after "--" every argument is) to argv[1..],
 * in order, and returns their number. Each option goes to opt, which
 * returns 0 when it takes it; one it does not take (or any, when opt is
 * NULL) is a usage error of cmd: -1, with its line printed. */
int tp_operands(const char *cmd, int argc, char **argv,
		int (*opt)(void *ctx, const char *arg), void *ctx);

/* What a command that takes operands (files, directories, pids) tells
 * tp_cmd_args. */
struct tp_cmd_args {
	const char *name;	/* "check": for its usage errors */
	const char *help;	/* its whole --help text */
	const char *missing;	/* the usage error when no operand is given */
	int (*opt)(void *ctx, const char *arg);	/* as tp_operands' */
	void *ctx;
};

/* The start such a command shares: the help when asked, the operands
 * moved to argv[1..*n], a usage error for an unknown option or for no
 * operand. -1 to go on, else the exit status to return. */
int tp_cmd_args(const struct tp_cmd_args *a, int argc, char **argv, int *n);

#endif
