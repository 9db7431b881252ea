/* tprof report: what it reads (one parsed summary per input) and what it
 * computes across them. Every input, summary file or trace, ends up as a
 * struct rp_rank parsed from summary.json text (docs/reference/summary-format.md),
 * so the two kinds of input cannot drift apart.
 */
#ifndef TP_CLI_REPORT_DATA_H
#define TP_CLI_REPORT_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "encode/json.h"
#include "cli/read/json.h"

/* A member summary.json has as null (cannot be known). */
#define RP_NONE INT64_MIN

struct rp_bucket {
	uint32_t b;		/* bucket index, see summary/hist.h */
	uint64_t n;
};

/* One "calls" row. */
struct rp_row {
	const char *cat, *name;
	uint64_t count, dropped;
	int64_t total, min, max;
	double mean, std;
	struct rp_bucket *hist;
	size_t nhist;
};

struct rp_step {
	int64_t step, ts, dur;
};

struct rp_point {
	int64_t ts, bytes;
};

struct rp_mem {
	int64_t device, peak;
	struct rp_point *pts;
	size_t npts;
};

/* GPU time of the work launched inside ranges of one name. */
struct rp_grange {
	const char *name;
	uint64_t calls;
	int64_t cpu_ns, gpu_ns;
};

/* A GPU-idle interval and the CPU events around its middle. */
struct rp_gap {
	int64_t start, dur;
	const struct tp_json_node *cpu;	/* array of names, outer first */
};

/* A summary's "gpu" member (summary/gpu_*.c computed it). */
struct rp_gpu {
	int present;
	uint64_t kernels, memcpys, memsets;
	int64_t kernel_ns, memcpy_ns, memset_ns, span_ns, busy_ns, idle_ns;
	int64_t compute_ns, comm_ns, memory_ns, non_compute_ns, overlap_ns;
	uint64_t launches;	/* GPU slices joined to their launch call */
	uint64_t steps_cpu_bound, steps_gpu_bound;
	int64_t delay_sum, delay_min, delay_p50, delay_p90, delay_max;
	struct rp_grange *ranges;	/* by GPU time, largest first */
	size_t nranges;
	int64_t start_ns;	/* the first GPU activity */
	struct rp_gap *gaps;	/* longest first */
	size_t ngaps;
	const struct tp_json_node *util;	/* busy ns per part, or NULL */
};
/* Ranges listed per rank in the report's table. */
#define RP_TOP_RANGES 10

/* One input: a summary, read from a file or computed from a trace. */
struct rp_rank {
	char *path;		/* the file read */
	const char *kind;	/* "summary" or "trace" */
	size_t entry;		/* index in the report, after sorting */
	char label[40];		/* "3", or "3#2" for a second rank 3 */
	const char *source, *name, *host, *trace;	/* NULL: null */
	int64_t rank;		/* RP_NONE: unknown */
	int64_t pid, world_size, base_ns, wall_ns;
	uint64_t events, dropped, steps_count;
	struct rp_step *steps;
	size_t nsteps;
	struct rp_row *rows;
	size_t nrows;
	struct rp_mem *mem;
	size_t nmem;
	struct rp_gpu gpu;
	/* The "host_activity" member (CPU samples, blocking calls), or NULL: read
	 * where it is shown (report_host.c). */
	const struct tp_json_node *host_member;
	struct tp_json_arena arena;	/* holds the strings above */
	struct tp_buf json;	/* a trace's computed summary.json */
};

/* One (category, name) across the ranks. */
struct rp_name {
	const char *cat, *name;
	const struct rp_row **rows;	/* per entry; NULL where absent */
	size_t present;
	uint64_t count;			/* all ranks' calls */
	long double sum_total;		/* all ranks' total_ns */
	long double mean_total, std_total;	/* over the ranks present */
	int64_t min_total, max_total;
	long double mean_call;		/* sum_total / count: pooled */
	size_t slowest;			/* entry with max_total */
	long double imbalance;		/* max_total / mean_total */
	int straggler;
};

struct rp_steps {
	size_t n;		/* listed step times */
	long double mean, vs_fastest;
	int64_t p50, max;
	size_t warmup;		/* first steps left out of the verdict */
	int64_t verdict;	/* median of the steps after those */
	int straggler;
};

struct rp_report {
	struct rp_rank **ranks;
	size_t nranks;
	struct rp_name *names;	/* by mean_total, largest first */
	size_t nnames;
	struct rp_steps *steps;	/* per entry */
	size_t with_steps;	/* entries that have step times */
	long double steps_median;	/* the median rank's mean step */
	int64_t steps_reference;	/* the median rank's verdict step */
	long double steps_fastest;
	size_t nstragglers;	/* flagged names and ranks */
};

/* Rules, documented in docs/guide/report.md. */
#define RP_TOP_NAMES 30
/* Steps of a rank left out of its step verdict as start-up: the first
 * from 3 steps on, the first two from RP_WARMUP_MORE on. */
#define RP_WARMUP_MORE 10
#define RP_TOP_DETAIL 10
#define RP_STRAGGLER_RATIO 1.10L
#define RP_STRAGGLER_MIN_NS 1000000.0L

/* report_summary.c: parses summary.json text into r (r->path and
 * r->kind already set). Returns 0, or -1 with a message in err. */
int rp_summary_parse(struct rp_rank *r, const char *buf, size_t len,
		     char *err, size_t errlen);
void rp_rank_free(struct rp_rank *r);

/* report_stats.c */
int rp_stats(struct rp_report *rep);
void rp_stats_free(struct rp_report *rep);
int rp_is_step_name(const char *cat, const char *name);

/* report_fmt.c: "1.235 ms" and friends. */
const char *rp_fmt_ns(char *buf, size_t size, long double ns);
const char *rp_fmt_diff(char *buf, size_t size, long double ns);
/* Fixed-point text of v with three decimals (JSON means). */
void rp_json_milli(struct tp_buf *b, long double v);
void rp_json_ratio(struct tp_buf *b, long double v);
void rp_json_i64_or_null(struct tp_buf *b, int64_t v);
void rp_bprintf(struct tp_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
const char *rp_fmt_ratio(char *buf, size_t size, long double v);
const char *rp_rank_str(char *buf, size_t size, int64_t rank);
const char *rp_fmt_bytes(char *buf, size_t size, int64_t bytes);
/* num / den as a percentage with two decimals, "12.34%" (halves up);
 * "-" when den is 0. */
const char *rp_fmt_pct(char *buf, size_t size, int64_t num, int64_t den);
int64_t rp_mem_peak(const struct rp_rank *r);

/* Outputs, appended to b. */
void rp_write_md(const struct rp_report *rep, struct tp_buf *b);
void rp_write_json(const struct rp_report *rep, struct tp_buf *b);
void rp_write_html(const struct rp_report *rep, struct tp_buf *b);

#endif
