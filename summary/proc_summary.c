/* summary/: the summary aggregator: per-name statistics, histograms, steps,
 * groups, memory, and its JSON/markdown output; on util/ .. session/ and
 * stacks/. */
/* The summary of this process; see proc_summary.h. Everything here runs
 * on the writer thread. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record/api.h"
#include "files/atomic_file.h"
#include "util/log.h"
#include "proc_summary.h"
#include "session/session.h"
#include "stacks/stacks.h"
#include "summary.h"
#include "health.h"
#include "record/thread.h"

#define TRACE_SUFFIX ".trace.json.gz"
#define PF_SUFFIX ".pftrace.gz"
#define BRIEF_TOP 5
#define TOP_STACKS 10

static struct tp_sum *S;
static int S_failed;

static struct tp_sum *sum(void)
{
	if (!S && !S_failed) {
		S = tp_sum_new();
		S_failed = !S;
	}
	return S;
}

void tp_psum_tspan(const char *cat, const char *name, int64_t pid,
		   int64_t tid, int64_t ts_ns, int64_t dur_ns, uint32_t corr,
		   const struct tp_targ *args, uint32_t nargs)
{
	struct tp_sum_span e = {
		.cat = cat, .name = name, .pid = pid, .tid = tid,
		.ts_ns = ts_ns, .dur_ns = dur_ns, .corr = corr,
		.targs = args, .ntargs = nargs,
	};

	if (sum())
		tp_sum_span(S, &e);
}

void tp_psum_api_span(const char *cat, const char *name, int64_t pid,
		      int64_t tid, int64_t ts_ns, int64_t dur_ns,
		      uint32_t corr, const struct tp_targ *args,
		      uint32_t nargs)
{
	struct tp_sum_span e = {
		.cat = cat, .name = name, .pid = pid, .tid = tid,
		.ts_ns = ts_ns, .dur_ns = dur_ns, .corr = corr,
		.targs = args, .ntargs = nargs, .static_names = 1,
	};

	if (sum())
		tp_sum_span(S, &e);
}

/* Open async ranges by id: a bounded table, so a program that starts
 * ranges it never ends cannot grow it (those are left out). */
#define OPEN_SLOTS 4096

static struct open_range {
	uint64_t id;		/* 0: free */
	char *name;
	struct tp_targ *args;	/* one block with the strings they hold */
	uint32_t nargs;
	int64_t tid, ts;
} open_ranges[OPEN_SLOTS];

/* The args copied, with their keys and strings, into one allocation. */
static struct tp_targ *args_dup(const struct tp_targ *a, uint32_t n)
{
	size_t need = n * sizeof(*a) + 1;
	struct tp_targ *c;
	uint32_t i;
	char *p;

	for (i = 0; i < n; i++) {
		need += a[i].keylen;
		if (a[i].type == TP_TARG_STRING || a[i].type == TP_TARG_JSON)
			need += a[i].v.str.len;
	}
	c = malloc(need);
	if (!c)
		return NULL;
	memcpy(c, a, n * sizeof(*a));
	p = (char *)(c + n);
	for (i = 0; i < n; i++) {
		if (a[i].keylen)
			memcpy(p, a[i].key, a[i].keylen);
		c[i].key = p;
		p += a[i].keylen;
		if (a[i].type != TP_TARG_STRING && a[i].type != TP_TARG_JSON)
			continue;
		if (a[i].v.str.len)
			memcpy(p, a[i].v.str.s, a[i].v.str.len);
		c[i].v.str.s = p;
		p += a[i].v.str.len;
	}
	return c;
}

static struct open_range *open_slot(uint64_t id, int take)
{
	unsigned i = (unsigned)(id * 0x9e3779b97f4a7c15ull >> 52), n;

	for (n = 0; n < OPEN_SLOTS; n++, i = (i + 1) % OPEN_SLOTS) {
		if (open_ranges[i].id == id)
			return &open_ranges[i];
		if (take && !open_ranges[i].id)
			return &open_ranges[i];
	}
	return NULL;
}

static void open_free(struct open_range *o)
{
	free(o->name);
	free(o->args);
	memset(o, 0, sizeof(*o));
}

