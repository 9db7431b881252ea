/* encode/: the typed event model (tev.h) and the JSON encoder; on
 * util/ and gzip/. */
/* The JSON encoder of the typed event model (tev.h): Kineto's layout as
 * the writer prints it today (docs/reference/trace-format.md): one event a line,
 * ts/dur in microseconds with three decimals, strings escaped by
 * encode/json.c. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "tev.h"

struct tev_json {
	struct tp_enc e;
	int first;		/* no event written yet: no ",\n" before it */
};

/* Text kept by the address of a static string (tp_tev's static_names):
 * the writer's event heads are escaped once, not per event. A slot is one string; a collision just writes again.
 * Only static strings are kept, so an address always means the same
 * text; the caches are the one writer thread's (or the CLI's). */
#define HEAD_SLOTS 256
#define SLOT_TEXT 120

struct slot {
	const void *a, *b;	/* name and cat, or the key */
	uint32_t n;		/* the key's length, or the phase */
	uint8_t len;
	char text[SLOT_TEXT];
};

static struct slot heads[HEAD_SLOTS];

/* The text of tracks written, ,"pid":P,"tid":T: the last one (a hook's
 * events stay on their thread's), and a few more by pid and tid, as
 * CUPTI's ops alternate between GPU streams and the CPU threads that
 * launched them. A slot of len 0 is empty. */
struct track_text {
	int64_t pid, tid;
	uint8_t len;
	char text[48];
};

#define TRACK_SLOTS 8

/* Starts as a real track, not a sentinel: any pid and tid may come. */
static struct track_text last_track = {
	.len = 16, .text = ",\"pid\":0,\"tid\":0",
};
static struct track_text tracks[TRACK_SLOTS];

static unsigned slot_of(const void *p, unsigned slots)
{
	return (unsigned)(((uintptr_t)p >> 3) * 0x9e3779b97f4a7c15ull >> 40) &
		(slots - 1);
}

/* Keeps b's text from `from` in sl, when it fits. */
static void keep(struct slot *sl, const struct tp_buf *b, size_t from,
		 const void *a, const void *k2, uint32_t n)
{
	size_t len = b->len - from;

	if (b->oom || len > SLOT_TEXT)
		return;
	memcpy(sl->text, b->p + from, len);
	sl->len = (uint8_t)len;
	sl->a = a;
	sl->b = k2;
	sl->n = n;
}

/* Kept text (len bytes of the cap-byte array text) appended by copying
 * the whole array: a constant size is a few vector moves, where a
 * variable one is a rep movs or a call; the bytes past len are
 * overwritten by what follows. */
static inline void put_kept(struct tp_buf *b, const char *text, size_t cap,
			    size_t len)
{
	if (tp_buf_reserve(b, cap))
		return;
	memcpy(b->p + b->len, text, cap);
	b->len += len;
}

static void put_u128(struct tp_buf *b, unsigned __int128 v)
{
	char tmp[40];
	int n = 0;

	if (v <= UINT64_MAX) {
		tp_json_u64(b, (uint64_t)v);
		return;
	}
	while (v) {
		tmp[sizeof(tmp) - 1 - n++] = (char)('0' + (int)(v % 10));
		v /= 10;
	}
	tp_buf_put(b, tmp + sizeof(tmp) - n, (size_t)n);
}

/* "key": -- a static key is plain text (tev.h): copied as it is. */
static inline void put_key(struct tp_buf *b, const char *k, uint32_t n,
			   int stat)
{
	char *p;

	if (!stat || tp_buf_reserve(b, n + 3)) {
		tp_json_strn(b, k, n);
		tp_buf_char(b, ':');
		return;
	}
	p = b->p + b->len;
	p[0] = '"';
	memcpy(p + 1, k, n);
	p[n + 1] = '"';
	p[n + 2] = ':';
	b->len += n + 3;
}

static uint32_t put_value(struct tp_buf *b, const struct tp_targ *a,
			  uint32_t n, uint32_t i, int stat);

/* The members (dict) or elements of the container at a[i]; returns the
 * index after it. */
static uint32_t put_children(struct tp_buf *b, const struct tp_targ *a,
			     uint32_t n, uint32_t i, int dict, int stat)
{
	uint32_t j = i + 1, k;

	for (k = 0; k < a[i].v.n && j < n; k++) {
		if (k)
			tp_buf_char(b, ',');
		if (dict)
			put_key(b, a[j].key, a[j].keylen, stat);
		j = put_value(b, a, n, j, stat);
	}
	return j;
}

