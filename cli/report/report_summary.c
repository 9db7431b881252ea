/* tprof report: summary.json text to struct rp_rank.
 *
 * The whole document is parsed into a DOM (summaries are small: rows,
 * at most 100000 steps, 512 memory points per device); what the report
 * uses is then copied out, its strings into one block the rank keeps,
 * and the DOM freed: a DOM node is 80 bytes, and 4096 ranks' trees held
 * 540 MB where their figures need a tenth of that. A member left out
 * reads as null; a member of the wrong type is an error, since a file
 * that says it is a summary and is not one should not be guessed at.
 */
#include "report_data.h"
#include "report_host.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "summary/hist.h"
#include "summary/summary.h"

typedef const struct tp_json_node jnode;

struct sp {
	struct rp_rank *r;
	char *err;
	size_t errlen;
};

static int bad(struct sp *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int bad(struct sp *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->err, p->errlen, fmt, ap);
	va_end(ap);
	return -1;
}

static int is_null(jnode *n)
{
	return !n || n->type == TP_JSON_NULL;
}

/* An integer member, RP_NONE when null or left out. */
static int get_i64(struct sp *p, jnode *obj, const char *key,
		   const char *where, int64_t *v)
{
	jnode *n = tp_json_get(obj, key);

	*v = RP_NONE;
	if (is_null(n))
		return 0;
	if (!tp_json_int64(n, v) || *v == RP_NONE)
		return bad(p, "%s\"%s\" is not an integer", where, key);
	return 0;
}

/* A count: a non-negative integer, 0 when null. */
static int get_u64(struct sp *p, jnode *obj, const char *key,
		   const char *where, uint64_t *v)
{
	int64_t x;

	if (get_i64(p, obj, key, where, &x))
		return -1;
	if (x != RP_NONE && x < 0)
		return bad(p, "%s\"%s\" is negative", where, key);
	*v = x == RP_NONE ? 0 : (uint64_t)x;
	return 0;
}

static int get_num(struct sp *p, jnode *obj, const char *key,
		   const char *where, double *v)
{
	jnode *n = tp_json_get(obj, key);

	*v = 0;
	if (is_null(n))
		return 0;
	if (n->type != TP_JSON_NUMBER)
		return bad(p, "%s\"%s\" is not a number", where, key);
	*v = n->num;
	return 0;
}

static int get_str(struct sp *p, jnode *obj, const char *key,
		   const char *where, const char **v)
{
	jnode *n = tp_json_get(obj, key);

	*v = NULL;
	if (is_null(n))
		return 0;
	if (n->type != TP_JSON_STRING)
		return bad(p, "%s\"%s\" is not a string", where, key);
	*v = n->str;
	return 0;
}

/* An array member (NULL when null or left out). */
static int get_arr(struct sp *p, jnode *obj, const char *key,
		   const char *where, jnode **v)
{
	jnode *n = tp_json_get(obj, key);

	*v = NULL;
	if (is_null(n))
		return 0;
	if (n->type != TP_JSON_ARRAY)
		return bad(p, "%s\"%s\" is not an array", where, key);
	*v = n;
	return 0;
}

/* [a, b, ...] of k integers. */
static int int_tuple(jnode *n, int64_t *out, unsigned k)
{
	unsigned i = 0;

	if (!n || n->type != TP_JSON_ARRAY || n->len != k)
		return -1;
	for (n = n->child; n; n = n->next, i++)
		if (!tp_json_int64(n, &out[i]))
			return -1;
	return 0;
}

static void *alloc_n(size_t n, size_t size)
{
	return calloc(n ? n : 1, size);
}

static int bucket_cmp(const void *a, const void *b)
{
	uint32_t x = ((const struct rp_bucket *)a)->b;
	uint32_t y = ((const struct rp_bucket *)b)->b;

	return x < y ? -1 : x > y;
}

static int parse_hist(struct sp *p, struct rp_row *row, jnode *arr,
		      const char *where)
{
	jnode *n;
	int64_t v[2];

	if (!arr)
		return 0;
	row->hist = alloc_n(arr->len, sizeof(*row->hist));
	if (!row->hist)
		return bad(p, "out of memory");
	for (n = arr->child; n; n = n->next) {
		if (int_tuple(n, v, 2) || v[0] < 0 || v[0] >= TP_HIST_BUCKETS ||
		    v[1] < 0)
			return bad(p, "%s\"hist\" is not a list of [BUCKET, "
				   "COUNT]", where);
		row->hist[row->nhist].b = (uint32_t)v[0];
		row->hist[row->nhist++].n = (uint64_t)v[1];
	}
	/* the charts walk buckets in order; a hand-made file may not be */
	qsort(row->hist, row->nhist, sizeof(*row->hist), bucket_cmp);
	return 0;
}