void tp_psum_begin(uint64_t id, const char *name, int64_t tid,
		   int64_t ts_ns, const struct tp_targ *args, uint32_t nargs)
{
	struct open_range *o = id ? open_slot(id, 1) : NULL;

	if (!o)
		return;
	if (o->id)
		open_free(o);
	o->name = strdup(name);
	o->args = args_dup(args, nargs);
	if (!o->name || !o->args) {
		open_free(o);
		return;
	}
	o->nargs = nargs;
	o->tid = tid;
	o->ts = ts_ns;
	o->id = id;
}

void tp_psum_end(uint64_t id, int64_t ts_ns)
{
	struct open_range *o = id ? open_slot(id, 0) : NULL;

	if (!o)
		return;
	tp_psum_tspan("user_annotation", o->name, tp_sess.pid, o->tid, o->ts,
		      ts_ns > o->ts ? ts_ns - o->ts : 0, 0, o->args,
		      o->nargs);
	open_free(o);
}

void tp_psum_sample(int64_t pid, int64_t tid, int64_t ts_ns,
		    int64_t weight_ns, const char *stack, size_t len)
{
	struct tp_sum_sample x = {
		.pid = pid, .tid = tid, .ts_ns = ts_ns, .weight_ns = weight_ns,
		.stack = stack, .stack_len = len,
	};

	if (sum())
		tp_sum_sample(S, &x);
}

void tp_psum_sampler(const char *mechanism, unsigned hz)
{
	if (sum())
		tp_sum_sampler(S, mechanism, hz);
}

void tp_psum_step(int64_t step, int64_t ts_ns, int64_t dur_ns)
{
	if (sum())
		tp_sum_step(S, step, ts_ns, dur_ns);
}

void tp_psum_memory(int64_t device, int64_t ts_ns, int64_t bytes)
{
	if (sum())
		tp_sum_memory(S, device, ts_ns, bytes);
}

void tp_psum_device_memory(int64_t device, int64_t bytes)
{
	if (sum())
		tp_sum_device_memory(S, device, bytes);
}

void tp_psum_health_sample(int64_t device, const char *event,
			   const char *key, size_t keylen, double v)
{
	if (sum())
		tp_health_sample(tp_sum_health(S), device, event, key, keylen,
				 v);
}

void tp_psum_health_state(const char *state, int64_t hz)
{
	if (sum())
		tp_health_state(tp_sum_health(S), state, strlen(state), hz);
}

void tp_psum_health_device(int64_t device, const char *uuid)
{
	if (sum())
		tp_health_device(tp_sum_health(S), device, uuid, strlen(uuid));
}

void tp_psum_health_unavailable(int64_t device, const char *metric,
				const char *why)
{
	if (sum())
		tp_health_unavailable(tp_sum_health(S), device, metric,
				      strlen(metric), why, strlen(why));
}

static int64_t ticks_ns(const struct tp_clock_map *m, uint64_t ticks)
{
	return (int64_t)(((unsigned __int128)ticks * m->mult) >>
			 TP_CLOCK_SHIFT);
}

/* Each dropped call counts under its API's row at its octave's mean, in
 * whole ns that add up to the octave's exact total. */
static void octave_drops(const struct tp_api *api,
			 uint64_t n, uint64_t ticks,
			 const struct tp_clock_map *m)
{
	int64_t ns = ticks_ns(m, ticks);
	uint64_t q, r;

	tp_drop_mean_split(ns > 0 ? (uint64_t)ns : 0, n, &q, &r);
	tp_sum_dropped(S, api->cat, api->name, (int64_t)q, n - r);
	if (r)
		tp_sum_dropped(S, api->cat, api->name, (int64_t)q + 1, r);
}

static void slot_drops(const struct tp_drop_slot *d,
		       const struct tp_clock_map *m)
{
	const struct tp_api *api = tp_api_get(d->api);
	unsigned o;

	if (!api || api->emit || !api->name) {
		tp_sum_dropped_other(S, tp_drop_slot_count(d));
		return;
	}
	for (o = 0; o < TP_DROP_OCTAVES; o++)
		if (d->n[o])
			octave_drops(api, d->n[o], d->ticks[o], m);
}

void tp_psum_thread_drops(struct tp_thread *t, const struct tp_clock_map *m)
{
	struct tp_drops *d = __atomic_load_n(&t->drops, __ATOMIC_ACQUIRE);
	unsigned i;

	if (!d || !sum())
		return;
	for (i = 0; i < d->n; i++)
		slot_drops(&d->slot[i], m);
	tp_sum_dropped_other(S, d->other);
	/* Counted once: what it drops from now on starts a new table. */
	tp_drops_release(t);
}

