/* summary/: the summary aggregator: per-name statistics, histograms, steps,
 * groups, memory, and its JSON/markdown output; on util/ .. session/ and
 * stacks/. */
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

	for (i = 0; i < n_want; i++) {
		want[i].v = NULL;
		want[i].t = NULL;
	}
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

/* Keys compared by length and first byte before memcmp: every hooked
 * call's args pass here, with a few keys asked for each (an empty key is
 * never asked for). */
#define WANT_MAX 16

static void typed_args(const struct tp_targ *a, uint32_t n,
		       struct sum_arg *want, unsigned n_want)
{
	size_t klen[WANT_MAX];
	uint32_t i = 0;
	unsigned k;

	if (n_want > WANT_MAX)
		n_want = WANT_MAX;
	for (k = 0; k < n_want; k++)
		klen[k] = strlen(want[k].key);
	for (; i < n; i += a[i].type == TP_TARG_ARRAY ||
		       a[i].type == TP_TARG_DICT ? tp_targ_span(a, n, i) : 1)
		for (k = 0; k < n_want; k++)
			if (!want[k].t && a[i].keylen == klen[k] &&
			    klen[k] && a[i].key[0] == want[k].key[0] &&
			    !memcmp(a[i].key, want[k].key, klen[k])) {
				want[k].t = &a[i];
				break;
			}
}

void tp_sum_span_args(const struct tp_sum_span *e, struct sum_arg *want,
		      unsigned n_want)
{
	tp_sum_args(e->targs ? NULL : e->args, e->args_len, want, n_want);
	if (e->targs)
		typed_args(e->targs, e->ntargs, want, n_want);
}

/* A typed value as a (text) JSON value: a writer's pre-encoded one. */
static const struct sum_arg *as_text(const struct sum_arg *a,
				     struct sum_arg *tmp)
{
	if (!a->t || a->t->type != TP_TARG_JSON)
		return a;
	tmp->key = a->key;
	tmp->v = a->t->v.str.s;
	tmp->n = a->t->v.str.len;
	tmp->t = NULL;
	return tmp;
}

static int typed_i64(const struct tp_targ *t, int64_t *out)
{
	switch (t->type) {
	case TP_TARG_INT:
		*out = t->v.i;
		return 0;
	case TP_TARG_UINT:
		if (t->v.u > (uint64_t)INT64_MAX)
			return -1;
		*out = (int64_t)t->v.u;
		return 0;
	case TP_TARG_U128:
		if (t->v.u128 > (uint64_t)INT64_MAX)
			return -1;
		*out = (int64_t)t->v.u128;
		return 0;
	default:
		return -1;
	}
}

int tp_sum_arg_i64(const struct sum_arg *a, int64_t *out)
{
	struct sum_arg tmp;
	const char *p, *end;
	int neg = 0;
	uint64_t v = 0;

	a = as_text(a, &tmp);
	if (a->t)
		return typed_i64(a->t, out);
	p = a->v;
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
	struct sum_arg tmp;
	const char *p, *end;
	unsigned __int128 v = 0;
	int64_t i;

	a = as_text(a, &tmp);
	if (a->t && a->t->type == TP_TARG_U128) {
		*out = a->t->v.u128;
		return 0;
	}
	if (a->t && a->t->type == TP_TARG_UINT) {
		*out = a->t->v.u;
		return 0;
	}
	if (a->t) {
		if (typed_i64(a->t, &i) < 0 || i < 0)
			return -1;
		*out = (unsigned __int128)i;
		return 0;
	}
	p = a->v;
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
	struct sum_arg tmp;
	const char *p, *end;
	size_t o = 0;

	a = as_text(a, &tmp);
	if (a->t) {
		if (a->t->type != TP_TARG_STRING || !len)
			return NULL;
		o = a->t->v.str.len < len - 1 ? a->t->v.str.len : len - 1;
		memcpy(buf, a->t->v.str.s, o);
		buf[o] = '\0';
		return buf;
	}
	p = a->v;
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
