/* output/: the background writer: drains the rings into the trace file,
 * with its metadata and trailer; on every folder above. */
/* The host rings (sampling/hthread.h), drained at each cycle after the
 * CUDA rings: a CPU sample becomes an instant on its thread's track,
 * named after its innermost Python function (else its function), with
 * its stack, innermost first, and the CPU time it stands for; a
 * blocking OS call an X event as any hooked call. Both feed the summary.
 * The cycle also drives the sampler (arming new threads, disarming those
 * gone) and sets the blocking calls' threshold exactly once ticks have a
 * rate; the last one stops both. The trailer's tprof.sampling says how the
 * samples were taken and what was lost.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/capture.h"
#include "sampling/hthread.h"
#include "sampling/osrt_rec.h"
#include "sampling/sampler.h"
#include "session/timeline.h"
#include "stacks/stacks.h"
#include "summary/proc_summary.h"
#include "trailer.h"
#include "writer_state.h"

/* The leaf frames of samples, by instruction pointer: symbolizing one
 * (and demangling it) costs microseconds, and hot code is sampled at
 * the same few addresses again and again. */
#define LEAF_SLOTS 4096

static struct leaf {
	uint64_t ip;
	char *json;
	size_t len;
} leaves[LEAF_SLOTS];

static struct {
	uint64_t samples, calls, lost;	/* written, and lost in the rings */
	uint64_t ring_dropped;		/* of freed host threads */
	int threshold_set;
} H;

static const char *leaf_json(uint64_t ip, size_t *len)
{
	struct leaf *l = &leaves[(ip >> 2) * 0x9e3779b97f4a7c15ull >> 52];
	struct tp_buf b = { 0 };

	if (l->json && l->ip == ip) {
		*len = l->len;
		return l->json;
	}
	tp_stack_put_frame(&b, (uintptr_t)ip, 0);
	if (b.oom) {
		tp_buf_free(&b);
		return NULL;
	}
	free(l->json);
	l->ip = ip;
	l->json = b.p;
	l->len = b.len;
	*len = b.len;
	return l->json;
}

/* The sample's stack: its leaf, then its callers' cached array. */
static int stack_text(struct tp_buf *s, const struct tp_event *e)
{
	const char *leaf, *callers = NULL;
	size_t ll, cl = 0;

	s->len = 0;
	leaf = leaf_json(e->a.raw[0], &ll);
	if (!leaf)
		return -1;
	if (e->stack)
		callers = tp_stack_json(e->stack, &cl);
	tp_buf_char(s, '[');
	tp_buf_put(s, leaf, ll);
	if (callers && cl > 2) {
		tp_buf_char(s, ',');
		tp_buf_put(s, callers + 1, cl - 1);
	} else {
		tp_buf_char(s, ']');
	}
	return s->oom ? -1 : 0;
}

/* The event's name: the innermost Python function's, else the leaf's
 * function without its offset or library. */
static size_t sample_name(const char *json, size_t len, char *out,
			  size_t cap)
{
	const char *p = memmem(json, len, "\"py::", 5), *e;
	size_t n;

	if (p) {
		p += 5;
		e = memchr(p, ':', (size_t)(json + len - p));
	} else {
		p = json + 2;		/* ["... */
		e = p;
		while (e < json + len && *e != '"' && *e != ' ' &&
		       !(e[0] == '+' && e + 1 < json + len && e[1] == '0'))
			e++;
	}
	n = e && e > p ? (size_t)(e - p) : 0;
	if (n >= cap)
		n = cap - 1;
	memcpy(out, p, n);
	out[n] = '\0';
	return n;
}

static void put_sample(struct tp_hthread *h, const struct tp_event *e)
{
	static struct tp_buf s;
	static struct tp_tev ev = {
		.track.kind = TP_TEV_THREAD,
		.phase = TP_TEV_INSTANT,
		.cat = "cpu_sample",
		.catlen = 10,
		.static_keys = 1,
	};
	struct tp_targs *w = &W.args;
	int64_t ts = tp_trace_ns(e->start);
	char name[256];

	if (!tp_capture_kept(e->start) || stack_text(&s, e) < 0)
		return;
	ev.track.pid = tp_sess.pid;
	ev.track.tid = h->tid;
	ev.namelen = sample_name(s.p, s.len, name, sizeof(name));
	ev.name = name;
	ev.ts_ns = ts;
	tp_targs_reset(w);
	tp_targs_json(w, "stack", s.p, s.len);
	tp_targs_uint(w, "weight_ns", e->a.raw[1]);
	ev.args = w->a;
	ev.nargs = w->n;
	tp_tev_put(&W.buf, &ev);
	if (!W.buf.oom)
		tp_psum_sample(tp_sess.pid, h->tid, ts, (int64_t)e->a.raw[1],
			       s.p, s.len);
	W.events++;
	H.samples++;
}

