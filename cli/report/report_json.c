/* tprof report --json: the report as one JSON object, every row of
 * every rank and every finding (schema: docs/reference/report-json.md).
 * Times are integer ns; means and standard deviations have three
 * decimals, ratios four. */
#include "report_data.h"
#include "findings/findings.h"
#include "report_host.h"

#include <math.h>
#include <inttypes.h>
#include <string.h>

static void str_or_null(struct tp_buf *b, const char *s)
{
	if (s)
		tp_json_str(b, s);
	else
		tp_buf_lit(b, "null");
}

/* "entry": E, "rank": R: the entry tells two inputs of one rank apart. */
static void put_who(struct tp_buf *b, const struct rp_report *rep, size_t e)
{
	tp_buf_lit(b, "\"entry\": ");
	tp_json_u64(b, e);
	tp_buf_lit(b, ", \"rank\": ");
	rp_json_i64_or_null(b, rep->ranks[e]->rank);
}

/* A time as an integer, null when not a number. */
static void put_ns(struct tp_buf *b, long double v)
{
	if (!isfinite((double)v))
		tp_buf_lit(b, "null");
	else
		tp_json_i64(b, (int64_t)llroundl(v));
}

static void put_figure(struct tp_buf *b, const char *key, long double v,
		       int known)
{
	rp_bprintf(b, ", \"%s\": ", key);
	if (known)
		put_ns(b, v);
	else
		tp_buf_lit(b, "null");
}

/* The rank's figures per step (the Ranks table), and its findings. */
static void put_figures(struct tp_buf *b, const struct rp_report *rep,
			size_t e)
{
	const struct rp_rankm *m = &rep->m[e];
	size_t i;

	rp_bprintf(b, ",\n  \"per\": \"%s\"", m->has_steps ? "step" : "run");
	put_figure(b, "step_ns", m->step, m->step > 0);
	put_figure(b, "own_step_ns", m->own, m->step > 0);
	put_figure(b, "gpu_busy_ns", m->busy, m->has_gpu);
	put_figure(b, "gpu_idle_ns", m->idle, m->has_gpu);
	put_figure(b, "compute_ns", m->compute, m->has_gpu);
	put_figure(b, "comm_ns", m->comm, m->has_gpu);
	put_figure(b, "exposed_comm_ns", m->exposed, m->has_gpu);
	tp_buf_lit(b, ", \"kernels\": ");
	if (m->has_gpu)
		rp_json_milli(b, m->kernels);
	else
		tp_buf_lit(b, "null");
	tp_buf_lit(b, ", \"findings\": [");
	for (i = 0; i < m->nfindings; i++)
		rp_bprintf(b, "%s%zu", i ? ", " : "", m->findings[i]);
	tp_buf_lit(b, "]");
}

static void put_rank(struct tp_buf *b, const struct rp_report *rep, size_t e)
{
	const struct rp_rank *r = rep->ranks[e];
	size_t i;

	tp_buf_lit(b, "{");
	put_who(b, rep, e);
	tp_buf_lit(b, ", \"label\": ");
	tp_json_str(b, r->label);
	tp_buf_lit(b, ", \"file\": ");
	tp_json_str(b, r->path);
	tp_buf_lit(b, ", \"kind\": ");
	tp_json_str(b, r->kind);
	tp_buf_lit(b, ", \"source\": ");
	str_or_null(b, r->source);
	tp_buf_lit(b, ", \"name\": ");
	str_or_null(b, r->name);
	tp_buf_lit(b, ", \"host\": ");
	str_or_null(b, r->host);
	tp_buf_lit(b, ", \"pid\": ");
	rp_json_i64_or_null(b, r->pid);
	tp_buf_lit(b, ", \"world_size\": ");
	rp_json_i64_or_null(b, r->world_size);
	tp_buf_lit(b, ", \"wall_ns\": ");
	rp_json_i64_or_null(b, r->wall_ns);
	tp_buf_lit(b, ", \"events\": ");
	tp_json_u64(b, r->events);
	tp_buf_lit(b, ", \"dropped\": ");
	tp_json_u64(b, r->dropped);
	tp_buf_lit(b, ", \"steps\": ");
	tp_json_u64(b, r->steps_count);
	put_figures(b, rep, e);
	tp_buf_lit(b, ", \"memory\": [");
	for (i = 0; i < r->nmem; i++) {
		tp_buf_cstr(b, i ? ", {\"device\": " : "{\"device\": ");
		rp_json_i64_or_null(b, r->mem[i].device);
		tp_buf_lit(b, ", \"peak_bytes\": ");
		rp_json_i64_or_null(b, r->mem[i].peak);
		tp_buf_lit(b, ", \"capacity_bytes\": ");
		rp_json_i64_or_null(b, r->mem[i].capacity);
		tp_buf_lit(b, "}");
	}
	tp_buf_lit(b, "], \"gpu_health\": ");
	rp_health_json(b, &r->health);
	tp_buf_lit(b, "}");
}