static uint32_t put_value(struct tp_buf *b, const struct tp_targ *a,
			  uint32_t n, uint32_t i, int stat)
{
	const struct tp_targ *t = &a[i];

	switch (t->type) {
	case TP_TARG_NULL:
		tp_buf_lit(b, "null");
		break;
	case TP_TARG_BOOL:
		if (t->v.i)
			tp_buf_lit(b, "true");
		else
			tp_buf_lit(b, "false");
		break;
	case TP_TARG_INT:
		tp_json_i64(b, t->v.i);
		break;
	case TP_TARG_UINT:
		tp_json_u64(b, t->v.u);
		break;
	case TP_TARG_U128:
		put_u128(b, t->v.u128);
		break;
	case TP_TARG_DOUBLE:
		tp_json_double(b, t->v.d);
		break;
	case TP_TARG_STRING:
		tp_json_strn(b, t->v.str.s, t->v.str.len);
		break;
	case TP_TARG_POINTER:
		tp_json_hex(b, t->v.u);
		break;
	case TP_TARG_JSON:
		tp_buf_put(b, t->v.str.s, t->v.str.len);
		break;
	case TP_TARG_MILLI:
		tp_json_us(b, t->v.i);
		break;
	case TP_TARG_ARRAY:
		tp_buf_char(b, '[');
		i = put_children(b, a, n, i, 0, stat);
		tp_buf_char(b, ']');
		return i;
	case TP_TARG_DICT:
		tp_buf_char(b, '{');
		i = put_children(b, a, n, i, 1, stat);
		tp_buf_char(b, '}');
		return i;
	}
	return i + 1;
}

void tp_targs_json_value(struct tp_targs *w, const struct tp_targ *a)
{
	put_value(w->json, a, 1, 0, 1);
}

static void put_args(struct tp_buf *b, const struct tp_tev *ev)
{
	uint32_t i = 0, k = 0;

	tp_buf_lit(b, ",\"args\":{");
	while (i < ev->nargs) {
		if (k++)
			tp_buf_char(b, ',');
		put_key(b, ev->args[i].key, ev->args[i].keylen,
			ev->static_keys);
		i = put_value(b, ev->args, ev->nargs, i, ev->static_keys);
	}
	tp_buf_char(b, '}');
}

static const char phase_ch[] = {
	[TP_TEV_COMPLETE] = 'X',
	[TP_TEV_INSTANT] = 'i',
	[TP_TEV_COUNTER_SET] = 'C',
	[TP_TEV_ASYNC_BEGIN] = 'b',
	[TP_TEV_ASYNC_END] = 'e',
	[TP_TEV_FLOW_START] = 's',
	[TP_TEV_FLOW_END] = 'f',
};

/* put_head for plain names (tev.h's plain_names): cat and name copied
 * as they are, the whole head in one reservation (CUPTI's ops: a
 * literal category, fixed words or a kernel's cached JSON name). */
static void put_head_plain(struct tp_buf *b, const struct tp_tev *ev)
{
	size_t nl = ev->name_json ? ev->name_json_len : ev->namelen + 2;
	char *p;

	if (tp_buf_reserve(b, 40 + ev->catlen + nl))
		return;
	p = b->p + b->len;
	memcpy(p, "{\"ph\":\"X\"", 9);
	p[7] = phase_ch[ev->phase];
	p += 9;
	if (ev->phase == TP_TEV_FLOW_END && ev->flow_binds_enclosing) {
		memcpy(p, ",\"bp\":\"e\"", 9);
		p += 9;
	}
	if (ev->cat) {
		memcpy(p, ",\"cat\":\"", 8);
		memcpy(p + 8, ev->cat, ev->catlen);
		p += 8 + ev->catlen;
		*p++ = '"';
	}
	if (ev->name_json) {
		memcpy(p, ",\"name\":", 8);
		memcpy(p + 8, ev->name_json, ev->name_json_len);
		p += 8 + ev->name_json_len;
	} else if (ev->name) {
		memcpy(p, ",\"name\":\"", 9);
		memcpy(p + 9, ev->name, ev->namelen);
		p += 9 + ev->namelen;
		*p++ = '"';
	}
	b->len = (size_t)(p - b->p);
}

