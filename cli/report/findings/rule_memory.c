/* Rule: device memory near the device's capacity. A rank whose peak of
 * allocated device memory (summary "memory": tprof's GPU memory counter
 * or torch's [memory] events) reaches RP_F_MEM_SHARE of the device's
 * memory (memory[].capacity_bytes, from the trace's deviceProperties).
 * No time cost is measured; the allocator calls it makes each step are
 * given as evidence when there are any. */
#include "findings_int.h"

#include <stdlib.h>
#include <string.h>

/* The rank's fullest device, as peak / capacity; -1 when none is near
 * its capacity or unknown. */
static long double fullest(const struct rp_rank *r, size_t *dev)
{
	long double best = -1, x;
	size_t i;

	for (i = 0; i < r->nmem; i++) {
		const struct rp_mem *m = &r->mem[i];

		if (m->capacity == RP_NONE || m->capacity <= 0 ||
		    m->peak == RP_NONE)
			continue;
		x = (long double)m->peak / m->capacity;
		if (x >= RP_F_MEM_SHARE && x > best) {
			best = x;
			*dev = i;
		}
	}
	return best;
}

/* cudaFree and cudaMalloc made at least once a step. */
static void allocator_calls(struct tp_buf *b, const struct rp_report *rep,
			    size_t e)
{
	const struct rp_rank *r = rep->ranks[e];
	const struct rp_rankm *m = &rep->m[e];
	const struct rp_row *row;
	char t[40];
	size_t i;

	if (!m->has_steps)
		return;
	for (i = 0; i < r->nrows; i++) {
		row = &r->rows[i];
		if (!rp_f_cat(row, "cuda_runtime") || row->count < m->div ||
		    (strcmp(row->name, "cudaFree") &&
		     strcmp(row->name, "cudaMalloc")))
			continue;
		rp_bprintf(b, " It calls %s %.1Lf times a step (%s per step): "
			   "the caching allocator frees and retries.",
			   row->name, row->count / m->div,
			   rp_fmt_ns(t, sizeof(t), row->total / m->div));
	}
}

void rp_rule_memory(struct rp_report *rep, struct rp_findings *fs)
{
	size_t e, n = 0, dev = 0, d, k = 0, *v = rp_f_per_rank(rep,
								 sizeof(*v));
	long double x, top = -1;
	struct rp_finding *f;
	struct tp_buf b = { 0 };
	const struct rp_mem *m;
	char t[3][40];

	if (!v) {
		fs->oom = 1;
		return;
	}
	for (e = 0; e < rep->nranks; e++) {
		x = fullest(rep->ranks[e], &d);
		if (x < 0)
			continue;
		v[n++] = e;
		if (x > top) {
			top = x;
			k = e;
			dev = d;
		}
	}
	f = n ? rp_f_add(fs, RP_F_MEMORY, v, n, -1, rep->ref.step) : NULL;
	free(v);
	if (!f)
		return;
	m = &rep->ranks[k]->mem[dev];
	f->title = rp_f_str(fs, "device memory near its capacity (%s of "
			    "%s)", rp_fmt_pct(t[0], 40, m->peak, m->capacity),
			    rp_fmt_bytes(t[1], 40, m->capacity));
	rp_bprintf(&b, "The fullest: rank %s, GPU %lld, a peak of %s of its "
		   "%s (%s).", rep->ranks[k]->label, (long long)m->device,
		   rp_fmt_bytes(t[0], 40, m->peak),
		   rp_fmt_bytes(t[1], 40, m->capacity),
		   rp_fmt_pct(t[2], 40, m->peak, m->capacity));
	allocator_calls(&b, rep, k);
	f->evidence = b.oom ? NULL : rp_f_str(fs, "%.*s", (int)b.len, b.p);
	tp_buf_free(&b);
	f->where = rp_f_str(fs, "device memory, the peak of allocated bytes");
	f->try_ = rp_f_str(fs, "Near the top, allocations fail (out of "
			   "memory) or the caching allocator frees and "
			   "retries inside steps: smaller micro-batches, "
			   "activation checkpointing, "
			   "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True "
			   "against fragmentation; torch.cuda.memory_summary() "
			   "shows what is allocated against reserved.");
}
