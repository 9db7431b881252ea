/* summary/: the summary aggregator: per-name statistics, histograms, steps,
 * groups, memory, and its JSON/markdown output; on util/ .. session/ and
 * stacks/. */
/* The aggregator's tables, shared by its parts (summary.c folds events
 * in, summary_out.c writes them out). Not for other users. */
#ifndef TP_SUMMARY_INT_H
#define TP_SUMMARY_INT_H

#include <stddef.h>
#include <stdint.h>

#include "hist.h"
#include "summary.h"

/* An open-addressing index over a vector of items, each starting with
 * its hash. */
struct sum_tab {
	void **items;
	size_t n, cap;
	uint32_t *slots;	/* item index + 1, 0: empty */
	size_t nslots;
};

struct sum_row {
	uint64_t hash;
	char *cat;
	char *name;
	uint64_t count, dropped, total, min, max;
	double mean, m2;	/* Welford */
	struct tp_hist hist;
};

struct sum_range {
	uint64_t hash;
	char *name;
	char *domain;		/* NULL: none */
	uint64_t repeats, total, min, max;
	uint64_t mem_n;
	double mem_net;		/* sum of exit - entry */
	int64_t mem_peak;	/* largest peak - entry */
};

enum { SUM_GEMM, SUM_NCCL };

struct sum_group {
	uint64_t hash;
	char *key;
	uint32_t idx;		/* its index + 1 */
	int kind;
	char *name;
	char *dtype;		/* NULL: unknown */
	int64_t m, n, k, batch;	/* GEMM */
	uint64_t bytes;		/* NCCL */
	int64_t nranks;
	uint64_t calls, cpu_ns, kernels, gpu_ns;
	unsigned __int128 flops;
};

#define SUM_RECENT 64

/* Launches on one CPU track not yet known to belong to a library call,
 * and the last library call seen there. */
struct sum_track {
	uint64_t hash;
	int64_t pid, tid;
	struct { uint64_t corr; int64_t ts; } recent[SUM_RECENT];
	unsigned next;
	int64_t last_s, last_e;
	uint32_t last_g;	/* group index + 1, 0: none */
};

#define SUM_CORR_BITS 16
struct sum_corr {
	uint64_t corr;
	uint32_t g;		/* group index + 1 */
};

#define SUM_MAX_STEPS 100000
struct sum_step {
	int64_t step, ts, dur;
};

#define SUM_MEM_POINTS 512
struct sum_mem {
	int64_t device;
	int64_t peak;
	unsigned n;
	unsigned level;		/* each point merges 2^level samples */
	unsigned pending_n;
	int64_t pending_ts, pending_v;
	int64_t pts[SUM_MEM_POINTS][2];
};

#define SUM_MAX_DEVICES 64

#define SUM_ROW_CACHE 64

/* What the writer's events (static names, tp_sum_span) find by the
 * address of their name: the category's kind, and the row once looked
 * up (row_known: a NULL row is a failed allocation, not retried). */
struct sum_name_cache {
	const char *cat, *name;
	struct sum_row *row;
	enum tp_sum_cat kind;
	int row_known;
};

struct tp_sum {
	struct tp_sum_info info;
	struct sum_name_cache cache[SUM_ROW_CACHE];
	struct sum_tab rows, ranges, groups, tracks;
	/* the track of the last launch or library call (summary_groups.c) */
	struct sum_track *track_last;
	/* the last thread tp_sum_feeder saw, when it is among the host
	 * side's feeders */
	int64_t feeder_last;
	int feeder_known;
	struct sum_corr *corr;
	struct tp_gpu *gpu;	/* the "gpu" member's analyses (gpu.h) */
	struct tp_host *host;	/* the "host_activity" member's (host.h) */
	struct sum_step *steps;
	size_t n_steps, cap_steps;
	uint64_t steps_seen;
	struct sum_mem *mem[SUM_MAX_DEVICES];
	unsigned n_mem;
	/* each device's memory, when the trace says: for memory[] */
	struct {
		int64_t device, bytes;
	} capacity[SUM_MAX_DEVICES];
	unsigned n_capacity;
	struct tp_health *health;	/* "gpu_health" (health.h) */
	int64_t start, end;	/* INT64_MAX / INT64_MIN until a span */
	uint64_t events, dropped;
};

/* summary_host.c: a blocking call (category osrt) to the host side. */
void tp_sum_osrt(struct tp_sum *s, const struct tp_sum_span *e);
/* A thread made a CUDA call (its blocking calls are the ones shown):
 * the host side told unless it was the last thread told (a thread's
 * calls come in runs, so its list is seldom searched). */
void tp_sum_feeder(struct tp_sum *s, int64_t tid);
static inline void tp_sum_feeder_fast(struct tp_sum *s, int64_t tid)
{
	if (!s->feeder_known || s->feeder_last != tid)
		tp_sum_feeder(s, tid);
}

/* summary_tab.c */
uint64_t tp_sum_hash(const char *a, const char *b);
typedef int (*sum_eq_fn)(const void *item, const void *key);
void *tp_sum_tab_find(const struct sum_tab *t, uint64_t h, sum_eq_fn eq,
		      const void *key);
int tp_sum_tab_add(struct sum_tab *t, void *item);
void *tp_sum_tab_get(const struct sum_tab *t, size_t i);
void tp_sum_tab_free(struct sum_tab *t, void (*fn)(void *));

/* GEMM and NCCL groups, and the GPU time of what they launched. */
void tp_sum_groups_span(struct tp_sum *s, const struct tp_sum_span *e,
			enum tp_sum_cat k, uint64_t d);
/* Memory samples a coarser level still holds back become a point. */
void tp_sum_memory_flush(struct tp_sum *s);

/* Args: a top-level member of an args object, as its value's JSON text
 * (v, n) or typed (t). */
struct sum_arg {
	const char *key;
	const char *v;		/* NULL when absent */
	size_t n;
	const struct tp_targ *t;	/* NULL when absent or text */
};

void tp_sum_args(const char *args, size_t len, struct sum_arg *want,
		 unsigned n_want);
/* The span's args, typed or text. */
void tp_sum_span_args(const struct tp_sum_span *e, struct sum_arg *want,
		      unsigned n_want);

static inline int tp_sum_arg_has(const struct sum_arg *a)
{
	return a->v || a->t;
}
int tp_sum_arg_i64(const struct sum_arg *a, int64_t *out);
int tp_sum_arg_u128(const struct sum_arg *a, unsigned __int128 *out);
/* A string arg decoded into buf (NUL-terminated), or NULL. */
const char *tp_sum_arg_str(const struct sum_arg *a, char *buf, size_t len);

#endif
