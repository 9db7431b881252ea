/* `tprof check`: its arguments, and a directory's traces each checked as
 * a file is (check.c). Calls only down: check.c, trace_dir.c and the
 * usage conventions. */
#include "check.h"
#include "cli/read/trace_dir.h"
#include "cli/usage/usage.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static const char help_text[] =
	"usage: tprof check [--foreign] FILE_OR_DIR...\n"
	"\n"
	"Validate traces (JSON, plain or gzipped, or Perfetto protobuf) the\n"
	"way Perfetto and HTA read them. Prints FILE: error: ... for each\n"
	"problem or FILE: ok (N events). A directory gives its traces\n"
	"(*.trace.json[.gz], *.pftrace[.gz], other *.json[.gz] holding\n"
	"one), not its subdirectories.\n"
	"\n"
	"  --foreign   check a Kineto/torch.profiler trace: skip the\n"
	"              tprof-only rules (\"tprof\" and \"baseTimeNanoseconds\"\n"
	"              keys, three-decimal ts/dur, pid/tid on every event)\n"
	"              and count what Kineto always writes (no\n"
	"              displayTimeUnit or distributedInfo, ac2g flows\n"
	"              missing an end, overlapping GPU slices) as one\n"
	"              warning each\n"
	"  -h, --help  show this help\n"
	"\n"
	"Exit status: 0 no errors (warnings may be printed), 1 errors found,\n"
	"a file unreadable or a directory without traces, 2 usage error.\n";

static int take_opt(void *ctx, const char *arg)
{
	unsigned *flags = ctx;

	if (strcmp(arg, "--foreign"))
		return -1;
	*flags |= TP_CHECK_FOREIGN;
	return 0;
}

/* Every trace of dir, checked: 0 all ok, 1 problems or none there. */
static int check_dir(const char *dir, unsigned flags)
{
	struct tp_trace_dir td;
	size_t i;
	int status = 0;

	if (tp_trace_dir_list(dir, &td)) {
		printf("%s: error: %s\n", dir, strerror(errno));
		return 1;
	}
	if (!td.n) {
		printf("%s: error: no traces (" TP_TRACE_DIR_WHAT ") in this "
		       "directory\n", dir);
		return 1;
	}
	for (i = 0; i < td.n; i++)
		if (tp_check_file(td.paths[i], flags, stdout))
			status = 1;
	tp_trace_dir_free(&td);
	return status;
}

int tp_cmd_check(int argc, char **argv)
{
	unsigned flags = 0;
	const struct tp_cmd_args args = {
		.name = "check", .help = help_text,
		.missing = "no file given: give traces or the directory they "
			   "are in",
		.opt = take_opt, .ctx = &flags,
	};
	struct stat st;
	int i, n, status = 0, rc = tp_cmd_args(&args, argc, argv, &n);

	if (rc >= 0)
		return rc;
	for (i = 1; i <= n; i++) {
		if (!stat(argv[i], &st) && S_ISDIR(st.st_mode))
			rc = check_dir(argv[i], flags);
		else
			rc = tp_check_file(argv[i], flags, stdout) != 0;
		if (rc)
			status = 1;
	}
	return status;
}
