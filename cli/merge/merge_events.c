/* tprof merge: one input's traceEvents, rewritten into the output.
 *
 * Each event is walked member by member with the pull parser (so a
 * corrupt input is caught as `tprof check` would catch it) and assembled
 * in the output buffer: every value is captured as the raw text it was
 * written as and copied, except pid, ts and dur, which are rewritten as
 * they come. What depends on members that may come later (ids depend on
 * ph, process_name's args on name) is copied raw too, and replaced in
 * place once the event is complete. Nothing outlives an event but the
 * pid map.
 *
 * Called by merge.c; calls only down: merge_out.c (the output buffer),
 * merge_tids.c (string tids), merge_num.c (numbers) and merge_err.c
 * (error lines).
 */
#include "merge_int.h"
#include "util/fnv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
	K_OTHER, K_PH, K_NAME, K_PID, K_TID, K_TS, K_DUR, K_ID, K_ID2,
	K_BIND, K_ARGS,
};

enum { META_NONE, META_NAME, META_SORT };

/* A value copied raw into the output, to be rewritten at the end. */
struct span {
	size_t off, len;
	int tok;		/* 0 when absent */
};

struct ev {
	size_t start;		/* output length before the event */
	char ph;
	int meta;
	int drop;
	struct mg_pid *pid;
	size_t pid_slot;	/* its index slot + 1 when this event made it */
	struct span id, id2, bind, args;
};

struct rd {
	struct mg_input *in;
	struct tp_json *j;
	struct tp_gzr *gz;
};

static int ev_fail(struct mg *m, struct rd *r, const char *what,
		   const char *v, size_t n)
{
	return mg_fail(m, r->in->path, "traceEvents[%llu] (line %lu): %s%.*s",
		       (unsigned long long)r->in->nevents,
		       tp_json_line(r->j), what, (int)(n > 60 ? 60 : n), v);
}

static int classify(const char *k, size_t n)
{
	switch (n) {
	case 2:
		return !memcmp(k, "ph", 2) ? K_PH : !memcmp(k, "ts", 2) ? K_TS :
		       !memcmp(k, "id", 2) ? K_ID : K_OTHER;
	case 3:
		return !memcmp(k, "pid", 3) ? K_PID :
		       !memcmp(k, "tid", 3) ? K_TID :
		       !memcmp(k, "dur", 3) ? K_DUR :
		       !memcmp(k, "id2", 3) ? K_ID2 : K_OTHER;
	case 4:
		return !memcmp(k, "name", 4) ? K_NAME :
		       !memcmp(k, "args", 4) ? K_ARGS : K_OTHER;
	case 7:
		return !memcmp(k, "bind_id", 7) ? K_BIND : K_OTHER;
	}
	return K_OTHER;
}

/* ,"key": -- keys are re-escaped from the parser's decoded text. */
static int put_key(struct mg *m, const char *k, size_t n, int first)
{
	struct mg_out *o = &m->out;
	size_t i;

	for (i = 0; i < n; i++)
		if ((unsigned char)k[i] < 0x20 || k[i] == '"' || k[i] == '\\')
			break;
	if (i < n) {
		if ((!first && mg_add(m, ",", 1)) || mg_add_str(m, k, n))
			return -1;
		return mg_add(m, ":", 1);
	}
	if (mg_out_reserve(m, n + 4))
		return -1;
	if (!first)
		o->buf[o->len++] = ',';
	o->buf[o->len++] = '"';
	mg_put(o, k, n);
	o->buf[o->len++] = '"';
	o->buf[o->len++] = ':';
	return 0;
}

/* The next value's raw text, without the whitespace before it; NULL on
 * a parse error (reported). Valid until the parser moves on. */
static const char *read_value(struct mg *m, struct rd *r, int *tok,
			      size_t *n)
{
	const char *raw;

	tp_json_capture_start(r->j, MG_MAX_VALUE);
	*tok = tp_json_next(r->j);
	if (tp_json_skip(r->j, *tok)) {
		mg_parse_fail(m, r->in->path, r->j, r->gz);
		return NULL;
	}
	raw = tp_json_capture_end(r->j, n);
	if (!raw) {
		mg_fail(m, r->in->path, "traceEvents[%llu] (line %lu): a value "
			"over %u MiB", (unsigned long long)r->in->nevents,
			tp_json_line(r->j), MG_MAX_VALUE >> 20);
		return NULL;
	}
	while (*n && (*raw == ' ' || *raw == '\n' || *raw == '\t' ||
		      *raw == '\r')) {
		raw++;
		(*n)--;
	}
	return raw;
}

