/* summary/: the summary aggregator: per-name statistics, histograms, steps,
 * groups, memory, and its JSON/markdown output; on trace/ and stacks/. */
/* Reading a few members of an event's args object from its JSON text.
 *
 * The text is either tprof's own (just formatted by the writer) or a
 * value the CLI's strict parser already accepted, so this only has to
 * find the ends of values, not validate them; it never reads past len. */
#include <string.h>

#include "summary_int.h"

static const char *skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\n' || *p == '\t' ||
			   *p == '\r'))
		p++;
	return p;
}

/* Past the string whose opening quote is at p. */
static const char *skip_str(const char *p, const char *end)
{
	for (p++; p < end; p++) {
		if (*p == '\\')
			p++;
		else if (*p == '"')
			return p + 1;
	}
	return end;
}

/* Past the value starting at p. */
static const char *skip_value(const char *p, const char *end)
{
	int depth = 0;

	if (p < end && *p == '"')
		return skip_str(p, end);
	for (; p < end; p++) {
		if (*p == '"') {
			p = skip_str(p, end) - 1;
		} else if (*p == '[' || *p == '{') {
			depth++;
		} else if (*p == ']' || *p == '}') {
			if (!depth)
				return p;
			if (!--depth)
				return p + 1;
		} else if (*p == ',' && !depth) {
			return p;
		}
	}
	return end;
}

static void match(const char *k, size_t kn, const char *v, size_t vn,
		  struct sum_arg *want, unsigned n_want)
{
	unsigned i;

	for (i = 0; i < n_want; i++)
		if (!want[i].v && strlen(want[i].key) == kn &&
		    !memcmp(want[i].key, k, kn)) {
			want[i].v = v;
			want[i].n = vn;
			return;
		}
}

void tp_sum_args(const char *args, size_t len, struct sum_arg *want,
		 unsigned n_want)
{
	const char *p = args, *end, *k, *k_end, *v, *v_end;
	unsigned i;

	for (i = 0; i < n_want; i++)
		want[i].v = NULL;
	if (!args)
		return;
	end = args + len;	/* not before: NULL + 0 is undefined */
	p = skip_ws(p, end);
	if (p >= end || *p != '{')
		return;
	for (p++;; p++) {
		p = skip_ws(p, end);
		if (p >= end || *p != '"')
			return;
		k = p + 1;
		p = skip_str(p, end);
		k_end = p - 1;
		p = skip_ws(p, end);
		if (p >= end || *p != ':')
			return;
		v = skip_ws(p + 1, end);
		p = skip_value(v, end);
		v_end = p;
		/* Pretty-printed args: the blanks before '}' are not the
		 * value's. */
		while (v_end > v && (v_end[-1] == ' ' || v_end[-1] == '\n' ||
				     v_end[-1] == '\t' || v_end[-1] == '\r'))
			v_end--;
		/* Keys with escapes never match the plain keys asked for. */
		if (k_end >= k)
			match(k, (size_t)(k_end - k), v, (size_t)(v_end - v),
			      want, n_want);
		p = skip_ws(p, end);
		if (p >= end || *p != ',')
			return;
	}
}

int tp_sum_arg_i64(const struct sum_arg *a, int64_t *out)
{
	const char *p = a->v, *end;
	int neg = 0;
	uint64_t v = 0;

	if (!p)		/* not asked before: NULL + 0 is undefined */
		return -1;
	end = p + a->n;
	if (p >= end)
		return -1;
	if (*p == '-') {
		neg = 1;
		p++;
	}
	if (p >= end || *p < '0' || *p > '9')
		return -1;
	for (; p < end && *p >= '0' && *p <= '9'; p++) {
		if (v > (UINT64_MAX - 9) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	/* 3.000 from a writer that prints integers as floats is 3. */
	if (p < end && *p == '.')
		for (p++; p < end && *p == '0'; p++)
			;
	if (p != end || v > (uint64_t)INT64_MAX)
		return -1;
	*out = neg ? -(int64_t)v : (int64_t)v;
	return 0;
}

int tp_sum_arg_u128(const struct sum_arg *a, unsigned __int128 *out)
{
	const char *p = a->v, *end;
	unsigned __int128 v = 0;

	if (!p)
		return -1;
	end = p + a->n;
	if (p >= end || *p < '0' || *p > '9')
		return -1;
	for (; p < end && *p >= '0' && *p <= '9'; p++)
		v = v * 10 + (unsigned)(*p - '0');
	if (p != end)
		return -1;
	*out = v;
	return 0;
}

const char *tp_sum_arg_str(const struct sum_arg *a, char *buf, size_t len)
{
	const char *p = a->v, *end;
	size_t o = 0;

	if (!p || a->n < 2 || !len)
		return NULL;
	end = p + a->n;
	if (*p != '"' || end[-1] != '"')
		return NULL;
	for (p++, end--; p < end && o + 1 < len; p++) {
		if (*p == '\\' && p + 1 < end)
			p++;	/* \" \\ \/ as themselves; others rare here */
		buf[o++] = *p;
	}
	buf[o] = '\0';
	return buf;
}
