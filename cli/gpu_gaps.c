/* The longest GPU-idle intervals (found by gpu_time.c) with what the
 * CPU was doing then: the CPU events enclosing each gap's middle, from
 * the outermost to the innermost (a step, an op, the call that waited).
 * CPU spans are kept (24 bytes each, names interned) until the trace
 * ends; each gap then scans them once.
 *
 * Calls only intern.c and the JSON buffer helpers. Fed by
 * trace_summary.c.
 */
#include "gpu_gaps.h"
#include "intern.h"

#include <stdlib.h>
#include <string.h>

struct cpu {
	int64_t ts, end;
	uint32_t name;
};

struct tp_ggaps {
	struct cpu *v;
	size_t n, cap;
	struct tp_intern strs;
};

struct tp_ggaps *tp_ggaps_new(void)
{
	return calloc(1, sizeof(struct tp_ggaps));
}

void tp_ggaps_free(struct tp_ggaps *g)
{
	if (!g)
		return;
	tp_intern_free(&g->strs);
	free(g->v);
	free(g);
}

int tp_ggaps_cpu(struct tp_ggaps *g, const char *name, int64_t ts,
		 int64_t dur)
{
	int64_t id = tp_intern(&g->strs, name);
	struct cpu *v;

	if (id < 0)
		return -1;
	if (g->n == g->cap) {
		g->cap = g->cap ? g->cap * 2 : 1024;
		v = realloc(g->v, g->cap * sizeof(*v));
		if (!v)
			return -1;
		g->v = v;
	}
	g->v[g->n].ts = ts;
	g->v[g->n].end = ts + dur;
	g->v[g->n].name = (uint32_t)id;
	g->n++;
	return 0;
}

/* Keeps the TP_GAP_CPU shortest spans holding t, longest first. */
static size_t enclosing(const struct tp_ggaps *g, int64_t t,
			const struct cpu **out)
{
	size_t i, k, n = 0;

	for (i = 0; i < g->n; i++) {
		const struct cpu *c = &g->v[i];

		if (c->ts > t || c->end <= t)
			continue;
		if (n == TP_GAP_CPU &&
		    c->end - c->ts >= out[0]->end - out[0]->ts)
			continue;
		if (n == TP_GAP_CPU) {
			memmove(out, out + 1, --n * sizeof(*out));
		}
		for (k = n; k && out[k - 1]->end - out[k - 1]->ts <
			    c->end - c->ts; k--)
			out[k] = out[k - 1];
		out[k] = c;
		n++;
	}
	return n;
}

void tp_ggaps_write_json(struct tp_ggaps *g, const struct tp_gpu_stats *st,
			 struct tp_buf *b)
{
	const struct cpu *in[TP_GAP_CPU];
	size_t i, k, n;
	int64_t a, e;

	tp_buf_lit(b, ", \"idle_gaps\": [");
	for (i = 0; i < st->ngaps; i++) {
		a = st->gaps[i].start;
		e = st->gaps[i].end;
		tp_buf_cstr(b, i ? ",\n  {\"start_ns\": " :
				   "\n  {\"start_ns\": ");
		tp_json_i64(b, a);
		tp_buf_lit(b, ", \"dur_ns\": ");
		tp_json_i64(b, e - a);
		tp_buf_lit(b, ", \"cpu\": [");
		n = enclosing(g, a + (e - a) / 2, in);
		for (k = 0; k < n; k++) {
			if (k)
				tp_buf_lit(b, ", ");
			tp_json_str(b, g->strs.s[in[k]->name]);
		}
		tp_buf_lit(b, "]}");
	}
	tp_buf_lit(b, "]");
}
