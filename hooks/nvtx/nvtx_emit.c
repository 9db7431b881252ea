/* hooks/nvtx/: the nvtx hooks, on hooks/ (resolve.c: how the real
 * functions are found) and every library folder below it. */
/* The writer's side of NVTX: a push opens a range on its thread's stack
 * and the matching pop writes it as one X event (category
 * user_annotation), so ranges nest strictly with the calls they enclose.
 * nvtxRangeStart/End may cross threads: they become async b/e events
 * keyed by the range id. Marks are instant events. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/capture.h"
#include "encode/json.h"
#include "summary/proc_summary.h"
#include "session/session.h"
#include "record/thread.h"
#include "session/meta.h"
#include "session/timeline.h"
#include "output/trailer.h"
#include "output/writer.h"
#include "hooks/lib_hook.h"
#include "nvtx.h"

#define CAT_NAME "user_annotation"
/* Deeper pushes are counted, not kept: their pops are taken first. */
#define MAX_DEPTH 1024

struct range {
	int64_t ts;
	char *name;
	struct tp_nvtx_args args;
	struct tp_nvtx_mem mem;
	uint8_t has_mem;
	uint8_t closed;		/* written early, see pop() */
};

struct stack {
	struct range *v;
	unsigned n;
	unsigned cap;
	unsigned too_deep;	/* pushes past MAX_DEPTH still open */
};

static struct {
	uint64_t ranges, marks, async_starts, async_ends;
	uint64_t unmatched_pops, unclosed, clipped, truncated, too_deep;
} st;

static struct tp_nvtx_args args_of(const struct tp_event *e)
{
	struct tp_nvtx_args x;

	memcpy(&x, &e->a, sizeof(x));
	return x;
}

static const char *name_of(const struct tp_event *e)
{
	struct tp_nvtx_args x = args_of(e);
	const struct tp_nvtx_string *reg;

	if (x.truncated)
		st.truncated++;
	switch (x.msg) {
	case TP_NVTX_MSG_TEXT:
		return tp_event_ext(e);
	case TP_NVTX_MSG_REG:
		reg = (const void *)(uintptr_t)x.reg;
		return reg ? reg->s : "(unnamed)";
	}
	return "(unnamed)";
}

static void put_payload(struct tp_targs *w, const struct tp_nvtx_args *x)
{
	union { uint64_t u; double d; } v = { .u = x->payload };
	union { uint32_t u; float f; } f = { .u = (uint32_t)x->payload };

	switch (x->payload_type) {
	case NVTX_PAYLOAD_TYPE_UNSIGNED_INT64:
	case NVTX_PAYLOAD_TYPE_UNSIGNED_INT32:
		tp_targs_uint(w, "payload", x->payload);
		return;
	case NVTX_PAYLOAD_TYPE_INT64:
		tp_targs_int(w, "payload", (int64_t)x->payload);
		return;
	case NVTX_PAYLOAD_TYPE_INT32:
		tp_targs_int(w, "payload", (int32_t)(uint32_t)x->payload);
		return;
	case NVTX_PAYLOAD_TYPE_DOUBLE:
		tp_targs_double(w, "payload", v.d);
		return;
	case NVTX_PAYLOAD_TYPE_FLOAT:
		tp_targs_double(w, "payload", f.f);
		return;
	}
	tp_targs_ptr(w, "payload", x->payload);
}

/* The args of the event being written; color is the "#rrggbb" it
 * points to. */
static struct tp_targs A;
static char color[8];

/* mem: device memory around a range (tprof_range_pop_memory), or NULL. */
static void put_args(const struct tp_nvtx_args *x, const char *flag,
		     const struct tp_nvtx_mem *mem)
{
	const char *dom = tp_nvtx_domain_name(x->domain);
	const char *cat;

	tp_targs_reset(&A);
	if (dom)
		tp_targs_cstr(&A, "domain", dom);
	if (x->color_type == NVTX_COLOR_ARGB) {
		snprintf(color, sizeof(color), "#%06x", x->color & 0xffffffu);
		tp_targs_cstr(&A, "color", color);
	}
	if (x->category) {
		cat = tp_nvtx_category_name(x->domain, x->category);
		if (cat)
			tp_targs_cstr(&A, "category", cat);
		else
			tp_targs_uint(&A, "category", x->category);
	}
	if (x->payload_type)
		put_payload(&A, x);
	if (x->truncated)
		tp_targs_int(&A, "truncated", 1);
	if (flag)
		tp_targs_int(&A, flag, 1);
	if (mem) {
		tp_targs_int(&A, "mem_entry", mem->at_entry);
		tp_targs_int(&A, "mem_exit", mem->at_exit);
		tp_targs_int(&A, "mem_peak", mem->peak);
	}
}

