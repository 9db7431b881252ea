/* JSON escaping and number formatting. */
#include <stdio.h>
#include <stdlib.h>

#include "encode/json.h"
#include "tp_test.h"

static char out[4096];

static const char *esc(const char *s, size_t n)
{
	struct tp_buf b = { 0 };

	tp_json_strn(&b, s, n);
	memcpy(out, b.p, b.len);
	out[b.len] = '\0';
	tp_buf_free(&b);
	return out;
}

static const char *us(int64_t ns)
{
	struct tp_buf b = { 0 };

	tp_json_us(&b, ns);
	memcpy(out, b.p, b.len);
	out[b.len] = '\0';
	tp_buf_free(&b);
	return out;
}

#define ESC(s) esc(s, sizeof(s) - 1)

/* The in-place number writers against printf at every digit-count
 * boundary (9..10, 99..100, ... and the hex nibble boundaries): the
 * first mismatch, or "" when all agree. */
static const char *numbers_vs_printf(void)
{
	struct tp_buf b = { 0 };
	char want[64];
	uint64_t p10 = 1, v;
	int i, d, k;

	for (i = 0; i < 20; i++, p10 *= 10)
		for (d = -2; d <= 2; d++) {
			v = p10 + (uint64_t)(int64_t)d;
			if (i == 19 && d > 0)
				v = UINT64_MAX - (uint64_t)(2 - d);
			b.len = 0;
			tp_json_u64(&b, v);
			tp_buf_char(&b, ' ');
			tp_json_hex(&b, v);
			tp_buf_char(&b, ' ');
			tp_json_us(&b, (int64_t)(v >> 1));
			tp_buf_char(&b, '\0');
			k = snprintf(want, sizeof(want), "%llu \"0x%llx\" %llu.%03llu",
				     (unsigned long long)v, (unsigned long long)v,
				     (unsigned long long)(v >> 1) / 1000,
				     (unsigned long long)(v >> 1) % 1000);
			if (k < 0 || b.oom || strcmp(b.p, want)) {
				snprintf(out, sizeof(out), "%s (want %s)", b.p,
					 want);
				tp_buf_free(&b);
				return out;
			}
		}
	for (i = 0; i < 64; i++) {
		b.len = 0;
		tp_json_hex(&b, (uint64_t)1 << i);
		tp_buf_char(&b, '\0');
		snprintf(want, sizeof(want), "\"0x%llx\"",
			 (unsigned long long)1 << i);
		if (strcmp(b.p, want)) {
			snprintf(out, sizeof(out), "%s (want %s)", b.p, want);
			tp_buf_free(&b);
			return out;
		}
	}
	tp_buf_free(&b);
	return "";
}

/* One value's decimal, hex and microseconds (signed) against printf:
 * the first mismatch, or NULL. */
static const char *one_vs_printf(struct tp_buf *b, uint64_t v, int64_t ns)
{
	uint64_t m = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
	char want[96];
	int k;

	/* Kept across calls: consecutive values share their high part
	 * now and then (the caller repeats some). */
	static struct tp_json_us_hi hi;

	b->len = 0;
	tp_json_u64(b, v);
	tp_buf_char(b, ' ');
	tp_json_hex(b, v);
	tp_buf_char(b, ' ');
	tp_json_us(b, ns);
	tp_buf_char(b, ' ');
	if (!tp_buf_reserve(b, 25))
		b->len = (size_t)(tp_json_us_at_hi(b->p + b->len, ns, &hi) -
				  b->p);
	tp_buf_char(b, '\0');
	k = snprintf(want, sizeof(want),
		     "%llu \"0x%llx\" %s%llu.%03llu %s%llu.%03llu",
		     (unsigned long long)v, (unsigned long long)v,
		     ns < 0 ? "-" : "", (unsigned long long)(m / 1000),
		     (unsigned long long)(m % 1000),
		     ns < 0 ? "-" : "", (unsigned long long)(m / 1000),
		     (unsigned long long)(m % 1000));
	if (k >= 0 && !b->oom && !strcmp(b->p, want))
		return NULL;
	snprintf(out, sizeof(out), "%s (want %s)", b->p, want);
	return out;
}