static void put_per_rank(struct tp_buf *b, const struct rp_report *rep,
			 const struct rp_name *nm)
{
	const struct rp_row *row;
	const char *sep = "";
	size_t e;

	tp_buf_lit(b, ",\n  \"per_rank\": [");
	for (e = 0; e < rep->nranks; e++) {
		row = nm->rows[e];
		if (!row)
			continue;
		tp_buf_cstr(b, sep);
		sep = ", ";
		tp_buf_lit(b, "{");
		put_who(b, rep, e);
		tp_buf_lit(b, ", \"count\": ");
		tp_json_u64(b, row->count);
		tp_buf_lit(b, ", \"total_ns\": ");
		tp_json_i64(b, row->total);
		tp_buf_lit(b, ", \"mean_ns\": ");
		rp_json_milli(b, row->count ?
			      (long double)row->total / row->count : 0);
		tp_buf_lit(b, ", \"std_ns\": ");
		rp_json_milli(b, row->std);
		tp_buf_lit(b, ", \"min_ns\": ");
		rp_json_i64_or_null(b, row->min);
		tp_buf_lit(b, ", \"max_ns\": ");
		rp_json_i64_or_null(b, row->max);
		tp_buf_lit(b, ", \"dropped\": ");
		tp_json_u64(b, row->dropped);
		tp_buf_lit(b, "}");
	}
	tp_buf_lit(b, "]");
}

static void put_name(struct tp_buf *b, const struct rp_report *rep,
		     const struct rp_name *nm)
{
	tp_buf_lit(b, "{\"cat\": ");
	tp_json_str(b, nm->cat);
	tp_buf_lit(b, ", \"name\": ");
	tp_json_str(b, nm->name);
	tp_buf_lit(b, ",\n  \"ranks_present\": ");
	tp_json_u64(b, nm->present);
	tp_buf_lit(b, ", \"calls\": ");
	tp_json_u64(b, nm->count);
	tp_buf_lit(b, ", \"total_ns\": ");
	tp_json_i64(b, (int64_t)nm->sum_total);
	tp_buf_lit(b, ", \"mean_total_ns\": ");
	rp_json_milli(b, nm->mean_total);
	tp_buf_lit(b, ", \"std_total_ns\": ");
	rp_json_milli(b, nm->std_total);
	tp_buf_lit(b, ", \"min_total_ns\": ");
	tp_json_i64(b, nm->min_total);
	tp_buf_lit(b, ", \"max_total_ns\": ");
	tp_json_i64(b, nm->max_total);
	tp_buf_lit(b, ", \"mean_call_ns\": ");
	rp_json_milli(b, nm->mean_call);
	tp_buf_lit(b, ",\n  \"slowest\": {");
	put_who(b, rep, nm->slowest);
	tp_buf_lit(b, "}, \"imbalance\": ");
	rp_json_ratio(b, nm->imbalance);
	tp_buf_lit(b, ", \"straggler\": ");
	tp_buf_cstr(b, nm->straggler ? "true" : "false");
	put_per_rank(b, rep, nm);
	tp_buf_lit(b, "}");
}

