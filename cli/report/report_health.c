/* tprof report: the GPU health counters of each rank (its summary's
 * "gpu_health" member, summary/health.c): parsed and pooled over the
 * rank's devices, the per-rank table beside its step, and its --json
 * object. The findings read the pooled figures (findings/rule_health.c).
 *
 * Called by report_summary.c (parse), report_tables.c (table) and
 * report_json.c; calls only down: the cell and formatting helpers.
 */
#include "report_tables.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef const struct tp_json_node jnode;

static const struct {
	const char *key, *words;
} reasons[RP_R_N] = {
	[RP_R_SW_POWER_CAP] = { "sw_power_cap", "power cap" },
	[RP_R_HW_SLOWDOWN] = { "hw_slowdown", "HW slowdown" },
	[RP_R_SW_THERMAL] = { "sw_thermal", "thermal slowdown" },
	[RP_R_HW_THERMAL] = { "hw_thermal", "HW thermal slowdown" },
	[RP_R_HW_POWER_BRAKE] = { "hw_power_brake", "HW power brake" },
	[RP_R_BOARD_LIMIT] = { "board_limit", "board limit" },
	[RP_R_RELIABILITY] = { "reliability", "reliability policy" },
	[RP_R_GPU_IDLE] = { "gpu_idle", "GPU idle" },
	[RP_R_APP_CLOCKS] = { "app_clocks", "application clocks" },
	[RP_R_SYNC_BOOST] = { "sync_boost", "sync boost" },
	[RP_R_DISPLAY_CLOCKS] = { "display_clocks", "display clocks" },
};

const char *rp_reason_key(enum rp_reason r)
{
	return r < RP_R_N ? reasons[r].key : "?";
}

const char *rp_reason_words(enum rp_reason r)
{
	return r < RP_R_N ? reasons[r].words : "?";
}

enum rp_reason rp_health_top_reason(const struct rp_health *h)
{
	enum rp_reason best = RP_R_N;
	int r;

	for (r = 0; r < RP_R_SLOWDOWNS; r++)
		if (h->reason[r] > 0 &&
		    (best == RP_R_N || h->reason[r] > h->reason[best]))
			best = (enum rp_reason)r;
	return best;
}

static double num(jnode *obj, const char *key)
{
	jnode *n = tp_json_get(obj, key);

	return n && n->type == TP_JSON_NUMBER ? strtod(n->str, NULL) : NAN;
}

/* Pooling one counter over devices: weighted sums and extremes. */
struct pool {
	double n, sum, min, max, last;
};

static void pool_add(struct pool *p, jnode *c)
{
	double n = num(c, "n"), lo = num(c, "min"), hi = num(c, "max");

	if (!c || !(n > 0))
		return;
	p->sum += n * num(c, "mean");
	if (p->n == 0 || lo < p->min)
		p->min = lo;
	if (p->n == 0 || hi > p->max)
		p->max = hi;
	p->last += num(c, "last");	/* counts: summed over devices */
	p->n += n;
}

static double mean(const struct pool *p)
{
	return p->n > 0 ? p->sum / p->n : -1;
}

enum { C_SM, C_MEM, C_POWER, C_LIMIT, C_TEMP, C_UTIL, C_USED, C_TOTAL,
       C_ECC_U, C_XID, C_N };
static const char *const counter_keys[C_N] = {
	"sm_mhz", "mem_mhz", "power_mw", "power_limit_mw", "temp_c",
	"gpu_util_pct", "mem_used_bytes", "mem_total_bytes",
	"ecc_uncorrected", "xid_count",
};

static void note_unavailable(struct rp_health *h, jnode *u)
{
	size_t len = strlen(h->unavailable);

	for (u = u && u->type == TP_JSON_OBJECT ? u->child : NULL; u;
	     u = u->next) {
		if (u->type != TP_JSON_STRING || !u->key)
			continue;
		h->nunavailable++;
		if (len + strlen(u->key) + strlen(u->str) + 8 >=
		    sizeof(h->unavailable))
			continue;
		len += (size_t)snprintf(h->unavailable + len,
					sizeof(h->unavailable) - len,
					"%s%s (%s)", len ? ", " : "", u->key,
					u->str);
	}
}

