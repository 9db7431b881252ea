/* encode/: the typed event model (tev.h) and the JSON encoder; on
 * util/ and gzip/. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

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

/* Bytes that need no escape inside a string. */
static const unsigned char plain[256] = {
	[0x20 ... 0x21] = 1,
	[0x23 ... 0x5b] = 1,
	[0x5d ... 0x7f] = 1,
};

/* Bytes at s (n of them) that need no escape: printable ASCII but the
 * quote and the backslash. With SSE2 (every x86-64), 16 at a time: a
 * signed compare with 0x20 catches control and non-ASCII bytes alike;
 * the last 16 of a longer string are read once more, overlapping, so
 * only strings under 16 bytes go byte by byte. Kernel names, call
 * stacks and converted traces' strings are long and plain. */
static inline size_t plain_len(const unsigned char *s, size_t n)
{
	size_t i = 0;
#ifdef __SSE2__
	const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\');
	const __m128i low = _mm_set1_epi8(0x20);
	__m128i v, stop;
	unsigned m;

	if (n >= 16) {
		for (;; i += 16) {
			if (i > n - 16) {
				/* The tail: bytes before i were plain. */
				i = n - 16;
			}
			v = _mm_loadu_si128((const __m128i *)(const void *)
					    (s + i));
			stop = _mm_or_si128(_mm_or_si128(
					_mm_cmpeq_epi8(v, quote),
					_mm_cmpeq_epi8(v, bslash)),
					_mm_cmplt_epi8(v, low));
			m = (unsigned)_mm_movemask_epi8(stop);
			if (m)
				return i + (unsigned)__builtin_ctz(m);
			if (i + 16 >= n)
				return n;
		}
	}
#endif
	while (i < n && plain[s[i]])
		i++;
	return i;
}

/* Quotes, backslashes and control characters are escaped; bytes that are
 * not valid UTF-8 become U+FFFD so the file always parses. */