/* An event of t's with the args in A (range ids start at 1: 0 is
 * none). */
static void put(struct tp_buf *b, struct tp_thread *t, enum tp_tev_phase ph,
		const char *name, uint64_t id, int64_t ts, int64_t dur)
{
	struct tp_tev ev;

	memset(&ev, 0, sizeof(ev));
	ev.track.kind = id ? TP_TEV_ASYNC : TP_TEV_THREAD;
	ev.track.pid = tp_sess.pid;
	ev.track.tid = t->tid;
	ev.track.id = id;
	ev.phase = ph;
	ev.cat = CAT_NAME;
	ev.catlen = sizeof(CAT_NAME) - 1;
	if (name) {
		ev.name = name;
		ev.namelen = strlen(name);
	}
	ev.ts_ns = ts;
	ev.dur_ns = dur;
	ev.args = A.a;
	ev.nargs = A.n;
	ev.args_always = 1;
	ev.static_keys = 1;	/* literals */
	tp_tev_put(b, &ev);
}

/* A range is kept when it starts in a recording window. */
static unsigned put_range(struct tp_buf *b, struct tp_thread *t,
			  const struct range *r, int64_t end, const char *flag)
{
	int64_t dur = end > r->ts ? end - r->ts : 0;

	if (!tp_capture_kept_ns(r->ts))
		return 0;
	put_args(&r->args, flag, r->has_mem ? &r->mem : NULL);
	put(b, t, TP_TEV_COMPLETE, r->name, 0, r->ts, dur);
	if (!b->oom)
		tp_psum_tspan(CAT_NAME, r->name, tp_sess.pid, t->tid, r->ts,
			      dur, 0, A.a, A.n);
	st.ranges++;
	return 1;
}

static struct stack *stack_of(struct tp_thread *t)
{
	if (!t->annot)
		t->annot = calloc(1, sizeof(struct stack));
	return t->annot;
}

static unsigned push(struct tp_buf *b, struct tp_thread *t,
		     const struct tp_event *e)
{
	struct stack *s = stack_of(t);
	struct range *r;

	(void)b;
	if (!s)
		return 0;
	if (s->n == MAX_DEPTH) {
		s->too_deep++;
		st.too_deep++;
		return 0;
	}
	if (s->n == s->cap) {
		unsigned cap = s->cap ? s->cap * 2 : 16;
		void *v = realloc(s->v, cap * sizeof(*s->v));

		if (!v)
			return 0;
		s->v = v;
		s->cap = cap;
	}
	r = &s->v[s->n];
	r->name = strdup(name_of(e));
	if (!r->name)
		return 0;
	r->ts = tp_trace_ns(e->start);
	r->args = args_of(e);
	r->has_mem = 0;
	r->closed = 0;
	s->n++;
	return 0;
}

static void drop(struct stack *s, unsigned i)
{
	free(s->v[i].name);
	memmove(&s->v[i], &s->v[i + 1], (s->n - i - 1) * sizeof(*s->v));
	s->n--;
}

/* A pop ends the innermost open range of its domain. Ranges of other
 * domains opened inside it and still open would overlap it partially:
 * they are written now, ending with it ("clipped"), and their own pops
 * later only take them off the stack. */
static unsigned pop(struct tp_buf *b, struct tp_thread *t,
		    const struct tp_event *e)
{
	uint64_t dom = args_of(e).domain;
	struct stack *s = t->annot;
	int64_t end = tp_trace_ns(e->end);
	unsigned i, j, n = 0;

	if (s && s->too_deep) {
		s->too_deep--;
		return 0;
	}
	for (i = s ? s->n : 0; i-- > 0;)
		if (s->v[i].args.domain == dom)
			break;
	if (!s || i == (unsigned)-1) {
		st.unmatched_pops++;
		return 0;
	}
	if (s->v[i].closed) {
		drop(s, i);
		return 0;
	}
	for (j = s->n - 1; j > i; j--) {
		if (s->v[j].closed)
			continue;
		n += put_range(b, t, &s->v[j], end, "clipped");
		s->v[j].closed = 1;
		st.clipped++;
	}
	if (args_of(e).msg == TP_NVTX_MSG_MEM) {
		memcpy(&s->v[i].mem, tp_event_ext(e), sizeof(s->v[i].mem));
		s->v[i].has_mem = 1;
	}
	n += put_range(b, t, &s->v[i], end, NULL);
	drop(s, i);
	return n;
}