/* Random values of every length (1 to 64 significant bits), both signs
 * for the microseconds: the number writers cut values into blocks of
 * digits, whose every split point this crosses many times. The first
 * mismatch, or "". */
static const char *random_vs_printf(void)
{
	struct tp_buf b = { 0 };
	uint64_t x = 0x243f6a8885a308d3ull, v;
	const char *bad = NULL;
	int i;

	for (i = 0; i < 200000 && !bad; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		v = x >> (i % 64);
		bad = one_vs_printf(&b, v, (i & 1) ? (int64_t)(v >> 1) :
				    -(int64_t)(v >> 1));
		/* A trace's times: the same 100 ms, then the next. */
		if (!bad)
			bad = one_vs_printf(&b, v, (int64_t)(91560751817255ull +
					    (uint64_t)i * 977));
	}
	if (!bad)
		bad = one_vs_printf(&b, UINT64_MAX, INT64_MIN);
	if (!bad)
		bad = one_vs_printf(&b, 0, INT64_MAX);
	tp_buf_free(&b);
	return bad ? bad : "";
}

/* What one byte becomes inside a JSON string when plain ASCII comes
 * after it (JSON's escapes; a lone byte >= 0x80 is not UTF-8: U+FFFD). */
static size_t want_byte(unsigned c, char *w)
{
	switch (c) {
	case '"':
		return (size_t)sprintf(w, "\\\"");
	case '\\':
		return (size_t)sprintf(w, "\\\\");
	case '\n':
		return (size_t)sprintf(w, "\\n");
	case '\r':
		return (size_t)sprintf(w, "\\r");
	case '\t':
		return (size_t)sprintf(w, "\\t");
	}
	if (c < 0x20)
		return (size_t)sprintf(w, "\\u%04x", c);
	if (c >= 0x80)
		return (size_t)sprintf(w, "\xef\xbf\xbd");
	w[0] = (char)c;
	return 1;
}

/* Every byte value, and whole UTF-8 sequences (kept) and a surrogate
 * (replaced byte by byte), at every offset of strings of 0 to 40 plain
 * bytes before and after it, each in a buffer of exactly its size: the
 * escaper reads 16 bytes at a time where it can. The first mismatch, or
 * "" when all agree. */
static const char *escapes_at_every_offset(void)
{
	static const char *const seq[][2] = {
		{ "\xc3\xa9", "\xc3\xa9" },
		{ "\xe2\x82\xac", "\xe2\x82\xac" },
		{ "\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80" },
		{ "\xed\xa0\x80",
		  "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" },
	};
	/* Every byte that needs no escape. */
	static const char plain[] = " !#$%&'()*+,-./0123456789:;<=>?@"
		"ABCDEFGHIJKLMNOPQRSTUVWXYZ[]^_`abcdefghijklmnopqrstuvwxyz"
		"{|}~\x7f";
	struct tp_buf b = { 0 };
	char want[256], tok[8], wtok[32];
	size_t tl, wl, n, k;
	unsigned c;
	int pre, post;

	for (c = 0; c < 256 + 4; c++) {
		if (c < 256) {
			tok[0] = (char)c;
			tl = 1;
			wl = want_byte(c, wtok);
		} else {
			tl = strlen(seq[c - 256][0]);
			memcpy(tok, seq[c - 256][0], tl);
			wl = strlen(seq[c - 256][1]);
			memcpy(wtok, seq[c - 256][1], wl);
		}
		for (pre = 0; pre <= 40; pre++)
			for (post = 0; post <= 40; post++) {
				char *in = malloc((size_t)(pre + post) + tl);

				n = 0;
				want[n++] = '"';
				for (k = 0; k < (size_t)pre; k++)
					in[k] = want[n++] =
						plain[k % (sizeof(plain) - 1)];
				memcpy(in + pre, tok, tl);
				memcpy(want + n, wtok, wl);
				n += wl;
				for (k = 0; k < (size_t)post; k++)
					in[(size_t)pre + tl + k] = want[n++] =
						(char)('a' + k % 26);
				want[n++] = '"';
				b.len = 0;
				tp_json_strn(&b, in, (size_t)(pre + post) + tl);
				free(in);
				if (b.oom || b.len != n || memcmp(b.p, want, n)) {
					snprintf(out, sizeof(out),
						 "byte/seq %u at %d of %d", c,
						 pre, pre + post + (int)tl);
					tp_buf_free(&b);
					return out;
				}
			}
	}
	tp_buf_free(&b);
	return "";
}

