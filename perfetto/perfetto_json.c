/* perfetto/: the Perfetto protobuf encoder of typed events: packets,
 * interning, tracks, annotations; on encode/ and below. */
/* JSON text as a typed DebugAnnotation (tev.h: tp_pf_json_annotation):
 * the run's metadata (the trailer's tprof object, distributedInfo,
 * deviceProperties) is built as JSON for the JSON trace; in a Perfetto
 * trace it becomes nested dict entries and array values of the right
 * types, which Perfetto shows as args, rather than one legacy JSON
 * string. Integers that fit 64 bits are int or uint, other numbers
 * double; null is an annotation without a value; empty containers,
 * integers past 64 bits and anything nested deeper than MAX_DEPTH stay
 * legacy JSON, as the args writer's do.
 * The text is tprof's own, so a syntax error is a bug: it fails, and the
 * caller keeps the text whole. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pb.h"
#include "perfetto_ids.h"
#include "encode/tev.h"

#define MAX_DEPTH 32

struct jp {
	const char *p, *e;
	struct tp_buf *b;
	struct tp_buf s;	/* an unescaped string */
	int err;
};

static void ws(struct jp *j)
{
	while (j->p < j->e && (*j->p == ' ' || *j->p == '\n' ||
			       *j->p == '\t' || *j->p == '\r'))
		j->p++;
}

