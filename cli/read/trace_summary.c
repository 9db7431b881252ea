/* Trace file to summary.json; see trace_summary.h.
 *
 * The top-level object is walked with the pull parser. Each traceEvents
 * element is read member by member: the few members the aggregator needs
 * are built into a DOM (the arena is reset per event), the args object's
 * raw text is captured on the way for tp_sum_span, and every other
 * member is skipped without building anything.
 *
 * The aggregator (summary/) computes the "gpu" member too, in its exact
 * mode, so every figure is exact within a bounded memory; it calls only
 * down, into the aggregator, the gzip reader and the parser.
 */
#include "trace_summary.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "summary/health.h"
#include "summary/summary.h"
#include "summary/xsort.h"
#include "gzread.h"
#include "json.h"

#define ARGS_MAX (1 << 20)	/* args text passed on; larger: none */
#define ASYNC_BUCKETS 4096
/* A string pid/tid that is not a number becomes a track id above every
 * integer one (older Kineto writes "tid": "stream 7"). */
#define STR_TRACK (1ll << 62)

typedef const struct tp_json_node jnode;

/* 0: $TPROF_CLI_MEM_BUDGET, for a caller that reads one trace */
static size_t gpu_budget;

void tp_trace_summary_budget(size_t bytes)
{
	gpu_budget = bytes;
}

/* An NVTX start/end range whose end has not come yet. */
struct open_range {
	struct open_range *next;
	uint64_t hash;
	char *key;		/* pid, cat, id */
	char *cat, *name, *args;
	size_t args_len;
	int64_t pid, tid, ts;
};

struct ev {
	jnode *ph, *cat, *name, *pid, *tid, *ts, *dur, *id, *args;
	const char *raw;	/* args text, or NULL */
	size_t rawlen;
};

struct ts {
	const char *path;
	struct tp_gzr *gz;
	struct tp_json *j;
	struct tp_json_arena arena;
	struct tp_sum *sum;
	uint64_t nevents, dropped;
	int saw_events, have_pid;
	int64_t rank, world_size, pid, base_ns;
	char *host;
	struct open_range *open[ASYNC_BUCKETS];
	char *err;
	size_t errlen;
};