int main(void)
{
	struct tp_buf b = { 0 };
	int i;

	TP_CHECK_STR("json: plain string", ESC("cudaMalloc"), "\"cudaMalloc\"");
	TP_CHECK_STR("json: quote and backslash", ESC("a\"b\\c"),
		     "\"a\\\"b\\\\c\"");
	TP_CHECK_STR("json: newline, tab, CR", ESC("a\nb\tc\rd"),
		     "\"a\\nb\\tc\\rd\"");
	TP_CHECK_STR("json: other control characters as \\u00XX",
		     ESC("\x01\x1f\x7f"), "\"\\u0001\\u001f\x7f\"");
	TP_CHECK_STR("json: NUL inside a string", ESC("a\0b"),
		     "\"a\\u0000b\"");
	TP_CHECK_STR("json: valid UTF-8 kept", ESC("caf\xc3\xa9 \xe2\x82\xac "
						  "\xf0\x9f\x98\x80"),
		     "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
	TP_CHECK_STR("json: stray continuation byte replaced", ESC("a\x80z"),
		     "\"a\xef\xbf\xbdz\"");
	TP_CHECK_STR("json: overlong encoding replaced", ESC("\xc0\xaf"),
		     "\"\xef\xbf\xbd\xef\xbf\xbd\"");
	TP_CHECK_STR("json: UTF-8 surrogate replaced", ESC("\xed\xa0\x80"),
		     "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");
	TP_CHECK_STR("json: truncated sequence at end replaced", ESC("x\xe2\x82"),
		     "\"x\xef\xbf\xbd\xef\xbf\xbd\"");
	TP_CHECK_STR("json: above U+10FFFF replaced", ESC("\xf4\x90\x80\x80"),
		     "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");
	TP_CHECK_STR("json: every byte and sequence at every offset",
		     escapes_at_every_offset(), "");
	TP_CHECK_STR("json: ns as us with three decimals", us(1234567),
		     "1234.567");
	TP_CHECK_STR("json: zero", us(0), "0.000");
	TP_CHECK_STR("json: sub-microsecond", us(5), "0.005");
	TP_CHECK_STR("json: exact microseconds keep decimals", us(2000),
		     "2.000");
	TP_CHECK_STR("json: negative", us(-1500), "-1.500");
	TP_CHECK_STR("json: large (a day in ns)", us(86400000000000ll),
		     "86400000000.000");

	tp_json_u64(&b, UINT64_MAX);
	tp_buf_char(&b, ' ');
	tp_json_i64(&b, INT64_MIN);
	tp_buf_char(&b, ' ');
	tp_json_hex(&b, 0x7f00dead);
	tp_buf_char(&b, ' ');
	tp_json_hex(&b, 0);
	tp_buf_char(&b, '\0');
	TP_CHECK_STR("json: integer and pointer formats", b.p,
		     "18446744073709551615 -9223372036854775808 "
		     "\"0x7f00dead\" \"0x0\"");
	TP_CHECK_STR("json: u64, hex and us at every digit-count boundary",
		     numbers_vs_printf(), "");
	TP_CHECK_STR("json: u64, hex and signed us of random values of "
		     "every length", random_vs_printf(), "");
	b.len = 0;
	for (i = 0; i < 100000; i++)
		tp_buf_lit(&b, "0123456789");
	TP_CHECK_INT("json: buffer grows without loss", b.len, 1000000);
	tp_buf_free(&b);
	return TP_TEST_DONE();
}