static int parse_row(struct sp *p, struct rp_row *row, jnode *n, size_t i)
{
	char where[48];
	jnode *hist;

	snprintf(where, sizeof(where), "calls[%zu]: ", i);
	if (n->type != TP_JSON_OBJECT)
		return bad(p, "calls[%zu] is not an object", i);
	if (get_str(p, n, "cat", where, &row->cat) ||
	    get_str(p, n, "name", where, &row->name) ||
	    get_u64(p, n, "count", where, &row->count) ||
	    get_u64(p, n, "dropped", where, &row->dropped) ||
	    get_i64(p, n, "total_ns", where, &row->total) ||
	    get_i64(p, n, "min_ns", where, &row->min) ||
	    get_i64(p, n, "max_ns", where, &row->max) ||
	    get_num(p, n, "mean_ns", where, &row->mean) ||
	    get_num(p, n, "std_ns", where, &row->std) ||
	    get_arr(p, n, "hist", where, &hist))
		return -1;
	if (!row->cat)
		row->cat = "";
	if (!row->name)
		return bad(p, "%sno \"name\"", where);
	if (row->total == RP_NONE)
		return bad(p, "%sno \"total_ns\"", where);
	return parse_hist(p, row, hist, where);
}

static int parse_calls(struct sp *p, jnode *root)
{
	struct rp_rank *r = p->r;
	jnode *arr, *n;
	size_t i;

	if (get_arr(p, root, "calls", "", &arr))
		return -1;
	if (!arr)
		return 0;
	r->rows = alloc_n(arr->len, sizeof(*r->rows));
	if (!r->rows)
		return bad(p, "out of memory");
	/* counted first, so that rp_rank_free sees a half-parsed row */
	for (n = arr->child; n; n = n->next) {
		i = r->nrows++;
		if (parse_row(p, &r->rows[i], n, i))
			return -1;
	}
	return 0;
}

static int parse_steps(struct sp *p, jnode *root)
{
	struct rp_rank *r = p->r;
	jnode *steps = tp_json_get(root, "steps"), *arr, *n;
	int64_t v[3];

	if (is_null(steps))
		return 0;
	if (steps->type != TP_JSON_OBJECT)
		return bad(p, "\"steps\" is not an object");
	if (get_u64(p, steps, "count", "steps: ", &r->steps_count) ||
	    get_arr(p, steps, "times", "steps: ", &arr))
		return -1;
	if (!arr)
		return 0;
	r->steps = alloc_n(arr->len, sizeof(*r->steps));
	if (!r->steps)
		return bad(p, "out of memory");
	for (n = arr->child; n; n = n->next) {
		if (int_tuple(n, v, 3) || v[2] < 0)
			return bad(p, "steps.times[%zu] is not [STEP, TS_NS, "
				   "DUR_NS]", r->nsteps);
		r->steps[r->nsteps++] = (struct rp_step){ v[0], v[1], v[2] };
	}
	return 0;
}

static int parse_points(struct sp *p, struct rp_mem *m, jnode *arr,
			size_t i)
{
	jnode *n;
	int64_t v[2];

	if (!arr)
		return 0;
	m->pts = alloc_n(arr->len, sizeof(*m->pts));
	if (!m->pts)
		return bad(p, "out of memory");
	for (n = arr->child; n; n = n->next) {
		if (int_tuple(n, v, 2))
			return bad(p, "memory[%zu].points[%zu] is not "
				   "[TS_NS, BYTES]", i, m->npts);
		m->pts[m->npts++] = (struct rp_point){ v[0], v[1] };
	}
	return 0;
}

