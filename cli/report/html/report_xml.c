/* tprof report --html: text escaped for XML (and so for XHTML-style
 * HTML). The bottom of the HTML side: it calls only the buffer helpers
 * of encode/json.h, so both the page (report_html.c) and the chart
 * primitives (report_svg.c) can use it without calling each other. */
#include "report_xml.h"

/* Length of the valid UTF-8 sequence at s, or 0. */
static size_t utf8_len(const unsigned char *s)
{
	unsigned c = s[0], cp;
	size_t n, i;

	if (c >= 0xc2 && c <= 0xdf)
		n = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, cp = c & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff ||
	    cp == 0xfffe || cp == 0xffff)
		return 0;
	return n;
}

void rp_xml_text(struct tp_buf *b, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n;

	while (*s) {
		switch (*s) {
		case '&': tp_buf_lit(b, "&amp;"); s++; continue;
		case '<': tp_buf_lit(b, "&lt;"); s++; continue;
		case '>': tp_buf_lit(b, "&gt;"); s++; continue;
		case '"': tp_buf_lit(b, "&quot;"); s++; continue;
		case '\'': tp_buf_lit(b, "&apos;"); s++; continue;
		}
		if (*s < 0x80) {
			/* XML 1.0 has no other control characters */
			tp_buf_char(b, *s < 0x20 && *s != '\t' && *s != '\n' ?
				    ' ' : (char)*s);
			s++;
			continue;
		}
		n = utf8_len(s);
		if (n) {
			tp_buf_put(b, (const char *)s, n);
			s += n;
		} else {
			tp_buf_lit(b, "\xef\xbf\xbd");
			s++;
		}
	}
}
