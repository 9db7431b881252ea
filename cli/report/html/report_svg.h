/* tprof report --html: chart primitives (report_svg.c): a chart's
 * frame, axes and series. */
#ifndef TP_CLI_REPORT_SVG_H
#define TP_CLI_REPORT_SVG_H

#include "cli/report/report_data.h"

struct rp_chart {
	struct tp_buf *b;
	double xmin, xmax, ymin, ymax;
	int logx;
	int xint, yint;		/* whole-number ticks (counts) */
	const char *(*xfmt)(char *buf, size_t size, double v);
	const char *(*yfmt)(char *buf, size_t size, double v);
	unsigned nseries;	/* legend entries so far */
};

/* <svg class="CLS" ATTR="VALUE"> with its title; attr may be NULL. */
void rp_chart_open(struct rp_chart *c, const char *cls, const char *attr,
		   const char *value, const char *title);
/* Rounds the ranges out to tick values: call before any point. */
void rp_chart_axes(struct rp_chart *c, const char *xlabel,
		   const char *ylabel);
/* <polyline class="series" data-rank=".." [data-device=".."] points=" */
void rp_chart_series(struct rp_chart *c, const char *rank_label,
		     int64_t device, const char *legend);
void rp_chart_point(struct rp_chart *c, double x, double y);
void rp_chart_series_end(struct rp_chart *c);
void rp_chart_note(struct rp_chart *c, const char *text);
void rp_chart_close(struct rp_chart *c);

const char *rp_fmt_time_axis(char *buf, size_t size, double ns);
const char *rp_fmt_bytes_axis(char *buf, size_t size, double bytes);
const char *rp_fmt_count_axis(char *buf, size_t size, double n);

#endif
