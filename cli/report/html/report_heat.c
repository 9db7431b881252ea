/* tprof report --html: GPU activity over time as a heat map, ranks down,
 * time across, the colour the share of time the GPU was busy.
 *
 * Each rank's summary holds its busy time in 100 parts of its GPU span
 * ("utilisation"); the map puts every rank on one time axis (the
 * trace's base time plus the span's start, so ranks line up in wall
 * time) in HEAT_COLS columns, spreading each part's busy time evenly
 * over it. A column the rank's span covers for less than half is left
 * blank: no GPU activity recorded there, not idle.
 *
 * It stays readable from 1 to any number of ranks: past HEAT_ROWS
 * ranks, a row holds consecutive ranks and shows, per column, the
 * least busy of them (an idle rank is what the map is for). Equal
 * neighbours are drawn as one rectangle. Each row is a
 * <g class="heatrow" data-ranks="A-B" data-levels="..."> whose levels
 * are one character per column: '0' to '9' for a busy share of 0-10 %
 * to 90-100 % ('9' from 90 %), '-' blank.
 *
 * Called by the page (report_html.c); calls the escaping and the
 * formatting helpers and the chart primitives' axis labels.
 */
#include "report_charts.h"
#include "report_svg.h"
#include "report_xml.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HEAT_COLS 100
#define HEAT_ROWS 128
#define HW 1200.0	/* viewBox width */
#define HL 120.0	/* left: row labels */
#define HR 20.0
#define HT 52.0		/* top: title */
#define HB 96.0		/* bottom: axis and legend */
#define LEVELS 10

/* Red when idle, blue when busy (ColorBrewer's RdYlBu): a GPU busy 75 %
 * of the time stands out among ones busy 95 %. */
static const char *const fill[LEVELS] = {
	"#a50026", "#d73027", "#f46d43", "#fdae61", "#fee090",
	"#e0f3f8", "#abd9e9", "#74add1", "#4575b4", "#313695",
};

static int has_util(const struct rp_rank *r)
{
	return r->gpu.present && r->gpu.nutil && r->gpu.span_ns > 0 &&
	       r->gpu.start_ns != RP_NONE;
}

/* Ranks on one wall-clock axis, or each from its own first GPU
 * activity when they did not run at the same time. */
static int aligned;

static int64_t start_of(const struct rp_rank *r)
{
	if (!aligned)
		return 0;
	return (r->base_ns == RP_NONE ? 0 : r->base_ns) + r->gpu.start_ns;
}

/* The busy share of each column for one rank; < 0: blank. */
static void rank_cols(const struct rp_rank *r, int64_t t0, double colw,
		      double *v)
{
	double s = (double)(start_of(r) - t0), span = (double)r->gpu.span_ns;
	double part = span / (double)r->gpu.nutil, a, e, lo, hi, x, y;
	double busy[HEAT_COLS] = { 0 }, cover[HEAT_COLS] = { 0 };
	size_t i, c, c0, c1;

	for (i = 0; i < r->gpu.nutil; i++) {
		a = s + part * (double)i;
		e = a + part;
		c0 = (size_t)(a / colw);
		c1 = (size_t)(e / colw);
		for (c = c0; c <= c1 && c < HEAT_COLS; c++) {
			lo = colw * (double)c;
			hi = lo + colw;
			x = a > lo ? a : lo;
			y = e < hi ? e : hi;
			if (y <= x)
				continue;
			cover[c] += y - x;
			busy[c] += (double)r->gpu.util[i] * (y - x) / part;
		}
	}
	for (c = 0; c < HEAT_COLS; c++)
		v[c] = cover[c] * 2 < colw ? -1 : busy[c] / cover[c];
}

static char level(double v)
{
	int l;

	if (v < 0)
		return '-';
	l = (int)floor(v * LEVELS);
	return (char)('0' + (l < 0 ? 0 : l >= LEVELS ? LEVELS - 1 : l));
}

