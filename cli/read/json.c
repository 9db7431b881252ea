/* Strict streaming JSON parser; see json.h. */
#include "json.h"
#include "json_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/utf8.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif


/* Bytes copied verbatim inside a string: not '"', '\\', control or
 * non-ASCII. */
static const unsigned char plain[256] = {
	[0x20 ... 0x21] = 1,
	[0x23 ... 0x5b] = 1,
	[0x5d ... 0x7f] = 1,
};

/* The end of the run of plain bytes at s, before e: with SSE2, 16 bytes
 * at a time (a signed compare with 0x20 catches control and non-ASCII
 * bytes alike). */
static inline const unsigned char *plain_run(const unsigned char *s,
					     const unsigned char *e)
{
#ifdef __SSE2__
	const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\');
	const __m128i low = _mm_set1_epi8(0x20);
	__m128i v, stop;
	unsigned m;

	for (; e - s >= 16; s += 16) {
		v = _mm_loadu_si128((const __m128i *)(const void *)s);
		stop = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote),
						 _mm_cmpeq_epi8(v, bslash)),
				    _mm_cmplt_epi8(v, low));
		m = (unsigned)_mm_movemask_epi8(stop);
		if (m)
			return s + __builtin_ctz(m);
	}
#endif
	while (s < e && plain[*s])
		s++;
	return s;
}

static uint64_t offset_of(const struct tp_json *j, const unsigned char *q)
{
	return j->base_off + (uint64_t)(q - j->base);
}

int tp_json_fail_at(struct tp_json *j, const unsigned char *at,
		     const char *fmt, ...)
{
	va_list ap;

	if (j->state == ST_ERROR)
		return TP_JSON_ERROR;
	j->state = ST_ERROR;
	j->err.line = j->line;
	j->err.col = (unsigned long)(offset_of(j, at) - j->line_off) + 1;
	if (j->ioerr) {
		j->err.io = 1;
		snprintf(j->err.msg, sizeof(j->err.msg), "read error");
		return TP_JSON_ERROR;
	}
	va_start(ap, fmt);
	vsnprintf(j->err.msg, sizeof(j->err.msg), fmt, ap);
	va_end(ap);
	return TP_JSON_ERROR;
}

/* Saves the bytes consumed since the last flush into the capture. */
static void cap_flush(struct tp_json *j)
{
	const unsigned char *from = j->cap_from;
	size_t n = (size_t)(j->p - from);
	char *c;

	j->cap_from = j->p;
	if (j->capover || !n)
		return;
	c = j->caplen + n <= j->capmax ? realloc(j->cap, j->caplen + n + 1) :
					 NULL;
	if (!c) {
		j->capover = 1;
		return;
	}
	memcpy(c + j->caplen, from, n);
	j->cap = c;
	j->caplen += n;
}

/* Makes at least need unread bytes available unless the input ends first;
 * returns how many are available. Slides the window rather than growing
 * it, so memory stays at one buffer. */
static size_t refill(struct tp_json *j, size_t need)
{
	size_t have = (size_t)(j->end - j->p);
	ssize_t n;

	if (have >= need || j->eof || !j->buf)
		return have;
	if (j->capturing)
		cap_flush(j);
	j->base_off = offset_of(j, j->p);
	memmove(j->buf, j->p, have);
	j->base = j->p = j->buf;
	j->end = j->buf + have;
	while (have < need && !j->eof) {
		n = j->read(j->ctx, j->buf + have, TP_JSON_BUFSZ - have);
		if (n <= 0) {
			j->eof = 1;
			j->ioerr = n < 0;
			break;
		}
		have += (size_t)n;
		j->end = j->buf + have;
	}
	if (j->capturing)
		j->cap_from = j->p;
	return have;
}

static int tok_grow(struct tp_json *j, size_t n)
{
	size_t cap = j->tokcap ? j->tokcap : 256;
	char *t;

	while (cap < j->toklen + n + 1)
		cap *= 2;
	t = realloc(j->tok, cap);
	if (!t)
		return fail(j, "out of memory");
	j->tok = t;
	j->tokcap = cap;
	return 0;
}

static inline int tok_add(struct tp_json *j, const void *s, size_t n)
{
	if (j->toklen + n + 1 > j->tokcap && tok_grow(j, n))
		return -1;
	memcpy(j->tok + j->toklen, s, n);
	j->toklen += n;
	return 0;
}

