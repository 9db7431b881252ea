/* The Perfetto reader's debug annotations (pftrace_int.h) as JSON args,
 * every type of DebugAnnotation (debug_annotation.proto): bool, uint,
 * int, double, string (inline or interned), pointer (a "0x..." string, as
 * tprof's JSON writes pointers), legacy_json_value (copied when it is
 * valid JSON, else a string; a string of 20 or more digits is tprof's
 * integer past 64 bits, read as the number), dict_entries and array_values (nested to
 * PFR_DEPTH_MAX), the deprecated NestedValue, and proto values (their
 * type name as a string: the bytes need a descriptor). An annotation
 * with no value is null. Names are inline or interned. Calls json.h (to
 * validate legacy JSON) and encode/json.h. */
#include <stdio.h>
#include <string.h>

#include "json.h"
#include "pftrace_int.h"

static int value(struct tp_pfr *r, struct pfr_seq *s, struct pbr c,
		 struct tp_buf *b, int depth);

static int bad(struct tp_pfr *r, const uint8_t *at, const char *why)
{
	return pfr_fail(r, at, "debug annotation: %s", why);
}

/* Whether text is one JSON value (checked on a copy: the parser decodes
 * strings in place). */
static int valid_json(struct tp_pfr *r, const uint8_t *p, size_t n)
{
	struct tp_json *j;
	int tok, ok = 0;

	r->jcopy.len = 0;
	pfr_put(&r->jcopy, (const char *)p, n);
	if (r->jcopy.oom || !n)
		return 0;
	j = tp_json_open_mem(r->jcopy.p, n);
	if (!j)
		return 0;
	tok = tp_json_next(j);
	if (tok > 0 && tok != TP_JSON_ARRAY_END && tok != TP_JSON_OBJECT_END &&
	    tok != TP_JSON_KEY && !tp_json_skip(j, tok) &&
	    tp_json_next(j) == TP_JSON_EOF)
		ok = 1;
	tp_json_close(j);
	return ok;
}

/* NestedValue: nested_type 1 (1 dict, 2 array), dict_keys 2,
 * dict_values 3, array_values 4, int 5, double 6, bool 7, string 8. */
static int nested(struct tp_pfr *r, struct pbr c, struct tp_buf *b,
		  int depth)
{
	struct pbr w = c, keys = c;
	struct pbr_field f, k;
	const char *why;
	uint64_t type = 0;
	int rc, n = 0, have = 0;
	double d;

	if (depth > PFR_DEPTH_MAX)
		return bad(r, c.p, "nested deeper than the reader's bound");
	while ((rc = pbr_next(&w, &f, &why)) > 0)
		if (f.num == 1 && f.wt == PBR_VARINT)
			type = f.v;
	if (rc < 0)
		return bad(r, w.p, why);
	if (type == 1 || type == 2) {
		tp_buf_char(b, type == 1 ? '{' : '[');
		w = c;
		while (pbr_next(&w, &f, &why) > 0) {
			if (f.wt != PBR_LEN ||
			    f.num != (type == 1 ? 3u : 4u))
				continue;
			if (n++)
				tp_buf_char(b, ',');
			if (type == 1) {
				/* The n-th key goes with the n-th value. */
				int i = 0;
				const uint8_t *ks = (const uint8_t *)"";
				size_t kl = 0;

				keys = c;
				while (pbr_next(&keys, &k, &why) > 0)
					if (k.num == 2 && k.wt == PBR_LEN &&
					    ++i == n) {
						ks = k.sub.p;
						kl = (size_t)(k.sub.end -
							      k.sub.p);
						break;
					}
				tp_json_strn(b, (const char *)ks, kl);
				tp_buf_char(b, ':');
			}
			if (nested(r, f.sub, b, depth + 1))
				return -1;
		}
		tp_buf_char(b, type == 1 ? '}' : ']');
		return 0;
	}
	w = c;
	while (pbr_next(&w, &f, &why) > 0) {
		if (f.num == 5 && f.wt == PBR_VARINT) {
			tp_json_i64(b, (int64_t)f.v);
		} else if (f.num == 6 && f.wt == PBR_I64) {
			memcpy(&d, &f.v, sizeof(d));
			tp_json_double(b, d);
		} else if (f.num == 7 && f.wt == PBR_VARINT) {
			tp_buf_cstr(b, f.v ? "true" : "false");
		} else if (f.num == 8 && f.wt == PBR_LEN) {
			tp_json_strn(b, (const char *)f.sub.p,
				     (size_t)(f.sub.end - f.sub.p));
		} else {
			continue;
		}
		have = 1;
		break;
	}
	if (!have)
		tp_buf_lit(b, "null");
	return 0;
}