static void put_steps(struct tp_buf *b, const struct rp_report *rep)
{
	const struct rp_steps *st;
	size_t e;

	tp_buf_lit(b, ",\n\"steps\": {\"median_mean_ns\": ");
	if (rep->with_steps)
		rp_json_milli(b, rep->steps_median);
	else
		tp_buf_lit(b, "null");
	tp_buf_lit(b, ", \"fastest_mean_ns\": ");
	if (rep->with_steps)
		rp_json_milli(b, rep->steps_fastest);
	else
		tp_buf_lit(b, "null");
	tp_buf_lit(b, ", \"reference_ns\": ");
	if (rep->with_steps)
		tp_json_i64(b, rep->steps_reference);
	else
		tp_buf_lit(b, "null");
	tp_buf_lit(b, ", \"ranks\": [");
	for (e = 0; e < rep->nranks; e++) {
		st = &rep->steps[e];
		tp_buf_cstr(b, e ? ",\n " : "\n ");
		tp_buf_lit(b, "{");
		put_who(b, rep, e);
		tp_buf_lit(b, ", \"count\": ");
		tp_json_u64(b, st->n);
		if (!st->n) {
			tp_buf_lit(b, ", \"mean_ns\": null, \"p50_ns\": null, "
				   "\"max_ns\": null, \"vs_fastest_ns\": null, "
				   "\"warmup_steps\": 0, \"verdict_ns\": null, "
				   "\"straggler\": false}");
			continue;
		}
		tp_buf_lit(b, ", \"mean_ns\": ");
		rp_json_milli(b, st->mean);
		tp_buf_lit(b, ", \"p50_ns\": ");
		tp_json_i64(b, st->p50);
		tp_buf_lit(b, ", \"max_ns\": ");
		tp_json_i64(b, st->max);
		tp_buf_lit(b, ", \"vs_fastest_ns\": ");
		rp_json_milli(b, st->vs_fastest);
		tp_buf_lit(b, ", \"warmup_steps\": ");
		tp_json_u64(b, st->warmup);
		tp_buf_lit(b, ", \"verdict_ns\": ");
		tp_json_i64(b, st->verdict);
		tp_buf_lit(b, ", \"straggler\": ");
		tp_buf_cstr(b, st->straggler ? "true}" : "false}");
	}
	tp_buf_lit(b, "]}");
}

static void put_straggler(struct tp_buf *b, const struct rp_report *rep,
			  const char **sep, const char *kind, size_t e,
			  long double value, long double ref)
{
	tp_buf_cstr(b, *sep);
	*sep = ",\n ";
	tp_buf_lit(b, "{\"kind\": ");
	tp_json_str(b, kind);
	tp_buf_lit(b, ", ");
	put_who(b, rep, e);
	tp_buf_lit(b, ", \"value_ns\": ");
	rp_json_milli(b, value);
	tp_buf_lit(b, ", \"reference_ns\": ");
	rp_json_milli(b, ref);
	tp_buf_lit(b, ", \"ratio\": ");
	rp_json_ratio(b, ref > 0 ? value / ref : 0);
}

static void put_stragglers(struct tp_buf *b, const struct rp_report *rep)
{
	const struct rp_name *nm;
	const char *sep = "\n ";
	size_t i;

	tp_buf_lit(b, ",\n\"stragglers\": [");
	for (i = 0; i < rep->nranks; i++) {
		if (!rep->steps[i].straggler)
			continue;
		put_straggler(b, rep, &sep, "steps", i, rep->steps[i].verdict,
			      rep->steps_reference);
		tp_buf_lit(b, "}");
	}
	for (i = 0; i < rep->nnames; i++) {
		nm = &rep->names[i];
		if (!nm->straggler)
			continue;
		put_straggler(b, rep, &sep, "name", nm->slowest,
			      nm->max_total, nm->mean_total);
		tp_buf_lit(b, ", \"cat\": ");
		tp_json_str(b, nm->cat);
		tp_buf_lit(b, ", \"name\": ");
		tp_json_str(b, nm->name);
		tp_buf_lit(b, "}");
	}
	tp_buf_lit(b, "]");
}

static void put_granges(struct tp_buf *b, const struct rp_gpu *g)
{
	const struct rp_grange *x;
	size_t i;

	tp_buf_lit(b, ", \"ranges\": [");
	for (i = 0; i < g->nranges; i++) {
		x = &g->ranges[i];
		tp_buf_cstr(b, i ? ", {\"name\": " : "{\"name\": ");
		tp_json_str(b, x->name);
		rp_bprintf(b, ", \"calls\": %" PRIu64 ", \"cpu_ns\": %" PRId64
			   ", \"gpu_ns\": %" PRId64 "}", x->calls, x->cpu_ns,
			   x->gpu_ns);
	}
	tp_buf_lit(b, "]");
}

