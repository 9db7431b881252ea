/* JSON escaping and number formatting. */
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
	b.len = 0;
	for (i = 0; i < 100000; i++)
		tp_buf_lit(&b, "0123456789");
	TP_CHECK_INT("json: buffer grows without loss", b.len, 1000000);
	tp_buf_free(&b);
	return TP_TEST_DONE();
}