static unsigned hex4(const char *p)
{
	unsigned v = 0;
	int i;

	for (i = 0; i < 4; i++) {
		char c = p[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if ((c | 32) >= 'a' && (c | 32) <= 'f')
			v |= (unsigned)((c | 32) - 'a' + 10);
		else
			return 0x110000;	/* not hex */
	}
	return v;
}

static void utf8(struct tp_buf *s, unsigned c)
{
	char u[4];
	size_t n;

	if (c < 0x80) {
		u[0] = (char)c;
		n = 1;
	} else if (c < 0x800) {
		u[0] = (char)(0xc0 | c >> 6);
		u[1] = (char)(0x80 | (c & 0x3f));
		n = 2;
	} else if (c < 0x10000) {
		u[0] = (char)(0xe0 | c >> 12);
		u[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		u[2] = (char)(0x80 | (c & 0x3f));
		n = 3;
	} else {
		u[0] = (char)(0xf0 | c >> 18);
		u[1] = (char)(0x80 | ((c >> 12) & 0x3f));
		u[2] = (char)(0x80 | ((c >> 6) & 0x3f));
		u[3] = (char)(0x80 | (c & 0x3f));
		n = 4;
	}
	tp_buf_put(s, u, n);
}

/* The string at j->p (its opening quote) unescaped into j->s. */
static int string(struct jp *j)
{
	static const char esc[] = "\"\"\\\\//b\bf\fn\nr\rt\t";
	const char *k;
	unsigned c, lo;

	j->s.len = 0;
	for (j->p++; j->p < j->e && *j->p != '"'; j->p++) {
		if (*j->p != '\\') {
			tp_buf_char(&j->s, *j->p);
			continue;
		}
		if (++j->p >= j->e)
			return -1;
		if (*j->p != 'u') {
			k = strchr(esc, *j->p);
			if (!*j->p || !k || (k - esc) % 2)
				return -1;
			tp_buf_char(&j->s, k[1]);
			continue;
		}
		if (j->e - j->p < 5 || (c = hex4(j->p + 1)) > 0xffff)
			return -1;
		j->p += 4;
		if (c >= 0xd800 && c < 0xdc00 && j->e - j->p >= 7 &&
		    j->p[1] == '\\' && j->p[2] == 'u' &&
		    (lo = hex4(j->p + 3)) >= 0xdc00 && lo < 0xe000) {
			c = 0x10000 + ((c - 0xd800) << 10) + (lo - 0xdc00);
			j->p += 6;
		}
		utf8(&j->s, c);
	}
	if (j->p >= j->e)
		return -1;
	j->p++;
	return j->s.oom ? -1 : 0;
}

static int number(struct jp *j)
{
	const char *s = j->p;
	int real = 0;
	char tmp[64], *end;
	uint64_t u;

	while (j->p < j->e && strchr("+-0123456789.eE", *j->p) && *j->p) {
		real |= *j->p == '.' || *j->p == 'e' || *j->p == 'E';
		j->p++;
	}
	if (j->p == s || (size_t)(j->p - s) >= sizeof(tmp) - 2)
		return -1;
	memcpy(tmp, s, (size_t)(j->p - s));
	tmp[j->p - s] = '\0';
	errno = 0;
	if (real) {
		tp_pb_double(j->b, PF_DA_DOUBLE, strtod(tmp, &end));
	} else if (tmp[0] == '-') {
		long long v = strtoll(tmp, &end, 10);

		if (errno)
			goto legacy;
		tp_pb_i64(j->b, PF_DA_INT, v);
	} else {
		u = strtoull(tmp, &end, 10);
		if (errno)
			goto legacy;
		if (u <= INT64_MAX)
			tp_pb_i64(j->b, PF_DA_INT, (int64_t)u);
		else
			tp_pb_u64(j->b, PF_DA_UINT, u);
	}
	return *end ? -1 : 0;
legacy:
	/* Past 64 bits: quoted, as perfetto_args.c writes them (read back
	 * as the number; Perfetto v58 misreads a bare one). */
	if (*end)
		return -1;
	tmp[0] = '"';
	memcpy(tmp + 1, s, (size_t)(j->p - s));
	tmp[j->p - s + 1] = '"';
	tp_pb_bytes(j->b, PF_DA_LEGACY_JSON, tmp, (size_t)(j->p - s) + 2);
	return 0;
}

static int value(struct jp *j, int depth);

/* An object's members or an array's elements, each a nested
 * annotation. */
static int members(struct jp *j, int dict, int depth)
{
	char close = dict ? '}' : ']';
	size_t m;

	j->p++;
	for (;;) {
		ws(j);
		if (j->p >= j->e)
			return -1;
		m = tp_pb_open(j->b, dict ? PF_DA_DICT_ENTRIES :
				     PF_DA_ARRAY_VALUES);
		if (dict) {
			if (*j->p != '"' || string(j) < 0)
				return -1;
			tp_pb_bytes(j->b, PF_DA_NAME, j->s.p, j->s.len);
			ws(j);
			if (j->p >= j->e || *j->p++ != ':')
				return -1;
			ws(j);
		}
		if (value(j, depth + 1) < 0)
			return -1;
		tp_pb_close(j->b, m);
		ws(j);
		if (j->p < j->e && *j->p == ',') {
			j->p++;
			continue;
		}
		if (j->p < j->e && *j->p == close) {
			j->p++;
			return 0;
		}
		return -1;
	}
}

/* The JSON value [s, j->p) kept as text: the cursor moved past it. */
static int skip(struct jp *j)
{
	const char *s = j->p;
	int depth = 0, in_str = 0;

	for (; j->p < j->e; j->p++) {
		char c = *j->p;

		if (in_str) {
			if (c == '\\')
				j->p++;
			else if (c == '"')
				in_str = 0;
			continue;
		}
		if (c == '"')
			in_str = 1;
		else if (c == '{' || c == '[')
			depth++;
		else if ((c == '}' || c == ']') && --depth == 0)
			break;
	}
	if (j->p >= j->e)
		return -1;
	j->p++;
	tp_pb_bytes(j->b, PF_DA_LEGACY_JSON, s, (size_t)(j->p - s));
	return 0;
}

static int empty(struct jp *j)
{
	const char *q = j->p + 1;

	while (q < j->e && (*q == ' ' || *q == '\n' || *q == '\t' ||
			    *q == '\r'))
		q++;
	return q < j->e && *q == (*j->p == '{' ? '}' : ']');
}

static int word(struct jp *j, const char *w, size_t n)
{
	if ((size_t)(j->e - j->p) < n || memcmp(j->p, w, n))
		return -1;
	j->p += n;
	return 0;
}

static int value(struct jp *j, int depth)
{
	ws(j);
	if (j->p >= j->e)
		return -1;
	switch (*j->p) {
	case '{':
	case '[':
		if (depth >= MAX_DEPTH || empty(j))
			return skip(j);
		return members(j, *j->p == '{', depth);
	case '"':
		if (string(j) < 0)
			return -1;
		tp_pb_bytes(j->b, PF_DA_STRING, j->s.p, j->s.len);
		return 0;
	case 't':
		tp_pb_u64(j->b, PF_DA_BOOL, 1);
		return word(j, "true", 4);
	case 'f':
		tp_pb_u64(j->b, PF_DA_BOOL, 0);
		return word(j, "false", 5);
	case 'n':
		/* No value (perfetto_args.c: Perfetto v58 aborts on a
		 * legacy JSON "null"). */
		return word(j, "null", 4);
	default:
		return number(j);
	}
}

int tp_pf_json_annotation(struct tp_buf *b, const char *json, size_t len)
{
	struct jp j = { .p = json, .e = json + len, .b = b };
	int rc = value(&j, 0);

	ws(&j);
	if (j.p != j.e)
		rc = -1;
	tp_buf_free(&j.s);
	return rc < 0 || b->oom ? -1 : 0;
}
