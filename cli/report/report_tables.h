/* tprof report: the tables and the straggler list, as plain text. */
#ifndef TP_CLI_REPORT_TABLES_H
#define TP_CLI_REPORT_TABLES_H

#include "report_data.h"

struct rp_table {
	const char *title;
	const char *note;	/* a paragraph before the table, or NULL */
	const char *empty;	/* said instead of a table without rows */
	const char *sel_note;	/* which ranks it lists, or NULL: all */
	const char *const *head;
	const char *align;	/* 'l' or 'r' per column */
	size_t ncols, nrows, fill, cap;
	char **cells;		/* row by row */
	unsigned char *flag;	/* per row: a straggler */
	char note_buf[384];
	char title_buf[64];
	int oom;
};

enum {
	RP_T_OVERVIEW, RP_T_DIST, RP_T_RANKS, RP_T_NAMES, RP_T_DETAIL,
	RP_T_STEPS, RP_T_GPU, RP_T_BREAKDOWN, RP_T_LAUNCH, RP_T_RANGES,
	RP_T_GAPS, RP_T_HEALTH, RP_N_TABLES
};

/* Per-rank tables list every rank up to RP_ALL_RANKS; beyond, the
 * RP_SLOWEST slowest and the RP_FASTEST fastest by own step (step less
 * waiting in collectives), slowest first, and the distribution table
 * gives every rank's figures in percentiles. */
#define RP_ALL_RANKS 32
#define RP_SLOWEST 10
#define RP_FASTEST 5

struct rp_tables {
	char intro[192];
	struct rp_table t[RP_N_TABLES];
	char **lines;		/* stragglers, why */
	size_t nlines;
	size_t sel[RP_ALL_RANKS];	/* the entries per-rank tables list */
	size_t nsel;
	int many;		/* more ranks than listed */
	char sel_note[256];	/* says which when many */
	int oom;
};

/* report_overview.c: which ranks the per-rank tables list (ts->sel),
 * the per-rank overview and, with many ranks, the distribution. */
void rp_select_ranks(const struct rp_report *rep, struct rp_tables *ts);
void rp_overview_tables(const struct rp_report *rep, struct rp_tables *ts);

int rp_tables_build(const struct rp_report *rep, struct rp_tables *ts);

/* report_cells.c: a table's frame, then cells row by row, each row
 * ended. */
void rp_table_init(struct rp_table *t, const char *title,
		   const char *const *head, const char *align);
void rp_add_cell(struct rp_table *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void rp_end_row(struct rp_table *t, int flagged);

/* report_gpu_tables.c: the GPU analyses' tables, of the ranks in
 * ts->sel. */
void rp_gpu_tables(const struct rp_report *rep, struct rp_tables *ts);
void rp_tables_free(struct rp_tables *ts);
/* report_health.c: clocks, power, temperature and clock events per rank
 * beside its step. */
void rp_health_table(const struct rp_report *rep, struct rp_tables *ts);

static inline const char *rp_cell(const struct rp_table *t, size_t row,
				  size_t col)
{
	return t->cells[row * t->ncols + col];
}

#endif