/* One row: its levels, drawn as runs. */
static void row(struct tp_buf *b, const char *ranks, const char *lv,
		double y, double h, int label)
{
	double cw = (HW - HL - HR) / HEAT_COLS;
	size_t c, k;

	rp_bprintf(b, "<g class=\"heatrow\" data-ranks=\"%s\" data-levels=\""
		   "%s\"><title>rank%s %s</title>\n", ranks, lv,
		   strchr(ranks, '-') ? "s" : "", ranks);
	if (label)
		rp_bprintf(b, "<text class=\"ty\" x=\"%.0f\" y=\"%.1f\">%s"
			   "</text>\n", HL - 6, y + h / 2 + 4, ranks);
	for (c = 0; c < HEAT_COLS; c = k) {
		for (k = c + 1; k < HEAT_COLS && lv[k] == lv[c]; k++)
			;
		if (lv[c] == '-')
			continue;
		rp_bprintf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
			   "height=\"%.1f\" fill=\"%s\"/>", HL + cw * c, y,
			   cw * (k - c), h, fill[lv[c] - '0']);
	}
	tp_buf_lit(b, "</g>\n");
}

static void axis(struct tp_buf *b, double y, double span_ns)
{
	double step = span_ns / 5, x;
	char s[48];
	int i;

	for (i = 0; i <= 5; i++) {
		x = HL + (HW - HL - HR) * i / 5;
		rp_bprintf(b, "<line class=\"tk\" x1=\"%.1f\" y1=\"%.1f\" "
			   "x2=\"%.1f\" y2=\"%.1f\"/><text class=\"tx\" "
			   "x=\"%.1f\" y=\"%.1f\">", x, y, x, y + 4, x, y + 16);
		rp_xml_text(b, rp_fmt_time_axis(s, sizeof(s), step * i));
		tp_buf_lit(b, "</text>\n");
	}
	rp_bprintf(b, "<text class=\"ax\" x=\"%.1f\" y=\"%.1f\">%s</text>\n",
		   (HL + HW - HR) / 2, y + 32, aligned ?
		   "time since the first GPU activity of any rank (wall "
		   "clock)" : "time since each rank's first GPU activity (the "
		   "ranks did not run at the same time)");
}

static void legend(struct tp_buf *b, double y)
{
	double x = HL + 80;
	int i;

	rp_bprintf(b, "<text class=\"ty\" x=\"%.1f\" y=\"%.1f\">GPU busy:"
		   "</text>\n", x - 6, y + 12);
	for (i = 0; i < LEVELS; i++)
		rp_bprintf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"36\" "
			   "height=\"14\" fill=\"%s\"/>", x + 36 * i, y,
			   fill[i]);
	rp_bprintf(b, "\n<text class=\"tx\" x=\"%.1f\" y=\"%.1f\">0 %% "
		   "(idle)</text><text class=\"tx\" x=\"%.1f\" y=\"%.1f\">"
		   "50 %%</text><text class=\"tx\" x=\"%.1f\" y=\"%.1f\">"
		   "100 %%</text><text x=\"%.1f\" y=\"%.1f\">blank: no GPU "
		   "activity recorded</text>\n", x + 18, y + 28,
		   x + 36 * LEVELS / 2, y + 28, x + 36 * LEVELS - 18, y + 28,
		   x + 36 * LEVELS + 10, y + 12);
}

/* The ranks with utilisation, in entry order; the time axis: wall
 * clock when the ranks ran together (their spans' union is less than
 * ALIGN_MAX times the longest span), else each from its start. */
#define ALIGN_MAX 1.5

