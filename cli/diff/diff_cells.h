/* tprof diff: one table row as cells of text, for the Markdown and the
 * HTML alike (diff_cells.c). */
#ifndef TP_CLI_DIFF_CELLS_H
#define TP_CLI_DIFF_CELLS_H

#include "diff_data.h"

#define DF_MAXCOLS 13

struct df_cells {
	size_t ncols;
	const char *head[DF_MAXCOLS];
	char align[DF_MAXCOLS];		/* 'l' or 'r' */
	const char *cell[DF_MAXCOLS];	/* the row's text */
	int sign[DF_MAXCOLS];		/* a change's: +1 more in B, -1 less,
					 * 0 none (as written: 1 ns) */
	int name_col;			/* the column holding a name */
	char buf[DF_MAXCOLS][64];
};

/* The heading of the breakdown table (breakdown 1) or of a table of
 * names; then each row's cells. place: 1, 2, ... its place in a table
 * of names. */
void df_cells_head(const struct df_diff *d, int breakdown,
		   struct df_cells *c);
void df_cells_row(const struct df_diff *d, const struct df_row *r,
		  size_t place, int breakdown, struct df_cells *c);

#endif