/* Copies a value; one spanning lines (Kineto pretty-prints) loses its
 * whitespace outside strings, since the output has one event per line. */
static int put_raw(struct mg *m, const char *s, size_t n, int tok)
{
	char *d;
	size_t i;
	int in_str = 0;

	if ((tok != TP_JSON_OBJECT && tok != TP_JSON_ARRAY) ||
	    !memchr(s, '\n', n))
		return mg_add(m, s, n);
	if (mg_out_reserve(m, n))
		return -1;
	d = m->out.buf + m->out.len;
	for (i = 0; i < n; i++) {
		if (in_str) {
			*d++ = s[i];
			if (s[i] == '\\')
				*d++ = s[++i];
			else if (s[i] == '"')
				in_str = 0;
		} else if (s[i] != ' ' && s[i] != '\n' && s[i] != '\t' &&
			   s[i] != '\r') {
			*d++ = s[i];
			in_str = s[i] == '"';
		}
	}
	m->out.len = (size_t)(d - m->out.buf);
	return 0;
}

static int put_span(struct mg *m, const char *s, size_t n, int tok,
		    struct span *sp)
{
	sp->off = m->out.len;
	sp->tok = tok;
	if (put_raw(m, s, n, tok))
		return -1;
	sp->len = m->out.len - sp->off;
	return 0;
}

/* ts is shifted onto the output's base; ts and dur get three decimals. */
static int put_time(struct mg *m, struct rd *r, const char *s, size_t n,
		    int64_t shift)
{
	int64_t ns;

	if (!shift && mg_three_decimals(s, n))
		return mg_add(m, s, n);
	if (mg_us_to_ns(s, n, &ns) || __builtin_add_overflow(ns, shift, &ns))
		return ev_fail(m, r, "time out of range: ", s, n);
	if (mg_out_reserve(m, 24))
		return -1;
	m->out.len += mg_fmt_us(m->out.buf + m->out.len, ns);
	return 0;
}

static int pid_index(struct mg *m, struct mg_input *in)
{
	size_t size = in->nslots ? in->nslots * 2 : 64, i, k;
	uint32_t *s;

	if (in->npids * 2 < in->nslots)
		return 0;
	s = calloc(size, sizeof(*s));
	if (!s)
		return mg_fail(m, in->path, "out of memory");
	for (i = 0; i < in->npids; i++) {
		for (k = in->pids[i].hash & (size - 1); s[k];
		     k = (k + 1) & (size - 1))
			;
		s[k] = (uint32_t)i + 1;
	}
	free(in->slots);
	in->slots = s;
	in->nslots = size;
	return 0;
}

static struct mg_pid *pid_new(struct mg *m, struct mg_input *in,
			      const char *s, size_t n, uint32_t h)
{
	struct mg_pid *p;

	if (in->npids >= MG_PID_STRIDE) {
		mg_fail(m, in->path, "more than %d processes (pids)",
			MG_PID_STRIDE);
		return NULL;
	}
	if (in->npids == in->cappids) {
		p = realloc(in->pids, (in->cappids * 2 + 8) * sizeof(*p));
		if (!p)
			goto oom;
		in->pids = p;
		in->cappids = in->cappids * 2 + 8;
	}
	p = &in->pids[in->npids];
	memset(p, 0, sizeof(*p));
	p->lit = malloc(n + 1);
	if (!p->lit)
		goto oom;
	memcpy(p->lit, s, n);
	p->lit[n] = 0;
	p->litlen = n;
	p->hash = h;
	p->newpid = (int64_t)(in->idx + 1) * MG_PID_STRIDE +
		    (int64_t)in->npids;
	in->npids++;
	return p;
oom:
	mg_fail(m, in->path, "out of memory");
	return NULL;
}