void tp_json_escape(struct tp_buf *b, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, l;

	for (;;) {
		l = plain_len(u + i, n - i);
		tp_buf_put(b, s + i, l);
		i += l;
		if (i >= n)
			return;
		if (u[i] < 0x80) {
			put_escape(b, u[i]);
			i++;
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
	}
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

const char tp_json_digit_pairs[200] =
	"00010203040506070809101112131415161718192021222324252627282930313233"
	"34353637383940414243444546474849505152535455565758596061626364656667"
	"6869707172737475767778798081828384858687888990919293949596979899";

/* v < 10^8 in one to eight digits; returns the end. */
static inline char *put8(char *p, unsigned v)
{
	if (v < 10000)
		return tp_json_put4(p, v);
	p = tp_json_put4(p, v / 10000);
	tp_json_put4z(p, v % 10000);
	return p + 4;
}

/* v in decimal at p, which has room for 20 bytes; returns the end.
 * Numbers are cut into blocks of four digits by divisions by constants
 * (a multiply each) and each block written as two digit pairs: the
 * writer's numbers (grids, sizes, timestamps' microseconds) have 3 to 12
 * digits, which a loop of divisions by 100 paid for digit pair by digit
 * pair. */
char *tp_json_u64_at_any(char *p, uint64_t v)
{
	uint64_t hi;
	unsigned lo;

	if (v < 100000000)
		return put8(p, (unsigned)v);
	hi = v / 100000000;
	lo = (unsigned)(v % 100000000);
	if (hi < 100000000) {
		p = put8(p, (unsigned)hi);
	} else {
		/* Over 16 digits: the top one to four, then eight. */
		p = tp_json_put4(p, (unsigned)(hi / 100000000));
		hi %= 100000000;
		tp_json_put4z(p, (unsigned)hi / 10000);
		tp_json_put4z(p + 4, (unsigned)hi % 10000);
		p += 8;
	}
	tp_json_put4z(p, lo / 10000);
	tp_json_put4z(p + 4, lo % 10000);
	return p + 8;
}

/* Two digits per division, written in place: the writer prints several
 * numbers per event. */
void tp_json_u64(struct tp_buf *b, uint64_t v)
{
	if (tp_buf_reserve(b, 20))
		return;
	b->len = (size_t)(tp_json_u64_at(b->p + b->len, v) - b->p);
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

/* The 16 hex digits of v at p, most significant first. With SSE2 (every
 * x86-64) all at once: the bytes (most significant first) split into
 * their high and low nibbles, interleaved, and each nibble turned into
 * its digit by adding '0', and 'a' - '0' - 10 more where it is over 9. */
static inline void hex16_at(char *p, uint64_t v)
{
#ifdef __SSE2__
	const __m128i m = _mm_set1_epi8(0x0f);
	__m128i x = _mm_cvtsi64_si128((long long)__builtin_bswap64(v));
	__m128i nib = _mm_unpacklo_epi8(
		_mm_and_si128(_mm_srli_epi16(x, 4), m), _mm_and_si128(x, m));
	__m128i over = _mm_cmpgt_epi8(nib, _mm_set1_epi8(9));

	nib = _mm_add_epi8(nib, _mm_set1_epi8('0'));
	nib = _mm_add_epi8(nib, _mm_and_si128(over,
					      _mm_set1_epi8('a' - '0' - 10)));
	_mm_storeu_si128((__m128i *)(void *)p, nib);
#else
	static const char hex[] = "0123456789abcdef";
	int i;

	for (i = 15; i >= 0; i--, v >>= 4)
		p[i] = hex[v & 15];
#endif
}

/* "0x..." written in place: the digits counted from the bit length, v
 * shifted so that its first digit leads, all 16 written and the quote
 * put after the n that count (a pointer has 12). */
void tp_json_hex(struct tp_buf *b, uint64_t v)
{
	int n = (64 - __builtin_clzll(v | 1) + 3) >> 2;
	char *p;

	if (tp_buf_reserve(b, 3 + 16 + 1))
		return;
	p = b->p + b->len;
	b->len += (size_t)n + 4;
	p[0] = '"';
	p[1] = '0';
	p[2] = 'x';
	hex16_at(p + 3, v << (4 * (16 - n)));
	p[3 + n] = '"';
}

/* The last eight digits of nanoseconds lo < 10^8 after the microseconds
 * above them: "ddddd.ddd", the point after the fifth digit. */
static inline char *us_low8_at(char *p, unsigned lo)
{
	unsigned r = lo % 10000;

	tp_json_put4z(p, lo / 10000);
	p[4] = (char)('0' + r / 1000);
	p[5] = '.';
	r %= 1000;
	p[6] = (char)('0' + r / 100);
	tp_json_put2(p + 7, r % 100);
	return p + 9;
}

/* Nanoseconds as microseconds with exactly three decimals, at p (room
 * for 25 bytes); returns the end. Under 100 s (the durations, most
 * converted traces' times) the integer part has at most eight digits;
 * above, the last eight digits of the nanoseconds ("ddddd.ddd") are
 * written as one fixed block after the microseconds above them. */
char *tp_json_us_at(char *p, int64_t ns)
{
	uint64_t u = (uint64_t)ns;
	unsigned r;

	if (ns < 0) {
		*p++ = '-';
		u = (uint64_t)0 - u;
	}
	if (u < 100000000000ull) {
		p = tp_json_u64_at(p, u / 1000);
		r = (unsigned)(u % 1000);
		p[0] = '.';
		p[1] = (char)('0' + r / 100);
		tp_json_put2(p + 2, r % 100);
		return p + 4;
	}
	p = tp_json_u64_at_any(p, u / 100000000);
	return us_low8_at(p, (unsigned)(u % 100000000));
}

char *tp_json_us_at_hi(char *p, int64_t ns, struct tp_json_us_hi *c)
{
	uint64_t hi;

	if (ns < 100000000000ll)
		return tp_json_us_at(p, ns);
	hi = (uint64_t)ns / 100000000;
	if (hi != c->hi || !c->len) {
		c->len = (uint8_t)(tp_json_u64_at_any(c->text, hi) - c->text);
		c->hi = hi;
	}
	memcpy(p, c->text, sizeof(c->text));
	return us_low8_at(p + c->len, (unsigned)((uint64_t)ns % 100000000));
}

void tp_json_us(struct tp_buf *b, int64_t ns)
{
	if (tp_buf_reserve(b, 25))
		return;
	b->len = (size_t)(tp_json_us_at(b->p + b->len, ns) - b->p);
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