/* Summaries go to <dir>/summaries/, out of the way of tools that load
 * every .json of a trace directory (HTA's TraceAnalysis(trace_dir=...)
 * would take them for traces): <name>-rank<R>[-pid<P>].summary<ext>,
 * the trace's stem. */
#define SUMMARY_DIR "summaries"

/* The directory part of trace ("." when none) and the stem, the file
 * name without TRACE_SUFFIX (or PF_SUFFIX). */
static int split_trace(const char *trace, char *dir, size_t dlen,
		       const char **stem, size_t *stemlen)
{
	const char *slash = strrchr(trace, '/');
	size_t n = strlen(trace), sl = sizeof(TRACE_SUFFIX) - 1;

	if (n >= sizeof(PF_SUFFIX) - 1 &&
	    !strcmp(trace + n - (sizeof(PF_SUFFIX) - 1), PF_SUFFIX))
		sl = sizeof(PF_SUFFIX) - 1;
	else if (n < sl || strcmp(trace + n - sl, TRACE_SUFFIX))
		return -1;
	*stem = slash ? slash + 1 : trace;
	*stemlen = (size_t)(trace + n - sl - *stem);
	if (!slash)
		return snprintf(dir, dlen, ".") >= (int)dlen ? -1 : 0;
	if ((size_t)(slash - trace) + 1 >= dlen)
		return -1;
	memcpy(dir, trace, (size_t)(slash - trace));
	dir[slash == trace ? 1 : slash - trace] = 0;
	if (slash == trace)
		dir[0] = '/';
	return 0;
}

static void json_top(const struct tp_stack_top *t, unsigned i, void *ctx)
{
	struct tp_buf *b = ctx;

	tp_buf_cstr(b, i ? ",\n {\"calls\": " : "\n {\"calls\": ");
	tp_json_u64(b, t->st->calls);
	tp_buf_lit(b, ", \"total_ns\": ");
	tp_json_u64(b, t->st->total_ns);
	tp_buf_lit(b, ", \"max_ns\": ");
	tp_json_u64(b, t->st->max_ns);
	tp_buf_lit(b, ", \"slowest\": ");
	tp_json_str(b, t->slowest);
	tp_buf_lit(b, ", \"frames\": ");
	tp_buf_put(b, t->json, t->len);
	tp_buf_char(b, '}');
}

/* The stacks of the slowest calls (TPROF_BACKTRACE), by total time:
 * null when stacks were not recorded. */
static void put_stacks(struct tp_buf *b, void *ctx)
{
	(void)ctx;
	tp_buf_lit(b, ",\n\"stacks\": ");
	if (!tp_sess.cfg.bt_on) {
		tp_buf_lit(b, "null");
		return;
	}
	tp_buf_char(b, '[');
	tp_stacks_each_top(TOP_STACKS, json_top, b);
	tp_buf_char(b, ']');
}

static void fmt_json(struct tp_sum *s, struct tp_buf *b)
{
	tp_sum_write_json(s, b, put_stacks, NULL);
}

/* The frames of a stack's JSON array (strings only, as tp_json_str
 * writes them) as markdown cell text, one line each. */
static void md_frames(struct tp_buf *b, const char *json, size_t len)
{
	size_t j;
	int in = 0;

	for (j = 1; j + 1 < len; j++) {
		char c = json[j];

		if (!in) {
			if (c == '"')
				in = 1;
			else if (c == ',')
				tp_buf_lit(b, " <br/> ");
			continue;
		}
		if (c == '"') {
			in = 0;
			continue;
		}
		if (c == '\\' && j + 2 < len) {
			c = json[++j];
			if (c == 'u')		/* \u00XX */
				j += 4;
			if (c != '"' && c != '\\' && c != '/')
				c = ' ';	/* a control character */
		}
		tp_md_char(b, c);
	}
}

