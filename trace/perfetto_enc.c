/* trace/: the recording core: records, per-thread rings, threads, clock and
 * timeline, configuration, JSON and gzip, file naming; calls no other
 * folder. */
/* The Perfetto protobuf encoder of the typed event model (tev.h): a
 * TracePacket stream (a Trace message's repeated field 1) of TrackEvents
 * on one packet sequence.
 *
 * - Event names, categories, debug-annotation names and string values are
 *   interned per sequence; the first packet clears the incremental state,
 *   every later one needs it. When the intern table is full the state is
 *   cleared again (a new ClockSnapshot, defaults, empty tables), so memory
 *   stays bounded however long the trace.
 * - Timestamps are ns on clock 64, incremental (deltas of a few bytes),
 *   or on clock 65 (the trace clock, absolute) when an event goes back in
 *   time; a ClockSnapshot ties both to REALTIME, the trace's primary clock,
 *   so ranks from different hosts line up.
 * - Tracks get small uuids in order of first use, declared by a
 *   TrackDescriptor before their first event and again when they are
 *   named: processes and threads with ProcessDescriptor/ThreadDescriptor,
 *   GPU devices as named tracks with their streams under them, counter and
 *   async tracks under their process or device.
 * - A complete event is a SLICE_BEGIN followed at once by its SLICE_END.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/pb.h"
#include "trace/perfetto_ids.h"
#include "trace/pf_tab.h"
#include "trace/tev.h"

#define SEQ_ID 1
#define INTERN_MAX (1u << 16)
#define INTERN_BYTES (16u << 20)
#define TRACKS_MAX (1u << 20)

enum { IK_NAME, IK_CAT, IK_ANAME, IK_STR };
static const uint32_t intern_field[] = {
	[IK_NAME] = PF_ID_EVENT_NAMES,
	[IK_CAT] = PF_ID_EVENT_CATEGORIES,
	[IK_ANAME] = PF_ID_DEBUG_ANNOTATION_NAMES,
	[IK_STR] = PF_ID_DEBUG_ANNOTATION_STRINGS,
};

/* Strings longer than this are written inline, not interned. */
#define INTERN_LEN_MAX 4096

/* Track kinds of the track table: the typed model's, plus the parents. */
enum { TK_PROCESS = 16, TK_DEVICE, TK_META };

struct pf_track {
	uint64_t uuid;
	uint64_t parent;
	char *name;
	int64_t sort;
	int has_sort;
};

struct pf_enc {
	struct tp_enc e;
	struct tp_pf_tab intern;
	struct tp_pf_tab tracks;
	struct pf_track *trk;
	uint32_t ntrk, captrk;
	uint32_t next_iid;
	uint64_t inc_ts;	/* clock 64's value after the last packet */
	int64_t base_unix_ns;
	struct tp_buf in[4];	/* its new interned entries, by kind */
	/* The thread or stream of the last event: launches come in runs
	 * on one thread, so most events skip both table lookups. */
	int64_t last_pid, last_tid;
	uint32_t last_kind, last_idx;
	int last_valid;
};

/* A packet: Trace.packet, a length-delimited TracePacket. */
static size_t packet_open(struct pf_enc *p)
{
	size_t m = tp_pb_open(&p->e.out, PF_TRACE_PACKET);

	tp_pb_u64(&p->e.out, PF_PKT_SEQ_ID, SEQ_ID);
	return m;
}

static void clock(struct tp_buf *b, uint32_t id, uint64_t ts, int inc)
{
	size_t m = tp_pb_open(b, PF_CS_CLOCKS);

	tp_pb_u64(b, PF_CLOCK_ID, id);
	tp_pb_u64(b, PF_CLOCK_TIMESTAMP, ts);
	if (inc)
		tp_pb_u64(b, PF_CLOCK_IS_INCREMENTAL, 1);
	tp_pb_close(b, m);
}

/* Starts the sequence over: clock snapshot, then a packet clearing the
 * incremental state and setting clock 64 as the default. */
