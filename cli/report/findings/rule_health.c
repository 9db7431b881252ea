/* Rule: the GPU's health beside a slow rank's step (NVML's counters,
 * the summary's "gpu_health" member, report_health.c).
 *
 * For each slow rank (rule_slow.c's rp_f_is_slow) that has samples:
 *
 * - its GPU ran throttled when its mean SM clock is below
 *   RP_F_CLOCK_RATIO of the median of the other ranks' means, or a
 *   slowdown reason (power cap, thermal, HW slowdown, power brake, board
 *   limit, reliability) was active RP_F_THROTTLE_SHARE of the time, or
 *   its memory in use peaked at RP_F_MEMFULL_SHARE of the device's: the
 *   finding gives the numbers, and costs the rank's excess (this is why
 *   its step is longer);
 * - else its GPU was healthy: the finding says so, with the same
 *   numbers, and points at its host and its peers. It has no time cost
 *   of its own: the slow-rank finding carries the excess.
 */
#include "findings_int.h"

#include <math.h>
#include <stdlib.h>

/* The median of the other ranks' mean SM clocks, < 0 when none has
 * one. */
static double others_clock(const struct rp_report *rep, size_t e)
{
	long double *v = rp_f_per_rank(rep, sizeof(*v)), med;
	size_t i, n = 0;

	if (!v)
		return -1;
	for (i = 0; i < rep->nranks; i++)
		if (i != e && rep->ranks[i]->health.sm_mean > 0)
			v[n++] = rep->ranks[i]->health.sm_mean;
	med = n ? rp_f_median(v, n) : -1;
	free(v);
	return (double)med;
}

/* "SM clock 1.10 GHz mean vs 1.98 GHz on the others" */
static void clock_text(struct tp_buf *b, const struct rp_health *h,
		       double ref)
{
	if (h->sm_mean < 0) {
		tp_buf_lit(b, "SM clock not sampled");
		return;
	}
	rp_bprintf(b, "SM clock %.2f GHz mean", h->sm_mean / 1000);
	if (ref > 0)
		rp_bprintf(b, " vs %.2f GHz on the others", ref / 1000);
}

/* Every slowdown reason active at least 1% of the time. */
static void reasons_text(struct tp_buf *b, const struct rp_health *h)
{
	int r, n = 0;

	for (r = 0; r < RP_R_SLOWDOWNS; r++) {
		if (h->reason[r] < 0.01)
			continue;
		rp_bprintf(b, "%s%.0f%% of the time under %s", n++ ? ", " :
			   ", ", h->reason[r] * 100,
			   rp_reason_words((enum rp_reason)r));
	}
	if (!n && h->reason_samples)
		tp_buf_lit(b, ", no slowdown reason");
}

static void figures(struct tp_buf *b, const struct rp_health *h)
{
	rp_bprintf(b, " Over %llu samples: SM clock %.0f to %.0f MHz",
		   (unsigned long long)h->samples, h->sm_min, h->sm_max);
	if (h->temp_mean >= 0)
		rp_bprintf(b, ", temperature %.0f C mean (%.0f C max)",
			   h->temp_mean, h->temp_max);
	if (h->power_mean >= 0)
		rp_bprintf(b, ", power %.0f W mean", h->power_mean / 1000);
	if (h->power_limit > 0)
		rp_bprintf(b, " of a %.0f W limit", h->power_limit / 1000);
	if (h->mem_used_max >= 0 && h->mem_total > 0)
		rp_bprintf(b, ", memory in use at most %.0f%% of the device's",
			   100 * h->mem_used_max / h->mem_total);
	tp_buf_char(b, '.');
	if (h->nunavailable)
		rp_bprintf(b, " Not available from NVML: %s.", h->unavailable);
}

/* The finding's title from b (its words so far), then its evidence:
 * the rank's step, lead, and the GPU's figures; b is freed. */
static void texts(struct rp_report *rep, struct rp_findings *fs,
		  struct rp_finding *f, size_t e, struct tp_buf *b,
		  const char *lead)
{
	tp_buf_char(b, 0);
	f->title = b->oom ? NULL : rp_f_str(fs, "%s", b->p);
	b->len = 0;
	rp_f_own_text(b, rep, e);
	tp_buf_cstr(b, lead);
	figures(b, &rep->ranks[e]->health);
	f->evidence = b->oom ? NULL : rp_f_str(fs, "%.*s", (int)b->len, b->p);
	tp_buf_free(b);
}