static int parse_memory(struct sp *p, jnode *root)
{
	struct rp_rank *r = p->r;
	jnode *arr, *n, *pts;
	struct rp_mem *m;
	char where[40];

	if (get_arr(p, root, "memory", "", &arr))
		return -1;
	if (!arr)
		return 0;
	r->mem = alloc_n(arr->len, sizeof(*r->mem));
	if (!r->mem)
		return bad(p, "out of memory");
	for (n = arr->child; n; n = n->next) {
		m = &r->mem[r->nmem];
		snprintf(where, sizeof(where), "memory[%zu]: ", r->nmem);
		if (n->type != TP_JSON_OBJECT)
			return bad(p, "memory[%zu] is not an object", r->nmem);
		r->nmem++;
		if (get_i64(p, n, "device", where, &m->device) ||
		    get_i64(p, n, "peak_bytes", where, &m->peak) ||
		    get_i64(p, n, "capacity_bytes", where, &m->capacity) ||
		    get_arr(p, n, "points", where, &pts) ||
		    parse_points(p, m, pts, r->nmem - 1))
			return -1;
	}
	return 0;
}

static int parse_granges(struct sp *p, jnode *gpu)
{
	struct rp_gpu *g = &p->r->gpu;
	struct rp_grange *x;
	char where[48];
	jnode *arr, *n;

	if (get_arr(p, gpu, "ranges", "gpu: ", &arr))
		return -1;
	if (!arr)
		return 0;
	g->ranges = alloc_n(arr->len, sizeof(*g->ranges));
	if (!g->ranges)
		return bad(p, "out of memory");
	for (n = arr->child; n; n = n->next) {
		x = &g->ranges[g->nranges];
		snprintf(where, sizeof(where), "gpu.ranges[%zu]: ", g->nranges);
		if (n->type != TP_JSON_OBJECT)
			return bad(p, "%sis not an object", where);
		g->nranges++;
		if (get_str(p, n, "name", where, &x->name) ||
		    get_u64(p, n, "calls", where, &x->calls) ||
		    get_i64(p, n, "cpu_ns", where, &x->cpu_ns) ||
		    get_i64(p, n, "gpu_ns", where, &x->gpu_ns))
			return -1;
		if (!x->name)
			return bad(p, "%s\"name\" is null", where);
	}
	return 0;
}

static int parse_gaps(struct sp *p, jnode *gpu)
{
	struct rp_gpu *g = &p->r->gpu;
	struct rp_gap *x;
	char where[48];
	jnode *arr, *n, *c, *cpu;

	if (get_arr(p, gpu, "idle_gaps", "gpu: ", &arr))
		return -1;
	if (!arr)
		return 0;
	g->gaps = alloc_n(arr->len, sizeof(*g->gaps));
	if (!g->gaps)
		return bad(p, "out of memory");
	for (n = arr->child; n; n = n->next) {
		x = &g->gaps[g->ngaps];
		snprintf(where, sizeof(where), "gpu.idle_gaps[%zu]: ",
			 g->ngaps);
		if (n->type != TP_JSON_OBJECT)
			return bad(p, "%sis not an object", where);
		g->ngaps++;
		if (get_i64(p, n, "start_ns", where, &x->start) ||
		    get_i64(p, n, "dur_ns", where, &x->dur) ||
		    get_arr(p, n, "cpu", where, &cpu))
			return -1;
		if (!cpu)
			continue;
		x->cpu = alloc_n(cpu->len, sizeof(*x->cpu));
		if (!x->cpu)
			return bad(p, "out of memory");
		for (c = cpu->child; c; c = c->next) {
			if (c->type != TP_JSON_STRING)
				return bad(p, "%s\"cpu\" holds a non-string",
					   where);
			x->cpu[x->ncpu++] = c->str;
		}
	}
	return 0;
}

/* "utilisation": busy ns per part of the span. */
static int parse_util(struct sp *p, jnode *gpu)
{
	struct rp_gpu *g = &p->r->gpu;
	jnode *arr, *n;

	if (get_arr(p, gpu, "utilisation", "gpu: ", &arr))
		return -1;
	if (!arr)
		return 0;
	g->util = alloc_n(arr->len, sizeof(*g->util));
	if (!g->util)
		return bad(p, "out of memory");
	for (n = arr->child; n; n = n->next)
		if (!tp_json_int64(n, &g->util[g->nutil++]))
			return bad(p, "gpu: \"utilisation\" is not a list of "
				   "integers");
	return 0;
}

/* "approx" (version 2): what the library's window could not keep
 * exact; all zero when absent. */