static void clear_state(struct pf_enc *p)
{
	struct tp_buf *b = &p->e.out;
	uint64_t t = p->inc_ts;
	size_t m, c;

	tp_pf_tab_clear(&p->intern);
	p->next_iid = 1;
	m = packet_open(p);
	c = tp_pb_open(b, PF_PKT_CLOCK_SNAPSHOT);
	clock(b, PF_CLOCK_INCREMENTAL, t, 1);
	clock(b, PF_CLOCK_TRACE, t, 0);
	clock(b, PF_BUILTIN_CLOCK_REALTIME, (uint64_t)p->base_unix_ns + t, 0);
	tp_pb_u64(b, PF_CS_PRIMARY_TRACE_CLOCK, PF_BUILTIN_CLOCK_REALTIME);
	tp_pb_close(b, c);
	tp_pb_close(b, m);

	m = packet_open(p);
	tp_pb_u64(b, PF_PKT_SEQUENCE_FLAGS, PF_SEQ_INCREMENTAL_STATE_CLEARED);
	c = tp_pb_open(b, PF_PKT_DEFAULTS);
	tp_pb_u64(b, PF_DEFAULTS_CLOCK_ID, PF_CLOCK_INCREMENTAL);
	tp_pb_close(b, c);
	tp_pb_close(b, m);
}

/* The iid of s, interning it (into the packet's interned data) if new;
 * 0 when it must be written inline (too long, or the table is full: the
 * state is cleared before the next event). */
static uint64_t intern(struct pf_enc *p, int kind, const char *s, size_t n)
{
	struct tp_pf_slot *sl;
	struct tp_buf *b;
	size_t m;

	if (n > INTERN_LEN_MAX)
		return 0;
	sl = tp_pf_tab_get(&p->intern, kind, 0, 0, s, n);
	if (sl)
		return sl->val;
	sl = tp_pf_tab_put(&p->intern, kind, 0, 0, s, n, p->next_iid);
	if (!sl)
		return 0;
	p->next_iid++;
	b = &p->in[kind];
	m = tp_pb_open(b, intern_field[kind]);
	tp_pb_u64(b, PF_INTERNED_IID, sl->val);
	tp_pb_bytes(b, PF_INTERNED_NAME, s, n);
	tp_pb_close(b, m);
	return sl->val;
}

static void descriptor(struct pf_enc *p, uint32_t kind, const struct pf_track *t,
		       int64_t pid, int64_t tid)
{
	struct tp_buf *b = &p->e.out;
	size_t m = packet_open(p), d = tp_pb_open(b, PF_PKT_TRACK_DESCRIPTOR);
	size_t s;

	tp_pb_u64(b, PF_TD_UUID, t->uuid);
	if (t->parent)
		tp_pb_u64(b, PF_TD_PARENT_UUID, t->parent);
	if (kind == TK_PROCESS) {
		s = tp_pb_open(b, PF_TD_PROCESS);
		tp_pb_i64(b, PF_PD_PID, pid);
		if (t->name)
			tp_pb_bytes(b, PF_PD_PROCESS_NAME, t->name,
				    strlen(t->name));
		if (t->has_sort)
			tp_pb_i64(b, PF_PD_LEGACY_SORT_INDEX, t->sort);
		tp_pb_close(b, s);
	} else if (kind == TP_TEV_THREAD) {
		s = tp_pb_open(b, PF_TD_THREAD);
		tp_pb_i64(b, PF_THD_PID, pid);
		tp_pb_i64(b, PF_THD_TID, tid);
		if (t->name)
			tp_pb_bytes(b, PF_THD_THREAD_NAME, t->name,
				    strlen(t->name));
		tp_pb_close(b, s);
	} else if (t->name) {
		tp_pb_bytes(b, PF_TD_NAME, t->name, strlen(t->name));
	}
	if (kind == TP_TEV_COUNTER) {
		s = tp_pb_open(b, PF_TD_COUNTER);
		tp_pb_close(b, s);
	}
	tp_pb_close(b, d);
	tp_pb_close(b, m);
}

