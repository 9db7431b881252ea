/* `tprof env-check`: the library's own TPROF_* parser run on the current
 * environment, so tprof-run refuses exactly what the library would. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/config.h"
#include "files/naming.h"
#include "env_check.h"

static const char *env(const char *name)
{
	return getenv(name);
}

int tp_cmd_env_check(int argc, char **argv)
{
	struct tp_config c;
	char err[512];

	(void)argv;
	if (argc > 1) {
		fprintf(stderr, "usage: tprof env-check\n");
		return 2;
	}
	if (tp_config_parse(&c, env, err, sizeof(err)) < 0) {
		fprintf(stderr, "tprof: error: %s\n", err);
		return 2;
	}
	if (c.disabled)
		return 0;
	if (tp_mkdir_p(c.dir) < 0 || access(c.dir, W_OK | X_OK) < 0) {
		fprintf(stderr, "tprof: error: TPROF_OUTPUT_DIR='%s' is not a "
			"writable directory: %s; choose a writable "
			"directory\n", c.dir, strerror(errno));
		return 2;
	}
	return 0;
}