static void put_record(struct tp_hthread *h, const struct tp_event *e)
{
	if (e->api == TP_API_ID(TP_TABLE_HOST, TP_HOST_SAMPLE)) {
		put_sample(h, e);
		return;
	}
	if (!tp_capture_kept(e->start))
		return;
	tp_wr_put_call(&W.buf, h->tid, e);
	H.calls++;
}

/* A record and its extension, contiguous (W.scratch where they wrap). */
static const struct tp_event *record_at(struct tp_ring *r, uint64_t pos,
					unsigned n)
{
	unsigned i;

	if (n == 1 || (pos & r->mask) + n <= r->mask + 1)
		return tp_ring_at(r, pos);
	for (i = 0; i < n; i++)
		W.scratch[i] = *tp_ring_at(r, pos + i);
	return W.scratch;
}

static void drain(struct tp_hthread *h)
{
	uint64_t head = tp_ring_head(&h->ring), pos = h->ring.rd;

	while (pos != head) {
		unsigned n = 1 + (tp_ring_at(&h->ring, pos)->flags &
				  TP_EV_EXT_MASK);

		if (n > head - pos)
			n = (unsigned)(head - pos);
		if (!W.failed)
			put_record(h, record_at(&h->ring, pos, n));
		h->written++;
		pos += n;
		tp_wr_flush(0);
	}
	tp_ring_release(&h->ring, pos);
}

/* A thread's name for the trace's metadata, once: tprof's CUDA rings
 * name their threads already. */
static void name_thread(const struct tp_hthread *h)
{
	char path[64], name[64] = "";
	struct tp_thread *t;
	unsigned i;
	FILE *f;

	for (t = tp_thread_list(); t; t = t->next)
		if (t->tid == h->tid)
			return;
	for (i = 0; i < W.stats.n; i++)
		if (W.stats.v[i].tid == h->tid)
			return;
	snprintf(path, sizeof(path), "/proc/self/task/%d/comm", (int)h->tid);
	f = fopen(path, "re");
	if (f) {
		if (fgets(name, sizeof(name), f))
			name[strcspn(name, "\n")] = '\0';
		fclose(f);
	}
	if (!name[0])
		strcpy(name, "thread");
	/* tp_thread_stats_add copies a whole 64-byte name */
	tp_thread_stats_add(&W.stats, h->tid, name, h->written, 0);
}

static void retire(struct tp_hthread *h)
{
	H.lost += h->lost;
	H.ring_dropped += tp_ring_dropped(&h->ring);
	tp_sampler_forget(0, h->late_ns, h->handler_ticks);
	tp_ht_unlink(h);
	tp_ht_free(h);
}

/* The threshold in ticks, exact once the writer measured their rate
 * (the library set it roughly at load): ns << 48 / (ns per tick in
 * 16.48). */
static void set_threshold(void)
{
	unsigned __int128 t;

	if (H.threshold_set || !tp_tl.ready || !tp_tl.map.mult ||
	    !(tp_sess.cfg.sources & TP_SRC_OSRT))
		return;
	t = ((unsigned __int128)tp_sess.cfg.osrt_min_ns << TP_CLOCK_SHIFT) /
	    tp_tl.map.mult;
	tp_osrt_set_threshold(t > UINT64_MAX - 1 ? UINT64_MAX - 1 :
			      (uint64_t)t);
	H.threshold_set = 1;
}

/* Each cycle, before the rings are drained (and before the tick rate is
 * known: samples keep their ticks): threads armed and disarmed. */
void tp_wr_host_cycle(void)
{
	if (tp_sess.cfg.sources & (TP_SRC_CPU | TP_SRC_OSRT))
		tp_sampler_cycle();
}