static char *dup_name(const char *s, size_t n)
{
	char *d = malloc(n + 1);

	if (d) {
		memcpy(d, s, n);
		d[n] = 0;
	}
	return d;
}

/* Default names of tracks not named (yet) by metadata. */
static char *default_name(uint32_t kind, int64_t pid, int64_t tid,
			  const char *s, size_t n)
{
	char tmp[64];

	if (kind == TK_DEVICE)
		snprintf(tmp, sizeof(tmp), "GPU %lld", (long long)pid);
	else if (kind == TP_TEV_GPU_STREAM)
		snprintf(tmp, sizeof(tmp), "stream %lld", (long long)tid);
	else if (s)
		return dup_name(s, n);
	else
		return NULL;
	return dup_name(tmp, strlen(tmp));
}

/* The track of (kind, k1, k2, s), declared on first use; NULL when the
 * table is full. */
static struct pf_track *track(struct pf_enc *p, uint32_t kind, int64_t k1,
			      int64_t k2, const char *s, size_t n,
			      uint64_t parent, int64_t pid, int64_t tid)
{
	struct tp_pf_slot *sl = tp_pf_tab_get(&p->tracks, kind, k1, k2, s, n);
	struct pf_track *t, *nt;

	if (sl)
		return &p->trk[sl->val];
	if (p->ntrk == p->captrk) {
		uint32_t cap = p->captrk ? p->captrk * 2 : 64;

		nt = realloc(p->trk, cap * sizeof(*nt));
		if (!nt)
			return NULL;
		p->trk = nt;
		p->captrk = cap;
	}
	if (!tp_pf_tab_put(&p->tracks, kind, k1, k2, s, n, p->ntrk))
		return NULL;
	t = &p->trk[p->ntrk++];
	memset(t, 0, sizeof(*t));
	t->uuid = p->ntrk;	/* 1, 2, ...: short varints */
	t->parent = parent;
	t->name = default_name(kind, pid, tid, s, n);
	descriptor(p, kind, t, pid, tid);
	return t;
}

/* The process or device track that holds ev's track. */
static struct pf_track *parent_of(struct pf_enc *p, const struct tp_tev *ev)
{
	int dev = ev->track.kind == TP_TEV_GPU_STREAM ||
		  (ev->track.kind == TP_TEV_COUNTER && ev->track.tid < 0);
	uint32_t kind = dev ? TK_DEVICE : TK_PROCESS;

	return track(p, kind, ev->track.pid, 0, NULL, 0, 0, ev->track.pid, 0);
}

static struct pf_track *track_of(struct pf_enc *p, const struct tp_tev *ev,
				 const char *cname, size_t cn)
{
	const struct tp_tev_track *k = &ev->track;
	struct pf_track *par, *t;
	int plain = k->kind == TP_TEV_THREAD || k->kind == TP_TEV_GPU_STREAM;

	if (plain && p->last_valid && p->last_kind == k->kind &&
	    p->last_pid == k->pid && p->last_tid == k->tid)
		return &p->trk[p->last_idx];
	par = parent_of(p, ev);
	if (!par)
		return NULL;
	switch (k->kind) {
	case TP_TEV_THREAD:
	case TP_TEV_GPU_STREAM:
		t = track(p, k->kind, k->pid, k->tid, NULL, 0, par->uuid,
			  k->pid, k->tid);
		if (t) {
			p->last_valid = 1;
			p->last_kind = k->kind;
			p->last_pid = k->pid;
			p->last_tid = k->tid;
			p->last_idx = (uint32_t)(t - p->trk);
		}
		return t;
	case TP_TEV_COUNTER:
		return track(p, k->kind, k->pid, 0, cname, cn, par->uuid,
			     k->pid, 0);
	case TP_TEV_ASYNC:
		return track(p, k->kind, k->pid, (int64_t)k->id,
			     ev->cat ? ev->cat : "", ev->cat ? ev->catlen : 0,
			     par->uuid, k->pid, 0);
	}
	return NULL;
}

