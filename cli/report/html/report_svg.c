/* tprof report --html: chart primitives, plain SVG (no script, no
 * stylesheet outside the file). Every chart is one <svg> as wide as the
 * page (a viewBox the page scales) with a title, a frame,
 * tick labels as <text>, one <polyline class="series"> per rank (and
 * device) carrying data-rank, and a legend on the right.
 *
 * Below the charts (report_charts.c) and the page (report_html.c): it
 * calls only the escaping (report_xml.c) and the formatting helpers
 * (report_fmt.c). */
#include "report_svg.h"
#include "report_xml.h"

#include <math.h>
#include <stdio.h>

/* The viewBox: the page scales it to its width. */
#define W 1200.0
#define H 320.0
#define ML 90.0		/* left margin: y tick labels */
#define MR 200.0	/* right margin: legend */
#define MT 30.0
#define MB 46.0
#define TICKS 5

static const char *const palette[] = {
	"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
	"#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
};
#define N_COLORS (sizeof(palette) / sizeof(palette[0]))

static double frac(double v, double lo, double hi)
{
	double f = hi > lo ? (v - lo) / (hi - lo) : 0.5;

	return f < 0 ? 0 : f > 1 ? 1 : f;
}

static double px(const struct rp_chart *c, double x)
{
	if (c->logx)
		return ML + (W - ML - MR) * frac(log10(x > 0 ? x : c->xmin),
						 log10(c->xmin),
						 log10(c->xmax));
	return ML + (W - ML - MR) * frac(x, c->xmin, c->xmax);
}

static double py(const struct rp_chart *c, double y)
{
	return H - MB - (H - MT - MB) * frac(y, c->ymin, c->ymax);
}

void rp_chart_open(struct rp_chart *c, const char *cls, const char *attr,
		   const char *value, const char *title)
{
	struct tp_buf *b = c->b;

	c->nseries = 0;
	rp_bprintf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" "
		   "class=\"%s\"", cls);
	if (attr) {
		rp_bprintf(b, " %s=\"", attr);
		rp_xml_text(b, value);
		tp_buf_char(b, '"');
	}
	rp_bprintf(b, " width=\"100%%\" viewBox=\"0 0 %.0f %.0f\">\n<title>",
		   W, H);
	rp_xml_text(b, title);
	rp_bprintf(b, "</title>\n<text class=\"ct\" x=\"%.0f\" y=\"18\">",
		   ML);
	rp_xml_text(b, title);
	tp_buf_lit(b, "</text>\n");
}

static void tick_x(struct rp_chart *c, double v)
{
	char s[48];
	double x = px(c, v);

	rp_bprintf(c->b, "<line class=\"tk\" x1=\"%.1f\" y1=\"%.1f\" "
		   "x2=\"%.1f\" y2=\"%.1f\"/><text class=\"tx\" x=\"%.1f\" "
		   "y=\"%.1f\">", x, H - MB, x, H - MB + 4, x, H - MB + 16);
	rp_xml_text(c->b, c->xfmt(s, sizeof(s), v));
	tp_buf_lit(c->b, "</text>\n");
}

static void tick_y(struct rp_chart *c, double v)
{
	char s[48];
	double y = py(c, v);

	rp_bprintf(c->b, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" "
		   "x2=\"%.1f\" y2=\"%.1f\"/><text class=\"ty\" x=\"%.1f\" "
		   "y=\"%.1f\">", ML, y, W - MR, y, ML - 6, y + 4);
	rp_xml_text(c->b, c->yfmt(s, sizeof(s), v));
	tp_buf_lit(c->b, "</text>\n");
}

/* 1, 2, 5 times a power of ten: below v (down) or above it. */
static double snap125(double v, int up)
{
	static const double m[] = { 1, 2, 5, 10 };
	double p = pow(10, floor(log10(v)));
	int i;

	if (up) {
		for (i = 0; i < 4 && m[i] * p < v * (1 - 1e-9); i++)
			;
		return m[i] * p;
	}
	for (i = 3; i > 0 && m[i] * p > v * (1 + 1e-9); i--)
		;
	return m[i] * p;
}

/* A log axis from and to 1-2-5 values, ticked at every 1-2-5 value,
 * or at every power of ten when that would be too many. */
static void ticks_log(struct rp_chart *c)
{
	double v, step;
	int n = 0, decades;

	c->xmin = snap125(c->xmin, 0);
	c->xmax = snap125(c->xmax, 1);
	decades = (int)ceil(log10(c->xmax / c->xmin) - 1e-9);
	for (v = c->xmin; v <= c->xmax * (1 + 1e-9); v = step) {
		step = snap125(v * 1.5, 1);
		if (decades > 2 && fabs(log10(v) - round(log10(v))) > 1e-9)
			continue;
		tick_x(c, v);
		n++;
	}
	if (n < 2)
		tick_x(c, c->xmax);
}