static int parse_approx(struct sp *p, jnode *gpu)
{
	static const char w[] = "gpu.approx: ";
	struct rp_approx *a = &p->r->gpu.approx;
	jnode *n = tp_json_get(gpu, "approx");

	if (is_null(n))
		return 0;
	if (n->type != TP_JSON_OBJECT)
		return bad(p, "gpu: \"approx\" is not an object");
	if (get_u64(p, n, "late_slices", w, &a->late_slices) ||
	    get_i64(p, n, "late_slice_ns", w, &a->late_slice_ns) ||
	    get_u64(p, n, "calls_evicted", w, &a->calls_evicted) ||
	    get_u64(p, n, "cpu_dropped", w, &a->cpu_dropped))
		return -1;
	if (a->late_slice_ns == RP_NONE)
		a->late_slice_ns = 0;
	return 0;
}

/* The optional "gpu" member (version 1: summaries computed from traces;
 * 2: also those written at exit, with "window" and "approx", which the
 * report does not need): left zero when absent. */
static int parse_gpu(struct sp *p, jnode *root)
{
	static const char w[] = "gpu: ";
	struct rp_gpu *g = &p->r->gpu;
	jnode *n = tp_json_get(root, "gpu");
	int64_t ver;

	if (is_null(n))
		return 0;
	if (n->type != TP_JSON_OBJECT)
		return bad(p, "\"gpu\" is not an object");
	if (get_i64(p, n, "version", w, &ver))
		return -1;
	if (ver != 1 && ver != 2)
		return 0;	/* a later layout: not ours to read */
	g->present = 1;
	return get_u64(p, n, "kernels", w, &g->kernels) ||
	       get_u64(p, n, "memcpys", w, &g->memcpys) ||
	       get_u64(p, n, "memsets", w, &g->memsets) ||
	       get_i64(p, n, "kernel_ns", w, &g->kernel_ns) ||
	       get_i64(p, n, "memcpy_ns", w, &g->memcpy_ns) ||
	       get_i64(p, n, "memset_ns", w, &g->memset_ns) ||
	       get_i64(p, n, "span_ns", w, &g->span_ns) ||
	       get_i64(p, n, "busy_ns", w, &g->busy_ns) ||
	       get_i64(p, n, "idle_ns", w, &g->idle_ns) ||
	       get_i64(p, n, "compute_ns", w, &g->compute_ns) ||
	       get_i64(p, n, "comm_ns", w, &g->comm_ns) ||
	       get_i64(p, n, "memory_ns", w, &g->memory_ns) ||
	       get_i64(p, n, "non_compute_ns", w, &g->non_compute_ns) ||
	       get_i64(p, n, "overlap_ns", w, &g->overlap_ns) ||
	       get_u64(p, n, "launches", w, &g->launches) ||
	       get_u64(p, n, "steps_cpu_bound", w, &g->steps_cpu_bound) ||
	       get_u64(p, n, "steps_gpu_bound", w, &g->steps_gpu_bound) ||
	       get_i64(p, n, "launch_delay_sum_ns", w, &g->delay_sum) ||
	       get_i64(p, n, "launch_delay_min_ns", w, &g->delay_min) ||
	       get_i64(p, n, "launch_delay_p50_ns", w, &g->delay_p50) ||
	       get_i64(p, n, "launch_delay_p90_ns", w, &g->delay_p90) ||
	       get_i64(p, n, "launch_delay_max_ns", w, &g->delay_max) ||
	       get_i64(p, n, "start_ns", w, &g->start_ns) ||
	       parse_util(p, n) || parse_approx(p, n) ||
	       parse_granges(p, n) || parse_gaps(p, n) ? -1 : 0;
}

