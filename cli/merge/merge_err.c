/* tprof merge: the one error line of a failed merge. The bottom of
 * merge: every other merge*.c file reports through it, and it calls
 * nothing of theirs (only the parser's and the reader's error text). */
#include "merge_int.h"

#include <stdarg.h>
#include <stdio.h>

int mg_fail(struct mg *m, const char *file, const char *fmt, ...)
{
	va_list ap;

	if (m->failed)
		return -1;
	m->failed = 1;
	fprintf(stderr, "tprof: error: %s: ", file);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -1;
}

int mg_parse_fail(struct mg *m, const char *file, struct tp_json *j,
		  struct tp_gzr *gz)
{
	const struct tp_json_err *e = tp_json_error(j);
	const char *gzerr = tp_gzr_error(gz);

	if (e->io && gzerr)
		return mg_fail(m, file, "%s", gzerr);
	return mg_fail(m, file, "invalid JSON at line %lu, column %lu: %s",
		       e->line, e->col, e->msg);
}
