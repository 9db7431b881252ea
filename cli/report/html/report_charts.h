/* tprof report --html: the charts of the page (report_charts.c). */
#ifndef TP_CLI_REPORT_CHARTS_H
#define TP_CLI_REPORT_CHARTS_H

#include "cli/report/report_data.h"

void rp_svg_hist(struct tp_buf *b, const struct rp_report *rep,
		 const struct rp_name *nm);
void rp_svg_steps(struct tp_buf *b, const struct rp_report *rep);
void rp_svg_memory(struct tp_buf *b, const struct rp_report *rep);
/* The temporal breakdown per rank as stacked bars (nothing without GPU
 * activity). */
void rp_svg_breakdown(struct tp_buf *b, const struct rp_report *rep);
/* Horizontal bars (nothing without data): the top kernels by GPU time,
 * and each rank's ranges by GPU time (at most 20 bars). */
void rp_svg_top_kernels(struct tp_buf *b, const struct rp_report *rep);
void rp_svg_ranges(struct tp_buf *b, const struct rp_report *rep);
/* The ranks a chart draws lines for (sel: room for 10): all up to 10,
 * else the slowest, the median and the fastest; returns how many. */
size_t rp_chart_ranks(const struct rp_report *rep, size_t *sel);
/* report_icicle.c: the host section (what the host did while the GPU
 * was idle), with an icicle of each rank's CPU samples; nothing when no
 * rank has CPU samples or blocking calls. */
void rp_html_host(struct tp_buf *b, const struct rp_report *rep);
/* report_heat.c: GPU activity over time, ranks x time. */
void rp_svg_heat(struct tp_buf *b, const struct rp_report *rep);

#endif