static int parse_head(struct sp *p, jnode *root)
{
	struct rp_rank *r = p->r;
	jnode *schema = tp_json_get(root, "schema");
	int64_t ver;

	if (!schema || schema->type != TP_JSON_STRING ||
	    strcmp(schema->str, "tprof.summary"))
		return bad(p, "neither a trace (no \"traceEvents\") nor a "
			   "tprof summary (no \"schema\": \"tprof.summary\")");
	if (get_i64(p, root, "schema_version", "", &ver))
		return -1;
	/* 1 differs from 2 only in where the "gpu" member may be */
	if (ver < 1 || ver > TP_SUMMARY_SCHEMA_VERSION) {
		if (ver == RP_NONE)
			return bad(p, "summary without a \"schema_version\"");
		return bad(p, "summary schema_version %" PRId64 " is not "
			   "supported (this tprof reads 1 to %d)", ver,
			   TP_SUMMARY_SCHEMA_VERSION);
	}
	return get_str(p, root, "source", "", &r->source) ||
	       get_str(p, root, "name", "", &r->name) ||
	       get_str(p, root, "host", "", &r->host) ||
	       get_str(p, root, "trace", "", &r->trace) ||
	       get_i64(p, root, "pid", "", &r->pid) ||
	       get_i64(p, root, "rank", "", &r->rank) ||
	       get_i64(p, root, "world_size", "", &r->world_size) ||
	       get_i64(p, root, "base_time_ns", "", &r->base_ns) ||
	       get_i64(p, root, "wall_ns", "", &r->wall_ns) ||
	       get_u64(p, root, "events", "", &r->events) ||
	       get_u64(p, root, "dropped", "", &r->dropped) ? -1 : 0;
}

/* Every string the rank points at, in one order, for sizing and for
 * copying (out NULL: only count). */
static size_t strings(struct rp_rank *r, char *out)
{
	const char **v[4] = { &r->source, &r->name, &r->host, &r->trace };
	struct rp_gpu *g = &r->gpu;
	size_t i, k, n = 0;

#define KEEP(ptr) do { \
		size_t l_ = strlen(ptr) + 1; \
		if (out) { \
			memcpy(out + n, ptr, l_); \
			ptr = out + n; \
		} \
		n += l_; \
	} while (0)
	for (i = 0; i < 4; i++)
		if (*v[i])
			KEEP(*v[i]);
	for (i = 0; i < r->nrows; i++) {
		KEEP(r->rows[i].cat);
		KEEP(r->rows[i].name);
	}
	for (i = 0; i < g->nranges; i++)
		KEEP(g->ranges[i].name);
	for (i = 0; i < g->ngaps; i++)
		for (k = 0; k < g->gaps[i].ncpu; k++)
			KEEP(g->gaps[i].cpu[k]);
#undef KEEP
	return n;
}

/* The strings out of the DOM, into r->strs. */
static int keep_strings(struct sp *p)
{
	size_t n = strings(p->r, NULL);

	p->r->strs = malloc(n ? n : 1);
	if (!p->r->strs)
		return bad(p, "out of memory");
	strings(p->r, p->r->strs);
	return 0;
}

int rp_summary_parse(struct rp_rank *r, const char *buf, size_t len,
		     char *err, size_t errlen)
{
	struct sp p = { r, err, errlen };
	struct tp_json_arena arena = { 0 };
	struct tp_json_node *root;
	struct tp_json_err je;
	int ret = -1;

	err[0] = 0;
	r->rank = RP_NONE;
	if (tp_json_parse_mem(buf, len, &arena, &root, &je)) {
		bad(&p, "invalid JSON at line %lu, column %lu: %s", je.line,
		    je.col, je.msg);
		goto out;
	}
	if (root->type != TP_JSON_OBJECT) {
		bad(&p, "neither a trace nor a tprof summary (the top-level "
		    "value is not an object)");
		goto out;
	}
	if (parse_head(&p, root) || parse_steps(&p, root) ||
	    parse_calls(&p, root) || parse_memory(&p, root) ||
	    parse_gpu(&p, root) || keep_strings(&p) ||
	    rp_health_parse(r, tp_json_get(root, "gpu_health"), err, errlen) ||
	    rp_host_read(&r->host_activity, tp_json_get(root, "host_activity"), err,
			 errlen))
		goto out;
	if (r->steps_count < r->nsteps)
		r->steps_count = r->nsteps;
	ret = 0;
out:
	tp_json_arena_free(&arena);
	return ret;
}

void rp_rank_free(struct rp_rank *r)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; i < r->nrows; i++)
		free(r->rows[i].hist);
	for (i = 0; i < r->nmem; i++)
		free(r->mem[i].pts);
	free(r->rows);
	free(r->mem);
	for (i = 0; i < r->gpu.ngaps; i++)
		free(r->gpu.gaps[i].cpu);
	free(r->gpu.ranges);
	free(r->gpu.gaps);
	free(r->gpu.util);
	free(r->steps);
	free(r->path);
	free(r->strs);
	rp_host_free(&r->host_activity);
	tp_buf_free(&r->json);
	free(r);
}