static void put_gaps(struct tp_buf *b, const struct rp_gpu *g)
{
	size_t i, k;

	tp_buf_lit(b, ", \"idle_gaps\": [");
	for (i = 0; i < g->ngaps; i++) {
		rp_bprintf(b, "%s{\"start_ns\": %" PRId64 ", \"dur_ns\": %"
			   PRId64 ", \"cpu\": [", i ? ", " : "",
			   g->gaps[i].start, g->gaps[i].dur);
		for (k = 0; k < g->gaps[i].ncpu; k++) {
			if (k)
				tp_buf_lit(b, ", ");
			tp_json_str(b, g->gaps[i].cpu[k]);
		}
		tp_buf_lit(b, "]}");
	}
	tp_buf_lit(b, "]");
}

/* Per entry, its summary's gpu member, or null without one. */
static void put_gpu(struct tp_buf *b, const struct rp_report *rep)
{
	const struct rp_gpu *g;
	size_t e;

	tp_buf_lit(b, ",\n\"gpu\": [");
	for (e = 0; e < rep->nranks; e++) {
		g = &rep->ranks[e]->gpu;
		tp_buf_cstr(b, e ? ",\n {" : "\n {");
		put_who(b, rep, e);
		if (!g->present) {
			tp_buf_lit(b, ", \"gpu\": null}");
			continue;
		}
		rp_bprintf(b, ", \"kernels\": %" PRIu64 ", \"kernel_ns\": "
			   "%" PRId64 ", \"memcpys\": %" PRIu64 ", "
			   "\"memcpy_ns\": %" PRId64 ", \"memsets\": %" PRIu64
			   ", \"memset_ns\": %" PRId64 ", \"span_ns\": %" PRId64
			   ", \"busy_ns\": %" PRId64 ", \"idle_ns\": %" PRId64
			   ", \"compute_ns\": %" PRId64 ", \"non_compute_ns\": "
			   "%" PRId64 ", \"comm_ns\": %" PRId64 ", "
			   "\"memory_ns\": %" PRId64 ", \"overlap_ns\": %" PRId64,
			   g->kernels, g->kernel_ns, g->memcpys,
			   g->memcpy_ns, g->memsets, g->memset_ns, g->span_ns,
			   g->busy_ns, g->idle_ns, g->compute_ns,
			   g->non_compute_ns, g->comm_ns, g->memory_ns,
			   g->overlap_ns);
		rp_bprintf(b, ", \"steps_cpu_bound\": %" PRIu64 ", "
			   "\"steps_gpu_bound\": %" PRIu64, g->steps_cpu_bound,
			   g->steps_gpu_bound);
		rp_bprintf(b, ", \"launches\": %" PRIu64 ", "
			   "\"launch_delay_sum_ns\": %" PRId64 ", "
			   "\"launch_delay_min_ns\": %" PRId64 ", "
			   "\"launch_delay_p50_ns\": %" PRId64 ", "
			   "\"launch_delay_p90_ns\": %" PRId64 ", "
			   "\"launch_delay_max_ns\": %" PRId64, g->launches,
			   g->delay_sum, g->delay_min, g->delay_p50,
			   g->delay_p90, g->delay_max);
		put_granges(b, g);
		put_gaps(b, g);
		tp_buf_lit(b, "}");
	}
	tp_buf_lit(b, "]");
}

static void put_entries(struct tp_buf *b, const struct rp_report *rep,
			const char *key, const size_t *e, size_t n)
{
	size_t i;

	rp_bprintf(b, ", \"%s\": {\"entries\": [", key);
	for (i = 0; i < n; i++)
		rp_bprintf(b, "%s%zu", i ? ", " : "", e[i]);
	tp_buf_lit(b, "], \"ranks\": [");
	for (i = 0; i < n; i++) {
		if (i)
			tp_buf_lit(b, ", ");
		rp_json_i64_or_null(b, rep->ranks[e[i]]->rank);
	}
	tp_buf_lit(b, "]}");
}

