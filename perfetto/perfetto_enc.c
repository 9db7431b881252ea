/* perfetto/: the Perfetto protobuf encoder of typed events: packets,
 * interning, tracks, annotations; on encode/ and below. */
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
 * - A complete event is a SLICE_BEGIN followed at once by its SLICE_END;
 *   with hold_complete, complete events are held and written in start
 *   order, longest first at equal starts (perfetto_hold.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfetto_int.h"

static void clock(struct tp_buf *b, uint32_t id, uint64_t ts, int inc)
{
	size_t m = tp_pb_open(b, PF_CS_CLOCKS);

	tp_pb_u64(b, PF_CLOCK_ID, id);
	tp_pb_u64(b, PF_CLOCK_TIMESTAMP, ts);
	if (inc)
		tp_pb_u64(b, PF_CLOCK_IS_INCREMENTAL, 1);
	tp_pb_close(b, m);
}

/* TracePacketDefaults replace the sequence's earlier ones whole
 * (PacketSequenceStateGeneration::OnNewTracePacketDefaults), so the
 * clock is stated again. */
static void put_defaults(struct pf_enc *p, uint64_t track)
{
	struct tp_buf *b = &p->e.out;
	size_t d = tp_pb_open(b, PF_PKT_DEFAULTS), te;

	/* absolute_ts: every packet's time on the trace clock, without a
	 * clock id of its own. */
	tp_pb_u64(b, PF_DEFAULTS_CLOCK_ID, p->abs_ts ? PF_CLOCK_TRACE :
		  PF_CLOCK_INCREMENTAL);
	if (track) {
		te = tp_pb_open(b, PF_DEFAULTS_TRACK_EVENT);
		tp_pb_u64(b, PF_TED_TRACK_UUID, track);
		tp_pb_close(b, te);
	}
	tp_pb_close(b, d);
}

/* Starts the sequence over: clock snapshot, then a packet clearing the
 * incremental state and setting clock 64 as the default, then (the
 * library's trace) a snapshot relating BOOTTIME to REALTIME; without
 * BOOTTIME the first snapshot's primary clock is TRACE_FILE. */
static void clear_state(struct pf_enc *p)
{
	struct tp_buf *b = &p->e.out;
	uint64_t t = p->inc_ts;
	size_t m, c;

	tp_pf_tab_clear(&p->intern);
	p->gen++;	/* the address cache is stale */
	p->next_iid = 1;
	m = packet_open(p);
	c = tp_pb_open(b, PF_PKT_CLOCK_SNAPSHOT);
	clock(b, PF_CLOCK_INCREMENTAL, t, 1);
	clock(b, PF_CLOCK_TRACE, t, 0);
	clock(b, PF_BUILTIN_CLOCK_REALTIME, (uint64_t)p->base_unix_ns + t, 0);
	/* Without a BOOTTIME reading (`tprof convert`, `merge`: a JSON trace
	 * never recorded one; ranks may come from several hosts) the trace
	 * clock is the file's own timeline (TRACE_FILE, equal to REALTIME
	 * here): v58 bridges BOOTTIME, its fallback for proto traces, to a
	 * REALTIME trace clock only through a snapshot and logs
	 * clock_sync_unrelatable_clock_domains without one, while a private
	 * trace clock is one it relates itself (clock_tracker.cc:
	 * BridgeToTraceTime). No BOOTTIME value is made up. */
	if (!p->has_boottime)
		clock(b, PF_BUILTIN_CLOCK_TRACE_FILE,
		      (uint64_t)p->base_unix_ns + t, 0);
	tp_pb_u64(b, PF_CS_PRIMARY_TRACE_CLOCK, p->has_boottime ?
		  PF_BUILTIN_CLOCK_REALTIME : PF_BUILTIN_CLOCK_TRACE_FILE);
	tp_pb_close(b, c);
	tp_pb_close(b, m);

	m = packet_open(p);
	tp_pb_u64(b, PF_PKT_SEQUENCE_FLAGS, PF_SEQ_INCREMENTAL_STATE_CLEARED);
	put_defaults(p, 0);
	tp_pb_close(b, m);
	p->def_track = 0;	/* the clear dropped the importer's defaults */
	if (!p->has_boottime)
		return;
	/* REALTIME and BOOTTIME at one instant (tev.h: tp_enc_meta); no
	 * incremental state needed. */
	m = packet_open(p);
	c = tp_pb_open(b, PF_PKT_CLOCK_SNAPSHOT);
	clock(b, PF_BUILTIN_CLOCK_REALTIME, (uint64_t)p->pair_realtime_ns, 0);
	clock(b, PF_BUILTIN_CLOCK_BOOTTIME, (uint64_t)p->pair_boottime_ns, 0);
	tp_pb_close(b, c);
	tp_pb_close(b, m);
}

static void put_ts(struct pf_enc *p, uint64_t t)
{
	struct tp_buf *b = &p->e.out;

	if (p->abs_ts) {
		tp_pb_u64(b, PF_PKT_TIMESTAMP, t);
		return;
	}
	if (t >= p->inc_ts) {
		tp_pb_u64(b, PF_PKT_TIMESTAMP, t - p->inc_ts);
		p->inc_ts = t;
		return;
	}
	tp_pb_u64(b, PF_PKT_TIMESTAMP, t);
	tp_pb_u64(b, PF_PKT_TIMESTAMP_CLOCK_ID, PF_CLOCK_TRACE);
}

/* A packet holding one TrackEvent, written in place: pkt_start opens
 * the packet, writes its sequence id and flags and opens its
 * track_event; the caller writes the event's fields into p->e.out
 * (pkt_track first); pkt_finish closes the event and adds the interned
 * data it introduced, new defaults, and the timestamp last (protobuf
 * fields may come in any order; ProtoTraceReader::ParsePacket reads a
 * packet's defaults and interned data before its timestamp and event
 * whatever their place). The timestamps, the bytes that differ between
 * launches of the same kernel, then end their packets: gzip sees every
 * launch as a run of literals (end, then begin delta) between two
 * longer matches, and fewer breaks in them (bench_enc with ISA-L: 11.2
 * B per launch with these orders, 11.4 with the sequence id after the
 * event, 12.0 with the flags last, 11.9 with a begin's timestamp first).
 * Nothing else may write to p->e.out in between (declare tracks first). */
struct pkt {
	size_t m, te;
	uint64_t ts;
	uint64_t set_def;	/* a new default track for this packet on */
};

static inline void pkt_ts(struct pf_enc *p, struct pkt *k, int64_t ts)
{
	k->ts = ts < 0 ? 0 : (uint64_t)ts;
	k->set_def = 0;
	if (!p->seen_ts || ts < p->min_ts) {
		p->min_ts = ts;
		p->seen_ts = 1;
	}
}

static void pkt_start(struct pf_enc *p, struct pkt *k, int64_t ts)
{
	struct tp_buf *b = &p->e.out;
	unsigned char *q;

	pkt_ts(p, k, ts);
	/* A recovered trace's later writers have sequence ids past a byte
	 * (SEQ_ID_WRITER): their heads are written field by field. */
	if (p->seq_id > 127) {
		k->m = packet_open(p);
		tp_pb_u64(b, PF_PKT_SEQUENCE_FLAGS,
			  PF_SEQ_NEEDS_INCREMENTAL_STATE);
		k->te = tp_pb_open(b, PF_PKT_TRACK_EVENT);
		return;
	}
	if (tp_buf_reserve(b, 8)) {
		k->m = k->te = 0;	/* out of memory: pkt_finish does nothing */
		return;
	}
	/* One-byte tags and values, written in place: Trace.packet (length
	 * patched by pkt_finish), trusted_packet_sequence_id, sequence_flags,
	 * track_event (length patched too). */
	q = (unsigned char *)b->p + b->len;
	q[0] = PF_TRACE_PACKET << 3 | TP_PB_LEN;
	q[1] = 0;
	q[2] = PF_PKT_SEQ_ID << 3 | TP_PB_VARINT;
	q[3] = (unsigned char)p->seq_id;
	q[4] = PF_PKT_SEQUENCE_FLAGS << 3 | TP_PB_VARINT;
	q[5] = PF_SEQ_NEEDS_INCREMENTAL_STATE;
	q[6] = PF_PKT_TRACK_EVENT << 3 | TP_PB_LEN;
	q[7] = 0;
	k->m = b->len + 2;
	k->te = b->len + 8;
	b->len += 8;
}

/* pkt_start and the event's type, its first field, in one step (the
 * type is under 128: one byte). */
static void pkt_start_type(struct pf_enc *p, struct pkt *k, int64_t ts,
			   int type)
{
	struct tp_buf *b = &p->e.out;
	unsigned char *q;

	if (p->seq_id > 127 || tp_buf_reserve(b, 10)) {
		pkt_start(p, k, ts);
		tp_pb_u64(b, PF_TE_TYPE, (uint64_t)type);
		return;
	}
	pkt_ts(p, k, ts);
	q = (unsigned char *)b->p + b->len;
	q[0] = PF_TRACE_PACKET << 3 | TP_PB_LEN;
	q[1] = 0;
	q[2] = PF_PKT_SEQ_ID << 3 | TP_PB_VARINT;
	q[3] = (unsigned char)p->seq_id;
	q[4] = PF_PKT_SEQUENCE_FLAGS << 3 | TP_PB_VARINT;
	q[5] = PF_SEQ_NEEDS_INCREMENTAL_STATE;
	q[6] = PF_PKT_TRACK_EVENT << 3 | TP_PB_LEN;
	q[7] = 0;
	q[8] = PF_TE_TYPE << 3 | TP_PB_VARINT;
	q[9] = (unsigned char)type;
	k->m = b->len + 2;
	k->te = b->len + 8;
	b->len += 10;
}

/* The event's track: omitted when it is the sequence's default track
 * (TrackEventDefaults.track_uuid, which the importer uses for an event
 * without track_uuid: TrackEventTokenizer::TokenizeTrackEventPacket for
 * counters, TrackEventEventImporter::ParseInitialTrackAssociation for the
 * rest). A track gets to be the default at the first packet of the second
 * event in a row on it: a lone event on another track keeps its
 * track_uuid and leaves the default alone, so interleaved tracks never
 * pay for defaults packets they do not use. first: this packet is its
 * event's first. Not with absolute timestamps (the flight recorder's
 * window): a trim may drop the packet that set a default, so every
 * packet there names its track. */
static void pkt_track(struct pf_enc *p, struct pkt *k,
		      const struct pf_track *t, int first)
{
	uint64_t u = t->uuid;

	if (p->abs_ts) {
		tp_pb_u64(&p->e.out, PF_TE_TRACK_UUID, u);
		return;
	}
	if (first) {
		if (u != p->def_track && u == p->prev_track) {
			k->set_def = u;
			p->def_track = u;
		}
		p->prev_track = u;
	}
	if (u != p->def_track)
		tp_pb_u64(&p->e.out, PF_TE_TRACK_UUID, u);
}

static void pkt_finish_any(struct pf_enc *p, struct pkt *k)
{
	struct tp_buf *b = &p->e.out;
	int i;
	size_t d;

	p->in_any = 0;
	if (!k->m) {
		for (i = 0; i < 4; i++)
			p->in[i].len = 0;
		return;
	}
	tp_pb_close(b, k->te);
	if (p->in[0].len || p->in[1].len || p->in[2].len || p->in[3].len) {
		d = tp_pb_open(b, PF_PKT_INTERNED_DATA);
		for (i = 0; i < 4; i++) {
			/* An empty table may have no buffer yet (NULL):
			 * memcpy from NULL is undefined even for 0 bytes. */
			if (p->in[i].len)
				tp_buf_put(b, p->in[i].p, p->in[i].len);
			p->in[i].len = 0;
		}
		tp_pb_close(b, d);
	}
	if (k->set_def)
		put_defaults(p, k->set_def);
	put_ts(p, k->ts);
	tp_pb_close(b, k->m);
}

/* Most packets: nothing newly interned, no new defaults, an event under
 * 128 bytes and a timestamp after the last; the event's length patched,
 * the timestamp's delta written and the packet's length patched with
 * one check of room. The rest: pkt_finish_any. */
static void pkt_finish(struct pf_enc *p, struct pkt *k)
{
	struct tp_buf *b = &p->e.out;
	unsigned char *q;
	size_t body;

	if (__builtin_expect(p->in_any || k->set_def || p->abs_ts || !k->m ||
			     b->oom || k->ts < p->inc_ts ||
			     b->len - k->te >= 128 ||
			     tp_buf_reserve(b, 20), 0)) {
		pkt_finish_any(p, k);
		return;
	}
	q = (unsigned char *)b->p;
	q[k->te - 1] = (unsigned char)(b->len - k->te);
	q = tp_pb_u64_at(q + b->len, PF_PKT_TIMESTAMP, k->ts - p->inc_ts);
	p->inc_ts = k->ts;
	b->len = (size_t)(q - (unsigned char *)b->p);
	body = b->len - k->m;
	if (body < 128)
		b->p[k->m - 1] = (char)body;
	else
		tp_pb_close_long(b, k->m);
}

static void put_name_cat(struct pf_enc *p, const struct tp_tev *ev)
{
	uint64_t iid;

	if (ev->cat) {
		iid = pf_intern_at(p, IK_CAT, ev->cat, ev->catlen,
				   ev->static_names);
		if (iid)
			tp_pb_u64(&p->e.out, PF_TE_CATEGORY_IIDS, iid);
		else
			tp_pb_bytes(&p->e.out, PF_TE_CATEGORIES, ev->cat,
				    ev->catlen);
	}
	if (!ev->name)
		return;
	iid = pf_intern_at(p, IK_NAME, ev->name, ev->namelen,
			   ev->static_names);
	if (iid)
		tp_pb_u64(&p->e.out, PF_TE_NAME_IID, iid);
	else
		tp_pb_bytes(&p->e.out, PF_TE_NAME, ev->name, ev->namelen);
}

/* The args, a stable run among them through its cache. */
static void put_args(struct pf_enc *p, const struct tp_tev *ev)
{
	uint32_t from = ev->stable_from, to = ev->stable_to;

	p->static_keys = ev->static_keys;
	if (!ev->static_keys || from >= to || to > ev->nargs) {
		pf_put_annotations(p, ev->args, ev->nargs);
		return;
	}
	if (from)
		pf_put_annotations(p, ev->args, from);
	pf_put_stable(p, ev->args + from, to - from);
	if (to < ev->nargs)
		pf_put_annotations(p, ev->args + to, ev->nargs - to);
}

static void simple(struct pf_enc *p, const struct tp_tev *ev,
		   struct pf_track *t, int type, int64_t ts, int full)
{
	struct pkt k;

	pkt_start_type(p, &k, ts, type);
	/* A complete event's end is the second packet of its event. */
	pkt_track(p, &k, t, ev->phase != TP_TEV_COMPLETE ||
		  type != PF_TYPE_SLICE_END);
	if (full) {
		put_name_cat(p, ev);
		put_args(p, ev);
	}
	if (ev->phase == TP_TEV_FLOW_START)
		tp_pb_fixed64(&p->e.out, PF_TE_FLOW_IDS, ev->flow_id);
	else if (ev->phase == TP_TEV_FLOW_END)
		tp_pb_fixed64(&p->e.out, PF_TE_TERMINATING_FLOW_IDS, ev->flow_id);
	/* On the slice's begin: the importer binds a flow to the slice the
	 * event opens (MaybeParseTrackEventFlows). An id begun and never
	 * ended is left aside by it, no error (FlowTracker::Begin). */
	if (full && ev->flow_out)
		tp_pb_fixed64(&p->e.out, PF_TE_FLOW_IDS, ev->flow_out);
	if (full && ev->flow_in)
		tp_pb_fixed64(&p->e.out, PF_TE_TERMINATING_FLOW_IDS,
			      ev->flow_in);
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
		t = pf_track_of(p, ev, name, (size_t)n);
		if (!t) {
			p->e.dropped++;
			continue;
		}
		pkt_start_type(p, &k, ev->ts_ns, PF_TYPE_COUNTER);
		pkt_track(p, &k, t, 1);
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

	/* Perfetto orders a device's streams itself. */
	if (ev->phase == TP_TEV_THREAD_SORT_INDEX)
		return 0;
	if (ev->phase == TP_TEV_THREAD_NAME) {
		t = pf_track_of(p, ev, NULL, 0);
		kind = ev->track.kind;
	} else {
		t = pf_parent_of(p, ev);
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
		t->name = pf_dup_name(ev->name ? ev->name : "", ev->namelen);
	}
	pf_descriptor(p, kind, t, ev->track.pid, ev->track.tid);
	return 0;
}

/* Room in the intern table for one more event, or the state starts
 * over. */
static void intern_room(struct pf_enc *p)
{
	if (p->intern.n + 2 * TP_TARGS_MAX + 2 >= INTERN_MAX ||
	    p->intern.strs.len + (TP_TARGS_MAX + 2) * INTERN_LEN_MAX >=
	    INTERN_BYTES)
		clear_state(p);
}

/* An event on a slice track: a complete event (its SLICE_BEGIN and
 * SLICE_END), an instant (a flow's event carried by one), an async begin
 * or end. */
static void pf_sliced(struct pf_enc *p, const struct tp_tev *ev)
{
	struct pf_track *t;

	intern_room(p);
	t = pf_track_of(p, ev, ev->name, ev->name ? ev->namelen : 0);
	if (!t) {
		p->e.dropped++;
		return;
	}
	if (p->hold)
		t = pf_lane_of(p, t, ev);
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
}

/* Held (perfetto_hold.c): complete events and the instants that share
 * their tracks, so that an instant at a slice's start (a flow's end on
 * its kernel) is read after the slice opens and nests in it. */
static int held_kind(const struct tp_tev *ev)
{
	return ev->phase == TP_TEV_COMPLETE || ev->phase == TP_TEV_INSTANT ||
	       ev->phase == TP_TEV_FLOW_START || ev->phase == TP_TEV_FLOW_END;
}

static int pf_event(struct tp_enc *e, const struct tp_tev *ev)
{
	struct pf_enc *p = (struct pf_enc *)e;

	if (ev->phase >= TP_TEV_PROCESS_NAME) {
		intern_room(p);
		return naming(p, ev);
	}
	if (ev->phase == TP_TEV_COUNTER_SET) {
		intern_room(p);
		counters(p, ev);
		return e->out.oom ? -1 : 0;
	}
	if (!p->hold || !held_kind(ev) || pf_hold(p, ev))
		pf_sliced(p, ev);
	return e->out.oom ? -1 : 0;
}

static int pf_begin(struct tp_enc *e, const struct tp_enc_meta *m)
{
	struct pf_enc *p = (struct pf_enc *)e;

	p->base_unix_ns = m->base_unix_ns;
	p->has_boottime = m->has_boottime;
	p->trailer_ts = m->trailer_ts_ns;
	p->seen_ts = 0;
	p->pair_realtime_ns = m->pair_realtime_ns;
	p->pair_boottime_ns = m->pair_boottime_ns;
	p->inc_ts = 0;
	p->seq_id = m->writer ? SEQ_ID_WRITER(m->writer) : SEQ_ID;
	p->uuid_base = m->writer ? UUID_BASE_WRITER(m->writer) : 0;
	p->abs_ts = m->absolute_ts;
	p->hold = m->hold_complete;
	clear_state(p);
	return e->out.oom ? -1 : 0;
}

/* The run's metadata: one instant on a "tprof metadata" track whose
 * debug annotation holds the JSON trailer as legacy JSON. */
static int pf_trailer(struct tp_enc *e, const char *json, size_t len)
{
	struct pf_enc *p = (struct pf_enc *)e;
	struct tp_buf typed = { 0 };
	struct pf_track *t;
	size_t m, body, start;
	struct pkt k;

	pf_hold_drain(p);	/* the events before the run's metadata */
	t = pf_track_get(p, TK_META, 0, 0, "tprof metadata", 14, 0, 0, 0);
	if (!t)
		return 0;
	/* At the first event, not at baseTimeNanoseconds (floored to
	 * 10^14 ns: maybe before boot, where Perfetto v58, which relates
	 * BOOTTIME to the trace, drops an event as "invalid timestamp"). */
	pkt_start(p, &k, p->seen_ts ? p->min_ts : p->trailer_ts);
	tp_pb_u64(&p->e.out, PF_TE_TYPE, PF_TYPE_INSTANT);
	pkt_track(p, &k, t, 1);
	tp_pb_bytes(&p->e.out, PF_TE_NAME, "tprof metadata", 14);
	start = p->e.out.len;
	m = tp_pb_open(&p->e.out, PF_TE_DEBUG_ANNOTATIONS);
	tp_pb_bytes(&p->e.out, PF_DA_NAME, "trailer", 7);
	/* The pairs, made one JSON object: typed (perfetto_json.c), or
	 * kept as legacy JSON if that fails. */
	typed.len = 0;
	tp_buf_char(&typed, '{');
	tp_buf_put(&typed, json, len);
	tp_buf_char(&typed, '}');
	body = typed.len;
	if (!typed.oom && tp_pf_json_annotation(&p->e.out, typed.p,
						 typed.len) < 0) {
		p->e.out.len = start;
		p->e.out.oom = 0;
		m = tp_pb_open(&p->e.out, PF_TE_DEBUG_ANNOTATIONS);
		tp_pb_bytes(&p->e.out, PF_DA_NAME, "trailer", 7);
		tp_pb_bytes(&p->e.out, PF_DA_LEGACY_JSON, typed.p, body);
	}
	tp_buf_free(&typed);
	tp_pb_close(&p->e.out, m);
	pkt_finish(p, &k);
	return e->out.oom ? -1 : 0;
}

static int pf_end(struct tp_enc *e)
{
	pf_hold_drain((struct pf_enc *)e);
	return e->out.oom ? -1 : 0;
}

static void pf_free(struct tp_enc *e)
{
	struct pf_enc *p = (struct pf_enc *)e;
	uint32_t i;
	int k;

	pf_hold_free(p);
	free(p->arun);
	free(p->ahist);
	for (i = 0; i < p->ntrk; i++) {
		free(p->trk[i].name);
		pf_lanes_free(&p->trk[i]);
	}
	free(p->trk);
	tp_pf_tab_free(&p->intern);
	tp_pf_tab_free(&p->tracks);
	for (k = 0; k < 4; k++)
		tp_buf_free(&p->in[k]);
	tp_buf_free(&e->out);
	free(p);
}

void tp_enc_perfetto_restart(struct tp_enc *e, struct tp_buf *b)
{
	struct tp_buf own = e->out;

	e->out = *b;
	clear_state((struct pf_enc *)e);
	*b = e->out;
	e->out = own;
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
	p->write_held = pf_sliced;
	p->seq_id = SEQ_ID;
	if (tp_pf_tab_init(&p->intern, INTERN_MAX, INTERN_BYTES) ||
	    tp_pf_tab_init(&p->tracks, TRACKS_MAX, 64u << 20)) {
		pf_free(&p->e);
		return NULL;
	}
	return &p->e;
}
