/* summary/: the summary aggregator: per-name statistics, histograms, steps,
 * groups, memory, and its JSON/markdown output; on util/ .. session/ and
 * stacks/. */
/* Inside the GPU analyses (gpu.h): the records, the sweep's state and
 * the calls between gpu_feed.c, gpu_heap.c, gpu_sweep.c, gpu_join.c,
 * gpu_spill.c and gpu_json.c. */
#ifndef TP_GPU_INT_H
#define TP_GPU_INT_H

#include <stddef.h>
#include <stdint.h>

#include "gpu.h"
#include "gpu_intern.h"
#include "xsort.h"
#include "hist.h"

/* Record kinds, in the order the sweep takes records of equal start: a
 * range or step before the calls it holds, a call before its slices; a
 * CPU sample or blocking call after the slices (a slice starting when a
 * sample is taken makes the GPU busy then). */
enum { GR_RANGE, GR_STEP, GR_CPU, GR_CALL, GR_SLICE, GR_SAMPLE, GR_OSRT };

struct gpu_rec {
	int64_t ts, end;
	int64_t pid, tid;	/* calls and ranges */
	uint64_t corr;		/* calls and slices */
	uint32_t name;		/* ranges, CPU spans: interned */
	uint8_t kind, cls;
};

/* The reorder window by (ts, kind): records that arrive in order wait
 * in a FIFO ring (no sorting, sequential memory), the others in a binary
 * min-heap; the next out is the smaller of the two fronts. */
struct gpu_heap {
	struct gpu_rec *v;	/* the heap */
	size_t n, cap;
	struct gpu_rec *q;	/* the ring: qcap is 0 or a power of two */
	size_t qhead, qn, qcap;
	/* the last record into the ring's order: what an append is
	 * compared with, without reading the ring back */
	int64_t qlast_ts;
	uint8_t qlast_kind;
};

static inline size_t tp_gpu_heap_size(const struct gpu_heap *h)
{
	return h->n + h->qn;
}

/* The slow half of tp_gpu_heap_push: out of order, or the ring full. */
int tp_gpu_heap_push_slow(struct gpu_heap *h, const struct gpu_rec *r);

/* The ring's next slot for a record of start ts and kind, when it
 * goes there (in order, room left); NULL when it goes the slow way. The
 * caller fills the slot in place (no record built and copied: its
 * fields' stores would not forward to a copy's wider loads), then
 * tp_gpu_heap_append. */
static inline struct gpu_rec *tp_gpu_heap_slot(struct gpu_heap *h,
					       int64_t ts, uint8_t kind)
{
	if (h->qn == h->qcap || (h->qn && (ts < h->qlast_ts ||
	    (ts == h->qlast_ts && kind < h->qlast_kind))))
		return NULL;
	return &h->q[(h->qhead + h->qn) & (h->qcap - 1)];
}

static inline void tp_gpu_heap_append(struct gpu_heap *h,
				      const struct gpu_rec *slot)
{
	h->qn++;
	h->qlast_ts = slot->ts;
	h->qlast_kind = slot->kind;
}

static inline int tp_gpu_heap_push(struct gpu_heap *h, const struct gpu_rec *r)
{
	struct gpu_rec *slot = tp_gpu_heap_slot(h, r->ts, r->kind);

	if (!slot)
		return tp_gpu_heap_push_slow(h, r);
	*slot = *r;
	tp_gpu_heap_append(h, slot);
	return 0;
}

const struct gpu_rec *tp_gpu_heap_pop_slow(struct gpu_heap *h,
					   struct gpu_rec *tmp);

/* The first record out, in the ring (valid until the next push) or
 * copied into *tmp; the window must not be empty. Inline while the heap
 * is empty (records in order), the writer's common case. */
static inline const struct gpu_rec *tp_gpu_heap_pop(struct gpu_heap *h,
						    struct gpu_rec *tmp)
{
	const struct gpu_rec *r;

	if (h->n || !h->qn)
		return tp_gpu_heap_pop_slow(h, tmp);
	r = &h->q[h->qhead];
	h->qhead = (h->qhead + 1) & (h->qcap - 1);
	h->qn--;
	/* a full window's oldest records were written a window ago
	 * (megabytes): fetch the next ones while this one is swept */
	__builtin_prefetch(&h->q[(h->qhead + 4) & (h->qcap - 1)]);
	return r;
}
void tp_gpu_heap_free(struct gpu_heap *h);

#define TP_GPU_GAPS 5
#define TP_GAP_CPU 4		/* CPU events named per gap */
#define TP_GPU_BUCKETS 100	/* utilisation: parts of the span */
#define GPU_BINS (1u << 15)	/* utilisation bins when not exact */
#define GPU_TAGS 6		/* ranges counted per launch call */

/* A streamed union of intervals taken in order of start. */
struct gpu_union {
	int64_t a, e, len;
	int open;
};

struct gpu_gap {
	int64_t start, end;
	uint32_t cpu[TP_GAP_CPU];
	unsigned ncpu;
};

/* A call waiting for its slices, by correlation id. */
struct gpu_call {
	uint64_t corr;		/* 0: free slot */
	int64_t end;
	uint32_t seq;		/* insertion order, for eviction */
	uint32_t tag[GPU_TAGS];	/* the names of the ranges around it */
	uint16_t ntag;
	uint16_t joined;	/* a slice found it */
};