/* The pid written as s; pids are told apart by their literal text.
 * *made is its slot + 1 when it is new, else 0. */
static struct mg_pid *pid_get(struct mg *m, struct mg_input *in,
			      const char *s, size_t n, size_t *made)
{
	struct mg_pid *p;
	uint32_t h;
	size_t k;

	*made = 0;
	if (in->last) {
		p = &in->pids[in->last - 1];
		if (p->litlen == n && !memcmp(p->lit, s, n))
			return p;
	}
	h = tp_fnv1a(TP_FNV1A_INIT, s, n);
	if (pid_index(m, in))
		return NULL;
	for (k = h & (in->nslots - 1); in->slots[k];
	     k = (k + 1) & (in->nslots - 1)) {
		p = &in->pids[in->slots[k] - 1];
		if (p->hash == h && p->litlen == n && !memcmp(p->lit, s, n))
			goto found;
	}
	p = pid_new(m, in, s, n, h);
	if (!p)
		return NULL;
	in->slots[k] = (uint32_t)in->npids;
	*made = k + 1;
found:
	in->last = (size_t)(p - in->pids) + 1;
	return p;
}

/* A pid first seen on an event that is dropped is forgotten again, so
 * that it gets no number, name or sort index. It is the newest entry:
 * no later insertion probed past its slot, which can simply be freed. */
static void pid_forget(struct mg_input *in, struct ev *e)
{
	if (!e->pid_slot)
		return;
	in->npids--;
	free(in->pids[in->npids].lit);
	in->slots[e->pid_slot - 1] = 0;
	in->last = 0;
}

/* A number, or a string (older Kineto traces: "pid": "1234"), which
 * gets a number of its own like any pid. The empty string (Kineto's
 * "Record Window End") names no process: the event is dropped. */
static int put_pid(struct mg *m, struct rd *r, struct ev *e, const char *s,
		   size_t n, int tok)
{
	if (tok != TP_JSON_NUMBER && (tok != TP_JSON_STRING || n <= 2)) {
		e->drop = 1;
		return 0;
	}
	e->pid = pid_get(m, r->in, s, n, &e->pid_slot);
	if (!e->pid)
		return -1;
	return mg_add_i64(m, e->pid->newpid);
}

/* A number is kept; a string becomes its input's number for it; the
 * empty string (Record Window End's) names no thread: dropped. */
static int put_tid(struct mg *m, struct rd *r, struct ev *e, const char *s,
		   size_t n, int tok)
{
	int64_t tid;

	if (tok == TP_JSON_NUMBER)
		return mg_add(m, s, n);
	if (tok != TP_JSON_STRING || n <= 2) {
		e->drop = 1;
		return 0;
	}
	if (mg_tid_of_string(m, r->in, s, n, &tid))
		return -1;
	return mg_add_i64(m, tid);
}

static int member(struct mg *m, struct rd *r, struct ev *e, int first)
{
	size_t klen, n;
	const char *key = tp_json_text(r->j, &klen), *v;
	int kind = classify(key, klen), tok;

	if (put_key(m, key, klen, first))
		return -1;
	v = read_value(m, r, &tok, &n);
	if (!v)
		return -1;
	switch (kind) {
	case K_PID:
		return put_pid(m, r, e, v, n, tok);
	case K_TID:
		return put_tid(m, r, e, v, n, tok);
	case K_TS:
	case K_DUR:
		if (tok == TP_JSON_NUMBER)
			return put_time(m, r, v, n, kind == K_TS ?
					r->in->shift_ns : 0);
		break;
	case K_PH:
		/* a one-letter string: "X" */
		if (tok == TP_JSON_STRING && n == 3)
			e->ph = v[1];
		break;
	case K_NAME:
		if (tok != TP_JSON_STRING)
			break;
		if (n == 14 && !memcmp(v, "\"process_name\"", 14))
			e->meta = META_NAME;
		else if (n == 20 && !memcmp(v, "\"process_sort_index\"", 20))
			e->meta = META_SORT;
		break;
	case K_ID:
		return put_span(m, v, n, tok, &e->id);
	case K_ID2:
		return put_span(m, v, n, tok, &e->id2);
	case K_BIND:
		return put_span(m, v, n, tok, &e->bind);
	case K_ARGS:
		return put_span(m, v, n, tok, &e->args);
	}
	return put_raw(m, v, n, tok);
}