#include "trace/perfetto_args.h"

static void put_ts(struct pf_enc *p, uint64_t t)
{
	struct tp_buf *b = &p->e.out;

	if (t >= p->inc_ts) {
		tp_pb_u64(b, PF_PKT_TIMESTAMP, t - p->inc_ts);
		p->inc_ts = t;
		return;
	}
	tp_pb_u64(b, PF_PKT_TIMESTAMP, t);
	tp_pb_u64(b, PF_PKT_TIMESTAMP_CLOCK_ID, PF_CLOCK_TRACE);
}

/* A packet holding one TrackEvent, written in place: pkt_start opens
 * the packet and its track_event, the caller writes the event's fields
 * into p->e.out, pkt_finish closes it and adds the interned data the
 * event introduced. The timestamp goes last in a slice's end and first in
 * every other packet (protobuf fields may come in any order): an end's
 * timestamp and the next begin's, bytes that differ between launches of
 * the same kernel, then sit together, one literal run for gzip between
 * longer matches (bench_enc: 11.9 instead of 12.2 B per launch with
 * ISA-L). Nothing else may write to p->e.out in between (declare tracks
 * first). */
struct pkt {
	size_t m, te;
	uint64_t ts;
	int ts_last;
};

static void pkt_start(struct pf_enc *p, struct pkt *k, int64_t ts,
		      int ts_last)
{
	struct tp_buf *b = &p->e.out;

	k->ts = ts < 0 ? 0 : (uint64_t)ts;
	k->ts_last = ts_last;
	k->m = tp_pb_open(b, PF_TRACE_PACKET);
	if (!ts_last)
		put_ts(p, k->ts);
	tp_pb_u64(b, PF_PKT_SEQ_ID, SEQ_ID);
	k->te = tp_pb_open(b, PF_PKT_TRACK_EVENT);
}

static void pkt_finish(struct pf_enc *p, struct pkt *k)
{
	struct tp_buf *b = &p->e.out;
	int i, any = 0;
	size_t d;

	tp_pb_close(b, k->te);
	for (i = 0; i < 4; i++)
		any |= p->in[i].len != 0;
	if (any) {
		d = tp_pb_open(b, PF_PKT_INTERNED_DATA);
		for (i = 0; i < 4; i++) {
			tp_buf_put(b, p->in[i].p, p->in[i].len);
			p->in[i].len = 0;
		}
		tp_pb_close(b, d);
	}
	tp_pb_u64(b, PF_PKT_SEQUENCE_FLAGS, PF_SEQ_NEEDS_INCREMENTAL_STATE);
	if (k->ts_last)
		put_ts(p, k->ts);
	tp_pb_close(b, k->m);
}

static void put_name_cat(struct pf_enc *p, const struct tp_tev *ev)
{
	uint64_t iid;

	if (ev->cat) {
		iid = intern(p, IK_CAT, ev->cat, ev->catlen);
		if (iid)
			tp_pb_u64(&p->e.out, PF_TE_CATEGORY_IIDS, iid);
		else
			tp_pb_bytes(&p->e.out, PF_TE_CATEGORIES, ev->cat,
				    ev->catlen);
	}
	if (!ev->name)
		return;
	iid = intern(p, IK_NAME, ev->name, ev->namelen);
	if (iid)
		tp_pb_u64(&p->e.out, PF_TE_NAME_IID, iid);
	else
		tp_pb_bytes(&p->e.out, PF_TE_NAME, ev->name, ev->namelen);
}

static void simple(struct pf_enc *p, const struct tp_tev *ev,
		   struct pf_track *t, int type, int64_t ts, int full)
{
	struct pkt k;

