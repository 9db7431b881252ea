/* libFuzzer harness: the TPROF_* parser (trace/config*.c) that the
 * preload runs at load and `tprof env-check` runs for tprof-run. The
 * input is an environment: NAME=VALUE lines. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FZ_MAX_VARS 64

static char *vars[FZ_MAX_VARS + 1];
static size_t nvars;

/* The first NAME=VALUE of the input, as getenv returns the first. */
static const char *fz_getenv(const char *name)
{
	size_t len = strlen(name);

	for (size_t i = 0; i < nvars; i++)
		if (!strncmp(vars[i], name, len) && vars[i][len] == '=')
			return vars[i] + len + 1;
	return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tp_config c;
	struct tp_capture_config cap;
	char err[512], msg[512];
	char *buf = malloc(size + 1), *s, *line;
	unsigned src;
	uint64_t ns;
	long v;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = 0;
	/* The whole input as one value, to each number parser. */
	tp_parse_uint(buf, 0, 1L << 40, &v);
	tp_parse_duration_ns(buf, &ns);
	tp_parse_sources(buf, &src, err, sizeof(err));

	nvars = 0;
	for (s = buf; (line = strsep(&s, "\n")) && nvars < FZ_MAX_VARS;)
		if (strchr(line, '='))
			vars[nvars++] = line;
	vars[nvars] = NULL;
	memset(&c, 0, sizeof(c));
	tp_config_parse(&c, fz_getenv, err, sizeof(err));
	memset(&cap, 0, sizeof(cap));
	tp_config_parse_capture(&cap, fz_getenv, err, sizeof(err));
	tp_config_unknown(vars, msg, sizeof(msg));
	free(buf);
	return 0;
}