/* Moves what was appended at from.. over [off, off + len), which lies
 * before it: the rewritten value takes the raw one's place. */
static int replace_with_tail(struct mg *m, size_t off, size_t len,
			     size_t from)
{
	struct mg_out *o = &m->out;
	size_t n = o->len - from, mid = from - off - len;
	char *s;

	if (n > m->scap) {
		s = realloc(m->scratch, n);
		if (!s)
			return mg_fail(m, o->path, "out of memory");
		m->scratch = s;
		m->scap = n;
	}
	memcpy(m->scratch, o->buf + from, n);
	memmove(o->buf + off + n, o->buf + off + len, mid);
	memcpy(o->buf + off, m->scratch, n);
	o->len = off + n + mid;
	return 0;
}

/* A numeric id N becomes (i + 1) * 10^12 + N. */
static int add_num_id(struct mg *m, struct rd *r, const char *s, size_t n)
{
	int64_t v;

	if (mg_parse_uint(s, n, 10, &v))
		return ev_fail(m, r, "id is not an integer from 0 to "
			       "10^12 - 1, so it cannot be kept apart: ", s,
			       n);
	return mg_add_i64(m, (int64_t)(r->in->idx + 1) * MG_ID_STRIDE + v);
}

/* A string id gets the input's tag in front: "rank3:..." (s is the raw
 * string, quotes included). */
static int add_str_id(struct mg *m, struct rd *r, const char *s, size_t n)
{
	return mg_addf(m, "\"%s:", r->in->tag) || mg_add(m, s + 1, n - 1);
}

/* Flow ids are numbers, or strings Perfetto reads as hex: a hex string
 * is offset as the number it stands for and stays hex, so that "0x64"
 * and 100, the same flow before, still are. */
static int add_flow_id(struct mg *m, struct rd *r, const char *s, size_t n,
		       int tok)
{
	int64_t v;

	if (tok == TP_JSON_NUMBER)
		return add_num_id(m, r, s, n);
	if (mg_parse_uint(s + 1, n - 2, 16, &v))
		return add_str_id(m, r, s, n);
	return mg_addf(m, "\"0x%llx\"", (unsigned long long)
		       ((int64_t)(r->in->idx + 1) * MG_ID_STRIDE + v));
}

/* id2 {"local": X} / {"global": X}: each id like an async id. */
static int add_id2(struct mg *m, struct rd *r, const char *s, size_t n)
{
	const struct tp_json_node *c;
	struct tp_json_node *doc;
	char pre[64];
	int k = snprintf(pre, sizeof(pre), "%s:", r->in->tag), rc = -1;

	if (tp_json_parse_mem(s, n, &m->arena, &doc, NULL)) {
		ev_fail(m, r, "id2 cannot be read: ", s, n);
		goto out;
	}
	if (mg_add(m, "{", 1))
		goto out;
	for (c = doc->child; c; c = c->next) {
		if ((c != doc->child && mg_add(m, ",", 1)) ||
		    mg_add_str(m, c->key, c->keylen) || mg_add(m, ":", 1))
			goto out;
		if (c->type == TP_JSON_NUMBER) {
			if (add_num_id(m, r, c->str, c->len))
				goto out;
		} else if (c->type == TP_JSON_STRING) {
			if (mg_add_str2(m, pre, (size_t)k, c->str, c->len))
				goto out;
		} else {
			ev_fail(m, r, "id2 holds a value that is not an id: ",
				s, n);
			goto out;
		}
	}
	rc = mg_add(m, "}", 1);
out:
	tp_json_arena_reset(&m->arena);
	return rc;
}

static int is_flow(char ph)
{
	return ph && strchr("stf", ph);
}

static int is_async(char ph)
{
	return ph && strchr("benSTpF", ph);
}

/* Appends the rewritten value of sp; nothing when it stays as it is. */
static int rewrite_id(struct mg *m, struct rd *r, struct ev *e,
		      struct span *sp)
{
	const char *s = m->out.buf + sp->off;
	size_t n = sp->len;

