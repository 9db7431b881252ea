/* trace/: the recording core: records, per-thread rings, threads, clock and
 * timeline, configuration, JSON and gzip, file naming; calls no other
 * folder. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "json.h"

void tp_buf_free(struct tp_buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

int tp_buf_grow(struct tp_buf *b, size_t need)
{
	size_t cap = b->cap ? b->cap : 4096;
	char *p;

	while (cap < b->len + need)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p) {
		b->oom = 1;
		return -1;
	}
	b->p = p;
	b->cap = cap;
	return 0;
}

void tp_buf_cstr(struct tp_buf *b, const char *s)
{
	tp_buf_put(b, s, strlen(s));
}

/* Length of a valid UTF-8 sequence at s (at most n bytes), or 0. Rejects
 * overlong forms, surrogates and code points above U+10FFFF. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	size_t len, i;
	unsigned cp;

	if (c >= 0xc2 && c <= 0xdf)
		len = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4, cp = c & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return len;
}

static void put_escape(struct tp_buf *b, unsigned char c)
{
	static const char hex[] = "0123456789abcdef";
	char e[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };

	switch (c) {
	case '"':  tp_buf_lit(b, "\\\""); return;
	case '\\': tp_buf_lit(b, "\\\\"); return;
	case '\n': tp_buf_lit(b, "\\n"); return;
	case '\r': tp_buf_lit(b, "\\r"); return;
	case '\t': tp_buf_lit(b, "\\t"); return;
	}
	tp_buf_put(b, e, sizeof(e));
}

/* Quotes, backslashes and control characters are escaped; bytes that are
 * not valid UTF-8 become U+FFFD so the file always parses. */
void tp_json_escape(struct tp_buf *b, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, run = 0;

	while (i < n) {
		unsigned char c = u[i];
		size_t l;

		if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
			i++;
			continue;
		}
		tp_buf_put(b, s + run, i - run);
		if (c < 0x80) {
			put_escape(b, c);
			run = ++i;
			continue;
		}
		l = utf8_len(u + i, n - i);
		if (l) {
			tp_buf_put(b, s + i, l);
			i += l;
		} else {
			tp_buf_lit(b, "\xef\xbf\xbd");
			i++;
		}
		run = i;
	}
	tp_buf_put(b, s + run, i - run);
}

void tp_json_strn(struct tp_buf *b, const char *s, size_t n)
{
	tp_buf_char(b, '"');
	tp_json_escape(b, s, n);
	tp_buf_char(b, '"');
}

void tp_json_str(struct tp_buf *b, const char *s)
{
	tp_json_strn(b, s, strlen(s));
}

static const char digit_pairs[] =
	"00010203040506070809101112131415161718192021222324252627282930313233"
	"34353637383940414243444546474849505152535455565758596061626364656667"
	"6869707172737475767778798081828384858687888990919293949596979899";

/* Two digits per division: the writer prints several numbers per event. */
void tp_json_u64(struct tp_buf *b, uint64_t v)
{
	char tmp[20];
	int n = sizeof(tmp);

	while (v >= 100) {
		unsigned d = (unsigned)(v % 100) * 2;

		v /= 100;
		tmp[--n] = digit_pairs[d + 1];
		tmp[--n] = digit_pairs[d];
	}
	if (v >= 10) {
		tmp[--n] = digit_pairs[v * 2 + 1];
		tmp[--n] = digit_pairs[v * 2];
	} else {
		tmp[--n] = (char)('0' + v);
	}
	tp_buf_put(b, tmp + n, sizeof(tmp) - (size_t)n);
}

void tp_json_i64(struct tp_buf *b, int64_t v)
{
	if (v < 0) {
		tp_buf_char(b, '-');
		tp_json_u64(b, (uint64_t)0 - (uint64_t)v);
		return;
	}
	tp_json_u64(b, (uint64_t)v);
}

void tp_json_hex(struct tp_buf *b, uint64_t v)
{
	static const char hex[] = "0123456789abcdef";
	char tmp[20];
	int n = 0;

	do {
		tmp[sizeof(tmp) - 1 - n++] = hex[v & 15];
		v >>= 4;
	} while (v);
	tmp[sizeof(tmp) - 1 - n++] = 'x';
	tmp[sizeof(tmp) - 1 - n++] = '0';
	tp_buf_char(b, '"');
	tp_buf_put(b, tmp + sizeof(tmp) - n, (size_t)n);
	tp_buf_char(b, '"');
}

/* Nanoseconds as microseconds with exactly three decimals. */
void tp_json_us(struct tp_buf *b, int64_t ns)
{
	uint64_t u;
	char frac[4];

	if (ns < 0) {
		tp_buf_char(b, '-');
		u = (uint64_t)0 - (uint64_t)ns;
	} else {
		u = (uint64_t)ns;
	}
	tp_json_u64(b, u / 1000);
	frac[0] = '.';
	frac[1] = (char)('0' + u / 100 % 10);
	frac[2] = (char)('0' + u / 10 % 10);
	frac[3] = (char)('0' + u % 10);
	tp_buf_put(b, frac, 4);
}

void tp_json_double(struct tp_buf *b, double v)
{
	char s[32];
	int n;

	if (!isfinite(v)) {
		tp_buf_lit(b, "null");
		return;
	}
	n = snprintf(s, sizeof(s), "%.17g", v);
	if (n > 0)
		tp_buf_put(b, s, (size_t)n);
}