	pkt_start(p, &k, ts, type == PF_TYPE_SLICE_END);
	tp_pb_u64(&p->e.out, PF_TE_TYPE, (uint64_t)type);
	tp_pb_u64(&p->e.out, PF_TE_TRACK_UUID, t->uuid);
	if (full) {
		put_name_cat(p, ev);
		put_annotations(p, ev->args, ev->nargs);
	}
	if (ev->phase == TP_TEV_FLOW_START)
		tp_pb_fixed64(&p->e.out, PF_TE_FLOW_IDS, ev->flow_id);
	else if (ev->phase == TP_TEV_FLOW_END)
		tp_pb_fixed64(&p->e.out, PF_TE_TERMINATING_FLOW_IDS, ev->flow_id);
	pkt_finish(p, &k);
}

/* One counter track per numeric arg, named "NAME KEY". */
static void counters(struct pf_enc *p, const struct tp_tev *ev)
{
	char name[512];
	struct pkt k;
	uint32_t i;
	int n;

	for (i = 0; i < ev->nargs; i += tp_targ_span(ev->args, ev->nargs, i)) {
		const struct tp_targ *a = &ev->args[i];
		struct pf_track *t;

		if (a->type < TP_TARG_INT || a->type > TP_TARG_DOUBLE)
			continue;
		n = snprintf(name, sizeof(name), "%.*s %.*s",
			     (int)ev->namelen, ev->name ? ev->name : "",
			     (int)a->keylen, a->key);
		if (n < 0 || (size_t)n >= sizeof(name))
			continue;
		t = track_of(p, ev, name, (size_t)n);
		if (!t) {
			p->e.dropped++;
			continue;
		}
		pkt_start(p, &k, ev->ts_ns, 0);
		tp_pb_u64(&p->e.out, PF_TE_TYPE, PF_TYPE_COUNTER);
		tp_pb_u64(&p->e.out, PF_TE_TRACK_UUID, t->uuid);
		if (a->type == TP_TARG_DOUBLE)
			tp_pb_double(&p->e.out, PF_TE_DOUBLE_COUNTER_VALUE, a->v.d);
		else if (a->type == TP_TARG_U128)
			tp_pb_double(&p->e.out, PF_TE_DOUBLE_COUNTER_VALUE,
				     (double)a->v.u128);
		else
			tp_pb_i64(&p->e.out, PF_TE_COUNTER_VALUE, a->v.i);
		pkt_finish(p, &k);
	}
}

/* process_name / thread_name / sort index: the track, declared again. */
static int naming(struct pf_enc *p, const struct tp_tev *ev)
{
	struct pf_track *t;
	uint32_t kind;

	if (ev->phase == TP_TEV_THREAD_NAME) {
		t = track_of(p, ev, NULL, 0);
		kind = ev->track.kind;
	} else {
		t = parent_of(p, ev);
		kind = ev->track.kind == TP_TEV_GPU_STREAM ? TK_DEVICE :
			TK_PROCESS;
	}
	if (!t)
		return 0;
	if (ev->phase == TP_TEV_SORT_INDEX) {
		t->sort = (int64_t)ev->flow_id;
		t->has_sort = 1;
	} else {
		free(t->name);
		t->name = dup_name(ev->name ? ev->name : "", ev->namelen);
	}
	descriptor(p, kind, t, ev->track.pid, ev->track.tid);
	return 0;
}

