/* tprof report --json: the report as one JSON object (schema in
 * docs/reference/summary-format.md, "tprof report --json"). Times are integer ns;
 * means and standard deviations have three decimals, ratios four. */
#include "report_data.h"
#include "report_host.h"

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
	tp_buf_lit(b, ", \"memory\": [");
	for (i = 0; i < r->nmem; i++) {
		tp_buf_cstr(b, i ? ", {\"device\": " : "{\"device\": ");
		rp_json_i64_or_null(b, r->mem[i].device);
		tp_buf_lit(b, ", \"peak_bytes\": ");
		rp_json_i64_or_null(b, r->mem[i].peak);
		tp_buf_lit(b, "}");
	}
	tp_buf_lit(b, "]}");
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
	for (i = 0; i < rep->nnames && i < RP_TOP_NAMES; i++) {
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
	const struct tp_json_node *c;
	size_t i;

	tp_buf_lit(b, ", \"idle_gaps\": [");
	for (i = 0; i < g->ngaps; i++) {
		rp_bprintf(b, "%s{\"start_ns\": %" PRId64 ", \"dur_ns\": %"
			   PRId64 ", \"cpu\": [", i ? ", " : "",
			   g->gaps[i].start, g->gaps[i].dur);
		for (c = g->gaps[i].cpu ? g->gaps[i].cpu->child : NULL; c;
		     c = c->next) {
			if (c != g->gaps[i].cpu->child)
				tp_buf_lit(b, ", ");
			tp_json_str(b, c->str);
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

void rp_write_json(const struct rp_report *rep, struct tp_buf *b)
{
	size_t i;

	tp_buf_lit(b, "{\n\"schema\": \"tprof.report\",\n"
		   "\"schema_version\": 1,\n\"ranks\": [");
	for (i = 0; i < rep->nranks; i++) {
		tp_buf_cstr(b, i ? ",\n " : "\n ");
		put_rank(b, rep, i);
	}
	tp_buf_lit(b, "],\n\"names\": [");
	for (i = 0; i < rep->nnames && i < RP_TOP_NAMES; i++) {
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
