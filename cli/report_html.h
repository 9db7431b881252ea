/* tprof report --html: XHTML-style markup (well-formed XML, so any XML
 * parser reads it) and the inline SVG charts. */
#ifndef TP_CLI_REPORT_HTML_H
#define TP_CLI_REPORT_HTML_H

#include "report_data.h"

/* Text or attribute value, escaped; invalid UTF-8 and characters XML
 * does not allow become U+FFFD. */
void rp_xml_text(struct tp_buf *b, const char *s);

/* report_svg.c: a chart's frame, axes and series. */
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

/* report_charts.c */
void rp_svg_hist(struct tp_buf *b, const struct rp_report *rep,
		 const struct rp_name *nm);
void rp_svg_steps(struct tp_buf *b, const struct rp_report *rep);
void rp_svg_memory(struct tp_buf *b, const struct rp_report *rep);

#endif