static void put_text(struct tp_buf *b, const char *key, const char *s)
{
	rp_bprintf(b, ",\n  \"%s\": ", key);
	str_or_null(b, s);
}

static void put_finding(struct tp_buf *b, const struct rp_report *rep,
			const struct rp_finding *f)
{
	struct tp_buf h = { 0 };
	size_t i;

	rp_bprintf(b, "{\"id\": %zu, \"kind\": \"%s\"", f->id,
		   rp_fkind_name(f->kind));
	put_entries(b, rep, "who", f->ranks, f->nranks);
	if (f->nwaited)
		put_entries(b, rep, "waiting_for", f->waited, f->nwaited);
	tp_buf_lit(b, ",\n  \"cost_ns\": ");
	if (f->cost < 0)
		tp_buf_lit(b, "null");
	else
		put_ns(b, f->cost);
	rp_bprintf(b, ", \"per\": \"%s\", \"of_ns\": ",
		   f->per_run ? "run" : "step");
	put_ns(b, f->step);
	tp_buf_lit(b, ", \"share\": ");
	if (f->cost < 0 || f->step <= 0)
		tp_buf_lit(b, "null");
	else
		rp_json_ratio(b, f->cost / f->step);
	tp_buf_lit(b, ", \"step\": ");
	rp_json_i64_or_null(b, f->step_index);
	rp_finding_headline(&h, rep, f);
	tp_buf_char(&h, 0);
	put_text(b, "headline", h.oom ? NULL : h.p);
	tp_buf_free(&h);
	put_text(b, "title", f->title);
	put_text(b, "where", f->where);
	rp_bprintf(b, ",\n  \"names_are\": ");
	str_or_null(b, f->nnames ? f->names_are : NULL);
	tp_buf_lit(b, ", \"names\": [");
	for (i = 0; i < f->nnames; i++) {
		if (i)
			tp_buf_lit(b, ", ");
		tp_json_str(b, f->names[i]);
	}
	tp_buf_lit(b, "]");
	put_text(b, "evidence", f->evidence);
	put_text(b, "try", f->try_);
	put_text(b, "caveat", f->caveat);
	tp_buf_lit(b, "}");
}

/* The median rank's figures, the references of the findings. */
static void put_reference(struct tp_buf *b, const struct rp_report *rep)
{
	const struct rp_rankm *m = &rep->ref;

	tp_buf_lit(b, ",\n\"median\": {");
	tp_buf_lit(b, "\"step_ns\": ");
	put_ns(b, m->step);
	put_figure(b, "own_step_ns", m->own, 1);
	put_figure(b, "gpu_busy_ns", m->busy, 1);
	put_figure(b, "gpu_idle_ns", m->idle, 1);
	put_figure(b, "compute_ns", m->compute, 1);
	put_figure(b, "comm_ns", m->comm, 1);
	put_figure(b, "exposed_comm_ns", m->exposed, 1);
	put_figure(b, "least_exposed_comm_ns", rep->min_exposed, 1);
	tp_buf_lit(b, "}");
}

void rp_write_json(const struct rp_report *rep, struct tp_buf *b)
{
	size_t i;

	tp_buf_lit(b, "{\n\"schema\": \"tprof.report\",\n"
		   "\"schema_version\": 2,\n\"findings\": [");
	for (i = 0; i < rep->fs->n; i++) {
		tp_buf_cstr(b, i ? ",\n " : "\n ");
		put_finding(b, rep, &rep->fs->v[i]);
	}
	tp_buf_lit(b, "]");
	put_reference(b, rep);
	tp_buf_lit(b, ",\n\"ranks\": [");
	for (i = 0; i < rep->nranks; i++) {
		tp_buf_cstr(b, i ? ",\n " : "\n ");
		put_rank(b, rep, i);
	}
	tp_buf_lit(b, "],\n\"names\": [");
	for (i = 0; i < rep->nnames; i++) {
		tp_buf_cstr(b, i ? ",\n " : "\n ");
		put_name(b, rep, &rep->names[i]);
	}
	tp_buf_lit(b, "]");
	put_steps(b, rep);
	put_gpu(b, rep);
	rp_host_json(rep, b);
	put_stragglers(b, rep);
	tp_buf_lit(b, "\n}\n");
}
