/* tprof check: streaming trace validator.
 *
 * The trace is walked with the pull parser; each traceEvents element is
 * built into a DOM, checked and dropped. What must outlive an event is a
 * 32-byte record: each X slice (for the nesting sweep) and each flow
 * event (for the matching), names and tracks as interned numbers. The
 * records go through an external sort (summary/xsort.c) within a fixed
 * budget ($TPROF_CLI_MEM_BUDGET, half for each kind): slices by track,
 * start, longest first, so the sweep needs only the open slices' stack;
 * flow events by key, so each flow is judged when its group ends. Past
 * the budget sorted runs go to a temporary file and are merged, so
 * memory stays the same on a trace of any size; only the names and
 * tracks tables grow, with the distinct names and tracks. The order is
 * total (ties broken by the event's index), so the problems found and
 * the order they are printed in do not depend on the budget. A sweep
 * on the fly would need no file when each track's events come in time
 * order, but tprof writes a span when it ends (a child before its
 * parent) and Kineto groups by kind, so on real traces they do not.
 *
 * Calls only down: its tables (check_tab.c), the external sort, the gzip
 * reader (gzread.c) and the pull parser (json.c).
 */
#define _GNU_SOURCE
#include "check.h"
#include "check_tab.h"
#include "gzread.h"
#include "json.h"
#include "summary/xsort.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SHOWN 20
#define DINFO_MAX (64 * 1024)
/* baseTimeNanoseconds is floored to this (docs/trace-format.md) */
#define BASE_TIME_STEP 100000000000000LL

enum {
	K_SCHEMA = 1 << 0,
	K_EVENTS = 1 << 1,
	K_BASE = 1 << 2,
	K_UNIT = 1 << 3,
	K_DINFO = 1 << 4,
	K_TPROF = 1 << 5,
	K_DEVPROPS = 1 << 6,
	K_NAME = 1 << 7,
};

static const char *const top_keys[] = {
	"schemaVersion", "traceEvents", "baseTimeNanoseconds",
	"displayTimeUnit", "distributedInfo", "tprof", "deviceProperties",
	"traceName",
};

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

static const char *const warn_text[W_COUNT] = {
	[W_UNIT] = "no \"displayTimeUnit\" (viewers assume \"ms\")",
	[W_DINFO] = "no \"distributedInfo\" (HTA takes the rank as 0; "
		"fine for a single process)",
	[W_FLOW_NO_END] = "\"ac2g\" flows with no end (ph \"f\"): "
		"launches whose kernel is outside the profiling window, as "
		"Kineto writes them",
	[W_FLOW_NO_START] = "\"ac2g\" flows with no start (ph \"s\"): "
		"kernels whose launch is outside the profiling window",
	[W_GPU_OVERLAP] = "partial overlaps between GPU slices on one "
		"stream (CUPTI's timestamps of back-to-back work; Perfetto "
		"shows the later slice on an extra row)",
};

struct flow {
	uint64_t id;
	uint32_t cat, name, idx, is_str;
	uint32_t n_start, n_end;
	int64_t first_start, first_end;	/* earliest s and f ts, ns */
};

/* One flow event (s, t or f), sorted by key then index. */
struct flowev {
	uint64_t id;
	uint32_t cat, name, idx;
	char ph;
	uint8_t is_str, ts_ok;
	int64_t ts;		/* ns */
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
};