/* {"ph":"P"[,"bp":"e"][,"cat":C][,"name":N] */
static void put_head(struct tp_buf *b, const struct tp_tev *ev)
{
	struct slot *sl = NULL;
	size_t from = b->len;

	if (ev->static_names) {
		sl = &heads[slot_of(ev->name, HEAD_SLOTS)];
		/* A kept head has no binding point: a flow end that binds
		 * is never kept, nor written from one that does not. */
		if (sl->a == ev->name && sl->b == ev->cat &&
		    sl->n == (uint32_t)ev->phase &&
		    !(ev->phase == TP_TEV_FLOW_END &&
		      ev->flow_binds_enclosing)) {
			put_kept(b, sl->text, SLOT_TEXT, sl->len);
			return;
		}
	}
	if (ev->plain_names && !sl) {
		put_head_plain(b, ev);
		return;
	}
	tp_buf_lit(b, "{\"ph\":\"");
	tp_buf_char(b, phase_ch[ev->phase]);
	tp_buf_char(b, '"');
	if (ev->phase == TP_TEV_FLOW_END && ev->flow_binds_enclosing)
		tp_buf_lit(b, ",\"bp\":\"e\"");
	if (ev->cat) {
		tp_json_key(b, "cat");
		tp_json_strn(b, ev->cat, ev->catlen);
	}
	if (ev->name_json) {
		tp_json_key(b, "name");
		tp_buf_put(b, ev->name_json, ev->name_json_len);
	} else if (ev->name) {
		tp_json_key(b, "name");
		tp_json_strn(b, ev->name, ev->namelen);
	}
	if (sl && !(ev->phase == TP_TEV_FLOW_END && ev->flow_binds_enclosing))
		keep(sl, b, from, ev->name, ev->cat, (uint32_t)ev->phase);
}

/* ,"pid":P,"tid":T */
static void put_track(struct tp_buf *b, int64_t pid, int64_t tid)
{
	struct track_text *sl;
	char *p, *from;
	size_t len;

	if (pid == last_track.pid && tid == last_track.tid) {
		put_kept(b, last_track.text, sizeof(last_track.text),
			 last_track.len);
		return;
	}
	sl = &tracks[((uint64_t)pid * 7 + (uint64_t)tid) & (TRACK_SLOTS - 1)];
	if (sl->len && sl->pid == pid && sl->tid == tid) {
		put_kept(b, sl->text, sizeof(sl->text), sl->len);
		return;
	}
	if (tp_buf_reserve(b, 2 * (7 + 21)))
		return;
	from = p = b->p + b->len;
	memcpy(p, ",\"pid\":", 7);
	p = tp_json_i64_at(p + 7, pid);
	memcpy(p, ",\"tid\":", 7);
	p = tp_json_i64_at(p + 7, tid);
	len = (size_t)(p - from);
	b->len += len;
	if (len > sizeof(sl->text))
		return;
	memcpy(sl->text, from, len);
	sl->len = (uint8_t)len;
	sl->pid = pid;
	sl->tid = tid;
	last_track = *sl;
}

static void put_meta(struct tp_buf *b, const struct tp_tev *ev)
{
	tp_buf_lit(b, "{\"ph\":\"M\",\"name\":");
	if (ev->phase == TP_TEV_PROCESS_NAME)
		tp_buf_lit(b, "\"process_name\"");
	else if (ev->phase == TP_TEV_THREAD_NAME)
		tp_buf_lit(b, "\"thread_name\"");
	else if (ev->phase == TP_TEV_THREAD_SORT_INDEX)
		tp_buf_lit(b, "\"thread_sort_index\"");
	else
		tp_buf_lit(b, "\"process_sort_index\"");
	tp_json_key(b, "pid");
	tp_json_i64(b, ev->track.pid);
	tp_json_key(b, "tid");
	tp_json_i64(b, ev->phase == TP_TEV_THREAD_NAME ||
		    ev->phase == TP_TEV_THREAD_SORT_INDEX ? ev->track.tid : 0);
	if (ev->phase == TP_TEV_SORT_INDEX ||
	    ev->phase == TP_TEV_THREAD_SORT_INDEX) {
		tp_buf_lit(b, ",\"args\":{\"sort_index\":");
		tp_json_i64(b, (int64_t)ev->flow_id);
	} else {
		tp_buf_lit(b, ",\"args\":{\"name\":");
		tp_json_strn(b, ev->name, ev->namelen);
	}
	tp_buf_lit(b, "}}");
}

/* The event up to its args. */
static void put_front(struct tp_buf *b, const struct tp_tev *ev)
{
	put_head(b, ev);
	if (ev->phase >= TP_TEV_ASYNC_BEGIN) {
		tp_json_key(b, "id");
		tp_json_u64(b, ev->phase >= TP_TEV_FLOW_START ? ev->flow_id :
			    ev->track.id);
	}
	/* A device's counter says so with tid -1; the JSON's is 0. */
	put_track(b, ev->track.pid, ev->track.kind == TP_TEV_COUNTER &&
		  ev->track.tid < 0 ? 0 : ev->track.tid);
	tp_json_key(b, "ts");
	tp_json_us(b, ev->ts_ns);
	if (ev->phase == TP_TEV_COMPLETE) {
		tp_json_key(b, "dur");
		tp_json_us(b, ev->dur_ns);
	}
	if (ev->phase == TP_TEV_INSTANT)
		tp_buf_lit(b, ",\"s\":\"t\"");
}