static inline int tok_putc(struct tp_json *j, int c)
{
	unsigned char b = (unsigned char)c;

	return tok_add(j, &b, 1);
}

/* Next non-whitespace byte (not consumed), or -1 at the end. Runs of
 * whitespace go through the buffer without a refill check a byte:
 * pretty-printed traces (torch.profiler's, indent 2 or 4) are half
 * spaces, mostly a newline and 6 to 10 of them between two tokens, so
 * with SSE2 (every x86-64) 16 bytes are classified at once; elsewhere
 * 8 spaces at a time. */
#ifdef __SSE2__
/* Bytes of the whitespace run at p (16 when all 16 are whitespace); the
 * lines it ends are counted into j. */
static inline unsigned ws_run16(struct tp_json *j, const unsigned char *p)
{
	const __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
	__m128i nl = _mm_cmpeq_epi8(v, _mm_set1_epi8('\n'));
	__m128i ws = _mm_or_si128(
		_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(' ')), nl),
		_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\t')),
			     _mm_cmpeq_epi8(v, _mm_set1_epi8('\r'))));
	unsigned stop = ~(unsigned)_mm_movemask_epi8(ws) & 0xffff;
	unsigned n = stop ? (unsigned)__builtin_ctz(stop) : 16;
	unsigned lines = (unsigned)_mm_movemask_epi8(nl) & ((1u << n) - 1);

	if (lines) {
		/* the line starts after the last newline of the run */
		j->line_off = offset_of(j, p + 32 - __builtin_clz(lines));
		/* mostly one: no popcount instruction in the baseline ISA */
		for (; lines; lines &= lines - 1)
			j->line++;
	}
	return n;
}
#endif

static int skip_ws_run(struct tp_json *j)
{
	static const uint64_t spaces = 0x2020202020202020ull;
	const unsigned char *p, *e;
	uint64_t w;

	for (;;) {
		if (j->p == j->end && !refill(j, 1))
			return -1;
		p = j->p;
		e = j->end;
		while (p < e) {
#ifdef __SSE2__
			if (e - p >= 16) {
				unsigned n = ws_run16(j, p);

				p += n;
				if (n < 16)
					break;
				continue;
			}
#endif
			if (e - p >= 8) {
				memcpy(&w, p, 8);
				if (w == spaces) {
					p += 8;
					continue;
				}
			}
			if (*p == ' ' || *p == '\t' || *p == '\r') {
				p++;
				continue;
			}
			if (*p != '\n')
				break;
			p++;
			j->line++;
			j->line_off = offset_of(j, p);
		}
		j->p = p;
		if (p < e) {
			j->tok_line = j->line;
			return *p;
		}
	}
}

/* skip_ws_run, inlined for the tokens that follow none or one space (a
 * value after ':', the ',' after a value): most of a trace's tokens. */
static inline int skip_ws(struct tp_json *j)
{
	const unsigned char *p = j->p;

	if (j->end - p >= 2) {
		p += *p == ' ';
		if (*p > ' ') {
			j->p = p;
			j->tok_line = j->line;
			return *p;
		}
	}
	return skip_ws_run(j);
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Four hex digits at q, or -1. */
static long hex4(const unsigned char *q)
{
	long v = 0;
	int i, h;

	for (i = 0; i < 4; i++) {
		h = hexval(q[i]);
		if (h < 0)
			return -1;
		v = v << 4 | h;
	}
	return v;
}

static int put_utf8(struct tp_json *j, unsigned long cp)
{
	unsigned char b[4];

	return tok_add(j, b, tp_utf8_encode((uint32_t)cp, b));
}

static int unicode_escape(struct tp_json *j)
{
	long hi, lo;

	if (refill(j, 6) < 6 || (hi = hex4(j->p + 2)) < 0)
		return fail(j, "invalid \\u escape (needs 4 hex digits)");
	if (hi >= 0xdc00 && hi <= 0xdfff)
		return fail(j, "unpaired low surrogate \\u%04lX", hi);
	if (hi < 0xd800 || hi > 0xdbff) {
		j->p += 6;
		return put_utf8(j, (unsigned long)hi);
	}
	if (refill(j, 12) < 12 || j->p[6] != '\\' || j->p[7] != 'u' ||
	    (lo = hex4(j->p + 8)) < 0xdc00 || lo > 0xdfff)
		return fail(j, "unpaired high surrogate \\u%04lX", hi);
	j->p += 12;
	return put_utf8(j, 0x10000 + ((unsigned long)(hi - 0xd800) << 10) +
			       (unsigned long)(lo - 0xdc00));
}

static int escape(struct tp_json *j)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	const char *e;

	if (refill(j, 2) < 2)
		return fail(j, "unterminated string");
	if (j->p[1] == 'u')
		return unicode_escape(j);
	e = j->p[1] ? strchr(from, j->p[1]) : NULL;
	if (!e)
		return tp_json_fail_at(j, j->p + 1, "invalid escape '\\%c'",
			       j->p[1] >= 0x20 && j->p[1] < 0x7f ?
			       j->p[1] : '?');
	j->p += 2;
	return tok_putc(j, to[e - from]);
}