struct gpu_cpu {
	int64_t ts, end;
	uint32_t name;
};

struct gpu_rname {
	uint64_t calls;
	int64_t cpu_ns, gpu_ns;
	int is_range;
};

/* What a bounded window could not keep exact (all zero: exact). */
struct gpu_approx {
	uint64_t late, late_slices;	/* records swept out of order */
	int64_t late_slice_ns;
	uint64_t calls_evicted;		/* never joined, left the table */
	uint64_t cpu_dropped, ranges_dropped, steps_dropped, tags_dropped;
	int delays_binned, util_binned;
};

/* The CLI's exact mode (budget > 0): what the unbounded window would
 * hold in memory goes through external sorts (summary/xsort.c), each
 * within a quarter of the budget: the records to sweep (by start, kind,
 * arrival), the calls and slices to join (by correlation id, then sweep
 * order), the launch delays (for exact percentiles) and the busy
 * intervals (for exact utilisation). Same figures, memory bounded. */
struct gpu_spill {
	size_t budget;		/* 0: not this mode */
	struct tp_xsort *recs, *join, *delays, *busy;
	uint64_t rec_seq, join_seq;
	int64_t pct[2];		/* launch delay p50, p90 */
	int64_t util[TP_GPU_BUCKETS];
	int have_pct, have_util;
	char err[300];		/* a sort that failed */
};

struct tp_host;

struct tp_gpu {
	size_t window;		/* 0: unbounded */
	struct tp_host *host;	/* the host side (host.h), or NULL */
	struct gpu_spill sp;
	struct gpu_heap heap;
	struct tp_intern strs;
	struct {
		const char *p;
		uint32_t id;
	} name_cache[64];	/* static names by address */
	int oom;

	/* sums, counted as events arrive */
	uint64_t n_kernel, n_memcpy, n_memset;
	int64_t kernel_ns, memcpy_ns, memset_ns;

	/* the sweep */
	int64_t now;		/* start of the last record swept */
	int swept_any, any_slice;
	int64_t start_ns, end_ns;
	struct gpu_union all, comp, comm, mem, cc;	/* cc: comp or comm */
	struct gpu_gap gaps[TP_GPU_GAPS];
	size_t ngaps;
	/* the busy intervals, for exact utilisation, while they fit */
	struct gpu_busy { int64_t a, e; } *busy;
	size_t nbusy, capbusy;
	/* and coarse bins always, for when they do not */
	int64_t *bins;
	int64_t bin0, bin_w;	/* where bin 0 starts, ns per bin */
	struct { int64_t ts, end, busy; } *steps;	/* open steps */
	size_t nsteps, capsteps;
	uint64_t steps_cpu_bound, steps_gpu_bound;
	/* CPU spans that may hold a gap's middle: a ring (capcpu 0 or a
	 * power of two) from cpu0, so letting go of the oldest moves none */
	struct gpu_cpu *cpu;
	size_t cpu0, ncpu, capcpu;
	int cpu_unsorted;	/* 0: their ends never decrease */
	struct { int64_t ts, end, pid, tid; uint32_t name; } *ranges;
	size_t nranges, capranges;

	/* joins */
	struct gpu_call *calls;	/* open addressing, at most half full */
	size_t ncalls, capcalls;
	uint32_t call_seq;
	struct gpu_rname *names;	/* by interned id */
	size_t capnames;
	uint64_t n_launch;
	int64_t delay_sum, delay_min, delay_max;
	int64_t *delays;	/* exact while they fit */
	size_t ndelays, capdelays;
	struct tp_hist dpos, dneg;	/* when they do not: |delay| */

	struct gpu_approx ap;
};

/* A sort of the exact mode, made on first use (NULL: failed, g->oom
 * set and the reason in g->sp.err); gpu_spill.c. */
struct tp_xsort *tp_gpu_sort(struct tp_gpu *g, struct tp_xsort **slot,
			     size_t rec_size, tp_xsort_cmp cmp);
/* A sort failed: its reason kept, the "gpu" member null. */
void tp_gpu_sort_failed(struct tp_gpu *g, const struct tp_xsort *s);

/* gpu_feed.c: sweeps what the window holds, then ends the sweep. */
void tp_gpu_drain(struct tp_gpu *g);

/* gpu_sweep.c: one record in time order; the end of the sweep. */
void tp_gpu_sweep(struct tp_gpu *g, const struct gpu_rec *r);
void tp_gpu_sweep_end(struct tp_gpu *g);
/* Utilisation: busy ns in each part of the span. */
void tp_gpu_util(const struct tp_gpu *g, int64_t util[TP_GPU_BUCKETS]);

/* gpu_join.c */
void tp_gpu_join_call(struct tp_gpu *g, const struct gpu_rec *r);
void tp_gpu_join_slice(struct tp_gpu *g, const struct gpu_rec *r);
void tp_gpu_join_range(struct tp_gpu *g, const struct gpu_rec *r);
/* A range counted as it arrives: calls and CPU time per name. */
int tp_gpu_range_name(struct tp_gpu *g, uint32_t name, int64_t dur);
/* Launch-delay percentile (50, 90), exact or from the histograms. */
int64_t tp_gpu_delay_pct(const struct tp_gpu *g, unsigned pct);
/* The sweep ended: the exact delays sorted. */
void tp_gpu_join_end(struct tp_gpu *g);
void tp_gpu_join_free(struct tp_gpu *g);

#endif
