/* Inside the findings (findings.h): the thresholds, and what the rules
 * share. Every threshold is documented, with what to try, in
 * docs/guide/reading-the-report.md; a change here goes there too. */
#ifndef TP_CLI_REPORT_FINDINGS_INT_H
#define TP_CLI_REPORT_FINDINGS_INT_H

#include "findings.h"

/* A slow rank: its own step (its median step less its waiting in
 * collectives) is at least SLOW_RATIO times the median rank's, and
 * SLOW_MIN_NS longer. */
#define RP_F_SLOW_RATIO 1.10L
#define RP_F_SLOW_MIN_NS 100000.0L
/* A cause of a slow rank is named when it explains at least this share
 * of the rank's excess. */
#define RP_F_CAUSE_SHARE 0.25L
/* "The same kernels take longer": a kernel the rank calls as often per
 * step as the median rank (within SAME_CALLS) whose mean is at least
 * KERNEL_RATIO times the median rank's. */
#define RP_F_SAME_CALLS 0.10L
#define RP_F_KERNEL_RATIO 1.10L
/* A finding about many ranks is made when it costs at least MIN_SHARE
 * of the step and MIN_NS per step. */
#define RP_F_MIN_SHARE 0.02L
#define RP_F_MIN_NS 50000.0L
/* Waiting in collectives: exposed communication at least this share of
 * the median step above the least-waiting rank's. */
#define RP_F_WAIT_SHARE 0.05L
/* Exposed communication: the least-waiting rank's, at least this share
 * of the median step. */
#define RP_F_COMM_SHARE 0.05L
/* Launch-bound: at least LAUNCH_KERNELS kernels a step, at least
 * SHORT_SHARE of them shorter than SHORT_NS, and the GPU idle between
 * them (outside the longest idle gaps) at least LAUNCH_IDLE of the
 * step. */
#define RP_F_LAUNCH_KERNELS 100.0L
#define RP_F_SHORT_NS 10000
#define RP_F_SHORT_SHARE 0.50L
#define RP_F_LAUNCH_IDLE 0.10L
/* Device memory: a peak at least this share of the device's capacity. */
#define RP_F_MEM_SHARE 0.90L
/* GPU health (NVML's counters) of a slow rank: its GPU ran throttled
 * when its mean SM clock is below CLOCK_RATIO of the other ranks'
 * median, or a slowdown reason (thermal, power cap, HW slowdown...) was
 * active at least THROTTLE_SHARE of the time, or its memory in use
 * peaked at MEMFULL_SHARE of the device's. */
#define RP_F_CLOCK_RATIO 0.90L
#define RP_F_THROTTLE_SHARE 0.10L
#define RP_F_MEMFULL_SHARE 0.95L
/* The host while the GPU was idle: a function or a blocking call is
 * named when it holds at least this share of the GPU's idle time. */
#define RP_F_HOST_SHARE 0.10
/* Named in a finding's text: at most this many kernels, calls, ranges. */
#define RP_F_TOP_NAMES 3

/* findings.c: a new finding of kind k about the entries e[0..n) (copied),
 * cost per step and the step it is a share of; NULL out of memory (fs
 * marked). */
struct rp_finding *rp_f_add(struct rp_findings *fs, enum rp_fkind k,
			    const size_t *e, size_t n, long double cost,
			    long double step);
/* Room for one item per rank (and for one when there is none). */
void *rp_f_per_rank(const struct rp_report *rep, size_t size);
/* A malloc'd string (NULL and fs marked when out of memory). */
char *rp_f_str(struct rp_findings *fs, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Names the finding points at (not copied: they live as long as the
 * report). */
void rp_f_names(struct rp_findings *fs, struct rp_finding *f,
		const char *are, const char **names, size_t n);

/* A finding about many ranks: v[0..n) (ascending) with their costs
 * c[0..n); its cost is their lower median, and *med the rank that has
 * it (the one whose figures its text gives). */
struct rp_finding *rp_f_job(struct rp_findings *fs,
			    const struct rp_report *rep, enum rp_fkind k,
			    const size_t *v, const long double *c, size_t n,
			    size_t *med);
/* The smallest cost a finding about a rank whose step is step may
 * have: RP_F_MIN_SHARE of it, and RP_F_MIN_NS. */
long double rp_f_floor(long double step);
/* Whether a rank's trace lost events, or has figures a bounded window
 * could not keep exact. */
int rp_f_incomplete(const struct rp_rank *r);

/* The lower median of v[0..n) (sorted in place); 0 when n is 0. */
long double rp_f_median(long double *v, size_t n);
/* Whether a calls row is of a category. */
int rp_f_cat(const struct rp_row *row, const char *cat);

/* ftext.c: the finding's where for one rank ("rank 3, WHAT; its slowest
 * step: #5 (30.100 ms)", its step_index set); "Its own step X against Y
 * on the median rank (+Z). " */
void rp_f_where_rank(struct rp_report *rep, struct rp_findings *fs,
		     struct rp_finding *f, size_t e, const char *what);
void rp_f_own_text(struct tp_buf *b, const struct rp_report *rep, size_t e);

/* metrics.c */
int rp_f_metrics(struct rp_report *rep);

/* rule_idle.c: rank e is host-bound: its GPU idles idle ns per step
 * more than the median rank's, of its excess ns. */
void rp_f_host_bound(struct rp_report *rep, struct rp_findings *fs,
		     size_t e, long double excess, long double idle);
/* rule_wait.c: the ranks that waited in collectives for the slow ones
 * (entries slow[0..n), ascending). */
void rp_f_waiting(struct rp_report *rep, struct rp_findings *fs,
		  const size_t *slow, size_t n);

/* rule_slow.c: whether the entry is a slow rank. */
int rp_f_is_slow(const struct rp_report *rep, size_t e);

/* The rules, each adding what it finds. */
int rp_rule_slow(struct rp_report *rep, struct rp_findings *fs);
void rp_rule_exposed_comm(struct rp_report *rep, struct rp_findings *fs);
void rp_rule_sync(struct rp_report *rep, struct rp_findings *fs);
void rp_rule_pageable(struct rp_report *rep, struct rp_findings *fs);
void rp_rule_launch(struct rp_report *rep, struct rp_findings *fs);
void rp_rule_memory(struct rp_report *rep, struct rp_findings *fs);
void rp_rule_incomplete(struct rp_report *rep, struct rp_findings *fs);
void rp_rule_health(struct rp_report *rep, struct rp_findings *fs);
void rp_rule_host_idle(struct rp_report *rep, struct rp_findings *fs);
/* After sorting: the caveat of an incomplete trace on every finding
 * about its rank. */
void rp_caveats(struct rp_report *rep, struct rp_findings *fs);

#endif