static void pool_device(struct rp_health *h, jnode *d, struct pool *p,
			double *rsum)
{
	jnode *c = tp_json_get(d, "counters"), *ce;
	double rs = num(d, "clock_event_samples");
	int64_t n;
	int k;

	if (tp_json_int64(tp_json_get(d, "samples"), &n) && n > 0)
		h->samples += (uint64_t)n;
	for (k = 0; k < C_N; k++)
		pool_add(&p[k], tp_json_get(c, counter_keys[k]));
	ce = tp_json_get(d, "clock_events");
	if (rs > 0) {
		h->reason_samples += (uint64_t)rs;
		for (k = 0; k < RP_R_N; k++) {
			double share = num(ce, reasons[k].key);

			if (share >= 0)
				rsum[k] += share * rs;
		}
	}
	note_unavailable(h, tp_json_get(d, "unavailable"));
}

int rp_health_parse(struct rp_rank *r, const struct tp_json_node *n,
		    char *err, size_t errlen)
{
	struct rp_health *h = &r->health;
	struct pool p[C_N];
	double rsum[RP_R_N] = { 0 };
	jnode *st, *d;
	int k;

	memset(h, 0, sizeof(*h));
	if (!n || n->type == TP_JSON_NULL)
		return 0;
	if (n->type != TP_JSON_OBJECT) {
		snprintf(err, errlen, "\"gpu_health\" is not an object");
		return -1;
	}
	memset(p, 0, sizeof(p));
	h->present = 1;
	st = tp_json_get(n, "state");
	snprintf(h->state, sizeof(h->state), "%s",
		 st && st->type == TP_JSON_STRING ? st->str : "unknown");
	d = tp_json_get(n, "devices");
	for (d = d && d->type == TP_JSON_ARRAY ? d->child : NULL; d;
	     d = d->next)
		pool_device(h, d, p, rsum);
	h->sm_mean = mean(&p[C_SM]);
	h->sm_min = p[C_SM].n > 0 ? p[C_SM].min : -1;
	h->sm_max = p[C_SM].n > 0 ? p[C_SM].max : -1;
	h->mem_clock_mean = mean(&p[C_MEM]);
	h->power_mean = mean(&p[C_POWER]);
	h->power_max = p[C_POWER].n > 0 ? p[C_POWER].max : -1;
	h->power_limit = p[C_LIMIT].n > 0 ? p[C_LIMIT].max : -1;
	h->temp_mean = mean(&p[C_TEMP]);
	h->temp_max = p[C_TEMP].n > 0 ? p[C_TEMP].max : -1;
	h->util_mean = mean(&p[C_UTIL]);
	h->mem_used_max = p[C_USED].n > 0 ? p[C_USED].max : -1;
	h->mem_total = p[C_TOTAL].n > 0 ? p[C_TOTAL].max : -1;
	h->ecc_uncorrected = p[C_ECC_U].n > 0 ? p[C_ECC_U].last : -1;
	h->xids = p[C_XID].n > 0 ? p[C_XID].last : -1;
	for (k = 0; k < RP_R_N; k++)
		h->reason[k] = h->reason_samples ?
			       rsum[k] / (double)h->reason_samples : 0;
	return 0;
}

#define T 48

static const char *fig(char *buf, double v, double div, const char *unit)
{
	if (v < 0)
		return "-";
	snprintf(buf, T, "%.*f%s", div == 1 ? 0 : 2, v / div, unit);
	return buf;
}

/* The slowdown reasons active at least 1% of the time, largest first. */
static void reasons_cell(char *buf, size_t size, const struct rp_health *h)
{
	size_t len = 0;
	int used[RP_R_N] = { 0 }, k, best;

	buf[0] = '\0';
	for (;;) {
		best = -1;
		for (k = 0; k < RP_R_N; k++)
			if (!used[k] && h->reason[k] >= 0.01 &&
			    (best < 0 || h->reason[k] > h->reason[best]))
				best = k;
		if (best < 0 || len + 40 >= size)
			break;
		used[best] = 1;
		len += (size_t)snprintf(buf + len, size - len, "%s%s %.0f%%",
					len ? ", " : "", reasons[best].words,
					h->reason[best] * 100);
	}
	if (!len)
		snprintf(buf, size, h->reason_samples ? "none" : "-");
}

