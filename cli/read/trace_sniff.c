/* Telling a trace by its content, for the files of a directory that
 * `report` and `merge` are given: torch's tensorboard_trace_handler
 * writes *.pt.trace.json[.gz], HTA's data sets rank-N.json.gz, and
 * people rename files; what they hold is what counts.
 *
 * Calls only down: the gzip reader (gzread.c) and the pull parser
 * (json.c). Used by report_input.c and merge.c.
 */
#include "trace_sniff.h"

#include <stdlib.h>
#include <string.h>

#include "gzread.h"
#include "json.h"

#define SNIFF_BYTES (64 * 1024)

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n > k && !strcmp(s + n - k, suffix);
}

int tp_sniff_name(const char *name)
{
	if (ends_with(name, ".summary.json"))
		return 0;
	return ends_with(name, ".json") || ends_with(name, ".json.gz");
}

/* Walks the top-level keys of what was read; a value cut off by the end
 * of the buffer ends the walk with no answer. */
static int has_trace_key(struct tp_json *j)
{
	const char *k;
	int tok;

	if (tp_json_next(j) != TP_JSON_OBJECT)
		return 0;
	while ((tok = tp_json_next(j)) == TP_JSON_KEY) {
		k = tp_json_text(j, NULL);
		if (!strcmp(k, "traceEvents") || !strcmp(k, "schemaVersion"))
			return 1;
		if (tp_json_skip(j, tp_json_next(j)))
			return 0;
	}
	return 0;
}

int tp_sniff_trace(const char *path)
{
	char err[256], *buf = malloc(SNIFF_BYTES);
	struct tp_gzr *gz = buf ? tp_gzr_open(path, err, sizeof(err)) : NULL;
	struct tp_json *j = NULL;
	size_t len = 0;
	ssize_t n = 1;
	int yes = 0;

	if (!gz)
		goto out;
	while (len < SNIFF_BYTES && n > 0) {
		n = tp_gzr_read(gz, buf + len, SNIFF_BYTES - len);
		len += n > 0 ? (size_t)n : 0;
	}
	j = len ? tp_json_open_mem(buf, len) : NULL;
	if (j)
		yes = has_trace_key(j);
out:
	tp_json_close(j);
	tp_gzr_close(gz);
	free(buf);
	return yes;
}