/* Validates one multi-byte UTF-8 sequence at p (RFC 3629 table 3-7). */
static int utf8_seq(struct tp_json *j)
{
	const unsigned char *q;
	unsigned char c = *j->p, lo = 0x80, hi = 0xbf;
	size_t n, avail, i;

	if (c < 0xc2 || c > 0xf4) {
		if (c >= 0x80 && c < 0xc0)
			return fail(j, "invalid UTF-8: stray continuation "
				    "byte 0x%02x", c);
		if (c == 0xc0 || c == 0xc1)
			return fail(j, "invalid UTF-8: overlong encoding");
		return fail(j, "invalid UTF-8 byte 0x%02x", c);
	}
	n = c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	avail = refill(j, n);
	q = j->p;
	if (avail < 2 || q[1] < 0x80 || q[1] > 0xbf)
		return fail(j, "invalid UTF-8: truncated sequence");
	if (q[1] < lo)
		return fail(j, "invalid UTF-8: overlong encoding");
	if (q[1] > hi)
		return fail(j, c == 0xed ? "invalid UTF-8: encoded surrogate" :
			    "invalid UTF-8: code point above U+10FFFF");
	for (i = 2; i < n; i++)
		if (i >= avail || q[i] < 0x80 || q[i] > 0xbf)
			return fail(j, "invalid UTF-8: truncated sequence");
	j->p += n;
	return tok_add(j, q, n);
}

/* Decodes a string starting at the opening quote into tok. */
static int parse_string(struct tp_json *j)
{
	const unsigned char *s, *e;
	int r;

	j->p++;
	j->toklen = 0;
	for (;;) {
		e = j->end;
		s = plain_run(j->p, e);
		if (s > j->p && tok_add(j, j->p, (size_t)(s - j->p)))
			return -1;
		j->p = s;
		if (s == e) {
			if (!refill(j, 1))
				return fail(j, "unterminated string");
			continue;
		}
		if (*s == '"')
			break;
		if (*s == '\\')
			r = escape(j);
		else if (*s < 0x20)
			r = fail(j, "unescaped control character 0x%02x in "
				 "string", *s);
		else
			r = utf8_seq(j);
		if (r)
			return -1;
	}
	j->p++;
	if (!j->tok && tok_grow(j, 0))
		return -1;
	j->tok[j->toklen] = 0;
	return 0;
}

static inline int peekc(struct tp_json *j)
{
	if (j->p == j->end && !refill(j, 1))
		return -1;
	return *j->p;
}

/* A run of digits into tok, a buffer's worth at a time. */
static int digits(struct tp_json *j)
{
	const unsigned char *s;

	while (peekc(j) >= '0' && *j->p <= '9') {
		for (s = j->p; s < j->end && *s >= '0' && *s <= '9'; s++)
			;
		if (tok_add(j, j->p, (size_t)(s - j->p)))
			return -1;
		j->p = s;
	}
	return 0;
}

static double literal_to_double(const char *s)
{
	static const double pow10[] = {
		1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
		1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21,
		1e22,
	};
	const char *q = s + (*s == '-');
	uint64_t m = 0;
	int sig = 0, exp10 = 0;
	double d;

	/* Exact when the digits fit in 53 bits and the power of ten is
	 * exact: one correctly rounded multiply or divide (Clinger). */
	for (; *q >= '0' && *q <= '9'; q++, sig += m != 0)
		m = m * 10 + (uint64_t)(*q - '0');
	if (*q == '.')
		for (q++; *q >= '0' && *q <= '9'; q++, exp10--, sig += m != 0)
			m = m * 10 + (uint64_t)(*q - '0');
	if (*q || sig > 15 || exp10 < -22)
		return strtod(s, NULL);
	d = exp10 ? (double)m / pow10[-exp10] : (double)m;
	return *s == '-' ? -d : d;
}