	if (sp == &e->id2)
		return sp->tok == TP_JSON_OBJECT ? add_id2(m, r, s, n) : 0;
	if (sp->tok != TP_JSON_NUMBER && sp->tok != TP_JSON_STRING)
		return 0;
	if (sp == &e->bind || is_flow(e->ph))
		return add_flow_id(m, r, s, n, sp->tok);
	if (!is_async(e->ph))
		return 0;
	if (sp->tok == TP_JSON_NUMBER)
		return add_num_id(m, r, s, n);
	return add_str_id(m, r, s, n);
}

/* "rank R: <name>", or "rank R: pid P" without a name */
static int add_rank_name(struct mg *m, struct mg_input *in,
			 const struct mg_pid *p, const char *name, size_t n)
{
	char pre[64];
	int k = snprintf(pre, sizeof(pre), "rank %lld: %s", (long long)in->rank,
			 name ? "" : "pid ");
	int quoted = p->lit[0] == '"';	/* a string pid: its text */

	return mg_add_str2(m, pre, (size_t)k, name ? name : p->lit + quoted,
			   name ? n : p->litlen - 2 * quoted);
}

/* process_name's args become {"name":"rank R: <name>"}; other members
 * of its args (no writer we know puts any) are not kept. */
static int rewrite_name(struct mg *m, struct rd *r, struct ev *e)
{
	const struct tp_json_node *name = NULL;
	struct tp_json_node *args;
	int rc;

	if (e->args.tok != TP_JSON_OBJECT)
		return 0;
	if (!tp_json_parse_mem(m->out.buf + e->args.off, e->args.len,
			       &m->arena, &args, NULL))
		name = tp_json_get(args, "name");
	if (name && name->type != TP_JSON_STRING)
		name = NULL;
	rc = mg_add(m, "{\"name\":", 8) ||
	     add_rank_name(m, r->in, e->pid, name ? name->str : NULL,
			   name ? name->len : 0) ||
	     mg_add(m, "}", 1);
	tp_json_arena_reset(&m->arena);
	e->pid->named = 1;
	return rc ? -1 : 0;
}

/* The input's own process_sort_index orders its processes, then gives
 * way to ours. */
static void note_sort(struct mg *m, struct ev *e)
{
	struct tp_json_node *args;
	int64_t v;

	if (e->args.tok == TP_JSON_OBJECT &&
	    !tp_json_parse_mem(m->out.buf + e->args.off, e->args.len,
			       &m->arena, &args, NULL) &&
	    tp_json_int64(tp_json_get(args, "sort_index"), &v)) {
		e->pid->sort = v;
		e->pid->has_sort = 1;
	}
	tp_json_arena_reset(&m->arena);
}

static int rewrite(struct mg *m, struct rd *r, struct ev *e,
		   struct span *sp)
{
	size_t from = m->out.len;
	int rc;

	if (!sp->tok)
		return 0;
	rc = sp == &e->args ? rewrite_name(m, r, e) : rewrite_id(m, r, e, sp);
	if (rc)
		return -1;
	if (m->out.len == from)
		return 0;
	return replace_with_tail(m, sp->off, sp->len, from);
}

static int finish(struct mg *m, struct rd *r, struct ev *e)
{
	struct span *sp[4] = { &e->args, &e->id, &e->id2, &e->bind }, *t;
	size_t i, k;

	if (e->drop || !e->pid) {
		if (e->pid)
			pid_forget(r->in, e);
		m->out.len = e->start;
		r->in->ndropped++;
		return 0;
	}
	if (e->ph == 'M' && e->meta == META_SORT) {
		note_sort(m, e);
		m->out.len = e->start;
		r->in->nreplaced++;
		return 0;
	}
	if (e->ph != 'M' || e->meta != META_NAME)
		e->args.tok = 0;
	/* last in the event first, so the others stay where they are */
	for (i = 1; i < 4; i++)
		for (k = i; k && sp[k]->off > sp[k - 1]->off; k--) {
			t = sp[k];
			sp[k] = sp[k - 1];
			sp[k - 1] = t;
		}
	for (i = 0; i < 4; i++)
		if (rewrite(m, r, e, sp[i]))
			return -1;
	if (mg_add(m, "}", 1))
		return -1;
	r->in->nwritten++;
	m->nwritten++;
	if (m->out.len >= MG_FLUSH_BYTES)
		return mg_out_flush(m);
	return 0;
}

