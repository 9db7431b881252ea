/* JSON escaping and number formatting. */
#include <stdio.h>
#include <stdlib.h>

#include "trace/json.h"
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
	b.len = 0;
	for (i = 0; i < 100000; i++)
		tp_buf_lit(&b, "0123456789");
	TP_CHECK_INT("json: buffer grows without loss", b.len, 1000000);
	tp_buf_free(&b);
	return TP_TEST_DONE();
}
