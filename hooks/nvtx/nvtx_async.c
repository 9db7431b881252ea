/* hooks/nvtx/: the nvtx hooks, on hooks/ (resolve.c: how the real
 * functions are found) and every library folder below it. */
/* The writer's side of nvtxRangeStart/End: a start and its end (which
 * may come on another thread, in either order through the rings) are
 * held by id until both are in, then written together as an async "b"
 * and "e" pair, so that a range is in the trace whole or not at all.
 * An end that could not be recorded although its start was is noted by
 * the recording side (tp_nvtx_end_lost): its start is dropped and
 * counted. At the end of the trace a start still held is a range still
 * open: written as one ending then, "unclosed", unless some end was lost
 * without its id (the table full): then no open start can be told from
 * one whose end was lost, and all are dropped and counted. */
#include <stdlib.h>
#include <string.h>

#include "capture/capture.h"
#include "encode/json.h"
#include "summary/proc_summary.h"
#include "session/session.h"
#include "session/timeline.h"
#include "record/thread.h"
#include "nvtx.h"
#include "nvtx_emit.h"

#define BUCKETS 1024

/* A start waiting for its end (name set), an end waiting for its start
 * (name NULL), or an id whose end was lost (lost set). */
struct held {
	struct held *next;
	uint64_t id;
	int64_t ts;
	pid_t tid;
	int lost;
	char *name;
	struct tp_nvtx_args args;
};

static struct held *tab[BUCKETS];
static uint64_t lost_seen;
static struct {
	uint64_t pairs, unclosed, lost, unsure, orphan_ends;
} st;

static struct held **slot(uint64_t id)
{
	struct held **p = &tab[(id >> 2) % BUCKETS];

	while (*p && (*p)->id != id)
		p = &(*p)->next;
	return p;
}

static void unlink_free(struct held **p)
{
	struct held *h = *p;

	*p = h->next;
	free(h->name);
	free(h);
}

static struct held *hold(uint64_t id)
{
	struct held **p = slot(id), *h;

	if (*p)
		return *p;
	h = calloc(1, sizeof(*h));
	if (!h)
		return NULL;
	h->id = id;
	*p = h;
	return h;
}

/* A start and its end, as the pair Perfetto matches by category and id
 * (the end carries no name, which matches any). */
static unsigned put_pair(struct tp_buf *b, const struct held *s,
			 int64_t end, pid_t end_tid, const char *flag)
{
	const struct tp_targs *a;

	if (!tp_capture_kept_ns(s->ts))
		return 0;
	a = tp_nvtx_put_args(&s->args, flag, NULL);
	tp_nvtx_put(b, s->tid, TP_TEV_ASYNC_BEGIN, s->name, s->id, s->ts, 0);
	if (!b->oom)
		tp_psum_begin(s->id, s->name, s->tid, s->ts, a->a, a->n);
	tp_nvtx_put_args(NULL, NULL, NULL);
	tp_nvtx_put(b, end_tid, TP_TEV_ASYNC_END, NULL, s->id, end, 0);
	tp_psum_end(s->id, end);
	return 2;
}

static unsigned put_unclosed(struct tp_buf *b, const struct held *h,
			     int64_t end_ns)
{
	st.unclosed++;
	return put_pair(b, h, end_ns, h->tid, "unclosed");
}

static void on_lost(void *arg, uint64_t id)
{
	struct held **p = slot(id), *h;

	(void)arg;
	if (*p && (*p)->name) {		/* its start: dropped whole */
		unlink_free(p);
		st.lost++;
		return;
	}
	h = hold(id);			/* its start is still to come */
	if (h)
		h->lost = 1;
}

/* Ends lost since the last look. */
static void take_lost(void)
{
	uint64_t seq = tp_nvtx_lost_seq(), overflow;

	if (seq == lost_seen)
		return;
	lost_seen = seq;
	tp_nvtx_lost_take(on_lost, NULL, &overflow);
}

unsigned tp_nvtx_async_start(struct tp_buf *b, struct tp_thread *t,
			     const struct tp_event *e)
{
	struct held *h, **p;
	unsigned n;

	take_lost();
	p = slot(e->stream);
	h = *p;
	if (h && h->lost) {
		unlink_free(p);
		st.lost++;
		return 0;
	}
	if (h && !h->name) {		/* its end came first */
		struct held s = { .id = e->stream, .tid = t->tid,
				  .ts = tp_trace_ns(e->start),
				  .args = tp_nvtx_args_of(e),
				  .name = (char *)tp_nvtx_name_of(e) };

		n = put_pair(b, &s, h->ts, h->tid, NULL);
		unlink_free(p);
		st.pairs += n / 2;
		return n;
	}
	h = hold(e->stream);
	if (!h)
		return 0;
	h->name = strdup(tp_nvtx_name_of(e));
	if (!h->name) {
		unlink_free(slot(e->stream));
		return 0;
	}
	h->ts = tp_trace_ns(e->start);
	h->tid = t->tid;
	h->args = tp_nvtx_args_of(e);
	return 0;
}

unsigned tp_nvtx_async_end(struct tp_buf *b, struct tp_thread *t,
			   const struct tp_event *e)
{
	struct held *h, **p;
	unsigned n;

	take_lost();
	p = slot(e->stream);
	h = *p;
	if (h && h->name) {
		n = put_pair(b, h, tp_trace_ns(e->end), t->tid, NULL);
		unlink_free(p);
		st.pairs += n / 2;
		return n;
	}
	h = hold(e->stream);		/* its start is still to come */
	if (h) {
		h->ts = tp_trace_ns(e->end);
		h->tid = t->tid;
	}
	return 0;
}

unsigned tp_nvtx_async_trace_end(struct tp_buf *b, int64_t end_ns)
{
	uint64_t overflow;
	unsigned i, n = 0;

	tp_nvtx_lost_take(on_lost, NULL, &overflow);
	for (i = 0; i < BUCKETS; i++) {
		while (tab[i]) {
			struct held *h = tab[i];

			if (h->name && overflow)
				st.unsure++;
			else if (h->name && tp_capture_kept_ns(h->ts))
				n += put_unclosed(b, h, end_ns);
			else if (!h->name && !h->lost)
				st.orphan_ends++;
			unlink_free(&tab[i]);
		}
	}
	return n;
}

void tp_nvtx_async_put_stats(struct tp_buf *b)
{
	tp_buf_lit(b, ", \"async_starts\": ");
	tp_json_u64(b, st.pairs + st.unclosed);
	tp_buf_lit(b, ", \"async_ends\": ");
	tp_json_u64(b, st.pairs + st.unclosed);
	tp_buf_lit(b, ", \"async_unclosed\": ");
	tp_json_u64(b, st.unclosed);
	tp_buf_lit(b, ", \"async_ends_lost\": ");
	tp_json_u64(b, st.lost + st.unsure);
	tp_buf_lit(b, ", \"async_orphan_ends\": ");
	tp_json_u64(b, st.orphan_ends);
}

void tp_nvtx_async_after_fork(void)
{
	unsigned i;

	for (i = 0; i < BUCKETS; i++)
		while (tab[i])
			unlink_free(&tab[i]);
	memset(&st, 0, sizeof(st));
	lost_seen = 0;
}
