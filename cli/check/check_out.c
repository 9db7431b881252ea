/* tprof check's output (check_int.h): problems (the first MAX_SHOWN
 * printed, all counted), --foreign's warnings, and the quoting and
 * number formats of the messages. A leaf of check: it calls only the
 * external sort (for a failure's reason).
 */
#include "check.h"
#include "check_int.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const warn_text[W_COUNT] = {
	[W_UNIT] = "no \"displayTimeUnit\" (viewers assume \"ms\")",
	[W_DINFO] = "no \"distributedInfo\" (HTA takes the rank as 0; "
		"fine for a single process)",
	[W_FLOW_NO_END] = "\"ac2g\" flows with no end (ph \"f\"): "
		"launches whose kernel is outside the profiling window, as "
		"Kineto writes them",
	[W_FLOW_NO_START] = "\"ac2g\" flows with no start (ph \"s\"): "
		"kernels whose launch is outside the profiling window",
	[W_GPU_OVERLAP] = "partial overlaps between GPU slices on one "
		"stream (CUPTI's timestamps of back-to-back work; Perfetto "
		"shows the later slice on an extra row)",
};

int ck_problem(struct ck *ck, const char *fmt, ...)
{
	va_list ap;

	if (++ck->problems > MAX_SHOWN)
		return -1;
	fprintf(ck->out, "%s: error: ", ck->path);
	va_start(ap, fmt);
	vfprintf(ck->out, fmt, ap);
	va_end(ap);
	fputc('\n', ck->out);
	return -1;
}

int ck_quirk(struct ck *ck, unsigned w)
{
	if (!(ck->flags & TP_CHECK_FOREIGN))
		return 0;
	ck->warnings[w]++;
	return 1;
}

void ck_print_warnings(struct ck *ck)
{
	unsigned w;

	for (w = 0; w < W_COUNT; w++)
		if (ck->warnings[w])
			fprintf(ck->out, "%s: warning: %lu %s\n", ck->path,
				ck->warnings[w], warn_text[w]);
}

int ck_ev_problem(struct ck *ck, const struct tp_json_node *ev,
		  const char *fmt, ...)
{
	va_list ap;

	if (++ck->problems > MAX_SHOWN)
		return -1;
	fprintf(ck->out, "%s: error: traceEvents[%lu] (line %lu): ", ck->path,
		ck->nevents, ev->line);
	va_start(ap, fmt);
	vfprintf(ck->out, fmt, ap);
	va_end(ap);
	fputc('\n', ck->out);
	return -1;
}

const char *ck_quote(char *buf, size_t size, const char *s, size_t len)
{
	size_t o = 0, i;
	unsigned char c;

	for (i = 0; i < len && o + 8 < size; i++) {
		c = (unsigned char)s[i];
		if (c < 0x20 || c == 0x7f)
			o += (size_t)snprintf(buf + o, size - o, "\\x%02x", c);
		else if (c == '"' || c == '\\')
			o += (size_t)snprintf(buf + o, size - o, "\\%c", c);
		else
			buf[o++] = (char)c;
	}
	if (i < len) {
		/* don't cut a UTF-8 sequence in half */
		while (o && ((unsigned char)buf[o - 1] & 0xc0) == 0x80)
			o--;
		if (o && (unsigned char)buf[o - 1] >= 0xc0)
			o--;
		memcpy(buf + o, "...", 4);
		return buf;
	}
	buf[o] = 0;
	return buf;
}

const char *ck_fmt_us(char *buf, size_t size, int64_t ns)
{
	uint64_t a = ns < 0 ? 0 - (uint64_t)ns : (uint64_t)ns;

	snprintf(buf, size, "%s%" PRIu64 ".%03" PRIu64, ns < 0 ? "-" : "",
		 a / 1000, a % 1000);
	return buf;
}

int ck_sort_fail(struct ck *ck, const struct tp_xsort *s)
{
	const char *e = s ? tp_xsort_error(s) : NULL;

	if (ck->sort_failed)
		return -1;
	ck->sort_failed = 1;
	return ck_problem(ck, "%s; nesting and flows not checked",
		       e ? e : "out of memory");
}