static int pf_event(struct tp_enc *e, const struct tp_tev *ev)
{
	struct pf_enc *p = (struct pf_enc *)e;
	struct pf_track *t;

	if (p->intern.n + 2 * TP_TARGS_MAX + 2 >= INTERN_MAX ||
	    p->intern.strs.len + (TP_TARGS_MAX + 2) * INTERN_LEN_MAX >=
	    INTERN_BYTES)
		clear_state(p);
	if (ev->phase >= TP_TEV_PROCESS_NAME)
		return naming(p, ev);
	if (ev->phase == TP_TEV_COUNTER_SET) {
		counters(p, ev);
		return e->out.oom ? -1 : 0;
	}
	t = track_of(p, ev, ev->name, ev->name ? ev->namelen : 0);
	if (!t) {
		p->e.dropped++;
		return 0;
	}
	switch (ev->phase) {
	case TP_TEV_COMPLETE:
		simple(p, ev, t, PF_TYPE_SLICE_BEGIN, ev->ts_ns, 1);
		simple(p, ev, t, PF_TYPE_SLICE_END, ev->ts_ns + ev->dur_ns, 0);
		break;
	case TP_TEV_ASYNC_BEGIN:
		simple(p, ev, t, PF_TYPE_SLICE_BEGIN, ev->ts_ns, 1);
		break;
	case TP_TEV_ASYNC_END:
		simple(p, ev, t, PF_TYPE_SLICE_END, ev->ts_ns, 0);
		break;
	default:	/* instants, and flow ends carried by an instant */
		simple(p, ev, t, PF_TYPE_INSTANT, ev->ts_ns, 1);
		break;
	}
	return e->out.oom ? -1 : 0;
}

static int pf_begin(struct tp_enc *e, const struct tp_enc_meta *m)
{
	struct pf_enc *p = (struct pf_enc *)e;

	p->base_unix_ns = m->base_unix_ns;
	p->inc_ts = 0;
	clear_state(p);
	return e->out.oom ? -1 : 0;
}

/* The run's metadata: one instant on a "tprof metadata" track whose
 * debug annotation holds the JSON trailer as legacy JSON. */
static int pf_trailer(struct tp_enc *e, const char *json, size_t len)
{
	struct pf_enc *p = (struct pf_enc *)e;
	struct pf_track *t;
	size_t m, body;
	struct pkt k;

	t = track(p, TK_META, 0, 0, "tprof metadata", 14, 0, 0, 0);
	if (!t)
		return 0;
	pkt_start(p, &k, 0, 0);
	tp_pb_u64(&p->e.out, PF_TE_TYPE, PF_TYPE_INSTANT);
	tp_pb_u64(&p->e.out, PF_TE_TRACK_UUID, t->uuid);
	tp_pb_bytes(&p->e.out, PF_TE_NAME, "tprof metadata", 14);
	m = tp_pb_open(&p->e.out, PF_TE_DEBUG_ANNOTATIONS);
	tp_pb_bytes(&p->e.out, PF_DA_NAME, "trailer", 7);
	/* The pairs, made one JSON object. */
	tp_pb_tag(&p->e.out, PF_DA_LEGACY_JSON, TP_PB_LEN);
	body = len + 2;
	tp_pb_varint(&p->e.out, body);
	tp_buf_char(&p->e.out, '{');
	tp_buf_put(&p->e.out, json, len);
	tp_buf_char(&p->e.out, '}');
	tp_pb_close(&p->e.out, m);
	pkt_finish(p, &k);
	return e->out.oom ? -1 : 0;
}

static int pf_end(struct tp_enc *e)
{
	return e->out.oom ? -1 : 0;
}

static void pf_free(struct tp_enc *e)
{
	struct pf_enc *p = (struct pf_enc *)e;
	uint32_t i;
	int k;

	for (i = 0; i < p->ntrk; i++)
		free(p->trk[i].name);
	free(p->trk);
	tp_pf_tab_free(&p->intern);
	tp_pf_tab_free(&p->tracks);
	for (k = 0; k < 4; k++)
		tp_buf_free(&p->in[k]);
	tp_buf_free(&e->out);
	free(p);
}

static const struct tp_enc_ops pf_ops = {
	.begin = pf_begin,
	.event = pf_event,
	.trailer = pf_trailer,
	.end = pf_end,
	.free = pf_free,
};

struct tp_enc *tp_enc_perfetto_new(void)
{
	struct pf_enc *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->e.ops = &pf_ops;
	if (tp_pf_tab_init(&p->intern, INTERN_MAX, INTERN_BYTES) ||
	    tp_pf_tab_init(&p->tracks, TRACKS_MAX, 64u << 20)) {
		pf_free(&p->e);
		return NULL;
	}
	return &p->e;
}
