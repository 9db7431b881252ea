/* tprof report: building a table of plain text cells, row by row. The
 * bottom of the tables: report_tables.c and report_gpu_tables.c fill
 * tables with it; it calls nothing of theirs. */
#define _GNU_SOURCE	/* vasprintf */
#include "report_tables.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Appends the next cell, row by row; out of memory: marks the table. */
void rp_add_cell(struct rp_table *t, const char *fmt, ...)
{
	size_t n = t->nrows * t->ncols + t->fill, cap;
	va_list ap;
	char **v;

	if (t->oom)
		return;
	if (n == t->cap) {
		cap = t->cap ? t->cap * 2 : 64;
		v = realloc(t->cells, cap * sizeof(*v));
		if (!v) {
			t->oom = 1;
			return;
		}
		t->cells = v;
		t->cap = cap;
	}
	va_start(ap, fmt);
	if (vasprintf(&t->cells[n], fmt, ap) < 0)
		t->oom = 1;
	va_end(ap);
	if (t->oom)
		return;
	if (++t->fill == t->ncols) {
		t->fill = 0;
		t->nrows++;
	}
}

/* Ends a row: remembers whether it is flagged. */
void rp_end_row(struct rp_table *t, int flagged)
{
	unsigned char *f;

	if (t->oom)
		return;
	f = realloc(t->flag, t->nrows ? t->nrows : 1);
	if (!f) {
		t->oom = 1;
		return;
	}
	t->flag = f;
	t->flag[t->nrows - 1] = (unsigned char)flagged;
}

void rp_table_init(struct rp_table *t, const char *title,
		   const char *const *head, const char *align)
{
	memset(t, 0, sizeof(*t));
	t->title = title;
	t->head = head;
	t->align = align;
	t->ncols = strlen(align);
}
