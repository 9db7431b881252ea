/* summary/: the summary aggregator: per-name statistics, histograms, steps,
 * groups, memory, and its JSON/markdown output; on util/ .. session/ and
 * stacks/. */
/* The short table on stderr at exit (TPROF_SUMMARY): the top GPU
 * kernels, CPU-side calls and ranges, each line starting "tprof: ". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "summary_out.h"

#define NAME_COLS 52

/* A name cut to the column, control characters shown as spaces. */
static void fmt_name(char *out, const char *name)
{
	size_t i;

	for (i = 0; name[i] && i < NAME_COLS; i++)
		out[i] = (unsigned char)name[i] < 0x20 ? ' ' : name[i];
	if (name[i] && i == NAME_COLS)
		memcpy(out + NAME_COLS - 3, "...", 3);
	out[i] = '\0';
}

static void line(struct tp_buf *b, const struct tp_sum *s, const char *name,
		 uint64_t count, uint64_t total)
{
	char n[NAME_COLS + 1], t[32], l[160];

	fmt_name(n, name);
	tp_sum_fmt_time(t, sizeof(t), (double)total);
	snprintf(l, sizeof(l), "tprof:     %-*s %9llu %12s %7.2f%%\n",
		 NAME_COLS, n, (unsigned long long)count, t,
		 tp_sum_share(s, total) * 100.0);
	tp_buf_cstr(b, l);
}

static void heading(struct tp_buf *b, const char *what)
{
	char l[160];

	snprintf(l, sizeof(l), "tprof:   %-*s %9s %12s %8s\n", NAME_COLS + 2,
		 what, "calls", "total", "% wall");
	tp_buf_cstr(b, l);
}

static void top_rows(struct tp_buf *b, const struct tp_sum *s,
		     const char *what, int gpu, unsigned top)
{
	void **v = tp_sum_sorted(&s->rows, TP_SUM_ROWS);
	unsigned shown = 0;
	size_t i;

	for (i = 0; v && i < s->rows.n && shown < top; i++) {
		const struct sum_row *r = v[i];
		int is_gpu = !strcmp(r->cat, "kernel");
		int is_cpu = !strcmp(r->cat, "cuda_runtime") ||
			     !strcmp(r->cat, "cuda_driver") ||
			     !strcmp(r->cat, "cublas") ||
			     !strcmp(r->cat, "cudnn") ||
			     !strcmp(r->cat, "nccl");

		if (gpu ? !is_gpu : !is_cpu)
			continue;
		if (!shown++)
			heading(b, what);
		line(b, s, r->name, r->count, r->total);
	}
	free(v);
}

static void top_ranges(struct tp_buf *b, const struct tp_sum *s,
		       unsigned top)
{
	void **v = tp_sum_sorted(&s->ranges, TP_SUM_RANGES);
	size_t i;

	for (i = 0; v && i < s->ranges.n && i < top; i++) {
		const struct sum_range *r = v[i];

		if (!i)
			heading(b, "ranges");
		line(b, s, r->name, r->repeats, r->total);
	}
	free(v);
}

void tp_sum_write_brief(struct tp_sum *s, struct tp_buf *b, unsigned top)
{
	char t[32], l[256];

	tp_sum_fmt_time(t, sizeof(t), (double)tp_sum_wall(s));
	snprintf(l, sizeof(l), "tprof: summary of rank %d: %s wall, %llu "
		 "events, %llu dropped, %llu steps\n", s->info.rank, t,
		 (unsigned long long)s->events,
		 (unsigned long long)s->dropped,
		 (unsigned long long)s->steps_seen);
	tp_buf_cstr(b, l);
	top_rows(b, s, "top GPU kernels", 1, top);
	top_rows(b, s, "top CPU-side calls", 0, top);
	top_ranges(b, s, top);
}