static void throttled(struct rp_report *rep, struct rp_findings *fs,
		      size_t e, double ref, int memfull)
{
	const struct rp_health *h = &rep->ranks[e]->health;
	enum rp_reason top = rp_health_top_reason(h);
	struct tp_buf b = { 0 };
	struct rp_finding *f;

	f = rp_f_add(fs, RP_F_GPU_THROTTLED, &e, 1,
		     rep->m[e].own - rep->ref.own, rep->m[e].step);
	if (!f)
		return;
	f->per_run = !rep->m[e].has_steps;
	tp_buf_lit(&b, "its GPU ran throttled: ");
	clock_text(&b, h, ref);
	reasons_text(&b, h);
	if (memfull)
		rp_bprintf(&b, ", memory %.0f%% full",
			   100 * h->mem_used_max / h->mem_total);
	texts(rep, fs, f, e, &b, "NVML's counters of its GPU, sampled "
	      "beside the trace:");
	rp_f_where_rank(rep, fs, f, e, "its GPU's clocks");
	f->try_ = rp_f_str(fs, "%s Compare with nvidia-smi -q -d "
		"PERFORMANCE,CLOCK,TEMPERATURE,POWER on that node, and drain "
		"or replace it if it stays so.",
		top == RP_R_SW_THERMAL || top == RP_R_HW_THERMAL ?
		"The GPU is too hot: check its cooling (fans, airflow, the "
		"inlet temperature, a neighbour's exhaust)." :
		top == RP_R_SW_POWER_CAP || top == RP_R_HW_POWER_BRAKE ||
		top == RP_R_BOARD_LIMIT ?
		"The GPU is held at its power limit: check the limit set "
		"(nvidia-smi -q -d POWER; a lowered limit on this node) and "
		"the node's power supply." :
		top == RP_R_HW_SLOWDOWN ?
		"The hardware slows the GPU down (power brake, thermal or "
		"power excursion): check its power supply and cooling." :
		memfull ?
		"Its memory is nearly full: the allocator frees and retries; "
		"lower its batch or check for another process on the GPU." :
		"Its clocks are lower than the others' without a reason NVML "
		"names: check application clocks and clock locks "
		"(nvidia-smi -q -d CLOCK).");
}

static void healthy(struct rp_report *rep, struct rp_findings *fs,
		    size_t e, double ref)
{
	const struct rp_health *h = &rep->ranks[e]->health;
	struct tp_buf b = { 0 };
	struct rp_finding *f;

	f = rp_f_add(fs, RP_F_GPU_HEALTHY, &e, 1, -1, rep->m[e].step);
	if (!f)
		return;
	f->per_run = !rep->m[e].has_steps;
	tp_buf_lit(&b, "its GPU was healthy: ");
	clock_text(&b, h, ref);
	reasons_text(&b, h);
	tp_buf_lit(&b, "; look at its host or its peers");
	texts(rep, fs, f, e, &b, "Its GPU ran as fast as the others': "
	      "NVML's counters, sampled beside the trace:");
	rp_f_where_rank(rep, fs, f, e, "its host or its peers");
	f->try_ = rp_f_str(fs, "The GPU is not the cause: look at its host "
			   "(CPU load and frequency, data loading, other "
			   "processes, NUMA placement) and at its peers (the "
			   "ranks it waits for in collectives, its network "
			   "links).");
}

void rp_rule_health(struct rp_report *rep, struct rp_findings *fs)
{
	const struct rp_health *h;
	size_t i, e;
	double ref;
	int low, hot, memfull;

	if (rep->nranks < 2)
		return;
	for (i = 0; i < rep->nranks && rp_f_is_slow(rep, rep->order[i]);
	     i++) {
		e = rep->order[i];
		h = &rep->ranks[e]->health;
		if (!h->present || !h->samples)
			continue;
		ref = others_clock(rep, e);
		low = h->sm_mean > 0 && ref > 0 &&
		      h->sm_mean < RP_F_CLOCK_RATIO * ref;
		hot = rp_health_top_reason(h) != RP_R_N &&
		      h->reason[rp_health_top_reason(h)] >=
		      RP_F_THROTTLE_SHARE;
		memfull = h->mem_used_max >= 0 && h->mem_total > 0 &&
			  h->mem_used_max >= RP_F_MEMFULL_SHARE * h->mem_total;
		if (low || hot || memfull)
			throttled(rep, fs, e, ref, memfull);
		else
			healthy(rep, fs, e, ref);
	}
}
