/* output/: the background writer: drains the rings into the trace file,
 * with its metadata and trailer; on every folder above. */
/* A hooked call's record as its typed event: name, times, the args its
 * API table's formatter adds, its stack; fed to the summary too. */
#define _GNU_SOURCE

#include "capture/capture.h"
#include "record/corrmap.h"
#include "summary/proc_summary.h"
#include "stacks/stacks.h"
#include "session/timeline.h"
#include "trailer.h"
#include "writer_state.h"

static void put_stack(struct tp_targs *w, const struct tp_event *e,
		      uint64_t dur)
{
	struct tp_stack_stats *st = tp_stack_stats(e->stack);
	const char *json;
	size_t len;

	json = tp_stack_json(e->stack, &len);
	if (!json || !st)
		return;
	tp_targs_json(w, "stack", json, len);
	st->calls++;
	st->total_ns += dur;
	if (dur >= st->max_ns) {
		st->max_ns = dur;
		st->max_api = e->api;
	}
}

/* The lengths of an API's name (returned) and category, measured once. */
static size_t api_len(uint16_t id, const struct tp_api *api, size_t *catlen)
{
	static uint16_t name_len[TP_API_MAX_TABLES << TP_API_TABLE_SHIFT];
	static uint16_t cat_len[TP_API_MAX_TABLES << TP_API_TABLE_SHIFT];

	if (id >= TP_API_MAX_TABLES << TP_API_TABLE_SHIFT) {
		*catlen = strlen(api->cat);
		return strlen(api->name);
	}
	if (!name_len[id]) {
		name_len[id] = (uint16_t)strlen(api->name);
		cat_len[id] = (uint16_t)strlen(api->cat);
	}
	*catlen = cat_len[id];
	return name_len[id];
}

/* A hooked call's record as its X event: the hook's table says what its
 * args are (keys and typed values); the encoder writes them. */
void tp_wr_put_event(struct tp_buf *b, struct tp_thread *t,
		      const struct tp_event *e)
{
	const struct tp_api *api = tp_api_get(e->api);

	if (api && api->emit) {
		W.events += api->emit(b, t, e);
		return;
	}
	tp_wr_put_call(b, t->tid, e);
}

/* The same for a call of thread tid whose table writes no events of its
 * own (a blocking OS call). */
void tp_wr_put_call(struct tp_buf *b, pid_t tid, const struct tp_event *e)
{
	const struct tp_api *api = tp_api_get(e->api);
	uint64_t s = tp_clock_to_unix(&tp_tl.map, e->start);
	uint64_t f = tp_clock_to_unix(&tp_tl.map, e->end);
	int64_t ts = (int64_t)(s - (uint64_t)tp_sess.base_ns);
	int64_t dur = f > s ? (int64_t)(f - s) : 0;
	struct tp_targs *w = &W.args;
	/* What every record's event shares is set once (a memset of the
	 * whole event per record was a third of drain's time); only the
	 * writer thread writes events, as with W.args. */
	static struct tp_tev ev = {
		.track.kind = TP_TEV_THREAD,
		.phase = TP_TEV_COMPLETE,
		.static_names = 1,	/* the API tables' */
		.static_keys = 1,	/* the formatters' literals */
	};

	if (!tp_capture_kept(e->start)) {
		/* Its GPU work goes with it. */
		if (e->corr)
			tp_corr_note(e->corr, (uint32_t)tid, ts, 0);
		return;
	}
	if (!api)
		return;
	ev.track.pid = tp_sess.pid;
	ev.track.tid = tid;
	ev.name = api->name;
	ev.namelen = api_len(e->api, api, &ev.catlen);
	ev.cat = api->cat;
	ev.ts_ns = ts;
	ev.dur_ns = dur;
	tp_targs_reset(w);
	/* JSON: each arg is appended as the formatter writes it. */
	if (!tp_tev_sink)
		tp_tev_json_open(b, &ev, w);
	tp_targs_int(w, "ret", e->ret);
	if (e->corr) {
		tp_targs_uint(w, "correlation", e->corr);
		tp_corr_note(e->corr, (uint32_t)tid, ts, 1);
	}
	/* Perfetto: the arrow to its GPU work starts on the slice itself
	 * (JSON writes its "s" when the GPU op comes: cupti/convert.c). */
	ev.flow_out = tp_tev_sink ? e->corr : 0;
	/* What the API's formatter adds repeats from call to call. */
	ev.stable_from = w->n;
	if (api->args)
		api->args(w, e);
	ev.stable_to = w->n;
	if (e->stack)
		put_stack(w, e, (uint64_t)dur);
	ev.args = w->a;
	ev.nargs = w->n;
	if (!tp_tev_sink)
		tp_tev_json_close(b, &ev, w);
	else
		tp_tev_put(b, &ev);
	if (!b->oom)
		tp_psum_api_span(api->cat, api->name, tp_sess.pid, tid, ts,
				 dur, e->corr, w->a, w->n);
	W.events++;
}