void rp_health_table(const struct rp_report *rep, struct rp_tables *ts)
{
	static const char *const head[] = {
		"rank", "step", "SM clock mean (min-max)", "memory clock",
		"power mean / limit", "temperature mean (max)", "GPU util",
		"memory peak / total", "clock events (share of time)",
		"unavailable",
	};
	struct rp_table *t = &ts->t[RP_T_HEALTH];
	const struct rp_health *h;
	char w[8][T], cell[160];
	size_t e, k;

	rp_table_init(t, "GPU health", head, "lrrrrrrrll");
	t->empty = "No GPU health counters in the inputs read (NVML "
		   "sampling, TPROF_TRACE word gpumetrics, came with this "
		   "version of tprof; a summary without them is older, or "
		   "the process used no GPU).";
	t->note = "NVML's counters, sampled at a fixed rate beside the "
		  "trace (TPROF_GPU_METRICS_HZ): means are over time; clock "
		  "events are the reasons NVML gave for clocks below their "
		  "maximum, each as the share of the time it was active.";
	t->sel_note = ts->many ? ts->sel_note : NULL;
	for (k = 0; k < ts->nsel; k++) {
		e = ts->sel[k];
		h = &rep->ranks[e]->health;
		if (!h->present)
			continue;
		rp_add_cell(t, "%s", rep->ranks[e]->label);
		rp_add_cell(t, "%s", rep->m[e].step > 0 ?
			    rp_fmt_ns(w[0], T, rep->m[e].step) : "-");
		if (!h->samples) {
			rp_add_cell(t, "not sampled: %s", h->state);
			rp_add_cell(t, "-");
			rp_add_cell(t, "-");
			rp_add_cell(t, "-");
			rp_add_cell(t, "-");
			rp_add_cell(t, "-");
			rp_add_cell(t, "-");
		} else {
			if (h->sm_mean < 0)
				rp_add_cell(t, "-");
			else
				rp_add_cell(t, "%.0f MHz (%.0f-%.0f)",
					    h->sm_mean, h->sm_min, h->sm_max);
			rp_add_cell(t, "%s", fig(w[1], h->mem_clock_mean, 1,
						 " MHz"));
			rp_add_cell(t, "%s / %s", fig(w[2], h->power_mean,
						      1000, " W"),
				    fig(w[3], h->power_limit, 1000, " W"));
			rp_add_cell(t, "%s (%s)", fig(w[4], h->temp_mean, 1,
						      " C"),
				    fig(w[5], h->temp_max, 1, " C"));
			rp_add_cell(t, "%s", fig(w[6], h->util_mean, 1, "%"));
			if (h->mem_used_max < 0 || h->mem_total <= 0)
				rp_add_cell(t, "-");
			else
				rp_add_cell(t, "%s / %s (%.0f%%)",
					    rp_fmt_bytes(w[6], T,
						(int64_t)h->mem_used_max),
					    rp_fmt_bytes(w[7], T,
						(int64_t)h->mem_total),
					    100 * h->mem_used_max /
					    h->mem_total);
			reasons_cell(cell, sizeof(cell), h);
			rp_add_cell(t, "%s", cell);
		}
		rp_add_cell(t, "%s", h->nunavailable ? h->unavailable :
			    "none");
		rp_end_row(t, 0);
	}
}

static void put_fig(struct tp_buf *b, const char *key, double v)
{
	rp_bprintf(b, ", \"%s\": ", key);
	if (v < 0 || isnan(v))
		tp_buf_lit(b, "null");
	else
		tp_json_double(b, round(v * 1000) / 1000);
}

void rp_health_json(struct tp_buf *b, const struct rp_health *h)
{
	int k, n = 0;

	if (!h->present) {
		tp_buf_lit(b, "null");
		return;
	}
	tp_buf_lit(b, "{\"state\": ");
	tp_json_str(b, h->state);
	rp_bprintf(b, ", \"samples\": %" PRIu64, h->samples);
	put_fig(b, "sm_clock_mhz_min", h->sm_min);
	put_fig(b, "sm_clock_mhz_mean", h->sm_mean);
	put_fig(b, "sm_clock_mhz_max", h->sm_max);
	put_fig(b, "mem_clock_mhz_mean", h->mem_clock_mean);
	put_fig(b, "power_mw_mean", h->power_mean);
	put_fig(b, "power_mw_max", h->power_max);
	put_fig(b, "power_limit_mw", h->power_limit);
	put_fig(b, "temp_c_mean", h->temp_mean);
	put_fig(b, "temp_c_max", h->temp_max);
	put_fig(b, "gpu_util_pct_mean", h->util_mean);
	put_fig(b, "mem_used_bytes_max", h->mem_used_max);
	put_fig(b, "mem_total_bytes", h->mem_total);
	put_fig(b, "ecc_uncorrected", h->ecc_uncorrected);
	put_fig(b, "xid_count", h->xids);
	tp_buf_lit(b, ", \"clock_events\": {");
	for (k = 0; k < RP_R_N; k++) {
		if (!h->reason_samples)
			break;
		rp_bprintf(b, "%s\"%s\": ", n++ ? ", " : "", reasons[k].key);
		tp_json_double(b, round(h->reason[k] * 10000) / 10000);
	}
	tp_buf_lit(b, "}, \"unavailable\": ");
	tp_json_str(b, h->unavailable);
	tp_buf_char(b, '}');
}