static int parse_number(struct tp_json *j)
{
	int c = peekc(j);

	j->toklen = 0;
	if (c == '-') {
		if (tok_putc(j, c))
			return -1;
		j->p++;
		c = peekc(j);
	}
	if (c == '0') {
		if (tok_putc(j, c))
			return -1;
		j->p++;
		c = peekc(j);
		if (c >= '0' && c <= '9')
			return fail(j, "leading zeros are not allowed");
	} else if (c >= '1' && c <= '9') {
		if (digits(j))
			return -1;
	} else {
		return fail(j, c == 'I' ? "Infinity is not valid JSON" :
			    "expected a digit");
	}
	if (peekc(j) == '.') {
		if (tok_putc(j, '.'))
			return -1;
		j->p++;
		c = peekc(j);
		if (c < '0' || c > '9')
			return fail(j, "expected a digit after '.'");
		if (digits(j))
			return -1;
	}
	c = peekc(j);
	if (c == 'e' || c == 'E') {
		if (tok_putc(j, c))
			return -1;
		j->p++;
		c = peekc(j);
		if (c == '+' || c == '-') {
			if (tok_putc(j, c))
				return -1;
			j->p++;
			c = peekc(j);
		}
		if (c < '0' || c > '9')
			return fail(j, "expected a digit in the exponent");
		if (digits(j))
			return -1;
	}
	if (tok_putc(j, 0))
		return -1;
	j->toklen--;
	j->num = literal_to_double(j->tok);
	return 0;
}

static int parse_literal(struct tp_json *j, const char *word, int tok)
{
	size_t n = strlen(word);

	if (refill(j, n) < n || memcmp(j->p, word, n))
		return fail(j, "invalid literal (expected '%s')", word);
	j->p += n;
	return tok;
}

static int push(struct tp_json *j, unsigned char c)
{
	unsigned char *s;

	if (j->depth >= TP_JSON_MAX_DEPTH)
		return fail(j, "nesting deeper than %d levels",
			    TP_JSON_MAX_DEPTH);
	if (j->depth == j->stack_cap) {
		s = realloc(j->stack, j->stack_cap * 2 + 64);
		if (!s)
			return fail(j, "out of memory");
		j->stack = s;
		j->stack_cap = j->stack_cap * 2 + 64;
	}
	j->stack[j->depth++] = c;
	j->p++;
	j->state = c == '[' ? ST_ARR_FIRST : ST_OBJ_FIRST;
	return 0;
}

static int value_done(struct tp_json *j, int tok)
{
	if (tok != TP_JSON_ERROR)
		j->state = j->depth ? ST_AFTER : ST_DONE;
	return tok;
}

static int value(struct tp_json *j, int c)
{
	switch (c) {
	case '{':
		return push(j, '{') ? TP_JSON_ERROR : TP_JSON_OBJECT;
	case '[':
		return push(j, '[') ? TP_JSON_ERROR : TP_JSON_ARRAY;
	case '"':
		return value_done(j, parse_string(j) ? TP_JSON_ERROR :
				  TP_JSON_STRING);
	case 't':
		return value_done(j, parse_literal(j, "true", TP_JSON_TRUE));
	case 'f':
		return value_done(j, parse_literal(j, "false", TP_JSON_FALSE));
	case 'n':
		return value_done(j, parse_literal(j, "null", TP_JSON_NULL));
	case 'N':
		return fail(j, "NaN is not valid JSON");
	case 'I':
		return fail(j, "Infinity is not valid JSON");
	case -1:
		return fail(j, "unexpected end of input");
	}
	if (c == '-' || (c >= '0' && c <= '9'))
		return value_done(j, parse_number(j) ? TP_JSON_ERROR :
				  TP_JSON_NUMBER);
	if (c == 0xef)
		return fail(j, "byte order mark is not allowed");
	if (c >= 0x20 && c < 0x7f)
		return fail(j, "unexpected character '%c'", c);
	return fail(j, "unexpected byte 0x%02x", c);
}

static int key(struct tp_json *j, int c)
{
	if (c != '"')
		return fail(j, c < 0 ? "unexpected end of input" :
			    "expected a string as object key");
	if (parse_string(j))
		return TP_JSON_ERROR;
	c = skip_ws(j);
	if (c != ':')
		return fail(j, "expected ':' after object key");
	j->p++;
	j->state = ST_VALUE;
	return TP_JSON_KEY;
}