/* A round tick step giving about TICKS - 1 intervals. */
static double nice_step(double range, int integer)
{
	double raw = range / (TICKS - 1), p, f, s;

	if (!(raw > 0))
		return 1;
	p = pow(10, floor(log10(raw)));
	f = raw / p;
	s = (f <= 1 ? 1 : f <= 2 ? 2 : f <= 2.5 ? 2.5 : f <= 5 ? 5 : 10) * p;
	return integer && s < 1 ? 1 : s;
}

/* A linear axis from 0 (every chart's is) to a multiple of its step. */
static double linear_axis(double *lo, double *hi, int integer)
{
	double step = nice_step(*hi - *lo, integer);

	*lo = 0;
	*hi = ceil(*hi / step - 1e-9) * step;
	if (*hi <= 0)
		*hi = step;
	return step;
}

void rp_chart_axes(struct rp_chart *c, const char *xlabel,
		   const char *ylabel)
{
	struct tp_buf *b = c->b;
	double step, v;

	rp_bprintf(b, "<rect class=\"frame\" x=\"%.0f\" y=\"%.0f\" "
		   "width=\"%.0f\" height=\"%.0f\"/>\n", ML, MT, W - ML - MR,
		   H - MT - MB);
	step = linear_axis(&c->ymin, &c->ymax, c->yint);
	for (v = 0; v <= c->ymax + step / 2; v += step)
		tick_y(c, v);
	if (c->logx) {
		ticks_log(c);
	} else {
		step = linear_axis(&c->xmin, &c->xmax, c->xint);
		for (v = 0; v <= c->xmax + step / 2; v += step)
			tick_x(c, v);
	}
	rp_bprintf(b, "<text class=\"ax\" x=\"%.1f\" y=\"%.1f\">",
		   (ML + W - MR) / 2, H - 8);
	rp_xml_text(b, xlabel);
	rp_bprintf(b, "</text>\n<text class=\"ax\" x=\"14\" y=\"%.1f\" "
		   "transform=\"rotate(-90 14 %.1f)\">", (MT + H - MB) / 2,
		   (MT + H - MB) / 2);
	rp_xml_text(b, ylabel);
	tp_buf_lit(b, "</text>\n");
}

void rp_chart_series(struct rp_chart *c, const char *rank_label,
		     int64_t device, const char *legend)
{
	const char *color = palette[c->nseries % N_COLORS];
	double y = MT + 8 + 15.0 * c->nseries;
	struct tp_buf *b = c->b;

	/* legend entries past the chart's height would be cut off */
	if (y < H - 8) {
		rp_bprintf(b, "<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" "
			   "y2=\"%.1f\" stroke=\"%s\" stroke-width=\"3\"/>"
			   "<text class=\"lg\" x=\"%.0f\" y=\"%.1f\">",
			   W - MR + 10, y, W - MR + 28, y, color, W - MR + 32,
			   y + 4);
		rp_xml_text(b, legend);
		tp_buf_lit(b, "</text>\n");
	}
	tp_buf_lit(b, "<polyline class=\"series\" data-rank=\"");
	rp_xml_text(b, rank_label);
	if (device != RP_NONE)
		rp_bprintf(b, "\" data-device=\"%lld", (long long)device);
	rp_bprintf(b, "\" stroke=\"%s\" points=\"", color);
	c->nseries++;
}

void rp_chart_point(struct rp_chart *c, double x, double y)
{
	rp_bprintf(c->b, "%.1f,%.1f ", px(c, x), py(c, y));
}

void rp_chart_series_end(struct rp_chart *c)
{
	tp_buf_lit(c->b, "\"/>\n");
}

void rp_chart_note(struct rp_chart *c, const char *text)
{
	rp_bprintf(c->b, "<text class=\"note\" x=\"%.1f\" y=\"%.1f\">",
		   (ML + W - MR) / 2, (MT + H - MB) / 2);
	rp_xml_text(c->b, text);
	tp_buf_lit(c->b, "</text>\n");
}

void rp_chart_close(struct rp_chart *c)
{
	tp_buf_lit(c->b, "</svg>\n");
}

/* Tick labels: three significant digits in the largest unit under the
 * value. */
static const char *scaled(char *buf, size_t size, double v,
			  const double *div, const char *const *unit,
			  unsigned n)
{
	unsigned i = 0;

	while (i + 1 < n && fabs(v) >= div[i + 1])
		i++;
	snprintf(buf, size, "%.3g %s", v / div[i], unit[i]);
	return buf;
}

const char *rp_fmt_time_axis(char *buf, size_t size, double ns)
{
	static const double div[] = { 1, 1e3, 1e6, 1e9 };
	static const char *const unit[] = { "ns", "\u00b5s", "ms", "s" };

	return scaled(buf, size, ns, div, unit, 4);
}

const char *rp_fmt_bytes_axis(char *buf, size_t size, double bytes)
{
	static const double div[] = {
		1, 1024.0, 1048576.0, 1073741824.0, 1099511627776.0,
	};
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };

	return scaled(buf, size, bytes, div, unit, 5);
}

const char *rp_fmt_count_axis(char *buf, size_t size, double n)
{
	snprintf(buf, size, fabs(n) < 1e6 ? "%.0f" : "%.3g", n);
	return buf;
}