static void put_event(struct tp_buf *b, const struct tp_tev *ev)
{
	if (ev->phase >= TP_TEV_PROCESS_NAME) {
		put_meta(b, ev);
		return;
	}
	put_front(b, ev);
	if (ev->nargs || ev->args_always)
		put_args(b, ev);
	tp_buf_char(b, '}');
}

void tp_tev_json_first(struct tp_buf *b, const struct tp_tev *ev)
{
	put_event(b, ev);
}

void tp_tev_json_put(struct tp_buf *b, const struct tp_tev *ev)
{
	tp_buf_lit(b, ",\n");
	put_event(b, ev);
}

#define ARGS_OPEN ",\"args\":{"

/* The writer's X events on threads up to their "ts": (",\n", the head,
 * the track), kept by name, category and track: a hooked call's event
 * differs from the last of its API on its thread only by its times and
 * args, so its front is one fixed-size copy instead of two cache
 * lookups, two copies and three appends. Static names only (an address
 * always means the same text); the writer thread's alone. */
#define OPEN_SLOTS 32
#define OPEN_TEXT 128

struct open_text {
	const char *name, *cat;
	int64_t pid, tid;
	uint8_t len;		/* 0: empty */
	char text[OPEN_TEXT];
};

static struct open_text opens[OPEN_SLOTS];
/* Their timestamps' text above the last 100 ms. */
static struct tp_json_us_hi ts_hi;

/* len bytes (<= OPEN_TEXT) of a kept front in 16-byte moves, up to 15
 * bytes past len (within both: the reservation covers OPEN_TEXT). Not
 * one memcpy of OPEN_TEXT: gcc makes that a rep movs, whose start-up
 * took 10 % of the JSON writer's time (perf), where callgrind counts it
 * as one instruction. */
static inline void copy16s(char *dst, const char *src, unsigned len)
{
	unsigned i;

	for (i = 0; i < len; i += 16)
		memcpy(dst + i, src + i, 16);
}

/* The front of ev written the long way, kept in o when it fits. */
static void open_front(struct tp_buf *b, const struct tp_tev *ev,
		       struct open_text *o)
{
	size_t from = b->len, len;

	tp_buf_lit(b, ",\n");
	put_head(b, ev);
	put_track(b, ev->track.pid, ev->track.tid);
	tp_json_key(b, "ts");
	len = b->len - from;
	if (b->oom || len > OPEN_TEXT)
		return;
	memcpy(o->text, b->p + from, len);
	o->len = (uint8_t)len;
	o->name = ev->name;
	o->cat = ev->cat;
	o->pid = ev->track.pid;
	o->tid = ev->track.tid;
}

/* An X event of static names on a thread: its kept front, then
 * TS,"dur":DUR,"args":{ in one reservation. */
static void open_thread_x(struct tp_buf *b, const struct tp_tev *ev)
{
	struct open_text *o = &opens[(slot_of(ev->name, OPEN_SLOTS) ^
				      (unsigned)ev->track.tid) &
				     (OPEN_SLOTS - 1)];
	char *p;

	if (o->len && o->name == ev->name && o->cat == ev->cat &&
	    o->pid == ev->track.pid && o->tid == ev->track.tid) {
		if (tp_buf_reserve(b, OPEN_TEXT + 2 * 25 + 7 + 9))
			return;
		copy16s(b->p + b->len, o->text, o->len);
		b->len += o->len;
	} else {
		open_front(b, ev, o);
		if (tp_buf_reserve(b, 2 * 25 + 7 + 9))
			return;
	}
	p = tp_json_us_at_hi(b->p + b->len, ev->ts_ns, &ts_hi);
	memcpy(p, ",\"dur\":", 7);
	p = tp_json_us_at(p + 7, ev->dur_ns);
	memcpy(p, ARGS_OPEN, sizeof(ARGS_OPEN) - 1);
	b->len = (size_t)(p + sizeof(ARGS_OPEN) - 1 - b->p);
}