static int event(struct mg *m, struct rd *r)
{
	struct ev e = { .start = m->out.len };
	int tok, first = 1;

	if (m->nwritten && mg_add(m, ",\n", 2))
		return -1;
	if (mg_add(m, "{", 1))
		return -1;
	while ((tok = tp_json_next(r->j)) == TP_JSON_KEY) {
		if (member(m, r, &e, first))
			return -1;
		first = 0;
	}
	if (tok != TP_JSON_OBJECT_END)
		return mg_parse_fail(m, r->in->path, r->j, r->gz);
	return finish(m, r, &e);
}

int mg_copy_events(struct mg *m, struct mg_input *in, struct tp_json *j,
		   struct tp_gzr *gz)
{
	struct rd r = { in, j, gz };
	int tok = tp_json_next(j);

	if (tok == TP_JSON_ERROR)
		return mg_parse_fail(m, in->path, j, gz);
	if (tok != TP_JSON_ARRAY)
		return mg_fail(m, in->path, "\"traceEvents\" is not an array");
	for (;;) {
		tok = tp_json_next(j);
		if (tok == TP_JSON_ARRAY_END)
			return 0;
		if (tok == TP_JSON_ERROR)
			return mg_parse_fail(m, in->path, j, gz);
		if (tok != TP_JSON_OBJECT)
			return mg_fail(m, in->path, "traceEvents[%llu] (line "
				       "%lu): an event that is not an object",
				       (unsigned long long)in->nevents,
				       tp_json_line(j));
		if (event(m, &r))
			return -1;
		in->nevents++;
	}
}

/* Processes in the input's order: its own process_sort_index, else the
 * pid's value (what Chrome falls back on), then first appearance. */
static int pid_cmp(const void *a, const void *b)
{
	const struct mg_pid *x = *(const struct mg_pid *const *)a;
	const struct mg_pid *y = *(const struct mg_pid *const *)b;
	double kx = x->has_sort ? (double)x->sort : strtod(x->lit, NULL);
	double ky = y->has_sort ? (double)y->sort : strtod(y->lit, NULL);

	if (kx != ky)
		return kx < ky ? -1 : 1;
	return x->newpid < y->newpid ? -1 : x->newpid > y->newpid;
}

static int put_meta_head(struct mg *m, const char *what, int64_t pid)
{
	if (m->nwritten && mg_add(m, ",\n", 2))
		return -1;
	m->nwritten++;
	return mg_addf(m, "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%lld,"
		       "\"tid\":0,\"args\":{", what, (long long)pid);
}

int mg_put_process_meta(struct mg *m, struct mg_input *in)
{
	struct mg_pid **order, *p;
	size_t i;
	int rc = 0;

	if (!in->npids)
		return 0;
	order = malloc(in->npids * sizeof(*order));
	if (!order)
		return mg_fail(m, in->path, "out of memory");
	for (i = 0; i < in->npids; i++)
		order[i] = &in->pids[i];
	qsort(order, in->npids, sizeof(*order), pid_cmp);
	for (i = 0; i < in->npids && !rc; i++) {
		p = order[i];
		if (!p->named)
			rc = put_meta_head(m, "process_name", p->newpid) ||
			     mg_add(m, "\"name\":", 7) ||
			     add_rank_name(m, in, p, NULL, 0) ||
			     mg_add(m, "}}", 2);
		p->named = 1;
		rc = rc || put_meta_head(m, "process_sort_index", p->newpid) ||
		     mg_addf(m, "\"sort_index\":%lld}}", (long long)
			     ((int64_t)(in->idx + 1) * MG_PID_STRIDE +
			      (int64_t)i));
	}
	free(order);
	if (!rc && m->out.len >= MG_FLUSH_BYTES)
		rc = mg_out_flush(m);
	return rc ? -1 : 0;
}