static int close_container(struct tp_json *j, int c)
{
	unsigned char open = j->stack[j->depth - 1];

	if (c != (open == '[' ? ']' : '}'))
		return fail(j, c < 0 ? "unexpected end of input" :
			    open == '[' ? "expected ',' or ']'" :
			    "expected ',' or '}'");
	j->p++;
	j->depth--;
	return value_done(j, open == '[' ? TP_JSON_ARRAY_END :
			  TP_JSON_OBJECT_END);
}

int tp_json_next(struct tp_json *j)
{
	int c;

	switch (j->state) {
	case ST_VALUE:
		return value(j, skip_ws(j));
	case ST_ARR_FIRST:
		c = skip_ws(j);
		return c == ']' ? close_container(j, c) : value(j, c);
	case ST_ARR_NEXT:
		c = skip_ws(j);
		return c == ']' ? fail(j, "trailing comma before ']'") :
				  value(j, c);
	case ST_OBJ_FIRST:
		c = skip_ws(j);
		return c == '}' ? close_container(j, c) : key(j, c);
	case ST_OBJ_NEXT:
		c = skip_ws(j);
		return c == '}' ? fail(j, "trailing comma before '}'") :
				  key(j, c);
	case ST_AFTER:
		c = skip_ws(j);
		if (c != ',')
			return close_container(j, c);
		j->p++;
		j->state = j->stack[j->depth - 1] == '[' ? ST_ARR_NEXT :
							   ST_OBJ_NEXT;
		return tp_json_next(j);
	case ST_DONE:
		if (skip_ws(j) >= 0)
			return fail(j, "unexpected data after the JSON value");
		if (j->ioerr)
			return fail(j, "read error");
		j->state = ST_EOF;
		return TP_JSON_EOF;
	case ST_EOF:
		return TP_JSON_EOF;
	}
	return TP_JSON_ERROR;
}

static struct tp_json *json_new(void)
{
	struct tp_json *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	j->line = j->tok_line = 1;
	j->state = ST_VALUE;
	return j;
}

struct tp_json *tp_json_open(tp_json_read_fn read, void *ctx)
{
	struct tp_json *j = json_new();

	if (!j)
		return NULL;
	j->buf = malloc(TP_JSON_BUFSZ);
	if (!j->buf) {
		free(j);
		return NULL;
	}
	j->read = read;
	j->ctx = ctx;
	j->base = j->p = j->end = j->buf;
	return j;
}

struct tp_json *tp_json_open_mem(const void *buf, size_t len)
{
	struct tp_json *j = json_new();

	if (!j)
		return NULL;
	j->base = j->p = buf;
	j->end = j->p + len;
	j->eof = 1;
	return j;
}

void tp_json_close(struct tp_json *j)
{
	if (!j)
		return;
	free(j->buf);
	free(j->stack);
	free(j->tok);
	free(j->cap);
	free(j);
}

const char *tp_json_text(const struct tp_json *j, size_t *len)
{
	if (len)
		*len = j->toklen;
	return j->tok ? j->tok : "";
}

double tp_json_number(const struct tp_json *j)
{
	return j->num;
}

unsigned long tp_json_line(const struct tp_json *j)
{
	return j->tok_line;
}

const struct tp_json_err *tp_json_error(const struct tp_json *j)
{
	return &j->err;
}

int tp_json_skip(struct tp_json *j, int tok)
{
	size_t depth = j->depth;

	if (tok == TP_JSON_ERROR)
		return -1;
	if (tok != TP_JSON_ARRAY && tok != TP_JSON_OBJECT)
		return 0;
	while (j->depth >= depth)
		if (tp_json_next(j) == TP_JSON_ERROR)
			return -1;
	return 0;
}

void tp_json_capture_start(struct tp_json *j, size_t max)
{
	j->capturing = 1;
	j->capover = 0;
	j->caplen = 0;
	j->capmax = max;
	j->cap_from = j->p;
}

const char *tp_json_capture_end(struct tp_json *j, size_t *len)
{
	cap_flush(j);
	j->capturing = 0;
	if (j->capover)
		return NULL;
	if (!j->cap && !(j->cap = malloc(1)))
		return NULL;
	j->cap[j->caplen] = 0;
	if (len)
		*len = j->caplen;
	return j->cap;
}


/* DOM */