void tp_tev_json_open(struct tp_buf *b, const struct tp_tev *ev,
		      struct tp_targs *w)
{
	if (ev->static_names && ev->phase == TP_TEV_COMPLETE &&
	    ev->track.kind == TP_TEV_THREAD) {
		open_thread_x(b, ev);
	} else {
		tp_buf_lit(b, ",\n");
		put_front(b, ev);
		tp_buf_lit(b, ARGS_OPEN);
	}
	w->json = b;
	w->jseen = 0;
	w->jarr = 0;
}

void tp_tev_json_close(struct tp_buf *b, const struct tp_tev *ev,
		       struct tp_targs *w)
{
	/* No arg kept: no args object, as put_event writes it. */
	if (!(w->jseen & 1) && !ev->args_always && !b->oom &&
	    b->len >= sizeof(ARGS_OPEN) - 1)
		b->len -= sizeof(ARGS_OPEN) - 1;
	else
		tp_buf_char(b, '}');
	tp_buf_char(b, '}');
	w->json = NULL;
}

static int json_event(struct tp_enc *e, const struct tp_tev *ev)
{
	struct tev_json *j = (struct tev_json *)e;
	struct tp_buf *b = &e->out;

	if (!j->first)
		tp_buf_lit(b, ",\n");
	j->first = 0;
	put_event(b, ev);
	return b->oom ? -1 : 0;
}

static int json_begin(struct tp_enc *e, const struct tp_enc_meta *m)
{
	struct tp_buf *b = &e->out;

	tp_buf_lit(b, "{\"schemaVersion\": 1,\n\"traceName\": ");
	tp_json_str(b, m->trace_name ? m->trace_name : "tprof");
	tp_buf_lit(b, ",\n\"displayTimeUnit\": \"ms\",\n"
		   "\"baseTimeNanoseconds\": ");
	tp_json_i64(b, m->base_unix_ns);
	tp_buf_lit(b, ",\n\"traceEvents\": [\n");
	return b->oom ? -1 : 0;
}

static int json_trailer(struct tp_enc *e, const char *json, size_t len)
{
	struct tp_buf *b = &e->out;

	tp_buf_lit(b, "\n],\n");
	tp_buf_put(b, json, len);
	((struct tev_json *)e)->first = -1;
	return b->oom ? -1 : 0;
}

static int json_end(struct tp_enc *e)
{
	struct tp_buf *b = &e->out;

	if (((struct tev_json *)e)->first != -1)
		tp_buf_lit(b, "\n]");
	tp_buf_lit(b, "}\n");
	return b->oom ? -1 : 0;
}

static void json_free(struct tp_enc *e)
{
	tp_buf_free(&e->out);
	free(e);
}

static const struct tp_enc_ops json_ops = {
	.begin = json_begin,
	.event = json_event,
	.trailer = json_trailer,
	.end = json_end,
	.free = json_free,
};

struct tp_enc *tp_enc_json_new(void)
{
	struct tev_json *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	j->e.ops = &json_ops;
	j->first = 1;
	return &j->e;
}

/* The end of the X event in text [p, e) in trace ns, or INT64_MAX when
 * it is not one (metadata, counters, flows, async ends are kept). The
 * writer writes `{"ph":"X",...,"ts":US,"dur":US,...}`, one per line, its
 * strings escaped: `"ts":` cannot occur inside one. */
static int64_t x_end_ns(const char *p, const char *e)
{
	static const char head[] = "{\"ph\":\"X\"";
	const char *ts, *dur;

	if ((size_t)(e - p) < sizeof(head) ||
	    memcmp(p, head, sizeof(head) - 1))
		return INT64_MAX;
	ts = memmem(p, (size_t)(e - p), "\"ts\":", 5);
	dur = ts ? memmem(ts, (size_t)(e - ts), "\"dur\":", 6) : NULL;
	if (!dur)
		return INT64_MAX;
	return (int64_t)((strtod(ts + 5, NULL) + strtod(dur + 6, NULL)) *
			 1000.0 + 0.5);
}

size_t tp_json_trim(char *buf, size_t len, int64_t cut_ns, uint64_t *left_out)
{
	size_t in = 0, out = 0, next;
	const char *nl;

	while (in < len) {
		/* one event: ",\n{...}" up to the next ",\n" */
		nl = len - in > 2 ? memchr(buf + in + 2, '\n', len - in - 2)
				  : NULL;
		next = nl ? (size_t)(nl - buf) - 1 : len;
		if (in + 2 <= next &&
		    x_end_ns(buf + in + 2, buf + next) < cut_ns) {
			(*left_out)++;
		} else {
			memmove(buf + out, buf + in, next - in);
			out += next - in;
		}
		in = next;
	}
	return out;
}