/* The children of a dict (dict_entries, 11) or array (array_values, 12)
 * annotation. */
static int children(struct tp_pfr *r, struct pfr_seq *s, struct pbr c,
		    struct tp_buf *b, int dict, int depth)
{
	struct pbr_field f;
	const char *why;
	int n = 0;

	tp_buf_char(b, dict ? '{' : '[');
	while (pbr_next(&c, &f, &why) > 0) {
		if (f.wt != PBR_LEN || f.num != (dict ? 11u : 12u))
			continue;
		if (n++)
			tp_buf_char(b, ',');
		if (dict && pfr_arg_name(r, s, f.sub, b))
			return -1;
		if (value(r, s, f.sub, b, depth + 1))
			return -1;
	}
	tp_buf_char(b, dict ? '}' : ']');
	return 0;
}

int pfr_arg_name(struct tp_pfr *r, struct pfr_seq *s, struct pbr c,
		 struct tp_buf *b)
{
	struct pbr_field f;
	const char *why, *str = "";
	size_t len = 0;
	int rc;

	while ((rc = pbr_next(&c, &f, &why)) > 0) {
		if (f.num == 10 && f.wt == PBR_LEN) {
			str = (const char *)f.sub.p;
			len = (size_t)(f.sub.end - f.sub.p);
		} else if (f.num == 1 && f.wt == PBR_VARINT) {
			pfr_intern_get(r, s, PI_ANAME, f.v, &str, &len);
		}
	}
	if (rc < 0)
		return bad(r, c.p, why);
	tp_json_strn(b, str, len);
	tp_buf_char(b, ':');
	return 0;
}

/* Whether legacy JSON text is a string of an integer's digits past 64
 * bits ("-"?, 20 or more digits, no leading zero): how tprof writes
 * such an integer (perfetto_args.c), read back as the number. */
static int big_int(const uint8_t *p, size_t n)
{
	size_t i = 1;

	if (n < 22 || p[0] != '"' || p[n - 1] != '"')
		return 0;
	i += p[i] == '-';
	if (n - 1 - i < 20 || p[i] == '0')
		return 0;
	for (; i < n - 1; i++)
		if (p[i] < '0' || p[i] > '9')
			return 0;
	return 1;
}

/* One DebugAnnotation's value (its fields past the name). */
static int value(struct tp_pfr *r, struct pfr_seq *s, struct pbr c,
		 struct tp_buf *b, int depth)
{
	struct pbr w = c;
	struct pbr_field f;
	const char *why, *str;
	size_t len;
	int rc, dict = 0, arr = 0;
	double d;
	char hex[24];

	if (depth > PFR_DEPTH_MAX)
		return bad(r, c.p, "nested deeper than the reader's bound");
	while ((rc = pbr_next(&w, &f, &why)) > 0) {
		switch (f.num) {
		case 2:
			tp_buf_cstr(b, f.v ? "true" : "false");
			return 0;
		case 3:
			tp_json_u64(b, f.v);
			return 0;
		case 4:
			tp_json_i64(b, (int64_t)f.v);
			return 0;
		case 5:
			memcpy(&d, &f.v, sizeof(d));
			tp_json_double(b, d);
			return 0;
		case 7:
			snprintf(hex, sizeof(hex), "\"0x%llx\"",
				 (unsigned long long)f.v);
			tp_buf_cstr(b, hex);
			return 0;
		case 6:
		case 9:
		case 16:
			if (f.wt != PBR_LEN)
				continue;
			len = (size_t)(f.sub.end - f.sub.p);
			if (f.num == 9 && big_int(f.sub.p, len))
				pfr_put(b, (const char *)f.sub.p + 1, len - 2);
			else if (f.num == 9 && valid_json(r, f.sub.p, len))
				pfr_put(b, (const char *)f.sub.p, len);
			else
				tp_json_strn(b, (const char *)f.sub.p, len);
			return 0;
		case 17:
		case 13:
			pfr_intern_get(r, s, f.num == 17 ? PI_STR : PI_ANAME,
				       f.v, &str, &len);
			if (f.num == 13)	/* no table kept: the iid */
				tp_buf_lit(b, "\"proto\"");
			else
				tp_json_strn(b, str, len);
			return 0;
		case 8:
			if (f.wt == PBR_LEN)
				return nested(r, f.sub, b, depth + 1);
			continue;
		case 11:
			dict = 1;
			break;
		case 12:
			arr = 1;
			break;
		}
	}
	if (rc < 0)
		return bad(r, w.p, why);
	if (dict || arr)
		return children(r, s, c, b, dict, depth);
	tp_buf_lit(b, "null");
	return 0;
}