/* Returns -1 so that a failing check can return problem(...). */
static int problem(struct ck *ck, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int problem(struct ck *ck, const char *fmt, ...)
{
	va_list ap;

	if (++ck->problems > MAX_SHOWN)
		return -1;
	fprintf(ck->out, "%s: error: ", ck->path);
	va_start(ap, fmt);
	vfprintf(ck->out, fmt, ap);
	va_end(ap);
	fputc('\n', ck->out);
	return -1;
}

/* Counts a quirk with --foreign, where it is a warning; an error
 * otherwise. Returns 1 when it was only counted. */
static int foreign_quirk(struct ck *ck, unsigned w)
{
	if (!(ck->flags & TP_CHECK_FOREIGN))
		return 0;
	ck->warnings[w]++;
	return 1;
}

static void print_warnings(struct ck *ck)
{
	unsigned w;

	for (w = 0; w < W_COUNT; w++)
		if (ck->warnings[w])
			fprintf(ck->out, "%s: warning: %lu %s\n", ck->path,
				ck->warnings[w], warn_text[w]);
}

/* A problem with the current event, ck->nevents. */
static int ev_problem(struct ck *ck, const struct tp_json_node *ev,
		      const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int ev_problem(struct ck *ck, const struct tp_json_node *ev,
		      const char *fmt, ...)
{
	va_list ap;

	if (++ck->problems > MAX_SHOWN)
		return -1;
	fprintf(ck->out, "%s: error: traceEvents[%lu] (line %lu): ", ck->path,
		ck->nevents, ev->line);
	va_start(ap, fmt);
	vfprintf(ck->out, fmt, ap);
	va_end(ap);
	fputc('\n', ck->out);
	return -1;
}

/* Printable, truncated copy of a string for messages. */
static const char *quote(char *buf, size_t size, const char *s, size_t len)
{
	size_t o = 0, i;
	unsigned char c;

	for (i = 0; i < len && o + 8 < size; i++) {
		c = (unsigned char)s[i];
		if (c < 0x20 || c == 0x7f)
			o += (size_t)snprintf(buf + o, size - o, "\\x%02x", c);
		else if (c == '"' || c == '\\')
			o += (size_t)snprintf(buf + o, size - o, "\\%c", c);
		else
			buf[o++] = (char)c;
	}
	if (i < len) {
		/* don't cut a UTF-8 sequence in half */
		while (o && ((unsigned char)buf[o - 1] & 0xc0) == 0x80)
			o--;
		if (o && (unsigned char)buf[o - 1] >= 0xc0)
			o--;
		memcpy(buf + o, "...", 4);
		return buf;
	}
	buf[o] = 0;
	return buf;
}

static const char *fmt_us(char *buf, size_t size, int64_t ns)
{
	uint64_t a = ns < 0 ? 0 - (uint64_t)ns : (uint64_t)ns;

	snprintf(buf, size, "%s%" PRIu64 ".%03" PRIu64, ns < 0 ? "-" : "",
		 a / 1000, a % 1000);
	return buf;
}

enum { RS_PAT, RS_WS1, RS_WS, RS_DIG };

/* \s without '\n': HTA runs the regex on one line at a time. */
static int inline_space(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

static void rank_restart(struct rank_scan *r, unsigned char c)
{
	r->state = RS_PAT;
	r->matched = c == '"';
	r->val = 0;
	r->overflow = 0;
}

static void rank_feed(struct rank_scan *r, const char *buf, size_t n)
{
	static const char pat[] = "\"rank\":";
	const char *end = buf + n, *q;
	unsigned char c;

	for (; buf < end && !r->found; buf++) {
		if (r->state == RS_PAT && !r->matched) {
			/* memmem finds whole matches fast; a match cut by the
			 * buffer's end can only start in its last 6 bytes,
			 * which go through the byte loop */
			q = memmem(buf, (size_t)(end - buf), pat, 7);
			if (!q)
				q = end - buf > 6 ? end - 6 : buf;
			buf = q;
		}
		c = (unsigned char)*buf;
		switch (r->state) {
		case RS_PAT:
			if (c != (unsigned char)pat[r->matched]) {
				rank_restart(r, c);
			} else if (++r->matched == 7) {
				r->state = RS_WS1;
			}
			break;
		case RS_WS1:
		case RS_WS:
			if (inline_space(c))
				r->state = RS_WS;
			else if (r->state == RS_WS && c >= '0' && c <= '9')
				r->state = RS_DIG;
			else
				rank_restart(r, c);
			if (r->state != RS_DIG)
				break;
			/* fall through */
		case RS_DIG:
			if (c < '0' || c > '9') {
				r->found = 1;
				break;
			}
			if (r->val > (UINT64_MAX - 9) / 10)
				r->overflow = 1;
			r->val = r->val * 10 + (uint64_t)(c - '0');
			break;
		}
	}
}

static void rank_end(struct rank_scan *r)
{
	if (r->state == RS_DIG)
		r->found = 1;
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* tprof writes microseconds as -?\d+\.\d{3}: nanoseconds, no exponent. */
static int three_decimals(const char *s)
{
	int i;

	s += *s == '-';
	if (!is_digit(*s))
		return 0;
	while (is_digit(*s))
		s++;
	if (*s++ != '.')
		return 0;
	for (i = 0; i < 3; i++)
		if (!is_digit(*s++))
			return 0;
	return !*s;
}

/* Microseconds to nanoseconds, exact from the literal when it has at most
 * three decimals, so nesting is judged on the values Perfetto sees. */
static int us_to_ns(const struct tp_json_node *n, int64_t *ns)
{
	const char *s = n->str + (n->str[0] == '-');
	uint64_t v = 0;
	int frac = 0;
	double d;

	for (; is_digit(*s); s++) {
		if (v > ((uint64_t)INT64_MAX - 9) / 10)
			goto approx;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	if (*s == '.')
		for (s++; is_digit(*s) && frac < 3; s++, frac++) {
			if (v > ((uint64_t)INT64_MAX - 9) / 10)
				goto approx;
			v = v * 10 + (uint64_t)(*s - '0');
		}
	if (*s)
		goto approx;
	for (; frac < 3; frac++) {
		if (v > (uint64_t)INT64_MAX / 10)
			goto approx;
		v *= 10;
	}
	*ns = n->str[0] == '-' ? -(int64_t)v : (int64_t)v;
	return 0;
approx:
	/* no libm: round half away from zero by hand */
	d = n->num * 1000.0;
	if (!(d > -9.2e18 && d < 9.2e18))
		return -1;
	*ns = (int64_t)(d < 0 ? d - 0.5 : d + 0.5);
	return 0;
}

/* Checks a ts/dur member; returns it when usable. */
static const struct tp_json_node *time_field(struct ck *ck,
					     const struct tp_json_node *ev,
					     const char *key, int required,
					     int64_t *ns)
{
	const struct tp_json_node *n = tp_json_get(ev, key);

	if (!n) {
		if (required)
			ev_problem(ck, ev, "no \"%s\"", key);
		return NULL;
	}
	if (n->type != TP_JSON_NUMBER) {
		ev_problem(ck, ev, "\"%s\" is not a number", key);
		return NULL;
	}
	if (!(ck->flags & TP_CHECK_FOREIGN) && !three_decimals(n->str))
		ev_problem(ck, ev, "\"%s\": %.40s does not have exactly "
			   "three decimals", key, n->str);
	if (us_to_ns(n, ns)) {
		ev_problem(ck, ev, "\"%s\": %.40s is out of range", key,
			   n->str);
		return NULL;
	}
	return n;
}

/* Appends key=VALUE to the track name at buf + *o (at most 96 bytes);
 * returns 0 if the value is usable. */
static int track_part(struct ck *ck, const struct tp_json_node *ev,
		      const char *key, char *buf, size_t *o)
{
	const struct tp_json_node *n = tp_json_get(ev, key);
	size_t k = strlen(key);
	int64_t v;

	memcpy(buf + *o, key, k);
	*o += k;
	buf[(*o)++] = '=';
	if (!n) {
		if (!(ck->flags & TP_CHECK_FOREIGN))
			ev_problem(ck, ev, "no \"%s\"", key);
		memcpy(buf + *o, "(none)", 6);
		*o += 6;
		return 0;
	}
	if (n->type == TP_JSON_NUMBER && tp_json_int64(n, &v)) {
		memcpy(buf + *o, n->str, n->len);	/* at most 20 bytes */
		*o += n->len;
		return 0;
	}
	if (n->type == TP_JSON_STRING) {
		buf[(*o)++] = '"';
		quote(buf + *o, 80, n->str, n->len);
		*o += strlen(buf + *o);
		buf[(*o)++] = '"';
		return 0;
	}
	return ev_problem(ck, ev, "\"%s\" is not an integer or a string",
			  key);
}

/* Kineto's categories of GPU activity, which may overlap on a stream. */
static int gpu_cat(const struct tp_json_node *cat)
{
	static const char *const cats[] = {
		"kernel", "gpu_memcpy", "gpu_memset",
	};
	size_t i;

	if (!cat || cat->type != TP_JSON_STRING)
		return 0;
	for (i = 0; i < sizeof(cats) / sizeof(cats[0]); i++)
		if (!strcmp(cat->str, cats[i]))
			return 1;
	return 0;
}

/* The sort failed (no room for its file, no memory): said once, and
 * the nesting and flow checks are left out. */
static int sort_fail(struct ck *ck, const struct tp_xsort *s)
{
	const char *e = s ? tp_xsort_error(s) : NULL;

	if (ck->sort_failed)
		return -1;
	ck->sort_failed = 1;
	return problem(ck, "%s; nesting and flows not checked",
		       e ? e : "out of memory");
}

static void add_x(struct ck *ck, const struct tp_json_node *ev,
		  const char *track, size_t tlen, int64_t ts, int64_t dur)
{
	const struct tp_json_node *name = tp_json_get(ev, "name");
	int64_t tid, nid;
	struct xev x;

	if (ck->sort_failed)
		return;
	tid = ck_intern(&ck->tracks, track, tlen);
	nid = name && name->type == TP_JSON_STRING ?
		ck_intern(&ck->strs, name->str, name->len) :
		ck_intern(&ck->strs, "", 0);
	if (tid < 0 || nid < 0) {
		sort_fail(ck, NULL);
		return;
	}
	x.track = (uint32_t)tid;
	x.name = (uint32_t)nid;
	x.idx = (uint32_t)ck->nevents;
	x.gpu = (uint32_t)gpu_cat(tp_json_get(ev, "cat"));
	x.ts = ts;
	x.dur = dur;
	if (tp_xsort_add(ck->xsort, &x))
		sort_fail(ck, ck->xsort);
}

static int check_meta(struct ck *ck, const struct tp_json_node *ev)
{
	static const char *const names[][2] = {
		{ "process_name", "name" },
		{ "thread_name", "name" },
		{ "process_labels", "labels" },
		{ "process_sort_index", "sort_index" },
		{ "thread_sort_index", "sort_index" },
	};
	const struct tp_json_node *name = tp_json_get(ev, "name"), *arg;
	size_t i, n = sizeof(names) / sizeof(names[0]);
	char q[80];
	int64_t v;

	if (!name || name->type != TP_JSON_STRING)
		return ev_problem(ck, ev, "metadata event without a name");
	for (i = 0; i < n; i++)
		if (!strcmp(name->str, names[i][0]))
			break;
	if (i == n)
		return ev_problem(ck, ev, "unknown metadata event \"%s\"",
				  quote(q, sizeof(q), name->str, name->len));
	arg = tp_json_get(tp_json_get(ev, "args"), names[i][1]);
	if (i < 3 && (!arg || arg->type != TP_JSON_STRING))
		return ev_problem(ck, ev, "%s needs a string args.%s",
				  names[i][0], names[i][1]);
	if (i >= 3 && !tp_json_int64(arg, &v))
		return ev_problem(ck, ev, "%s needs an integer args.%s",
				  names[i][0], names[i][1]);
	return 0;
}

/* Perfetto reads a numeric id as is and a string id as hex. */
static int flow_id(const struct tp_json_node *n, uint64_t *id)
{
	char *end;
	int64_t v;

	if (n && n->type == TP_JSON_NUMBER && tp_json_int64(n, &v) && v >= 0) {
		*id = (uint64_t)v;
		return 0;
	}
	if (!n || n->type != TP_JSON_STRING || !n->len || n->str[0] == '-')
		return -1;
	errno = 0;
	*id = strtoull(n->str, &end, 16);
	return errno || *end ? -1 : 0;
}

/* Flows are matched on (id, cat, name), as Perfetto's v1 flow import. */
static int check_flow(struct ck *ck, const struct tp_json_node *ev,
		      char ph, int64_t ts, int ts_ok)
{
	const struct tp_json_node *id = tp_json_get(ev, "id");
	const struct tp_json_node *cat = tp_json_get(ev, "cat");
	const struct tp_json_node *name = tp_json_get(ev, "name");
	struct flowev f = { .ph = ph, .idx = (uint32_t)ck->nevents };
	int64_t c, nm;

	if (flow_id(id, &f.id))
		return ev_problem(ck, ev, "flow event needs an \"id\" that "
				  "is a non-negative integer or a hex string");
	if (cat && cat->type != TP_JSON_STRING)
		return ev_problem(ck, ev, "\"cat\" is not a string");
	c = cat ? ck_intern(&ck->strs, cat->str, cat->len) :
		  ck_intern(&ck->strs, "", 0);
	nm = name && name->type == TP_JSON_STRING ?
		ck_intern(&ck->strs, name->str, name->len) :
		ck_intern(&ck->strs, "", 0);
	if (c < 0 || nm < 0)
		return sort_fail(ck, NULL);
	if (ck->sort_failed)
		return -1;
	f.cat = (uint32_t)c;
	f.name = (uint32_t)nm;
	f.is_str = id->type == TP_JSON_STRING;
	f.ts_ok = (uint8_t)!!ts_ok;
	f.ts = ts;
	if (tp_xsort_add(ck->fsort, &f))
		return sort_fail(ck, ck->fsort);
	return 0;
}

static int check_event(struct ck *ck, const struct tp_json_node *ev)
{
	static const char phases[] = "BEXiICbnestfPNODMSTFRcVv()";
	static const char timed[] = "XBEiICstfben";
	const struct tp_json_node *ph, *name;
	char track[200], q[40];
	int64_t ts = 0, dur = 0;
	size_t o = 0;
	int bad, ts_ok;
	char c;

	if (ev->type != TP_JSON_OBJECT)
		return ev_problem(ck, ev, "event is not an object");
	ph = tp_json_get(ev, "ph");
	if (!ph || ph->type != TP_JSON_STRING)
		return ev_problem(ck, ev, "\"ph\" is missing or not a string");
	c = ph->str[0];
	if (ph->len != 1 || !c || !strchr(phases, c))
		return ev_problem(ck, ev, "unknown phase \"%s\"",
				  quote(q, sizeof(q), ph->str, ph->len));
	name = tp_json_get(ev, "name");
	if (name && name->type != TP_JSON_STRING)
		ev_problem(ck, ev, "\"name\" is not a string");
	bad = track_part(ck, ev, "pid", track, &o);
	track[o++] = ' ';
	bad |= track_part(ck, ev, "tid", track, &o);
	track[o] = 0;
	ts_ok = !!time_field(ck, ev, "ts", strchr(timed, c) != NULL, &ts);
	if (c == 'X' && time_field(ck, ev, "dur", 1, &dur)) {
		if (dur < 0)
			ev_problem(ck, ev, "negative \"dur\"");
		else if (ts_ok && !bad)
			add_x(ck, ev, track, o, ts, dur);
	}
	if (c == 'M')
		return check_meta(ck, ev);
	if (c == 's' || c == 'f' || c == 't')
		return check_flow(ck, ev, c, ts, ts_ok);
	return 0;
}

static int xev_cmp(const void *a, const void *b)
{
	const struct xev *x = a, *y = b;

	if (x->track != y->track)
		return x->track < y->track ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->dur != y->dur)
		return x->dur > y->dur ? -1 : 1;	/* parent first */
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int64_t xend(const struct xev *x)
{
	int64_t e;

	return __builtin_add_overflow(x->ts, x->dur, &e) ? INT64_MAX : e;
}

static void report_overlap(struct ck *ck, const struct xev *a,
			   const struct xev *b)
{
	char qa[100], qb[100], t[4][32];
	const char *s;
	size_t len;

	s = ck_str_at(&ck->strs, a->name, &len);
	quote(qa, sizeof(qa), s, len);
	s = ck_str_at(&ck->strs, b->name, &len);
	quote(qb, sizeof(qb), s, len);
	problem(ck, "partial overlap on track %s: \"%s\" [%s, %s] and \"%s\" "
		"[%s, %s] (traceEvents[%u] and [%u])",
		ck_str_at(&ck->tracks, a->track, &len), qa,
		fmt_us(t[0], 32, a->ts), fmt_us(t[1], 32, xend(a)), qb,
		fmt_us(t[2], 32, b->ts), fmt_us(t[3], 32, xend(b)),
		a->idx, b->idx);
}

/* Perfetto needs X slices on a track to nest strictly; one that starts
 * inside another and ends after it goes to an overflow track. The
 * slices come sorted (track, start, longest first), so only the open
 * ones are kept: the stack grows with the nesting depth, not the
 * slices. */
static void check_nesting(struct ck *ck)
{
	struct xev *stack = NULL, *top;
	size_t depth = 0, cap = 0;
	const struct xev *x;
	uint32_t track = 0;
	void *v;

	if (ck->sort_failed || tp_xsort_finish(ck->xsort)) {
		sort_fail(ck, ck->xsort);
		return;
	}
	while ((x = tp_xsort_next(ck->xsort))) {
		if (x->track != track)
			depth = 0;
		track = x->track;
		while (depth && xend(&stack[depth - 1]) <= x->ts)
			depth--;
		top = depth ? &stack[depth - 1] : NULL;
		if (top && xend(x) > xend(top)) {
			if (!(x->gpu && top->gpu &&
			      foreign_quirk(ck, W_GPU_OVERLAP)))
				report_overlap(ck, top, x);
			continue;
		}
		if (depth == cap) {
			cap = cap ? cap * 2 : 64;
			v = realloc(stack, cap * sizeof(*stack));
			if (!v) {
				sort_fail(ck, NULL);
				break;
			}
			stack = v;
		}
		stack[depth++] = *x;
	}
	if (tp_xsort_error(ck->xsort))
		sort_fail(ck, ck->xsort);
	free(stack);
}

static int flowev_cmp(const void *a, const void *b)
{
	const struct flowev *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	if (x->cat != y->cat)
		return x->cat < y->cat ? -1 : 1;
	if (x->name != y->name)
		return x->name < y->name ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* The problem lines flow f gives (0: fine, or a quirk counted). */
static unsigned flow_lines(struct ck *ck, const struct flow *f)
{
	const char *s;
	size_t len;

	if (f->n_start && f->n_end && (f->first_start == INT64_MIN ||
				       f->first_end >= f->first_start))
		return 0;
	s = ck_str_at(&ck->strs, f->cat, &len);
	if (len == 4 && !memcmp(s, "ac2g", 4) && (!f->n_start ||
	    !f->n_end) && foreign_quirk(ck, f->n_start ? W_FLOW_NO_END :
				      W_FLOW_NO_START))
		return 0;
	return !f->n_start + !f->n_end + (f->n_start && f->n_end);
}

static void flow_print(struct ck *ck, const struct flow *f)
{
	char qc[80], qn[80], id[32], t[2][32];
	const char *s;
	size_t len;

	s = ck_str_at(&ck->strs, f->cat, &len);
	quote(qc, sizeof(qc), s, len);
	s = ck_str_at(&ck->strs, f->name, &len);
	quote(qn, sizeof(qn), s, len);
	snprintf(id, sizeof(id), f->is_str ? "0x%" PRIx64 : "%" PRIu64,
		 f->id);
	if (!f->n_start)
		problem(ck, "flow id=%s cat=\"%s\" name=\"%s\" has no "
			"start (ph \"s\") (first seen at "
			"traceEvents[%u])", id, qc, qn, f->idx);
	if (!f->n_end)
		problem(ck, "flow id=%s cat=\"%s\" name=\"%s\" has no "
			"end (ph \"f\") (first seen at "
			"traceEvents[%u])", id, qc, qn, f->idx);
	if (f->n_start && f->n_end)
		problem(ck, "flow id=%s cat=\"%s\" name=\"%s\" ends at "
			"%s before it starts at %s", id, qc, qn,
			fmt_us(t[0], 32, f->first_end),
			fmt_us(t[1], 32, f->first_start));
}

/* The bad flows printed first, in order of first appearance: the
 * MAX_SHOWN earliest, kept by index as the groups end. */
struct flow_shown {
	struct flow v[MAX_SHOWN];
	size_t n;
	unsigned long lines;	/* of every bad flow */
};

static void flow_done(struct ck *ck, const struct flow *f,
		      struct flow_shown *sh)
{
	unsigned lines = flow_lines(ck, f);
	size_t i;

	if (!lines)
		return;
	sh->lines += lines;
	if (sh->n == MAX_SHOWN && f->idx > sh->v[MAX_SHOWN - 1].idx)
		return;
	i = sh->n < MAX_SHOWN ? sh->n++ : MAX_SHOWN - 1;
	for (; i && sh->v[i - 1].idx > f->idx; i--)
		sh->v[i] = sh->v[i - 1];
	sh->v[i] = *f;
}

static void flow_start(struct flow *f, const struct flowev *e)
{
	memset(f, 0, sizeof(*f));
	f->id = e->id;
	f->cat = e->cat;
	f->name = e->name;
	f->idx = e->idx;
	f->first_start = f->first_end = INT64_MAX;
}

static void flow_take(struct flow *f, const struct flowev *e)
{
	f->is_str |= e->is_str;
	if (e->ph == 's') {
		f->n_start++;
		if (!e->ts_ok)
			f->first_start = INT64_MIN;
		else if (e->ts < f->first_start)
			f->first_start = e->ts;
	} else if (e->ph == 'f') {
		f->n_end++;
		if (e->ts_ok && e->ts < f->first_end)
			f->first_end = e->ts;
	}
}

/* Flow events by key, each key's first (lowest index) first: a flow is
 * judged when its group ends. Every problem is counted; the lines of
 * the earliest bad flows are printed in order, as problem() would have
 * printed them flow by flow. */
static void check_flows(struct ck *ck)
{
	struct flow_shown sh;
	const struct flowev *e;
	unsigned long base;
	struct flow f;
	int have = 0;
	size_t i;

	if (ck->sort_failed || tp_xsort_finish(ck->fsort)) {
		sort_fail(ck, ck->fsort);
		return;
	}
	memset(&sh, 0, sizeof(sh));
	while ((e = tp_xsort_next(ck->fsort))) {
		if (have && (e->id != f.id || e->cat != f.cat ||
			     e->name != f.name))
			flow_done(ck, &f, &sh);
		if (!have || e->id != f.id || e->cat != f.cat ||
		    e->name != f.name)
			flow_start(&f, e);
		have = 1;
		flow_take(&f, e);
	}
	if (have)
		flow_done(ck, &f, &sh);
	if (tp_xsort_error(ck->fsort)) {
		sort_fail(ck, ck->fsort);
		return;
	}
	base = ck->problems;
	for (i = 0; i < sh.n && ck->problems < MAX_SHOWN; i++)
		flow_print(ck, &sh.v[i]);
	ck->problems = base + sh.lines;
}

static void check_dinfo(struct ck *ck, const struct tp_json_node *n,
			const char *raw, size_t rawlen)
{
	const struct tp_json_node *rank = tp_json_get(n, "rank");
	struct rank_scan scan = { 0 };
	int64_t r, ws;

	if (n->type != TP_JSON_OBJECT) {
		problem(ck, "\"distributedInfo\" is not an object");
		return;
	}
	if (!tp_json_int64(rank, &r) || r < 0) {
		problem(ck, "distributedInfo.rank is missing or not a "
			"non-negative integer");
		r = -1;
	}
	if (!tp_json_int64(tp_json_get(n, "world_size"), &ws) || ws < 1)
		problem(ck, "distributedInfo.world_size is missing or not a "
			"positive integer");
	else if (r >= ws)
		problem(ck, "distributedInfo.rank %" PRId64 " is not below "
			"world_size %" PRId64, r, ws);
	if (r < 0)
		return;
	ck->have_rank = 1;
	ck->rank = r;
	if (!raw) {
		problem(ck, "\"distributedInfo\" is over %d bytes", DINFO_MAX);
		return;
	}
	rank_feed(&scan, raw, rawlen);
	rank_end(&scan);
	if (!scan.found || scan.overflow || scan.val != (uint64_t)r)
		problem(ck, "distributedInfo: \"rank\" is not written as "
			"\"rank\": %" PRId64 " (HTA finds the rank with the "
			"regex \"rank\":\\s+(\\d+), which needs whitespace "
			"after the colon)", r);
}

static void check_top(struct ck *ck, unsigned key,
		      const struct tp_json_node *n)
{
	const char *s = n->str;
	int64_t v;

	switch (key) {
	case K_SCHEMA:
		if (!tp_json_int64(n, &v))
			problem(ck, "\"schemaVersion\" is not an integer");
		break;
	case K_BASE:
		if (n->type != TP_JSON_NUMBER)
			problem(ck, "\"baseTimeNanoseconds\" is not a number");
		else if (ck->flags & TP_CHECK_FOREIGN)
			break;
		else if (!tp_json_int64(n, &v) || v < 0)
			problem(ck, "\"baseTimeNanoseconds\" is not a "
				"non-negative integer");
		else if (v % BASE_TIME_STEP)
			problem(ck, "\"baseTimeNanoseconds\" %" PRId64 " is "
				"not a multiple of 10^14", v);
		break;
	case K_UNIT:
		if (n->type != TP_JSON_STRING ||
		    (strcmp(s, "ms") && strcmp(s, "ns")))
			problem(ck, "\"displayTimeUnit\" must be \"ms\" or "
				"\"ns\"");
		break;
	case K_TPROF:
		if (n->type != TP_JSON_OBJECT)
			problem(ck, "\"tprof\" is not an object");
		break;
	case K_DEVPROPS:
		if (n->type != TP_JSON_ARRAY)
			problem(ck, "\"deviceProperties\" is not an array");
		break;
	case K_NAME:
		if (n->type != TP_JSON_STRING)
			problem(ck, "\"traceName\" is not a string");
		break;
	}
}

static int check_events(struct ck *ck)
{
	struct tp_json_node *ev;
	int tok = tp_json_next(ck->j);

	if (tok != TP_JSON_ARRAY) {
		if (tok != TP_JSON_ERROR)
			problem(ck, "\"traceEvents\" is not an array");
		return tp_json_skip(ck->j, tok);
	}
	for (;;) {
		tok = tp_json_next(ck->j);
		if (tok == TP_JSON_ARRAY_END)
			return 0;
		if (tp_json_build(ck->j, tok, &ck->arena, &ev))
			return -1;
		check_event(ck, ev);
		ck->nevents++;
		tp_json_arena_reset(&ck->arena);
	}
}

static int check_member(struct ck *ck)
{
	size_t i, len, n = sizeof(top_keys) / sizeof(top_keys[0]);
	const char *name = tp_json_text(ck->j, &len), *raw;
	struct tp_json_node *v;
	unsigned key;

	for (i = 0; i < n; i++)
		if (!strcmp(name, top_keys[i]) && strlen(name) == len)
			break;
	if (i == n)
		return tp_json_skip(ck->j, tp_json_next(ck->j));
	key = 1u << i;
	if (ck->seen & key)
		problem(ck, "duplicate top-level key \"%s\"", top_keys[i]);
	ck->seen |= key;
	if (key == K_EVENTS)
		return check_events(ck);
	if (key == K_DINFO)
		tp_json_capture_start(ck->j, DINFO_MAX);
	if (tp_json_parse_value(ck->j, &ck->arena, &v))
		return -1;
	if (key == K_DINFO) {
		raw = tp_json_capture_end(ck->j, &len);
		check_dinfo(ck, v, raw, len);
	} else {
		check_top(ck, key, v);
	}
	tp_json_arena_reset(&ck->arena);
	return 0;
}

static void check_required(struct ck *ck)
{
	unsigned need = K_SCHEMA | K_EVENTS | K_UNIT | K_DINFO, i;

	if (!(ck->flags & TP_CHECK_FOREIGN))
		need |= K_BASE | K_TPROF;
	for (i = 0; i < sizeof(top_keys) / sizeof(top_keys[0]); i++) {
		if (!((need & ~ck->seen) & (1u << i)))
			continue;
		if ((1u << i) == K_UNIT && foreign_quirk(ck, W_UNIT))
			continue;
		if ((1u << i) == K_DINFO && foreign_quirk(ck, W_DINFO))
			continue;
		problem(ck, "missing top-level key \"%s\"", top_keys[i]);
	}
	rank_end(&ck->scan);
	if (ck->have_rank && ck->scan.found &&
	    (ck->scan.overflow || ck->scan.val != (uint64_t)ck->rank))
		problem(ck, "HTA would read rank %" PRIu64 " (the first "
			"\"rank\": N in the file) but distributedInfo.rank "
			"is %" PRId64, ck->scan.val, ck->rank);
}

static int parse_error(struct ck *ck)
{
	const struct tp_json_err *e = tp_json_error(ck->j);
	const char *gzerr = tp_gzr_error(ck->gz);

	if (e->io && gzerr)
		problem(ck, "%s", gzerr);
	else
		problem(ck, "invalid JSON at line %lu, column %lu: %s",
			e->line, e->col, e->msg);
	return -1;
}

static int check_stream(struct ck *ck)
{
	int tok = tp_json_next(ck->j);

	if (tok != TP_JSON_OBJECT) {
		if (tok == TP_JSON_ERROR || tp_json_skip(ck->j, tok) ||
		    tp_json_next(ck->j) != TP_JSON_EOF)
			return parse_error(ck);
		problem(ck, "top-level value is %s, not an object with "
			"\"traceEvents\" (the layout HTA and Kineto use)",
			tok == TP_JSON_ARRAY ? "an array" : "a scalar");
		return 0;
	}
	while ((tok = tp_json_next(ck->j)) == TP_JSON_KEY)
		if (check_member(ck))
			return parse_error(ck);
	if (tok != TP_JSON_OBJECT_END || tp_json_next(ck->j) != TP_JSON_EOF)
		return parse_error(ck);
	check_required(ck);
	check_nesting(ck);
	check_flows(ck);
	return 0;
}

static ssize_t ck_read(void *ctx, void *buf, size_t len)
{
	struct ck *ck = ctx;
	ssize_t n = tp_gzr_read(ck->gz, buf, len);

	if (n > 0 && !ck->scan.found)
		rank_feed(&ck->scan, buf, (size_t)n);
	return n;
}

int tp_check_file(const char *path, unsigned flags, FILE *out)
{
	struct ck ck = { .path = path, .out = out, .flags = flags };
	char err[256];
	int ret = -1;
	size_t budget = tp_xsort_budget(err, sizeof(err));

	if (!budget) {
		problem(&ck, "%s", err);
		goto out;
	}
	/* half of the budget for each sort; each fills only what it needs */
	ck.xsort = tp_xsort_new(sizeof(struct xev), xev_cmp, budget / 2);
	ck.fsort = tp_xsort_new(sizeof(struct flowev), flowev_cmp, budget / 2);
	if (!ck.xsort || !ck.fsort) {
		problem(&ck, "out of memory");
		goto out;
	}
	ck.gz = tp_gzr_open(path, err, sizeof(err));
	if (!ck.gz) {
		problem(&ck, "%s", err);
		goto out;
	}
	ck.j = tp_json_open(ck_read, &ck);
	if (!ck.j) {
		problem(&ck, "out of memory");
		goto out;
	}
	if (check_stream(&ck) == 0)
		ret = ck.problems > INT_MAX ? INT_MAX : (int)ck.problems;
out:
	print_warnings(&ck);
	if (!ck.problems)
		fprintf(out, "%s: ok (%lu events)\n", path, ck.nevents);
	else if (ck.problems > MAX_SHOWN)
		fprintf(out, "%s: %lu more problems not shown "
			"(%lu in total)\n", path, ck.problems - MAX_SHOWN,
			ck.problems);
	tp_json_close(ck.j);
	tp_gzr_close(ck.gz);
	tp_json_arena_free(&ck.arena);
	ck_strtab_free(&ck.strs);
	ck_strtab_free(&ck.tracks);
	tp_xsort_free(ck.xsort);
	tp_xsort_free(ck.fsort);
	return ret;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: tprof check [--foreign] FILE...\n"
		"\n"
		"Validate trace files (plain or gzipped JSON) the way\n"
		"Perfetto and HTA read them. Prints FILE: error: ... for\n"
		"each problem or FILE: ok (N events).\n"
		"\n"
		"  --foreign  check a Kineto/torch.profiler trace: skip the\n"
		"             tprof-only rules (\"tprof\" and\n"
		"             \"baseTimeNanoseconds\" keys, three-decimal\n"
		"             ts/dur, pid/tid on every event) and count\n"
		"             what Kineto always writes (no\n"
		"             displayTimeUnit or distributedInfo, ac2g flows\n"
		"             missing an end, overlapping GPU slices) as\n"
		"             one warning each\n"
		"  --help     show this help\n"
		"\n"
		"Exit status: 0 no errors (warnings may be printed), 1\n"
		"errors found or a file unreadable, 2 usage error.\n");
}

int tp_cmd_check(int argc, char **argv)
{
	unsigned flags = 0;
	int i, nfiles = 0, status = 0, opts = 1;

	for (i = 1; i < argc; i++) {
		if (opts && !strcmp(argv[i], "--")) {
			opts = 0;
		} else if (opts && (!strcmp(argv[i], "--help") ||
				    !strcmp(argv[i], "-h"))) {
			usage(stdout);
			return 0;
		} else if (opts && !strcmp(argv[i], "--foreign")) {
			flags |= TP_CHECK_FOREIGN;
		} else if (opts && argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "tprof check: unknown option '%s'\n",
				argv[i]);
			usage(stderr);
			return 2;
		} else {
			nfiles++;
		}
	}
	if (!nfiles) {
		usage(stderr);
		return 2;
	}
	for (i = 1, opts = 1; i < argc; i++) {
		if (opts && !strcmp(argv[i], "--")) {
			opts = 0;
			continue;
		}
		if (opts && argv[i][0] == '-' && argv[i][1])
			continue;
		if (tp_check_file(argv[i], flags, stdout))
			status = 1;
	}
	return status;
}
