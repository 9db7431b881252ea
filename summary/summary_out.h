/* summary/: the summary aggregator: per-name statistics, histograms, steps,
 * groups, memory, and its JSON/markdown output; on util/ .. session/ and
 * stacks/. */
/* What the summary's writers (JSON, markdown, the stderr table) share. */
#ifndef TP_SUMMARY_OUT_H
#define TP_SUMMARY_OUT_H

#include "summary_int.h"

enum { TP_SUM_ROWS, TP_SUM_RANGES, TP_SUM_GROUPS };

void **tp_sum_sorted(const struct sum_tab *t, int which);
int64_t tp_sum_wall(const struct tp_sum *s);
double tp_sum_share(const struct tp_sum *s, uint64_t ns);
double tp_sum_row_std(const struct sum_row *r);
uint64_t tp_sum_row_pct(const struct sum_row *r, unsigned pct);
double tp_sum_algbw(const struct sum_group *g);
double tp_sum_busbw_factor(const struct sum_group *g);
void tp_sum_put_u128(struct tp_buf *b, unsigned __int128 v);
/* 1.234 ms: three decimals in the largest unit that fits (ns, us, ms,
 * s), for the markdown and the stderr table. */
void tp_sum_fmt_time(char *s, size_t len, double ns);

#endif