void tp_wr_host_drain(int final)
{
	struct tp_hthread *h, *next;

	if (!(tp_sess.cfg.sources & (TP_SRC_CPU | TP_SRC_OSRT)))
		return;
	if (final) {
		tp_osrt_set_threshold(UINT64_MAX);
		tp_sampler_stop();
	} else {
		set_threshold();
	}
	for (h = tp_ht_list(); h; h = next) {
		next = h->next;
		drain(h);
		if (h->gone) {
			if (h->written)
				name_thread(h);
			retire(h);
		}
	}
}

/* At the end: the live host threads' names. */
void tp_wr_host_thread_stats(void)
{
	struct tp_hthread *h;

	for (h = tp_ht_list(); h; h = h->next)
		if (h->written)
			name_thread(h);
}

static uint64_t handler_ns(uint64_t ticks)
{
	if (!tp_tl.ready)
		return 0;
	return (uint64_t)(((unsigned __int128)ticks * tp_tl.map.mult) >>
			  TP_CLOCK_SHIFT);
}

/* tprof.sampling in the trailer. */
static void put_stats(struct tp_buf *b)
{
	struct tp_sampler_stats st;
	struct tp_hthread *h;
	uint64_t lost = H.lost, dropped = H.ring_dropped;

	if (!(tp_sess.cfg.sources & (TP_SRC_CPU | TP_SRC_OSRT)))
		return;
	tp_sampler_stats(&st);
	for (h = tp_ht_list(); h; h = h->next) {
		lost += h->lost;
		dropped += tp_ring_dropped(&h->ring);
	}
	tp_buf_lit(b, ",\n \"sampling\": {\"cpu\": ");
	tp_buf_cstr(b, tp_sess.cfg.sources & TP_SRC_CPU ? "true" : "false");
	tp_buf_lit(b, ", \"mechanism\": ");
	tp_json_str(b, st.mechanism);
	tp_buf_lit(b, ", \"timer_refused\": ");
	if (st.why_timer[0])
		tp_json_str(b, st.why_timer);
	else
		tp_buf_lit(b, "null");
	tp_buf_lit(b, ", \"perf_event_refused\": ");
	if (st.why_perf[0])
		tp_json_str(b, st.why_perf);
	else
		tp_buf_lit(b, "null");
	tp_buf_lit(b, ", \"signal\": ");
	tp_json_u64(b, (uint64_t)st.signal);
	tp_buf_lit(b, ", \"rate_hz\": ");
	tp_json_u64(b, tp_sess.cfg.sample_hz);
	tp_buf_lit(b, ", \"threads_perf_event\": ");
	tp_json_u64(b, st.threads_perf);
	tp_buf_lit(b, ", \"threads_timer\": ");
	tp_json_u64(b, st.threads_timer);
	tp_buf_lit(b, ", \"threads_failed\": ");
	tp_json_u64(b, st.threads_failed);
	tp_buf_lit(b, ", \"samples\": ");
	tp_json_u64(b, H.samples);
	tp_buf_lit(b, ", \"late_ns\": ");
	tp_json_u64(b, st.late_ns);
	tp_buf_lit(b, ", \"handler_ns\": ");
	tp_json_u64(b, handler_ns(st.handler_ticks));
	tp_buf_lit(b, ",\n  \"osrt\": ");
	tp_buf_cstr(b, tp_sess.cfg.sources & TP_SRC_OSRT ? "true" : "false");
	tp_buf_lit(b, ", \"osrt_min_ns\": ");
	tp_json_u64(b, tp_sess.cfg.osrt_min_ns);
	tp_buf_lit(b, ", \"osrt_calls\": ");
	tp_json_u64(b, H.calls);
	tp_buf_lit(b, ", \"lost\": ");
	tp_json_u64(b, lost + st.lost);
	tp_buf_lit(b, ", \"ring_dropped\": ");
	tp_json_u64(b, dropped);
	tp_buf_char(b, '}');
	tp_psum_sampler(tp_sess.cfg.sources & TP_SRC_CPU ? st.mechanism : NULL,
			tp_sess.cfg.sources & TP_SRC_CPU ?
			tp_sess.cfg.sample_hz : 0);
}

/* A fork child: the counts were the parent's trace's. */
void tp_wr_host_after_fork(void)
{
	memset(&H, 0, sizeof(H));
}

const struct tp_writer_ext tp_wr_host_ext = {
	.put_stats = put_stats,
};