static int fail(struct ts *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int fail(struct ts *t, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t->err, t->errlen, fmt, ap);
	va_end(ap);
	return -1;
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

int tp_trace_us_to_ns(const char *s, int64_t *ns)
{
	const char *ip, *fp = "", *end;
	long intlen, fraclen = 0, exp = 0, point, ndig, k;
	uint64_t v = 0, d;
	int neg = *s == '-';

	ip = s + neg;
	for (end = ip; is_digit(*end); end++)
		;
	intlen = end - ip;
	if (*end == '.') {
		fp = end + 1;
		for (end = fp; is_digit(*end); end++)
			;
		fraclen = end - fp;
	}
	if (*end == 'e' || *end == 'E') {
		exp = strtol(end + 1, (char **)&end, 10);
		if (exp > 400 || exp < -400)
			return -1;
	}
	if (*end || !intlen)
		return -1;
	/* value * 1000 = digits with the point after `point` of them */
	ndig = intlen + fraclen;
	point = intlen + exp + 3;
	for (k = 0; k < point; k++) {
		d = k >= ndig ? 0 : (uint64_t)((k < intlen ? ip[k] :
						fp[k - intlen]) - '0');
		if (v > ((uint64_t)INT64_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	if (point >= 0 && point < ndig &&
	    (point < intlen ? ip[point] : fp[point - intlen]) >= '5')
		v++;
	if (v > (uint64_t)INT64_MAX)
		return -1;
	*ns = neg ? -(int64_t)v : (int64_t)v;
	return 0;
}

static uint64_t hash_str(uint64_t h, const char *s, size_t n)
{
	while (n--)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ull;
	return h;
}

/* A pid or tid: an integer, or a non-empty string. */
static int track_id(jnode *n, int64_t *v)
{
	char *end;

	if (!n)
		return -1;
	if (n->type == TP_JSON_NUMBER)
		return tp_json_int64(n, v) ? 0 : -1;
	if (n->type != TP_JSON_STRING || !n->len)
		return -1;
	*v = strtoll(n->str, &end, 10);
	if (!*end && is_digit(n->str[n->len - 1]))
		return 0;
	*v = (int64_t)(hash_str(0xcbf29ce484222325ull, n->str, n->len) &
		       (STR_TRACK - 1)) | STR_TRACK;
	return 0;
}

static const char *str_of(jnode *n)
{
	return n && n->type == TP_JSON_STRING ? n->str : "";
}

static int time_of(jnode *n, int64_t *ns)
{
	return n && n->type == TP_JSON_NUMBER ?
	       tp_trace_us_to_ns(n->str, ns) : -1;
}

static int arg_i64(jnode *args, const char *key, int64_t *v)
{
	return tp_json_int64(tp_json_get(args, key), v) ? 0 : -1;
}

static void remember_pid(struct ts *t, const char *cat, int64_t pid)
{
	/* a Kineto trace names its process only in metadata: take the pid
	 * of the first CPU-side call */
	if (t->have_pid || (strcmp(cat, "cuda_runtime") &&
			    strcmp(cat, "cpu_op")))
		return;
	t->have_pid = 1;
	t->pid = pid;
}

static void span(struct ts *t, const char *cat, const char *name,
		 int64_t pid, int64_t tid, int64_t ts, int64_t dur,
		 jnode *args, const char *raw, size_t rawlen)
{
	struct tp_sum_span s = {
		.cat = cat, .name = name, .pid = pid, .tid = tid,
		.ts_ns = ts, .dur_ns = dur, .args = raw, .args_len = rawlen,
	};
	int64_t corr;

	if (!arg_i64(args, "correlation", &corr) && corr > 0)
		s.corr = (uint64_t)corr;
	remember_pid(t, cat, pid);
	tp_sum_span(t->sum, &s);
}

/* Kineto's "PyTorch Profiler (N)" span (cat "Trace") lasts from the
 * profiler's start to its end: bookkeeping, not the program's time, and
 * it would stretch the wall time and top every table. */
static int profiler_span(const struct ev *e)
{
	static const char pre[] = "PyTorch Profiler";

	return !strcmp(str_of(e->cat), "Trace") &&
	       !strncmp(str_of(e->name), pre, sizeof(pre) - 1);
}

static void on_x(struct ts *t, const struct ev *e)
{
	int64_t pid, tid, ts, dur;

	if (profiler_span(e))
		return;
	if (track_id(e->pid, &pid) || track_id(e->tid, &tid) ||
	    time_of(e->ts, &ts) || time_of(e->dur, &dur) || dur < 0)
		return;
	span(t, str_of(e->cat), str_of(e->name), pid, tid, ts, dur, e->args,
	     e->raw, e->rawlen);
}

/* "pid\0cat\0id": Perfetto matches an async end to its begin by
 * category and id within a process. */
static char *async_key(const struct ev *e, size_t *len, uint64_t *hash)
{
	const char *pid = e->pid && e->pid->str ? e->pid->str : "";
	const char *cat = str_of(e->cat), *id;
	size_t np, nc, ni;
	char *k;

	if (!e->id || (e->id->type != TP_JSON_NUMBER &&
		       e->id->type != TP_JSON_STRING))
		return NULL;
	id = e->id->str;
	np = strlen(pid);
	nc = strlen(cat);
	ni = e->id->len;
	*len = np + nc + ni + 3;
	k = malloc(*len + 1);
	if (!k)
		return NULL;
	memcpy(k, pid, np + 1);
	memcpy(k + np + 1, cat, nc + 1);
	k[np + nc + 2] = e->id->type == TP_JSON_STRING ? 's' : 'n';
	memcpy(k + np + nc + 3, id, ni + 1);
	*hash = hash_str(0xcbf29ce484222325ull, k, *len);
	return k;
}

static void range_free(struct open_range *r)
{
	free(r->key);
	free(r->cat);
	free(r->name);
	free(r->args);
	free(r);
}

static void on_begin(struct ts *t, const struct ev *e)
{
	struct open_range *r = calloc(1, sizeof(*r));
	size_t len;

	if (!r || track_id(e->pid, &r->pid) || track_id(e->tid, &r->tid) ||
	    time_of(e->ts, &r->ts))
		goto drop;
	r->key = async_key(e, &len, &r->hash);
	r->cat = strdup(str_of(e->cat));
	r->name = strdup(str_of(e->name));
	if (e->raw) {
		r->args = malloc(e->rawlen + 1);
		if (r->args)
			memcpy(r->args, e->raw, e->rawlen + 1);
		r->args_len = e->rawlen;
	}
	if (!r->key || !r->cat || !r->name || (e->raw && !r->args))
		goto drop;
	/* newest first, so a reused id ends the latest begin */
	r->next = t->open[r->hash % ASYNC_BUCKETS];
	t->open[r->hash % ASYNC_BUCKETS] = r;
	return;
drop:
	if (r)
		range_free(r);
}

static void on_end(struct ts *t, const struct ev *e)
{
	struct open_range **p, *r;
	struct tp_json_arena a = { 0 };
	struct tp_json_node *args = NULL;
	uint64_t hash;
	size_t len;
	int64_t ts;
	char *key;

	if (time_of(e->ts, &ts) || !(key = async_key(e, &len, &hash)))
		return;
	for (p = &t->open[hash % ASYNC_BUCKETS]; (r = *p); p = &r->next)
		if (r->hash == hash && !memcmp(r->key, key, len + 1))
			break;
	free(key);
	if (!r)
		return;
	*p = r->next;
	if (r->args)
		tp_json_parse_mem(r->args, r->args_len, &a, &args, NULL);
	span(t, r->cat, r->name, r->pid, r->tid, r->ts,
	     ts > r->ts ? ts - r->ts : 0, args, r->args, r->args_len);
	tp_json_arena_free(&a);
	range_free(r);
}

/* tprof's GPU health counters: {"ph":"C","name":"GPU clocks","pid":DEV,
 * "tid":0,"args":{"sm_mhz":N,...}}, every numeric arg a counter. */
static void on_health(struct ts *t, const struct ev *e, const char *name)
{
	const jnode *a;
	int64_t dev;

	if (!tp_json_int64(e->pid, &dev) || !e->args ||
	    e->args->type != TP_JSON_OBJECT)
		return;
	for (a = e->args->child; a; a = a->next)
		if (a->type == TP_JSON_NUMBER && a->key)
			tp_health_sample(tp_sum_health(t->sum), dev, name,
					 a->key, strlen(a->key),
					 strtod(a->str, NULL));
}

/* tprof's {"ph":"C","name":"GPU memory","pid":DEV,"args":{"allocated":N}} */
static void on_counter(struct ts *t, const struct ev *e)
{
	const char *name = str_of(e->name);
	int64_t dev, ts, bytes;

	if (strcmp(name, "GPU memory") && !strncmp(name,
	    TP_HEALTH_EVENTS_PREFIX, strlen(TP_HEALTH_EVENTS_PREFIX))) {
		on_health(t, e, name);
		return;
	}
	if (strcmp(name, "GPU memory") ||
	    !tp_json_int64(e->pid, &dev) || time_of(e->ts, &ts) ||
	    arg_i64(e->args, "allocated", &bytes))
		return;
	tp_sum_memory(t->sum, dev, ts, bytes);
}

/* tprof's CPU samples: {"cat":"cpu_sample","args":{"stack":[frames],
 * "weight_ns":N}}; the stack goes to the aggregator as JSON text. */
static void on_sample(struct ts *t, const struct ev *e)
{
	jnode *st = tp_json_get(e->args, "stack");
	struct tp_sum_sample x = { 0 };
	struct tp_buf b = { 0 };
	jnode *f;

	if (!st || st->type != TP_JSON_ARRAY || time_of(e->ts, &x.ts_ns) ||
	    arg_i64(e->args, "weight_ns", &x.weight_ns))
		return;
	tp_buf_char(&b, '[');
	for (f = st->child; f; f = f->next) {
		if (f->type != TP_JSON_STRING)
			continue;
		if (b.len > 1)
			tp_buf_char(&b, ',');
		tp_json_strn(&b, f->str, f->len);
	}
	tp_buf_char(&b, ']');
	track_id(e->pid, &x.pid);
	track_id(e->tid, &x.tid);
	x.stack = b.p;
	x.stack_len = b.len;
	if (!b.oom)
		tp_sum_sample(t->sum, &x);
	tp_buf_free(&b);
}

/* torch's [memory] instants; Device Type 0 is the CPU. */
static void on_instant(struct ts *t, const struct ev *e)
{
	int64_t dev, type, ts, bytes;

	if (!strcmp(str_of(e->cat), "cpu_sample")) {
		on_sample(t, e);
		return;
	}
	if (strcmp(str_of(e->name), "[memory]") || time_of(e->ts, &ts) ||
	    arg_i64(e->args, "Device Id", &dev) || dev < 0 ||
	    arg_i64(e->args, "Total Allocated", &bytes))
		return;
	if (!arg_i64(e->args, "Device Type", &type) && type == 0)
		return;
	tp_sum_memory(t->sum, dev, ts, bytes);
}

static void on_event(struct ts *t, const struct ev *e)
{
	const char *ph = str_of(e->ph);

	/* As the library counts them: metadata aside. */
	if (strcmp(ph, "M"))
		t->nevents++;
	if (!ph[0] || ph[1])
		return;
	switch (ph[0]) {
	case 'X':
		on_x(t, e);
		break;
	case 'b':
		on_begin(t, e);
		break;
	case 'e':
		on_end(t, e);
		break;
	case 'C':
		on_counter(t, e);
		break;
	case 'i':
	case 'I':
		on_instant(t, e);
		break;
	}
}

/* Where a member of an event goes; NULL: skipped. */
static jnode **member(struct ev *e, const char *k)
{
	switch (k[0]) {
	case 'a':
		return strcmp(k, "args") ? NULL : &e->args;
	case 'c':
		return strcmp(k, "cat") ? NULL : &e->cat;
	case 'd':
		return strcmp(k, "dur") ? NULL : &e->dur;
	case 'i':
		return strcmp(k, "id") ? NULL : &e->id;
	case 'n':
		return strcmp(k, "name") ? NULL : &e->name;
	case 'p':
		return strcmp(k, "ph") ? (strcmp(k, "pid") ? NULL : &e->pid) :
					 &e->ph;
	case 't':
		return strcmp(k, "ts") ? (strcmp(k, "tid") ? NULL : &e->tid) :
					 &e->ts;
	}
	return NULL;
}

/* The args value, its raw text captured while it is built. */
static int read_args(struct ts *t, struct ev *e)
{
	struct tp_json_node *n;
	const char *raw;
	size_t len;

	tp_json_capture_start(t->j, ARGS_MAX);
	if (tp_json_parse_value(t->j, &t->arena, &n))
		return -1;
	e->args = n;
	raw = tp_json_capture_end(t->j, &len);
	if (!raw || n->type != TP_JSON_OBJECT) {
		e->raw = NULL;
		return 0;
	}
	/* the capture starts right after the ':' */
	while (len && (*raw == ' ' || *raw == '\n' || *raw == '\t' ||
		       *raw == '\r')) {
		raw++;
		len--;
	}
	e->raw = raw;
	e->rawlen = len;
	return 0;
}

static int read_event(struct ts *t, int tok)
{
	struct ev e = { 0 };
	struct tp_json_node *n;
	jnode **slot;

	if (tok != TP_JSON_OBJECT)
		return tp_json_skip(t->j, tok);
	while ((tok = tp_json_next(t->j)) == TP_JSON_KEY) {
		slot = member(&e, tp_json_text(t->j, NULL));
		if (slot == &e.args) {
			if (read_args(t, &e))
				return -1;
		} else if (slot) {
			if (tp_json_parse_value(t->j, &t->arena, &n))
				return -1;
			*slot = n;
		} else if (tp_json_skip(t->j, tp_json_next(t->j))) {
			return -1;
		}
	}
	if (tok != TP_JSON_OBJECT_END)
		return -1;
	on_event(t, &e);
	return 0;
}

static int read_events(struct ts *t)
{
	int tok = tp_json_next(t->j);

	if (tok != TP_JSON_ARRAY) {
		if (tok == TP_JSON_ERROR)
			return -1;
		return fail(t, "\"traceEvents\" is not an array");
	}
	t->saw_events = 1;
	while ((tok = tp_json_next(t->j)) != TP_JSON_ARRAY_END) {
		if (tok == TP_JSON_ERROR || read_event(t, tok))
			return -1;
		tp_json_arena_reset(&t->arena);
	}
	return 0;
}

static void read_dinfo(struct ts *t, jnode *n)
{
	int64_t v;

	if (tp_json_int64(tp_json_get(n, "rank"), &v) && v >= 0 &&
	    v <= 0x7fffffff)
		t->rank = v;
	if (tp_json_int64(tp_json_get(n, "world_size"), &v) && v > 0 &&
	    v <= 0x7fffffff)
		t->world_size = v;
}

/* tprof.gpu_metrics: the sampler's state, each device's identity and
 * what it could not give (health.h). */
static void read_gpu_metrics(struct ts *t, const jnode *n)
{
	const jnode *st = tp_json_get(n, "state"), *d, *u, *uuid;
	struct tp_health **h = tp_sum_health(t->sum);
	int64_t hz = 0, dev;

	if (!n || n->type != TP_JSON_OBJECT)
		return;
	tp_json_int64(tp_json_get(n, "hz"), &hz);
	if (st && st->type == TP_JSON_STRING)
		tp_health_state(h, st->str, st->len, hz);
	d = tp_json_get(n, "devices");
	for (d = d && d->type == TP_JSON_ARRAY ? d->child : NULL; d;
	     d = d->next) {
		if (!tp_json_int64(tp_json_get(d, "device"), &dev))
			continue;
		uuid = tp_json_get(d, "uuid");
		if (uuid && uuid->type == TP_JSON_STRING)
			tp_health_device(h, dev, uuid->str, uuid->len);
		u = tp_json_get(d, "unavailable");
		for (u = u && u->type == TP_JSON_OBJECT ? u->child : NULL; u;
		     u = u->next)
			if (u->type == TP_JSON_STRING && u->key)
				tp_health_unavailable(h, dev, u->key,
						      strlen(u->key), u->str,
						      u->len);
	}
}

/* tprof.sampling: how the CPU samples were taken. */
static void read_sampling(struct ts *t, jnode *n)
{
	jnode *m = tp_json_get(n, "mechanism"), *cpu = tp_json_get(n, "cpu");
	int64_t hz = 0;

	if (!m || m->type != TP_JSON_STRING || !cpu ||
	    cpu->type != TP_JSON_TRUE)
		return;
	tp_json_int64(tp_json_get(n, "rate_hz"), &hz);
	tp_sum_sampler(t->sum, m->str, hz > 0 && hz < 1000000 ?
		       (unsigned)hz : 0);
}

/* tprof's trailer: host, pid, and what was lost. */
static void read_tprof(struct ts *t, jnode *n)
{
	jnode *host = tp_json_get(n, "host");
	int64_t v;

	if (host && host->type == TP_JSON_STRING && !t->host)
		t->host = strdup(host->str);
	if (tp_json_int64(tp_json_get(n, "pid"), &v)) {
		t->pid = v;
		t->have_pid = 1;
	}
	read_gpu_metrics(t, tp_json_get(n, "gpu_metrics"));
	if (tp_json_int64(tp_json_get(n, "events_dropped"), &v) && v > 0)
		t->dropped += (uint64_t)v;
	if (tp_json_int64(tp_json_get(tp_json_get(n, "cupti"), "dropped"),
			  &v) && v > 0)
		t->dropped += (uint64_t)v;
	read_sampling(t, tp_json_get(n, "sampling"));
}

/* deviceProperties (tprof's and Kineto's): each device's memory. */
static void read_devices(struct ts *t, jnode *n)
{
	int64_t id, bytes;

	if (!n || n->type != TP_JSON_ARRAY)
		return;
	for (n = n->child; n; n = n->next)
		if (tp_json_int64(tp_json_get(n, "id"), &id) &&
		    tp_json_int64(tp_json_get(n, "totalGlobalMem"), &bytes))
			tp_sum_device_memory(t->sum, id, bytes);
}

enum { M_SKIP, M_EVENTS, M_TPROF, M_DINFO, M_BASE, M_DEVICES };

static int member_kind(const char *k)
{
	if (!strcmp(k, "traceEvents"))
		return M_EVENTS;
	if (!strcmp(k, "tprof"))
		return M_TPROF;
	if (!strcmp(k, "distributedInfo"))
		return M_DINFO;
	if (!strcmp(k, "baseTimeNanoseconds"))
		return M_BASE;
	if (!strcmp(k, "deviceProperties"))
		return M_DEVICES;
	return M_SKIP;
}

static int read_member(struct ts *t)
{
	int kind = member_kind(tp_json_text(t->j, NULL));
	struct tp_json_node *n;
	int64_t v;

	if (kind == M_EVENTS)
		return read_events(t);
	if (kind == M_SKIP)
		return tp_json_skip(t->j, tp_json_next(t->j));
	if (tp_json_parse_value(t->j, &t->arena, &n))
		return -1;
	if (kind == M_TPROF)
		read_tprof(t, n);
	else if (kind == M_DINFO)
		read_dinfo(t, n);
	else if (kind == M_DEVICES)
		read_devices(t, n);
	else if (tp_json_int64(n, &v))
		t->base_ns = v;
	tp_json_arena_reset(&t->arena);
	return 0;
}

/* Whether the rest of a gzip stream is corrupt: data a bad block
 * inflates to usually breaks the JSON before zlib notices (at the CRC),
 * and the gzip error is the one worth reporting. */
static const char *gzip_error(struct ts *t)
{
	static char buf[1 << 16];
	ssize_t n;

	if (!tp_gzr_is_gzip(t->gz) || tp_gzr_error(t->gz))
		return tp_gzr_error(t->gz);
	do
		n = tp_gzr_read(t->gz, buf, sizeof(buf));
	while (n > 0);
	return tp_gzr_error(t->gz);
}

static int parse_error(struct ts *t)
{
	const struct tp_json_err *e = tp_json_error(t->j);
	const char *gzerr;

	if (t->err[0])
		return -1;
	gzerr = gzip_error(t);
	if (gzerr)
		return fail(t, "%s", gzerr);
	return fail(t, "invalid JSON at line %lu, column %lu: %s", e->line,
		    e->col, e->msg);
}

static int read_trace(struct ts *t)
{
	int tok = tp_json_next(t->j);

	if (tok == TP_JSON_ERROR)
		return parse_error(t);
	if (tok != TP_JSON_OBJECT)
		return fail(t, "neither a trace nor a tprof summary (the "
			    "top-level value is not an object)");
	while ((tok = tp_json_next(t->j)) == TP_JSON_KEY)
		if (read_member(t))
			return parse_error(t);
	if (tok != TP_JSON_OBJECT_END || tp_json_next(t->j) != TP_JSON_EOF)
		return parse_error(t);
	if (!t->saw_events)
		return fail(t, "neither a trace (no \"traceEvents\") nor a "
			    "tprof summary (no \"schema\": \"tprof.summary\")");
	return 0;
}

/* The run's name: the file name without its suffixes, "-exec<N>",
 * "-pid<P>" and "-rank<R>" (tprof's naming, docs/reference/trace-format.md). */
static char *name_of(const char *base)
{
	static const char *const sfx[] = {
		".gz", ".json", ".pftrace", ".trace", ".pt", "-exec", "-pid",
		"-rank",
	};
	char *s = strdup(base), *p;
	size_t i, n, k;

	if (!s)
		return NULL;
	for (i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
		n = strlen(s);
		p = s + n;
		if (i >= 5)	/* "-exec2", "-pid123", "-rank3": digits */
			while (p > s && is_digit(p[-1]))
				p--;
		k = strlen(sfx[i]);
		if ((size_t)(p - s) > k && !memcmp(p - k, sfx[i], k) &&
		    (i < 5 || *p))
			p[-(long)k] = 0;
	}
	return s;
}

static void set_info(struct ts *t)
{
	const char *base = strrchr(t->path, '/');
	struct tp_sum_info in = { 0 };
	char *name;

	base = base ? base + 1 : t->path;
	name = name_of(base);
	in.name = name;
	in.host = t->host;
	in.trace = base;
	in.source = "trace";
	in.pid = t->have_pid ? t->pid : 0;
	in.rank = (int)t->rank;
	in.world_size = (int)t->world_size;
	in.base_ns = t->base_ns;
	tp_sum_set_info(t->sum, &in);
	free(name);
}

static ssize_t gz_read(void *ctx, void *buf, size_t len)
{
	return tp_gzr_read(ctx, buf, len);
}

static void cleanup(struct ts *t)
{
	struct open_range *r, *next;
	size_t i;

	for (i = 0; i < ASYNC_BUCKETS; i++)
		for (r = t->open[i]; r; r = next) {
			next = r->next;
			range_free(r);
		}
	tp_json_close(t->j);
	tp_gzr_close(t->gz);
	tp_json_arena_free(&t->arena);
	tp_sum_free(t->sum);
	free(t->host);
}

int tp_trace_summary(const char *path, struct tp_buf *out, char *err,
		     size_t errlen)
{
	struct ts *t = calloc(1, sizeof(*t));
	size_t budget;
	int ret = -1;

	err[0] = 0;
	budget = gpu_budget ? gpu_budget : tp_xsort_budget(err, errlen);
	if (!budget) {
		free(t);
		return -1;
	}
	if (!t) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	t->path = path;
	t->err = err;
	t->errlen = errlen;
	t->rank = -1;
	t->gz = tp_gzr_open(path, err, errlen);
	if (!t->gz)
		goto out;
	t->j = tp_json_open(gz_read, t->gz);
	t->sum = tp_sum_new();
	if (!t->j || !t->sum || tp_sum_gpu_exact(t->sum, budget)) {
		fail(t, "out of memory");
		goto out;
	}
	if (read_trace(t))
		goto out;
	tp_sum_count_events(t->sum, t->nevents);
	if (t->dropped)
		tp_sum_dropped_other(t->sum, t->dropped);
	set_info(t);
	tp_sum_write_json(t->sum, out, NULL, NULL);
	if (tp_sum_gpu_error(t->sum)) {
		fail(t, "%s", tp_sum_gpu_error(t->sum));
		goto out;
	}
	ret = 0;
out:
	cleanup(t);
	free(t);
	return ret;
}
