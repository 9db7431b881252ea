/* Inside tprof check (check.c): the state of one file's check, the
 * records the external sort orders, and the calls between check.c (the
 * streaming pass), check_sweep.c (nesting and flows at the end) and
 * check_out.c (problems, warnings, message formats).
 */
#ifndef TP_CLI_CHECK_INT_H
#define TP_CLI_CHECK_INT_H

#include <stdint.h>
#include <stdio.h>

#include "check_tab.h"
#include "cli/read/gzread.h"
#include "cli/read/json.h"
#include "summary/xsort.h"

#define MAX_SHOWN 20

struct xev {
	uint32_t track, name, idx;
	uint32_t gpu;		/* GPU activity: kernel, memcpy, memset */
	int64_t ts, dur;	/* ns */
};

/* Quirks every torch.profiler (Kineto) trace has, which neither HTA nor
 * Perfetto refuses: with --foreign they are counted and printed once
 * each as a warning instead of an error per occurrence. */
enum {
	W_UNIT,		/* no displayTimeUnit */
	W_DINFO,	/* no distributedInfo (a single-process run) */
	W_FLOW_NO_END,	/* ac2g launch flows whose kernel is not there */
	W_FLOW_NO_START,
	W_GPU_OVERLAP,	/* GPU slices on one stream overlapping */
	W_COUNT,
};

/* One flow event (s, t or f), sorted by key then index. */
struct flowev {
	uint64_t id;
	uint32_t cat, name, idx;
	char ph;
	uint8_t is_str, ts_ok;
	int64_t ts;		/* ns */
};

/* NVTX ranges against the trailer's counts (check_ranges.c). */
struct open_b;
struct ck_ranges {
	int have, by_id, window, gave_up;
	uint64_t ranges;	/* X user_annotation events, steps aside */
	int64_t counted, events_dropped, pushes, pops, starts, ends;
	int64_t order_dropped;	/* dropped by writers that paired by order */
	struct open_b **tab;	/* async begins waiting for their end */
	uint64_t open, open_b, twice, backwards;
};

/* Incremental matcher for HTA's per-line regex "rank":\s+(\d+). */
struct rank_scan {
	int state, matched, found, overflow;
	uint64_t val;
};

struct ck {
	const char *path;
	FILE *out;
	unsigned flags;
	unsigned long problems, nevents;
	unsigned long warnings[W_COUNT];
	struct tp_gzr *gz;
	struct tp_json *j;
	struct tp_json_arena arena;
	struct rank_scan scan;
	unsigned seen;
	int have_rank;
	int64_t rank;
	struct strtab strs, tracks;
	struct tp_xsort *xsort;		/* struct xev */
	struct tp_xsort *fsort;		/* struct flowev */
	int sort_failed;
	struct ck_ranges rg;
};

/* check_out.c. A problem (printed while at most MAX_SHOWN); returns -1
 * so that a failing check can return ck_problem(...). */
int ck_problem(struct ck *ck, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A problem with the current event, ck->nevents. */
int ck_ev_problem(struct ck *ck, const struct tp_json_node *ev,
		  const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Counts a quirk with --foreign, where it is a warning; an error
 * otherwise. Returns 1 when it was only counted. */
int ck_quirk(struct ck *ck, unsigned w);
void ck_print_warnings(struct ck *ck);
/* Printable, truncated copy of a string for messages. */
const char *ck_quote(char *buf, size_t size, const char *s, size_t len);
const char *ck_fmt_us(char *buf, size_t size, int64_t ns);
/* The sort failed (no room for its file, no memory; s may be NULL):
 * said once, and the nesting and flow checks are left out. */
int ck_sort_fail(struct ck *ck, const struct tp_xsort *s);

/* check_ranges.c: each event, the "tprof" object, the checks at the
 * end, the memory. */
void ck_ranges_event(struct ck *ck, const struct tp_json_node *ev, char ph,
		     int64_t ts, int ts_ok);
void ck_ranges_trailer(struct ck *ck, const struct tp_json_node *tprof);
void ck_ranges_done(struct ck *ck);
void ck_ranges_free(struct ck *ck);

/* check_sweep.c: the sorts' orders, and the checks at the end. */
int ck_xev_cmp(const void *a, const void *b);
int ck_flowev_cmp(const void *a, const void *b);
/* Perfetto needs X slices on a track to nest strictly; one that starts
 * inside another and ends after it goes to an overflow track. */
void ck_nesting(struct ck *ck);
/* Flows are matched on (id, cat, name), as Perfetto's v1 flow import. */
void ck_flows(struct ck *ck);

#endif
