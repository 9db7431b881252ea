/* preload/: the hooks and the library's life in the process (constructor,
 * signals, fork, exec); the top layer. */
/* The writer's side of NVTX: a push opens a range on its thread's stack
 * and the matching pop writes it as one X event (category
 * user_annotation), so ranges nest strictly with the calls they enclose.
 * nvtxRangeStart/End may cross threads: they become async b/e events
 * keyed by the range id. Marks are instant events. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/capture.h"
#include "trace/json.h"
#include "summary/proc_summary.h"
#include "trace/session.h"
#include "trace/thread.h"
#include "trace/meta.h"
#include "trace/timeline.h"
#include "output/trailer.h"
#include "output/writer.h"
#include "lib_hook.h"
#include "nvtx.h"

#define CAT_NAME "user_annotation"
#define CAT "\"cat\":\"" CAT_NAME "\""
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

static void sep(struct tp_buf *b, int *first)
{
	if (!*first)
		tp_buf_char(b, ',');
	*first = 0;
}

static void put_payload(struct tp_buf *b, const struct tp_nvtx_args *x)
{
	union { uint64_t u; double d; } v = { .u = x->payload };
	union { uint32_t u; float f; } f = { .u = (uint32_t)x->payload };

	tp_buf_lit(b, "\"payload\":");
	switch (x->payload_type) {
	case NVTX_PAYLOAD_TYPE_UNSIGNED_INT64:
	case NVTX_PAYLOAD_TYPE_UNSIGNED_INT32:
		tp_json_u64(b, x->payload);
		return;
	case NVTX_PAYLOAD_TYPE_INT64:
		tp_json_i64(b, (int64_t)x->payload);
		return;
	case NVTX_PAYLOAD_TYPE_INT32:
		tp_json_i64(b, (int32_t)(uint32_t)x->payload);
		return;
	case NVTX_PAYLOAD_TYPE_DOUBLE:
		tp_json_double(b, v.d);
		return;
	case NVTX_PAYLOAD_TYPE_FLOAT:
		tp_json_double(b, f.f);
		return;
	}
	tp_json_hex(b, x->payload);
}

static void put_mem(struct tp_buf *b, const struct tp_nvtx_mem *m)
{
	tp_buf_lit(b, "\"mem_entry\":");
	tp_json_i64(b, m->at_entry);
	tp_buf_lit(b, ",\"mem_exit\":");
	tp_json_i64(b, m->at_exit);
	tp_buf_lit(b, ",\"mem_peak\":");
	tp_json_i64(b, m->peak);
}

/* mem: device memory around a range (tprof_range_pop_memory), or NULL. */
static void put_args(struct tp_buf *b, const struct tp_nvtx_args *x,
		     const char *flag, const struct tp_nvtx_mem *mem)
{
	const char *dom = tp_nvtx_domain_name(x->domain);
	const char *cat;
	int first = 1;

	tp_buf_lit(b, ",\"args\":{");
	if (dom) {
		sep(b, &first);
		tp_buf_lit(b, "\"domain\":");
		tp_json_str(b, dom);
	}
	if (x->color_type == NVTX_COLOR_ARGB) {
		char c[8];

		snprintf(c, sizeof(c), "#%06x", x->color & 0xffffffu);
		sep(b, &first);
		tp_buf_lit(b, "\"color\":");
		tp_json_str(b, c);
	}
	if (x->category) {
		sep(b, &first);
		tp_buf_lit(b, "\"category\":");
		cat = tp_nvtx_category_name(x->domain, x->category);
		if (cat)
			tp_json_str(b, cat);
		else
			tp_json_u64(b, x->category);
	}
	if (x->payload_type) {
		sep(b, &first);
		put_payload(b, x);
	}
	if (x->truncated) {
		sep(b, &first);
		tp_buf_lit(b, "\"truncated\":1");
	}
	if (flag) {
		sep(b, &first);
		tp_buf_char(b, '"');
		tp_buf_cstr(b, flag);
		tp_buf_lit(b, "\":1");
	}
	if (mem) {
		sep(b, &first);
		put_mem(b, mem);
	}
	tp_buf_char(b, '}');
}

/* ,\n{"ph":P,"cat":...[,"name":N][,"id":I],"pid":..,"tid":..,"ts":TS
 * (range ids start at 1: 0 is none) */
static void head(struct tp_buf *b, struct tp_thread *t, const char *ph,
		 const char *name, uint64_t id, int64_t ts)
{
	tp_buf_lit(b, ",\n{\"ph\":\"");
	tp_buf_cstr(b, ph);
	tp_buf_lit(b, "\"," CAT);
	if (name) {
		tp_buf_lit(b, ",\"name\":");
		tp_json_str(b, name);
	}
	if (id) {
		tp_buf_lit(b, ",\"id\":");
		tp_json_u64(b, id);
	}
	tp_buf_char(b, ',');
	tp_writer_thread_head(b, t);
	tp_json_us(b, ts);
}

/* A range is kept when it starts in a recording window. */
static unsigned put_range(struct tp_buf *b, struct tp_thread *t,
			  const struct range *r, int64_t end, const char *flag)
{
	size_t args;

	if (!tp_capture_kept_ns(r->ts))
		return 0;
	head(b, t, "X", r->name, 0, r->ts);
	tp_buf_lit(b, ",\"dur\":");
	tp_json_us(b, end > r->ts ? end - r->ts : 0);
	args = b->len + sizeof(",\"args\":") - 1;
	put_args(b, &r->args, flag, r->has_mem ? &r->mem : NULL);
	if (!b->oom)
		tp_psum_span(CAT_NAME, r->name, tp_sess.pid, t->tid, r->ts,
			     end > r->ts ? end - r->ts : 0, 0, b->p + args,
			     b->len - args);
	tp_buf_char(b, '}');
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
	head(b, t, "i", name_of(e), 0, ts);
	tp_buf_lit(b, ",\"s\":\"t\"");
	put_args(b, &x, NULL, NULL);
	tp_buf_char(b, '}');
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
	size_t args;

	if (!tp_capture_kept_ns(ts))
		return 0;
	head(b, t, "b", name_of(e), e->stream, ts);
	args = b->len + sizeof(",\"args\":") - 1;
	put_args(b, &x, NULL, NULL);
	if (!b->oom)
		tp_psum_begin(e->stream, name_of(e), t->tid, ts, b->p + args,
			      b->len - args);
	tp_buf_char(b, '}');
	st.async_starts++;
	return 1;
}

static unsigned end(struct tp_buf *b, struct tp_thread *t,
		    const struct tp_event *e)
{
	/* Written even outside a window: the start may have been kept, and
	 * an end whose start was dropped matches nothing (harmless). */
	head(b, t, "e", NULL, e->stream, tp_trace_ns(e->end));
	tp_buf_lit(b, ",\"args\":{}}");
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
	struct tp_buf *b = arg;

	tp_buf_lit(b, ",\n");
	tp_meta_thread_name(b, tid, name);
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
