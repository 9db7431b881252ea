/* `tprof env-check`: the library's own TPROF_* parser run on the current
 * environment, so tprof-run refuses exactly what the library would. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/usage/usage.h"
#include "config/config.h"
#include "files/naming.h"
#include "env_check.h"

static const char *env(const char *name)
{
	return getenv(name);
}

static const char help_text[] =
	"usage: tprof env-check\n"
	"\n"
	"Validate the TPROF_* environment with the library's own parser, and\n"
	"that the output directory can be written (it is made when\n"
	"missing): one line on stdout saying where traces would go, or one\n"
	"error line on stderr. tprof-run runs it before it starts the\n"
	"program, so a bad flag is refused as the library would refuse it.\n"
	"\n"
	"  -h, --help  show this help\n"
	"\n"
	"Exit status: 0 valid, 2 a value is not valid, the directory cannot\n"
	"be written, or usage error.\n";

int tp_cmd_env_check(int argc, char **argv)
{
	struct tp_config c;
	char err[512];
	int rc = tp_help_if_asked(argc, argv, help_text);

	if (rc >= 0)
		return rc;
	if (argc > 1)
		return tp_usage_error("env-check", "unexpected argument '%s': "
				      "it reads the environment only",
				      argv[1]);
	if (tp_config_parse(&c, env, err, sizeof(err)) < 0) {
		fprintf(stderr, "tprof: error: %s\n", err);
		return 2;
	}
	if (c.disabled) {
		puts("tprof: TPROF_DISABLE=1: tracing is off");
		return 0;
	}
	if (tp_mkdir_p(c.dir) < 0 || access(c.dir, W_OK | X_OK) < 0) {
		fprintf(stderr, "tprof: error: TPROF_OUTPUT_DIR='%s' is not a "
			"writable directory: %s; choose a writable "
			"directory\n", c.dir, strerror(errno));
		return 2;
	}
	printf("tprof: the TPROF_* environment is valid; traces go to "
	       "%s/%s-rank<R>%s\n", c.dir, c.name,
	       c.format == TP_FORMAT_PERFETTO ? ".pftrace.gz" :
	       ".trace.json.gz");
	return 0;
}