static void md_top(const struct tp_stack_top *t, unsigned i, void *ctx)
{
	struct tp_buf *b = ctx;
	char l[160];

	if (!i)
		tp_buf_lit(b, "## Call stacks of the slowest calls\n\n| Calls | "
			   "Total | Max | Slowest call | Stack (innermost "
			   "first) |\n|--:|--:|--:|---|---|\n");
	snprintf(l, sizeof(l), "| %llu | %.3f us | %.3f us | %s | ",
		 (unsigned long long)t->st->calls, t->st->total_ns / 1e3,
		 t->st->max_ns / 1e3, t->slowest);
	tp_buf_cstr(b, l);
	md_frames(b, t->json, t->len);
	tp_buf_lit(b, " |\n");
}

static void md_stacks(struct tp_buf *b)
{
	if (tp_sess.cfg.bt_on && tp_stacks_each_top(TOP_STACKS, md_top, b))
		tp_buf_char(b, '\n');
}

static void fmt_md(struct tp_sum *s, struct tp_buf *b)
{
	tp_sum_write_md(s, b);
	md_stacks(b);
}

static int brief_wanted(void)
{
	if (tp_log_level == TP_LOG_QUIET)
		return 0;
	if (tp_sess.cfg.summary == TP_SUMMARY_ALL)
		return 1;
	return tp_sess.cfg.summary == TP_SUMMARY_RANK0 &&
	       tp_sess.cfg.rank <= 0;
}

static void brief(void)
{
	struct tp_buf b = { 0 };

	tp_sum_write_brief(S, &b, BRIEF_TOP);
	if (!b.oom && tp_write_all(STDERR_FILENO, b.p, b.len) < 0)
		errno = 0;
	tp_buf_free(&b);
}

/* 0, or -1 with errno: nothing is left behind either way. */
static int write_one(int dirfd, const char *name,
		     void (*fmt)(struct tp_sum *, struct tp_buf *))
{
	struct tp_buf b = { 0 };
	int rc = -1;

	fmt(S, &b);
	if (b.oom)
		errno = ENOMEM;
	else
		rc = tp_write_file_atomic_at(dirfd, name, b.p, b.len);
	tp_buf_free(&b);
	return rc;
}

/* One line whatever fails (a disk that fills at exit would fail both
 * files): the second is not tried once the first failed. */
static void write_both(const char *trace)
{
	static const char *const ext[] = { ".json", ".md" };
	void (*const fmt[])(struct tp_sum *, struct tp_buf *) = {
		fmt_json, fmt_md
	};
	char dir[4096], name[1024];
	const char *stem;
	size_t stemlen;
	unsigned i;
	int dirfd;

	if (split_trace(trace, dir, sizeof(dir), &stem, &stemlen))
		return;
	dirfd = tp_open_subdir(dir, SUMMARY_DIR);
	if (dirfd < 0) {
		tp_error("cannot write the summaries in %s/" SUMMARY_DIR ": %s "
			 "(%s)", dir, strerror(errno), tp_fix_for(errno));
		return;
	}
	for (i = 0; i < 2; i++) {
		if ((size_t)snprintf(name, sizeof(name), "%.*s.summary%s",
				     (int)stemlen, stem, ext[i]) >=
		    sizeof(name))
			break;
		if (write_one(dirfd, name, fmt[i]) == 0)
			continue;
		tp_error("cannot write the summary %s/" SUMMARY_DIR "/%s%s: "
			 "%s (%s)", dir, name, i ? "" : " (nor its .md)",
			 strerror(errno), tp_fix_for(errno));
		break;
	}
	close(dirfd);
}

void tp_psum_finish(const char *trace_path, uint64_t events,
		    uint64_t gpu_dropped)
{
	const char *base = strrchr(trace_path, '/');
	struct tp_sum_info info = {
		.name = tp_sess.cfg.name,
		.host = tp_sess.host,
		.trace = base ? base + 1 : trace_path,
		.source = "tprof",
		.pid = tp_sess.pid,
		.rank = tp_sess.cfg.rank,
		.world_size = tp_sess.cfg.world_size,
		.base_ns = tp_sess.base_ns,
	};

	if (!sum())
		return;
	tp_sum_set_info(S, &info);
	tp_sum_count_events(S, events);
	tp_sum_dropped_other(S, gpu_dropped);
	write_both(trace_path);
	if (brief_wanted())
		brief();
}

/* The parent's summary is the parent's. */
void tp_psum_after_fork(void)
{
	unsigned i;

	for (i = 0; i < OPEN_SLOTS; i++)
		if (open_ranges[i].id)
			open_free(&open_ranges[i]);
	tp_sum_free(S);
	S = NULL;
	S_failed = 0;
}
