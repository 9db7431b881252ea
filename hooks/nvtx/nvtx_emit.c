/* hooks/nvtx/: the nvtx hooks, on hooks/ (resolve.c: how the real
 * functions are found) and every library folder below it. */
/* The writer's side of NVTX: a push opens a range on its thread's stack
 * and the pop that carries its id writes it as one X event (category
 * user_annotation), so ranges nest strictly with the calls they enclose.
 * Pairing is by id, never by order: a pop whose push is not open (it was
 * never seen) pairs with nothing and is counted. nvtxRangeStart/End may
 * cross threads: they become async b/e events keyed by the range id,
 * written together once both are in (nvtx_async.c). Marks are instant
 * events. */
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
#include "nvtx_emit.h"

#define CAT_NAME "user_annotation"

struct range {
	uint32_t id;
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
};

static struct {
	uint64_t ranges, marks;
	uint64_t unmatched_pops, unpaired_pops, unclosed, clipped;
} st;

/* A range is kept when it starts in a recording window. */
static unsigned put_range(struct tp_buf *b, struct tp_thread *t,
			  const struct range *r, int64_t end, const char *flag)
{
	int64_t dur = end > r->ts ? end - r->ts : 0;
	const struct tp_targs *a;

	if (!tp_capture_kept_ns(r->ts))
		return 0;
	a = tp_nvtx_put_args(&r->args, flag, r->has_mem ? &r->mem : NULL);
	tp_nvtx_put(b, t->tid, TP_TEV_COMPLETE, r->name, 0, r->ts, dur);
	if (!b->oom)
		tp_psum_tspan(CAT_NAME, r->name, tp_sess.pid, t->tid, r->ts,
			      dur, 0, a->a, a->n);
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
	if (s->n == s->cap) {
		unsigned cap = s->cap ? s->cap * 2 : 16;
		void *v = realloc(s->v, cap * sizeof(*s->v));

		if (!v)
			return 0;
		s->v = v;
		s->cap = cap;
	}
	r = &s->v[s->n];
	r->name = strdup(tp_nvtx_name_of(e));
	if (!r->name)
		return 0;
	r->id = (uint32_t)e->stream;
	r->ts = tp_trace_ns(e->start);
	r->args = tp_nvtx_args_of(e);
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

/* A pop ends the open range whose id it carries (the innermost one of
 * its domain when it was made). Ranges of other domains opened inside
 * it and still open would overlap it partially: they are written now,
 * ending with it ("clipped"), and their own pops later only take them
 * off the stack. A pop that carries no id (no push of its domain was
 * open: the program's) or one not open here pairs with nothing. */
static unsigned pop(struct tp_buf *b, struct tp_thread *t,
		    const struct tp_event *e)
{
	uint32_t id = (uint32_t)e->stream;
	struct stack *s = t->annot;
	int64_t end = tp_trace_ns(e->end);
	unsigned i, j, n = 0;

	if (!id) {
		st.unmatched_pops++;
		return 0;
	}
	for (i = s ? s->n : 0; i-- > 0;)
		if (s->v[i].id == id)
			break;
	if (!s || i == (unsigned)-1) {
		st.unpaired_pops++;
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
	if (tp_nvtx_args_of(e).msg == TP_NVTX_MSG_MEM) {
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
	struct tp_nvtx_args x = tp_nvtx_args_of(e);
	int64_t ts = tp_trace_ns(e->start);

	if (!tp_capture_kept_ns(ts))
		return 0;
	tp_nvtx_put_args(&x, NULL, NULL);
	tp_nvtx_put(b, t->tid, TP_TEV_INSTANT, tp_nvtx_name_of(e), 0, ts, 0);
	st.marks++;
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
	/* Ranges are paired by id, whole or not at all: a reader may
	 * check them against the drops (tprof check). */
	tp_buf_lit(b, ", \"pairing\": \"id\", \"ranges\": ");
	tp_json_u64(b, st.ranges);
	tp_buf_lit(b, ", \"dropped\": {\"pushes\": ");
	tp_json_u64(b, tp_nvtx_dropped(TP_NVTX_PUSH));
	tp_buf_lit(b, ", \"pops\": ");
	tp_json_u64(b, tp_nvtx_dropped(TP_NVTX_POP));
	tp_buf_lit(b, ", \"starts\": ");
	tp_json_u64(b, tp_nvtx_dropped(TP_NVTX_START));
	tp_buf_lit(b, ", \"ends\": ");
	tp_json_u64(b, tp_nvtx_dropped(TP_NVTX_END));
	tp_buf_char(b, '}');
	tp_buf_lit(b, ", \"marks\": ");
	tp_json_u64(b, st.marks);
	tp_nvtx_async_put_stats(b);
	tp_buf_lit(b, ", \"unmatched_pops\": ");
	tp_json_u64(b, st.unmatched_pops);
	tp_buf_lit(b, ", \"unpaired_pops\": ");
	tp_json_u64(b, st.unpaired_pops);
	tp_buf_lit(b, ", \"unclosed\": ");
	tp_json_u64(b, st.unclosed);
	tp_buf_lit(b, ", \"clipped\": ");
	tp_json_u64(b, st.clipped);
	tp_buf_lit(b, ", \"truncated\": ");
	tp_json_u64(b, tp_nvtx_truncated());
	tp_buf_lit(b, ", \"too_deep\": ");
	tp_json_u64(b, tp_nvtx_too_deep());
	tp_buf_char(b, '}');
}

static const struct tp_writer_ext nvtx_ext = {
	.thread_end = thread_end,
	.trace_end = tp_nvtx_async_trace_end,
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
			    .cat = "user_annotation",
			    .emit = tp_nvtx_async_start },
	[TP_NVTX_END] = { .name = "nvtxRangeEnd", .cat = "user_annotation",
			  .emit = tp_nvtx_async_end },
};

void tp_nvtx_register(void)
{
	tp_api_register(TP_TABLE_NVTX, nvtx_apis, TP_NVTX_N);
	tp_writer_add_ext(&nvtx_ext);
}
