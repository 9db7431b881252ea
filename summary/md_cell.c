/* summary/: the summary aggregator: per-name statistics, histograms, steps,
 * groups, memory, and its JSON/markdown output; on util/ .. session/ and
 * stacks/. */
/* Text in a markdown table cell (summary.h), for every markdown writer
 * of the summary (summary_md.c, host_out.c). */
#include "summary.h"

void tp_md_char(struct tp_buf *b, char c)
{
	if (c == '|' || c == '<')
		tp_buf_char(b, '\\');
	tp_buf_char(b, (unsigned char)c < 0x20 ? ' ' : c);
}

void tp_md_cell(struct tp_buf *b, const char *s, size_t max)
{
	size_t i;

	for (i = 0; s[i]; i++) {
		if (max && i == max) {
			tp_buf_lit(b, "...");
			return;
		}
		tp_md_char(b, s[i]);
	}
}