int pfr_args(struct tp_pfr *r, struct pfr_seq *s, struct pbr c,
	     struct tp_buf *b)
{
	struct pbr_field f;
	const char *why;
	int rc, n = 0;

	while ((rc = pbr_next(&c, &f, &why)) > 0) {
		if (f.num != 4 || f.wt != PBR_LEN)
			continue;
		if (n++)
			tp_buf_char(b, ',');
		if (pfr_arg_name(r, s, f.sub, b) ||
		    value(r, s, f.sub, b, 0))
			return -1;
	}
	if (rc < 0)
		return pfr_fail(r, c.p, "TrackEvent: %s", why);
	return b->oom ? pfr_fail(r, NULL, "out of memory") : 0;
}

/* A space after every ':' outside strings, as tprof's JSON trailer has
 * them: HTA finds a trace's rank with the regex "rank":\s+(\d+), which a
 * typed trailer rendered compactly would not match. 1, or -1 when out
 * of memory. */
static int colon_spaces(struct tp_pfr *r, struct tp_buf *b)
{
	struct tp_buf o = { 0 };
	int in_str = 0, esc = 0;
	size_t i;

	for (i = 0; i < b->len; i++) {
		char c = b->p[i];

		tp_buf_char(&o, c);
		if (esc)
			esc = 0;
		else if (in_str && c == '\\')
			esc = 1;
		else if (c == '"')
			in_str = !in_str;
		else if (!in_str && c == ':')
			tp_buf_char(&o, ' ');
	}
	if (o.oom) {
		tp_buf_free(&o);
		return pfr_fail(r, NULL, "out of memory");
	}
	tp_buf_free(b);
	*b = o;
	return 1;
}

/* The "trailer" annotation of a "tprof metadata" event, as JSON object
 * members (without the braces) in out: typed (dict entries, as the
 * library writes it) or legacy JSON text, rendered by value(). 1 when
 * found and an object, else 0 (-1: the annotation is malformed). */
int pfr_trailer_of(struct tp_pfr *r, struct pfr_seq *s, struct pbr c,
		   struct tp_buf *out)
{
	struct pbr_field f, g;
	const char *why, *name;
	size_t nl;

	while (pbr_next(&c, &f, &why) > 0) {
		struct pbr a;
		int named = 0;

		if (f.num != 4 || f.wt != PBR_LEN)
			continue;
		a = f.sub;
		while (pbr_next(&a, &g, &why) > 0) {
			if (g.num == 10 && g.wt == PBR_LEN &&
			    g.sub.end - g.sub.p == 7 &&
			    !memcmp(g.sub.p, "trailer", 7))
				named = 1;
			else if (g.num == 1 && g.wt == PBR_VARINT &&
				 !pfr_intern_get(r, s, PI_ANAME, g.v, &name,
						 &nl) &&
				 nl == 7 && !memcmp(name, "trailer", 7))
				named = 1;
		}
		if (!named)
			continue;
		out->len = 0;
		if (value(r, s, f.sub, out, 0) < 0)
			return -1;
		if (out->oom)
			return pfr_fail(r, NULL, "out of memory");
		/* A JSON object: its members, without the braces. */
		if (out->len < 3 || out->p[0] != '{' ||
		    out->p[out->len - 1] != '}')
			return 0;
		memmove(out->p, out->p + 1, out->len - 2);
		out->len -= 2;
		return colon_spaces(r, out);
	}
	return 0;
}