static size_t gather(const struct rp_report *rep, size_t *v, int64_t *t0,
		     int64_t *t1)
{
	const struct rp_rank *r;
	size_t e, n = 0;
	int64_t longest = 0;

	for (e = 0; e < rep->nranks; e++)
		if (has_util(rep->ranks[e]) &&
		    rep->ranks[e]->gpu.span_ns > longest)
			longest = rep->ranks[e]->gpu.span_ns;
	aligned = 1;
	*t0 = INT64_MAX;
	*t1 = INT64_MIN;
	for (e = 0; e < rep->nranks; e++) {
		r = rep->ranks[e];
		if (!has_util(r))
			continue;
		v[n++] = e;
		if (start_of(r) < *t0)
			*t0 = start_of(r);
		if (start_of(r) + r->gpu.span_ns > *t1)
			*t1 = start_of(r) + r->gpu.span_ns;
	}
	if (n && (double)(*t1 - *t0) > ALIGN_MAX * (double)longest) {
		aligned = 0;
		*t0 = 0;
		*t1 = longest;
	}
	return n;
}

void rp_svg_heat(struct tp_buf *b, const struct rp_report *rep)
{
	size_t *v = malloc((rep->nranks ? rep->nranks : 1) * sizeof(*v));
	size_t n, nrows, per, i, k, g0, g1;
	double cols[HEAT_COLS], low[HEAT_COLS], colw, h, y;
	char lv[HEAT_COLS + 1], ranks[96];
	int64_t t0, t1;
	int every;

	if (!v) {
		b->oom = 1;
		return;
	}
	n = gather(rep, v, &t0, &t1);
	if (!n || t1 <= t0)
		goto out;
	per = (n + HEAT_ROWS - 1) / HEAT_ROWS;
	nrows = (n + per - 1) / per;
	h = floor(600.0 / (double)nrows);
	h = h < 3 ? 3 : h > 22 ? 22 : h;
	every = h >= 12 ? 1 : (int)ceil(12.0 / h);
	colw = (double)(t1 - t0) / HEAT_COLS;
	rp_bprintf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"heat\" "
		   "viewBox=\"0 0 %.0f %.0f\" width=\"100%%\"><title>GPU "
		   "activity over time</title>\n<text class=\"ct\" x=\"%.0f\" "
		   "y=\"18\">GPU activity over time: how busy each rank's GPU "
		   "was</text>\n<text x=\"%.0f\" y=\"38\">Rows: %s; columns: "
		   "%d slices of the run; colour: the share of the slice the "
		   "GPU was busy.</text>\n", HW, HT + h * nrows + HB, HL, HL,
		   per > 1 ? "groups of ranks, each showing its least busy "
		   "rank" : "ranks", HEAT_COLS);
	rp_bprintf(b, "<text class=\"ax\" x=\"14\" y=\"%.1f\" transform=\""
		   "rotate(-90 14 %.1f)\">rank</text>\n", HT + h * nrows / 2,
		   HT + h * nrows / 2);
	for (i = 0, y = HT; i < nrows; i++, y += h) {
		g0 = i * per;
		g1 = g0 + per < n ? g0 + per : n;
		for (k = 0; k < HEAT_COLS; k++)
			low[k] = 2;
		for (k = g0; k < g1; k++) {
			rank_cols(rep->ranks[v[k]], t0, colw, cols);
			for (size_t c = 0; c < HEAT_COLS; c++)
				if (cols[c] >= 0 && cols[c] < low[c])
					low[c] = cols[c];
		}
		for (k = 0; k < HEAT_COLS; k++)
			lv[k] = level(low[k] > 1.5 ? -1 : low[k]);
		lv[HEAT_COLS] = 0;
		if (g1 - g0 == 1)
			snprintf(ranks, sizeof(ranks), "%s",
				 rep->ranks[v[g0]]->label);
		else
			snprintf(ranks, sizeof(ranks), "%s-%s",
				 rep->ranks[v[g0]]->label,
				 rep->ranks[v[g1 - 1]]->label);
		row(b, ranks, lv, y, h, (int)(i % (size_t)every) == 0);
	}
	rp_bprintf(b, "<rect class=\"frame\" x=\"%.0f\" y=\"%.0f\" "
		   "width=\"%.0f\" height=\"%.0f\"/>\n", HL, HT, HW - HL - HR,
		   h * nrows);
	axis(b, HT + h * nrows, (double)(t1 - t0));
	legend(b, HT + h * nrows + 44);
	tp_buf_lit(b, "</svg>\n");
out:
	free(v);
}