static unsigned mark(struct tp_buf *b, struct tp_thread *t,
		     const struct tp_event *e)
{
	struct tp_nvtx_args x = args_of(e);
	int64_t ts = tp_trace_ns(e->start);

	if (!tp_capture_kept_ns(ts))
		return 0;
	put_args(&x, NULL, NULL);
	put(b, t, TP_TEV_INSTANT, name_of(e), 0, ts, 0);
	st.marks++;
	return 1;
}

/* Perfetto matches an async end to its begin by category and id; the end
 * carries no name, which matches any. */
static unsigned start(struct tp_buf *b, struct tp_thread *t,
		      const struct tp_event *e)
{
	struct tp_nvtx_args x = args_of(e);
	int64_t ts = tp_trace_ns(e->start);

	if (!tp_capture_kept_ns(ts))
		return 0;
	put_args(&x, NULL, NULL);
	put(b, t, TP_TEV_ASYNC_BEGIN, name_of(e), e->stream, ts, 0);
	if (!b->oom)
		tp_psum_begin(e->stream, name_of(e), t->tid, ts, A.a, A.n);
	st.async_starts++;
	return 1;
}

static unsigned end(struct tp_buf *b, struct tp_thread *t,
		    const struct tp_event *e)
{
	/* Written even outside a window: the start may have been kept, and
	 * an end whose start was dropped matches nothing (harmless). */
	tp_targs_reset(&A);
	put(b, t, TP_TEV_ASYNC_END, NULL, e->stream, tp_trace_ns(e->end), 0);
	tp_psum_end(e->stream, tp_trace_ns(e->end));
	st.async_ends++;
	return 1;
}

/* Ranges still open when their thread exits or the trace ends. */
static unsigned thread_end(struct tp_buf *b, struct tp_thread *t,
			   int64_t end_ns)
{
	struct stack *s = t->annot;
	unsigned i, n = 0;

	if (!s)
		return 0;
	for (i = 0; i < s->n; i++) {
		if (!s->v[i].closed) {
			n += put_range(b, t, &s->v[i], end_ns, "unclosed");
			st.unclosed++;
		}
		free(s->v[i].name);
	}
	free(s->v);
	free(s);
	t->annot = NULL;
	return n;
}

static void put_name(void *arg, pid_t tid, const char *name)
{
	tp_meta_thread_name(arg, tid, name);
}

static void put_meta(struct tp_buf *b)
{
	tp_nvtx_thread_names(put_name, b);
}

static void put_stats(struct tp_buf *b)
{
	tp_buf_lit(b, ",\n \"nvtx\": {\"injection\": ");
	tp_json_str(b, tp_nvtx_state());
	tp_buf_lit(b, ", \"instances\": ");
	tp_json_u64(b, tp_nvtx_attached());
	tp_buf_lit(b, ", \"ranges\": ");
	tp_json_u64(b, st.ranges);
	tp_buf_lit(b, ", \"marks\": ");
	tp_json_u64(b, st.marks);
	tp_buf_lit(b, ", \"async_starts\": ");
	tp_json_u64(b, st.async_starts);
	tp_buf_lit(b, ", \"async_ends\": ");
	tp_json_u64(b, st.async_ends);
	tp_buf_lit(b, ", \"unmatched_pops\": ");
	tp_json_u64(b, st.unmatched_pops);
	tp_buf_lit(b, ", \"unclosed\": ");
	tp_json_u64(b, st.unclosed);
	tp_buf_lit(b, ", \"clipped\": ");
	tp_json_u64(b, st.clipped);
	tp_buf_lit(b, ", \"truncated\": ");
	tp_json_u64(b, st.truncated);
	tp_buf_lit(b, ", \"too_deep\": ");
	tp_json_u64(b, st.too_deep);
	tp_buf_char(b, '}');
}

static const struct tp_writer_ext nvtx_ext = {
	.thread_end = thread_end,
	.put_meta = put_meta,
	.put_stats = put_stats,
	.thread_name = tp_nvtx_thread_name,
};

static const struct tp_api nvtx_apis[TP_NVTX_N] = {
	[TP_NVTX_PUSH] = { .name = "nvtxRangePush", .cat = "user_annotation",
			   .emit = push },
	[TP_NVTX_POP] = { .name = "nvtxRangePop", .cat = "user_annotation",
			  .emit = pop },
	[TP_NVTX_MARK] = { .name = "nvtxMark", .cat = "user_annotation",
			   .emit = mark },
	[TP_NVTX_START] = { .name = "nvtxRangeStart",
			    .cat = "user_annotation", .emit = start },
	[TP_NVTX_END] = { .name = "nvtxRangeEnd", .cat = "user_annotation",
			  .emit = end },
};

void tp_nvtx_register(void)
{
	tp_api_register(TP_TABLE_NVTX, nvtx_apis, TP_NVTX_N);
	tp_writer_add_ext(&nvtx_ext);
}
