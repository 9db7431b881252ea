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
 * Calls only down: the checks at the end (check_sweep.c), the messages
 * (check_out.c), its tables (check_tab.c), the external sort, the gzip
 * reader (gzread.c) and the pull parser (json.c).
 */
#define _GNU_SOURCE
#include "check.h"
#include "check_int.h"
#include "cli/read/pftrace_read.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define DINFO_MAX (64 * 1024)
/* baseTimeNanoseconds is floored to this (docs/reference/trace-format.md) */
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
			ck_ev_problem(ck, ev, "no \"%s\"", key);
		return NULL;
	}
	if (n->type != TP_JSON_NUMBER) {
		ck_ev_problem(ck, ev, "\"%s\" is not a number", key);
		return NULL;
	}
	if (!(ck->flags & TP_CHECK_FOREIGN) && !three_decimals(n->str))
		ck_ev_problem(ck, ev, "\"%s\": %.40s does not have exactly "
			   "three decimals", key, n->str);
	if (us_to_ns(n, ns)) {
		ck_ev_problem(ck, ev, "\"%s\": %.40s is out of range", key,
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
			ck_ev_problem(ck, ev, "no \"%s\"", key);
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
		ck_quote(buf + *o, 80, n->str, n->len);
		*o += strlen(buf + *o);
		buf[(*o)++] = '"';
		return 0;
	}
	return ck_ev_problem(ck, ev, "\"%s\" is not an integer or a string",
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
		ck_sort_fail(ck, NULL);
		return;
	}
	x.track = (uint32_t)tid;
	x.name = (uint32_t)nid;
	x.idx = (uint32_t)ck->nevents;
	x.gpu = (uint32_t)gpu_cat(tp_json_get(ev, "cat"));
	x.ts = ts;
	x.dur = dur;
	if (tp_xsort_add(ck->xsort, &x))
		ck_sort_fail(ck, ck->xsort);
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
		return ck_ev_problem(ck, ev, "metadata event without a name");
	for (i = 0; i < n; i++)
		if (!strcmp(name->str, names[i][0]))
			break;
	if (i == n)
		return ck_ev_problem(ck, ev, "unknown metadata event \"%s\"",
				  ck_quote(q, sizeof(q), name->str, name->len));
	arg = tp_json_get(tp_json_get(ev, "args"), names[i][1]);
	if (i < 3 && (!arg || arg->type != TP_JSON_STRING))
		return ck_ev_problem(ck, ev, "%s needs a string args.%s",
				  names[i][0], names[i][1]);
	if (i >= 3 && !tp_json_int64(arg, &v))
		return ck_ev_problem(ck, ev, "%s needs an integer args.%s",
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
		return ck_ev_problem(ck, ev, "flow event needs an \"id\" that "
				  "is a non-negative integer or a hex string");
	if (cat && cat->type != TP_JSON_STRING)
		return ck_ev_problem(ck, ev, "\"cat\" is not a string");
	c = cat ? ck_intern(&ck->strs, cat->str, cat->len) :
		  ck_intern(&ck->strs, "", 0);
	nm = name && name->type == TP_JSON_STRING ?
		ck_intern(&ck->strs, name->str, name->len) :
		ck_intern(&ck->strs, "", 0);
	if (c < 0 || nm < 0)
		return ck_sort_fail(ck, NULL);
	if (ck->sort_failed)
		return -1;
	f.cat = (uint32_t)c;
	f.name = (uint32_t)nm;
	f.is_str = id->type == TP_JSON_STRING;
	f.ts_ok = (uint8_t)!!ts_ok;
	f.ts = ts;
	if (tp_xsort_add(ck->fsort, &f))
		return ck_sort_fail(ck, ck->fsort);
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
		return ck_ev_problem(ck, ev, "event is not an object");
	ph = tp_json_get(ev, "ph");
	if (!ph || ph->type != TP_JSON_STRING)
		return ck_ev_problem(ck, ev,
				     "\"ph\" is missing or not a string");
	c = ph->str[0];
	if (ph->len != 1 || !c || !strchr(phases, c))
		return ck_ev_problem(ck, ev, "unknown phase \"%s\"",
				  ck_quote(q, sizeof(q), ph->str, ph->len));
	name = tp_json_get(ev, "name");
	if (name && name->type != TP_JSON_STRING)
		ck_ev_problem(ck, ev, "\"name\" is not a string");
	bad = track_part(ck, ev, "pid", track, &o);
	track[o++] = ' ';
	bad |= track_part(ck, ev, "tid", track, &o);
	track[o] = 0;
	ts_ok = !!time_field(ck, ev, "ts", strchr(timed, c) != NULL, &ts);
	if (c == 'X' && time_field(ck, ev, "dur", 1, &dur)) {
		if (dur < 0)
			ck_ev_problem(ck, ev, "negative \"dur\"");
		else if (ts_ok && !bad)
			add_x(ck, ev, track, o, ts, dur);
	}
	if (c == 'M')
		return check_meta(ck, ev);
	if (c == 's' || c == 'f' || c == 't')
		return check_flow(ck, ev, c, ts, ts_ok);
	return 0;
}

static void check_dinfo(struct ck *ck, const struct tp_json_node *n,
			const char *raw, size_t rawlen)
{
	const struct tp_json_node *rank = tp_json_get(n, "rank");
	struct rank_scan scan = { 0 };
	int64_t r, ws;

	if (n->type != TP_JSON_OBJECT) {
		ck_problem(ck, "\"distributedInfo\" is not an object");
		return;
	}
	if (!tp_json_int64(rank, &r) || r < 0) {
		ck_problem(ck, "distributedInfo.rank is missing or not a "
			"non-negative integer");
		r = -1;
	}
	if (!tp_json_int64(tp_json_get(n, "world_size"), &ws) || ws < 1)
		ck_problem(ck, "distributedInfo.world_size is missing or not a "
			"positive integer");
	else if (r >= ws)
		ck_problem(ck, "distributedInfo.rank %" PRId64 " is not below "
			"world_size %" PRId64, r, ws);
	if (r < 0)
		return;
	ck->have_rank = 1;
	ck->rank = r;
	if (!raw) {
		ck_problem(ck, "\"distributedInfo\" is over %d bytes",
			   DINFO_MAX);
		return;
	}
	rank_feed(&scan, raw, rawlen);
	rank_end(&scan);
	if (!scan.found || scan.overflow || scan.val != (uint64_t)r)
		ck_problem(ck, "distributedInfo: \"rank\" is not written as "
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
			ck_problem(ck, "\"schemaVersion\" is not an integer");
		break;
	case K_BASE:
		if (n->type != TP_JSON_NUMBER)
			ck_problem(ck, "\"baseTimeNanoseconds\" is not a "
				   "number");
		else if (ck->flags & TP_CHECK_FOREIGN)
			break;
		else if (!tp_json_int64(n, &v) || v < 0)
			ck_problem(ck, "\"baseTimeNanoseconds\" is not a "
				"non-negative integer");
		else if (v % BASE_TIME_STEP)
			ck_problem(ck, "\"baseTimeNanoseconds\" %" PRId64 " is "
				"not a multiple of 10^14", v);
		break;
	case K_UNIT:
		if (n->type != TP_JSON_STRING ||
		    (strcmp(s, "ms") && strcmp(s, "ns")))
			ck_problem(ck, "\"displayTimeUnit\" must be \"ms\" or "
				"\"ns\"");
		break;
	case K_TPROF:
		if (n->type != TP_JSON_OBJECT)
			ck_problem(ck, "\"tprof\" is not an object");
		break;
	case K_DEVPROPS:
		if (n->type != TP_JSON_ARRAY)
			ck_problem(ck, "\"deviceProperties\" is not an array");
		break;
	case K_NAME:
		if (n->type != TP_JSON_STRING)
			ck_problem(ck, "\"traceName\" is not a string");
		break;
	}
}

static int check_events(struct ck *ck)
{
	struct tp_json_node *ev;
	int tok = tp_json_next(ck->j);

	if (tok != TP_JSON_ARRAY) {
		if (tok != TP_JSON_ERROR)
			ck_problem(ck, "\"traceEvents\" is not an array");
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
		ck_problem(ck, "duplicate top-level key \"%s\"", top_keys[i]);
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
		if ((1u << i) == K_UNIT && ck_quirk(ck, W_UNIT))
			continue;
		if ((1u << i) == K_DINFO && ck_quirk(ck, W_DINFO))
			continue;
		ck_problem(ck, "missing top-level key \"%s\"", top_keys[i]);
	}
	rank_end(&ck->scan);
	if (ck->have_rank && ck->scan.found &&
	    (ck->scan.overflow || ck->scan.val != (uint64_t)ck->rank))
		ck_problem(ck, "HTA would read rank %" PRIu64 " (the first "
			"\"rank\": N in the file) but distributedInfo.rank "
			"is %" PRId64, ck->scan.val, ck->rank);
}

static int parse_error(struct ck *ck)
{
	const struct tp_json_err *e = tp_json_error(ck->j);
	const char *gzerr = tp_gzr_error(ck->gz);

	if (e->io && gzerr)
		ck_problem(ck, "%s", gzerr);
	else
		ck_problem(ck, "invalid JSON at line %lu, column %lu: %s",
			e->line, e->col, e->msg);
	return -1;
}

/* What a Perfetto trace held that its JSON form cannot show
 * (pftrace_read.h): SLICE_ENDs with no slice open, slices never ended,
 * packets skipped. Errors, as they would be in tprof's traces; with
 * --foreign warnings, since a ring-buffer trace loses slices' starts. */
static void perfetto_notes(struct ck *ck)
{
	char buf[256];
	int k;

	for (k = 0; k < PFR_NOTE_KINDS; k++) {
		if (!tp_gzr_note(ck->gz, k, buf, sizeof(buf)))
			continue;
		if (ck->flags & TP_CHECK_FOREIGN)
			fprintf(ck->out, "%s: warning: %s\n", ck->path, buf);
		else
			ck_problem(ck, "%s", buf);
	}
}

static int check_stream(struct ck *ck)
{
	int tok = tp_json_next(ck->j);

	if (tok != TP_JSON_OBJECT) {
		if (tok == TP_JSON_ERROR || tp_json_skip(ck->j, tok) ||
		    tp_json_next(ck->j) != TP_JSON_EOF)
			return parse_error(ck);
		ck_problem(ck, "top-level value is %s, not an object with "
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
	ck_nesting(ck);
	ck_flows(ck);
	perfetto_notes(ck);
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
		ck_problem(&ck, "%s", err);
		goto out;
	}
	/* half of the budget for each sort; each fills only what it needs */
	ck.xsort = tp_xsort_new(sizeof(struct xev), ck_xev_cmp, budget / 2);
	ck.fsort = tp_xsort_new(sizeof(struct flowev), ck_flowev_cmp,
				budget / 2);
	if (!ck.xsort || !ck.fsort) {
		ck_problem(&ck, "out of memory");
		goto out;
	}
	ck.gz = tp_gzr_open(path, err, sizeof(err));
	if (!ck.gz) {
		ck_problem(&ck, "%s", err);
		goto out;
	}
	ck.j = tp_json_open(ck_read, &ck);
	if (!ck.j) {
		ck_problem(&ck, "out of memory");
		goto out;
	}
	if (check_stream(&ck) == 0)
		ret = ck.problems > INT_MAX ? INT_MAX : (int)ck.problems;
out:
	ck_print_warnings(&ck);
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
