/* tprof diff: the two runs, and the rows that say what changed.
 *
 * Each run (a trace, a directory of per-rank traces, or summaries) is
 * read exactly as tprof report reads its inputs, and its figures are
 * report's: per rank, the step (its median step after start-up), the GPU
 * analyses (busy, compute, communication, exposed communication, idle),
 * and each (category, name)'s time and calls, all divided by the rank's
 * steps (per run for a rank without steps). A row holds, per run, the
 * distribution of one figure over the run's ranks (lower median and
 * max), so runs of different rank counts compare.
 */
#ifndef TP_CLI_DIFF_DATA_H
#define TP_CLI_DIFF_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "cli/report/report_data.h"

/* One run: its ranks, as tprof report has them. */
struct df_side {
	const char *arg;	/* the operand */
	struct rp_report rep;
	size_t nsummaries, ntraces;	/* inputs by kind */
	size_t with_steps;	/* ranks with steps */
	uint64_t steps_lo, steps_hi;	/* steps per rank, over those */
	size_t with_gpu;	/* ranks with the GPU analyses */
	size_t with_gpu_rows;	/* ranks with GPU rows (kernels, copies) */
	size_t with_mem;	/* ranks with device memory */
	unsigned char *gpu_rows;	/* per entry: has GPU rows */
};

/* The tables a row is listed in. */
enum df_group {
	DF_PART,	/* the step and its breakdown */
	DF_GPU,		/* GPU work per name: kernels, copies, sets */
	DF_OPS,		/* CPU-side calls: runtime, libraries, torch ops */
	DF_RANGES,	/* ranges: NVTX, tprof_range, record_function */
};

enum df_status {
	DF_SAME,	/* no change */
	DF_CHANGED,	/* time changed, calls did not */
	DF_CALLS,	/* calls per step changed */
	DF_NEW,		/* in B only */
	DF_GONE,	/* in A only */
	DF_NA,		/* a run cannot say: see the row's na */
};

/* The parts of the step, in the order the breakdown lists them. */
enum {
	DF_P_STEP, DF_P_BUSY, DF_P_COMPUTE, DF_P_COMM, DF_P_EXPOSED,
	DF_P_IDLE, DF_P_MEMORY, DF_NPARTS
};

/* One figure of one run over its ranks. */
struct df_dist {
	size_t of;		/* ranks it is taken over; 0: unavailable */
	size_t n;		/* of those, the ranks that have it */
	long double med, max;	/* time per step (bytes for memory) */
	long double cmed, cmax;	/* calls per step (names) */
};

struct df_row {
	enum df_group group;
	const char *cat, *name;	/* a part: cat NULL */
	int bytes;		/* memory: bytes, not ns, not per step */
	struct df_dist v[2];	/* A, B */
	long double delta;	/* B - A, medians */
	long double delta_max;	/* B - A, maxima */
	long double impact;	/* the larger of |delta| and |delta_max| */
	enum df_status status;
	char na[160];		/* DF_NA: what is missing, and why */
};

/* The tables after the breakdown: rows by impact, most first. */
enum { DF_T_CHANGES, DF_T_OPS, DF_T_RANGES, DF_NTABLES };

struct df_list {
	size_t *v;		/* row indices */
	size_t n;
	size_t unchanged;	/* rows of its kind left out: no change */
};

struct df_diff {
	struct df_side s[2];
	struct df_row *rows;	/* the DF_NPARTS parts first, then names */
	size_t nrows;
	struct df_list t[DF_NTABLES];
	size_t top;		/* rows the tables list (--top) */
	int per_run[2];		/* a run has a rank without steps */
};

/* diff_side.c: reads one run (errors printed); traces: its traces even
 * where it has summaries. 0 or -1. */
int df_side_read(struct df_side *s, const char *arg, int traces);
void df_side_free(struct df_side *s);

/* diff_rows.c: the rows and the tables' order; 0, or -1 out of memory. */
int df_rows_build(struct df_diff *d);
void df_rows_free(struct df_diff *d);

/* diff_words.c: what Markdown and HTML both say. */
const char *df_status_name(enum df_status st);	/* "new", ... (JSON) */
const char *df_status_words(const struct df_row *r);	/* for a reader */
/* "2 ranks (2 traces)". */
void df_side_words(struct tp_buf *b, const struct df_side *s);
/* How steps were found and how many each run has; whether they differ. */
void df_steps_words(struct tp_buf *b, const struct df_diff *d);
/* "17.000 ms -> 35.000 ms (+18.000 ms, 2.059x)" for the step, or why
 * it cannot be said. */
void df_headline(struct tp_buf *b, const struct df_diff *d);
/* A value of a row ("2.000 ms", "64.000 MiB", "-" when absent). */
const char *df_fmt_val(char *buf, size_t size, const struct df_row *r,
		       long double v, size_t have);
const char *df_fmt_delta(char *buf, size_t size, const struct df_row *r,
			 long double v);
/* B's median over A's ("2.000x"), "-" when A's is 0 or either is
 * unavailable. */
const char *df_fmt_ratio(char *buf, size_t size, const struct df_row *r);
/* Calls per step, two decimals ("1 -> 2"), or "" for a part. */
const char *df_fmt_calls(char *buf, size_t size, const struct df_row *r);
/* The kind of a row: "kernel", "GPU", "cuda_runtime", ... */
const char *df_kind(const struct df_row *r);
/* Whether both runs have one rank (the max columns then say nothing). */
int df_single(const struct df_diff *d);
/* The tables' titles and the paragraph before each. */
const char *df_table_title(int t);
const char *df_table_note(int t);

/* Outputs, appended to b. */
void df_write_md(const struct df_diff *d, struct tp_buf *b);
void df_write_json(const struct df_diff *d, struct tp_buf *b);
void df_write_html(const struct df_diff *d, struct tp_buf *b);

#endif
