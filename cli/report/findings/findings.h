/* tprof report: findings, the report's answer. A rule engine over the
 * per-rank summaries alone (so it works at any rank count, and on
 * summaries written at exit as on traces): each rule looks at the ranks'
 * figures per step and says what is slow, where, what it costs per step,
 * the numbers that show it, and what to try. Rules and their thresholds
 * are documented in docs/guide/reading-the-report.md.
 *
 * Called by the command (report.c) after the statistics (report_stats.c);
 * the outputs read what it built. It calls only down: the report's data
 * and formatting helpers, and summary/ for a kernel's class.
 */
#ifndef TP_CLI_REPORT_FINDINGS_H
#define TP_CLI_REPORT_FINDINGS_H

#include "cli/report/report_data.h"

enum rp_fkind {
	RP_F_SLOW_GPU,		/* a rank's kernels run slower */
	RP_F_HOST_BOUND,	/* a rank's GPU waits for its host */
	RP_F_SLOW_OTHER,	/* a rank is slower, neither of the above */
	RP_F_COLL_WAIT,		/* ranks wait in collectives for slow ones */
	RP_F_EXPOSED_COMM,	/* communication not hidden by computation */
	RP_F_SYNC,		/* synchronizing calls inside steps */
	RP_F_PAGEABLE,		/* copies from pageable host memory */
	RP_F_LAUNCH,		/* many short kernels, GPU idle between */
	RP_F_MEMORY,		/* device memory near its capacity */
	RP_F_HOST_IDLE,		/* where the host was while the GPU idled */
	RP_F_INCOMPLETE,	/* events lost: figures may be low */
	RP_F_GPU_THROTTLED,	/* a slow rank's GPU ran slower clocks */
	RP_F_GPU_HEALTHY,	/* a slow rank's GPU was healthy */
	RP_F_NKINDS
};

struct rp_finding {
	enum rp_fkind kind;
	size_t id;		/* 1, 2, ...: the order shown */
	size_t *ranks;		/* entries it is about, ascending */
	size_t nranks;
	size_t *waited;		/* RP_F_COLL_WAIT: the ranks waited for */
	size_t nwaited;
	long double cost;	/* ns per step; < 0: no time cost measured */
	long double step;	/* the step the cost is a share of */
	int per_run;		/* the ranks have no steps: per run */
	int64_t step_index;	/* one rank's slowest step, or RP_NONE */
	char *title;		/* what, in a few words */
	char *where, *evidence, *try_;
	char *caveat;		/* an incomplete trace, or NULL */
	const char **names;	/* the kernels, calls or ranges named */
	size_t nnames;
	const char *names_are;	/* "kernels", "calls", "copies", "cpu" */
};

struct rp_findings {
	struct rp_finding *v;	/* most costly first */
	size_t n, cap;
	int oom;
};

/* Per-rank figures, then every rule; rep->m, rep->order and rep->fs
 * are set. Returns 0, or -1 out of memory. */
int rp_findings_run(struct rp_report *rep);
void rp_findings_free(struct rp_report *rep);

/* The finding's kind as --json names it ("slow_gpu", ...), and in a
 * few words for the per-rank table ("slower kernels"). */
const char *rp_fkind_name(enum rp_fkind k);
const char *rp_fkind_label(enum rp_fkind k);
/* "rank 3", "ranks 0, 2 and 5", "all 8 ranks", "12 ranks (0-9, 14,
 * 20)": the entries e[0..n), ascending. */
void rp_fmt_ranks(struct tp_buf *b, const struct rp_report *rep,
		  const size_t *e, size_t n);
/* One line: who, what, and the cost per step ("rank 1: its GPU waits
 * for the host (DataLoader.__next__): +14.000 ms per step (51.85% of
 * its step)"). */
void rp_finding_headline(struct tp_buf *b, const struct rp_report *rep,
			 const struct rp_finding *f);
/* "+14.000 ms per step (51.85% of its step)", or what stands for it. */
void rp_finding_cost(struct tp_buf *b, const struct rp_finding *f);

#endif
