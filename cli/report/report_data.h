/* tprof report: what it reads (one parsed summary per input) and what it
 * computes across them. Every input, summary file or trace, ends up as a
 * struct rp_rank parsed from summary.json text (docs/reference/summary-format.md),
 * so the two kinds of input cannot drift apart. What is parsed is copied
 * out of the JSON tree, which is freed: 4096 ranks' trees would hold
 * half a gigabyte.
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
	int64_t capacity;	/* the device's memory; RP_NONE: unknown */
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
	const char **cpu;	/* names, outer first */
	size_t ncpu;
};

/* What a bounded window could not keep exact ("approx"). */
struct rp_approx {
	uint64_t late_slices, calls_evicted, cpu_dropped;
	int64_t late_slice_ns;
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
	int64_t *util;		/* busy ns per part of the span, or NULL */
	size_t nutil;
	struct rp_approx approx;
};
/* A summary's "gpu_health" member (NVML's counters, summary/health.c),
 * pooled over the rank's devices: means weighted by samples, the least
 * minimum, the largest maximum (report_health.c). A figure < 0 was not
 * sampled. */
enum rp_reason {
	RP_R_SW_POWER_CAP, RP_R_HW_SLOWDOWN, RP_R_SW_THERMAL, RP_R_HW_THERMAL,
	RP_R_HW_POWER_BRAKE, RP_R_BOARD_LIMIT, RP_R_RELIABILITY,
	/* not slowdowns: an idle GPU, clocks set so, boost synchronized */
	RP_R_GPU_IDLE, RP_R_APP_CLOCKS, RP_R_SYNC_BOOST, RP_R_DISPLAY_CLOCKS,
	RP_R_N
};
/* The reasons that slow a busy GPU down: the first RP_R_SLOWDOWNS. */
#define RP_R_SLOWDOWNS (RP_R_RELIABILITY + 1)

struct rp_health {
	int present;		/* the member is there */
	char state[96];		/* "sampled", or why not */
	uint64_t samples;
	double sm_min, sm_mean, sm_max;		/* MHz */
	double mem_clock_mean;			/* MHz */
	double power_mean, power_max, power_limit;	/* mW */
	double temp_mean, temp_max;		/* C */
	double util_mean;			/* % */
	double mem_used_max, mem_total;		/* bytes */
	double ecc_uncorrected, xids;		/* counts, last seen */
	uint64_t reason_samples;
	double reason[RP_R_N];	/* share of samples under each */
	char unavailable[200];	/* "power_mw (no permission), ..." */
	size_t nunavailable;
};

/* report_health.c: the reason's key in the summary ("sw_thermal") and
 * in words ("thermal slowdown"). */
const char *rp_reason_key(enum rp_reason r);
const char *rp_reason_words(enum rp_reason r);
/* The slowdown reason with the largest share, or RP_R_N if none. */
enum rp_reason rp_health_top_reason(const struct rp_health *h);

/* One function of a rank's CPU samples. */
struct rp_hfn {
	const char *function;
	const char *file;	/* Python: its file, or NULL */
	int64_t line;		/* Python: the line it is defined at, or 0 */
	int64_t ns;		/* native: its self time; Python: innermost */
	int python;
};

/* A blocking call and the file it was on (NULL: none). */
struct rp_hcall {
	const char *call, *file;
	int64_t ns;
};

/* A node of the samples' flame tree; the tree is kept in preorder. */
struct rp_hnode {
	const char *name;
	int64_t ns;
	unsigned depth;		/* the root's is 0 */
};

/* A summary's "host_activity" member (summary/host_out.c computed it):
 * one part of it, over the GPU's idle intervals when the rank had GPU
 * activity, else over the whole run. Copied out of the JSON tree, which
 * is freed once read. */
struct rp_host {
	int present;
	int idle;		/* the part is "idle", else "all" */
	int64_t sampled_ns, blocking_ns;
	struct rp_hfn *python, *functions;	/* the top ones first */
	size_t npython, nfunctions;
	struct rp_hcall *blocking;
	size_t nblocking;
	struct rp_hnode *flame;
	size_t nflame;
	char *strs;		/* holds the strings above */
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
	struct rp_health health;
	char *strs;		/* holds the strings above */
	/* The "host_activity" member, copied out (report_host_read.c). */
	struct rp_host host_activity;
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

/* A rank's figures per step (findings/metrics.c): its totals divided by
 * its steps, or by 1 (per run) for a rank without steps. */
struct rp_rankm {
	int has_steps, has_gpu;
	long double div;	/* what the totals are divided by */
	long double step;	/* its verdict step, or its wall time */
	long double busy, idle, compute, comm, exposed, kernels;
	long double own;	/* step less its waiting in collectives */
	size_t *findings;	/* ids of the findings about it */
	size_t nfindings;
};

struct rp_findings;

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
	size_t top;		/* names the tables list (--top) */
	/* findings/: per entry; the lower median of each figure over the
	 * ranks that have it; entries by own step, slowest first */
	struct rp_rankm *m;
	struct rp_rankm ref;
	long double min_exposed;	/* the least-waiting rank's */
	size_t *order;
	struct rp_findings *fs;
};

/* Rules, documented in docs/guide/report.md. */
#define RP_TOP_NAMES 30		/* names the tables list unless --top */
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
/* report_health.c: the "gpu_health" member n (NULL: none) into r. */
int rp_health_parse(struct rp_rank *r, const struct tp_json_node *n,
		    char *err, size_t errlen);
/* --json: the rank's "gpu_health" object, or null. */
void rp_health_json(struct tp_buf *b, const struct rp_health *h);

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
/* report_brief.c: the findings in a few lines, then "Report: FILE" for
 * each of files[0..nfiles). */
void rp_write_brief(const struct rp_report *rep, struct tp_buf *b,
		    const char *const *files, size_t nfiles);
void rp_write_json(const struct rp_report *rep, struct tp_buf *b);
void rp_write_html(const struct rp_report *rep, struct tp_buf *b);

#endif
