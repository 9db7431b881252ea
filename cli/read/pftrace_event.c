/* The Perfetto reader's TrackEvents (pftrace_int.h) as JSON events:
 *
 * - SLICE_BEGIN/SLICE_END on a thread-like track: one "X" event when the
 *   slice ends, with the begin's name, categories and args and the end's
 *   args added (trace_processor merges them the same way); an END with no
 *   slice open is left out and counted, a BEGIN never ended becomes a
 *   "B" event at the end of the trace; an END before its BEGIN gives a
 *   negative dur, which `tprof check` reports;
 * - on an async track, "b" at the begin and "e" at the end;
 * - INSTANT: "i"; an instant that carries flow ids is the flow's events
 *   only (tprof writes JSON's "s"/"f" that way);
 * - flow_ids: "s" for an id first seen, "t" for a later one,
 *   terminating_flow_ids "f" with "bp":"e" (the enclosing slice, as
 *   Perfetto binds them); on a slice, a start is written only with its
 *   end or step, named "ac2g" when it ends on a GPU stream, else "flow"
 *   (slice_flows());
 * - COUNTER (and extra counter values) on a counter track: "C" named
 *   after the track, the value under its last word ("GPU memory
 *   allocated" is {"name": "GPU memory", "args": {"allocated": v}}) or
 *   "value" when the name has one word;
 * - the "tprof metadata" instant's "trailer" annotation: the JSON
 *   trailer's members (distributedInfo, deviceProperties, tprof), written
 *   at the end.
 *
 * Categories are joined with ","; an event without any has no "cat".
 * Calls pftrace_tracks.c and
 * pftrace_args.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pftrace_int.h"
#include "encode/flow_ids.h"

#define LIST_MAX 64

struct tev {
	int type;
	int has_track;
	uint64_t track;
	int has_name;
	const uint8_t *name;
	size_t namelen;
	uint64_t name_iid;
	int has_cval, cdouble;
	int64_t cval;
	double dval;
	uint64_t flows[LIST_MAX], terms[LIST_MAX];
	uint32_t nflows, nterms;
	uint64_t xtracks[LIST_MAX], xdtracks[LIST_MAX];
	int64_t xvals[LIST_MAX];
	double xdvals[LIST_MAX];
	uint32_t nxt, nxdt, nxv, nxdv;
};

/* A repeated number, packed or not; fixed says it is fixed64. */
static int rep(struct tp_pfr *r, const struct pbr_field *f, uint64_t *a,
	       uint32_t *n, int fixed)
{
	struct pbr c = f->sub;
	uint64_t v;
	int i;

	if (f->wt != PBR_LEN) {
		if (*n < LIST_MAX)
			a[(*n)++] = f->v;
		return 0;
	}
	while (c.p < c.end) {
		if (fixed) {
			if (c.end - c.p < 8)
				return pfr_fail(r, c.p, "packed fixed64 "
						"field not a multiple of 8");
			for (v = 0, i = 7; i >= 0; i--)
				v = v << 8 | c.p[i];
			c.p += 8;
		} else if (pbr_varint(&c, &v)) {
			return pfr_fail(r, c.p, "truncated packed varint");
		}
		if (*n < LIST_MAX)
			a[(*n)++] = v;
	}
	return 0;
}

static int scan(struct tp_pfr *r, struct pbr c, struct tev *e)
{
	struct pbr_field f;
	const char *why;
	uint64_t tmp[LIST_MAX];
	uint32_t i, nt;
	int rc = 0;

	memset(e, 0, sizeof(*e));
	while (!rc && (rc = pbr_next(&c, &f, &why)) > 0) {
		rc = 0;
		switch (f.num) {
		case 9: e->type = (int)f.v; break;
		case 11: e->has_track = 1; e->track = f.v; break;
		case 10: e->has_name = 1; e->name_iid = f.v; e->name = NULL;
			break;
		case 23:
			if (f.wt != PBR_LEN)
				break;
			e->has_name = 1;
			e->name = f.sub.p;
			e->namelen = (size_t)(f.sub.end - f.sub.p);
			break;
		case 30: e->has_cval = 1; e->cdouble = 0;
			e->cval = (int64_t)f.v; break;
		case 44: e->has_cval = 1; e->cdouble = 1;
			memcpy(&e->dval, &f.v, sizeof(e->dval)); break;
		case 47: case 36:
			rc = rep(r, &f, e->flows, &e->nflows, f.num == 47);
			break;
		case 48: case 42:
			rc = rep(r, &f, e->terms, &e->nterms, f.num == 48);
			break;
		case 31: rc = rep(r, &f, e->xtracks, &e->nxt, 0); break;
		case 45: rc = rep(r, &f, e->xdtracks, &e->nxdt, 0); break;
		case 12:
			rc = rep(r, &f, (uint64_t *)e->xvals, &e->nxv, 0);
			break;
		case 46:
			nt = 0;
			rc = rep(r, &f, tmp, &nt, 1);
			for (i = 0; i < nt && e->nxdv < LIST_MAX; i++)
				memcpy(&e->xdvals[e->nxdv++], &tmp[i], 8);
			break;
		}
	}
	if (rc < 0 && !r->failed)
		return pfr_fail(r, c.p, "TrackEvent: %s", why);
	return rc < 0 ? -1 : 0;
}

/* "name":..,"cat":.. into r->head. */
static void head(struct tp_pfr *r, struct pfr_seq *s, struct pbr c,
		 const struct tev *e)
{
	struct tp_buf *b = &r->head;
	struct pbr_field f;
	const char *why, *str;
	size_t len;
	int ncat = 0;

	b->len = 0;
	tp_buf_lit(b, "\"name\":");
	if (e->name)
		tp_json_strn(b, (const char *)e->name, e->namelen);
	else if (e->has_name && !pfr_intern_get(r, s, PI_NAME, e->name_iid,
						&str, &len))
		tp_json_strn(b, str, len);
	else
		tp_buf_lit(b, "\"\"");
	while (pbr_next(&c, &f, &why) > 0) {
		if (f.num == 22 && f.wt == PBR_LEN) {
			str = (const char *)f.sub.p;
			len = (size_t)(f.sub.end - f.sub.p);
		} else if (f.num == 3 && f.wt == PBR_VARINT) {
			pfr_intern_get(r, s, PI_CAT, f.v, &str, &len);
		} else {
			continue;
		}
		tp_buf_cstr(b, ncat++ ? "," : ",\"cat\":\"");
		tp_json_escape(b, str, len);
	}
	if (ncat)
		tp_buf_char(b, '"');
}

static void where(struct tp_pfr *r, const struct pfr_track *t, int64_t ts)
{
	struct tp_buf *b = &r->out;

	tp_buf_lit(b, ",\"pid\":");
	tp_json_i64(b, t->jpid);
	tp_buf_lit(b, ",\"tid\":");
	tp_json_i64(b, t->role == PR_THREAD ? t->jtid : 0);
	tp_buf_lit(b, ",\"ts\":");
	tp_json_us(b, pfr_json_ts(r, ts));
}

static void args_out(struct tp_pfr *r, const char *a, size_t n,
		     const char *a2, size_t n2)
{
	struct tp_buf *b = &r->out;

	if (!n && !n2)
		return;
	tp_buf_lit(b, ",\"args\":{");
	pfr_put(b, a, n);
	if (n && n2)
		tp_buf_char(b, ',');
	pfr_put(b, a2, n2);
	tp_buf_char(b, '}');
}

/* One event of phase ph with r->head and r->scratch's args. */
static void simple(struct tp_pfr *r, const struct pfr_track *t, char ph,
		   int64_t ts, const char *extra)
{
	struct tp_buf *b = &r->out;

	pfr_begin_event(r);
	tp_buf_lit(b, "{\"ph\":\"");
	tp_buf_char(b, ph);
	tp_buf_lit(b, "\",");
	pfr_put(b, r->head.p, r->head.len);
	where(r, t, ts);
	if (extra)
		tp_buf_cstr(b, extra);
	args_out(r, r->scratch.p, r->scratch.len, NULL, 0);
	tp_buf_char(b, '}');
}

static void async_id(struct tp_pfr *r, const struct pfr_track *t)
{
	tp_buf_lit(&r->out, ",\"id\":");
	tp_json_u64(&r->out, t->async_id);
}

/* Open flow ids, so that an id seen again is a step ("t"): whether id
 * was open; drop takes it out, else it is put in. */
static int flow_seen(struct tp_pfr *r, uint64_t id, int drop)
{
	return pfr_idset(&r->flows, id, drop, !drop);
}

/* A fan-out start (encode/flow_ids.h: the k-th op of a launch ends its
 * own flow, id | k << 32, begun by an instant beside the launch's start)
 * whose base id is open (convert: the base's "s" instant comes just
 * before) or has ended lately (the library: the instant comes with the
 * k-th op, after the first op ended the base): JSON's one "s" already
 * links every "f" of the id, so the start is left out and its end
 * written with the base id. A base forgotten (PFR_ENDED) leaves the
 * flow as it is: an "s" and "f" of its own id, still a pair. */
static int fold_start(struct tp_pfr *r, uint64_t id)
{
	uint64_t base = tp_flow_base(id);

	if (!tp_flow_is_fanout(id))
		return 0;
	if (!pfr_idset(&r->flows, base, 0, 0) && !pfr_ended_has(r, base))
		return 0;
	pfr_idset(&r->folded, id, 0, 1);
	return 1;
}

/* An instant's flows (tprof's form of JSON's "s"/"f"): written at once,
 * with the instant's own name and category. Flow events carry no
 * args. */
static void flows(struct tp_pfr *r, const struct pfr_track *t,
		  const struct tev *e, int64_t ts)
{
	char extra[48];
	uint32_t i;

	r->scratch.len = 0;
	for (i = 0; i < e->nflows + e->nterms; i++) {
		int term = i >= e->nflows;
		uint64_t id = term ? e->terms[i - e->nflows] : e->flows[i];
		char ph;

		if (term) {
			ph = 'f';
			if (pfr_idset(&r->folded, id, 1, 0)) {
				id = tp_flow_base(id);
			} else {
				pfr_idset(&r->flows, id, 1, 0);
				pfr_ended_add(r, id);
			}
		} else if (fold_start(r, id)) {
			continue;
		} else {
			ph = pfr_idset(&r->flows, id, 0, 1) ? 't' : 's';
		}
		snprintf(extra, sizeof(extra), ",\"id\":%llu%s",
			 (unsigned long long)id, term ? ",\"bp\":\"e\"" : "");
		simple(r, t, ph, ts, extra);
	}
}

/* tprof convert's fan-out start (convert_flows.c): a zero-length slice
 * with no args whose flow ids are all fan-out ids of an open or lately
 * ended base; a slice rather than an instant, since trace_processor
 * stacks instants of one time on each other and would bind the flow to
 * the base's instant, not to the slice both sit in. Read as the
 * instant it stands for: its flows only. */
static int fanout_slice(struct tp_pfr *r, const struct tev *e)
{
	uint32_t i;

	if (r->scratch.len || !e->nflows || e->nterms)
		return 0;
	for (i = 0; i < e->nflows; i++) {
		uint64_t base = tp_flow_base(e->flows[i]);

		if (!tp_flow_is_fanout(e->flows[i]) ||
		    (!pfr_idset(&r->flows, base, 0, 0) &&
		     !pfr_ended_has(r, base)))
			return 0;
	}
	return 1;
}

/* One flow event of a slice's, at (jpid, jtid, ts). */
static void flow_event(struct tp_pfr *r, char ph, const char *name,
		       int64_t jpid, int64_t jtid, int64_t ts, uint64_t id)
{
	struct tp_buf *b = &r->out;

	pfr_begin_event(r);
	tp_buf_lit(b, "{\"ph\":\"");
	tp_buf_char(b, ph);
	tp_buf_lit(b, "\",\"name\":\"");
	tp_buf_cstr(b, name);
	tp_buf_lit(b, "\",\"cat\":\"");
	tp_buf_cstr(b, name);
	tp_buf_lit(b, "\",\"pid\":");
	tp_json_i64(b, jpid);
	tp_buf_lit(b, ",\"tid\":");
	tp_json_i64(b, jtid);
	tp_buf_lit(b, ",\"ts\":");
	tp_json_us(b, pfr_json_ts(r, ts));
	tp_buf_lit(b, ",\"id\":");
	tp_json_u64(b, id);
	if (ph == 'f')
		tp_buf_lit(b, ",\"bp\":\"e\"");
	tp_buf_char(b, '}');
}

static int64_t jtid_of(const struct pfr_track *t)
{
	return t->role == PR_THREAD ? t->jtid : 0;
}

/* A slice's flows, matched by id alone in Perfetto but by id, name and
 * category in JSON (and `tprof check`). A start is held
 * (pftrace_flows.c) and written with its end or first step: starts that
 * never end are not written. A flow from a slice to one on a GPU
 * device's stream is Kineto's "ac2g" (a launch to its GPU work, as
 * tprof's JSON and HTA name it); any other is "flow". */
static void slice_flows(struct tp_pfr *r, const struct pfr_track *t,
			const struct tev *e, int64_t ts)
{
	int64_t jpid, jtid, t0;
	const char *name;
	uint32_t i;
	uint64_t id;

	for (i = 0; i < e->nflows; i++) {
		id = e->flows[i];
		if (pfr_pend_take(r, id, &jpid, &jtid, &t0)) {
			flow_seen(r, id, 0);
			flow_event(r, 's', "flow", jpid, jtid, t0, id);
			flow_event(r, 't', "flow", t->jpid, jtid_of(t), ts, id);
		} else if (flow_seen(r, id, 0)) {
			flow_event(r, 't', "flow", t->jpid, jtid_of(t), ts, id);
		} else {
			flow_seen(r, id, 1);	/* held, not open */
			if (pfr_pend_add(r, id, t->jpid, jtid_of(t), ts) < 0) {
				flow_seen(r, id, 0);
				flow_event(r, 's', "flow", t->jpid,
					   jtid_of(t), ts, id);
			}
		}
	}
	/* tprof's instants that begin a flow (a launch's GPU ops after the
	 * first) are named "ac2g" too. */
	name = t->kind == PT_NAMED && t->role == PR_THREAD ? "ac2g" : "flow";
	for (i = 0; i < e->nterms; i++) {
		id = e->terms[i];
		if (pfr_idset(&r->folded, id, 1, 0)) {	/* fold_start */
			flow_event(r, 'f', name, t->jpid, jtid_of(t), ts,
				   tp_flow_base(id));
			continue;
		}
		if (pfr_pend_take(r, id, &jpid, &jtid, &t0))
			flow_event(r, 's', name, jpid, jtid, t0, id);
		else
			flow_seen(r, id, 1);
		flow_event(r, 'f', name, t->jpid, jtid_of(t), ts, id);
		pfr_ended_add(r, id);
	}
}

static int push(struct tp_pfr *r, struct pfr_track *t, int64_t ts)
{
	size_t n = r->head.len + r->scratch.len;
	struct pfr_open *o;

	if (r->nopen >= PFR_OPEN_MAX || r->open_bytes + n > PFR_OPEN_BYTES)
		return pfr_fail(r, NULL, "more than %u slices open at once "
				"or %u MiB of their names and args (the "
				"reader's bound)", PFR_OPEN_MAX,
				PFR_OPEN_BYTES >> 20);
	o = malloc(sizeof(*o) + n);
	if (!o)
		return pfr_fail(r, NULL, "out of memory");
	o->ts = ts;
	o->seq = r->cur_seq;
	o->head_len = (uint32_t)r->head.len;
	o->args_len = (uint32_t)r->scratch.len;
	pfr_copy(o->text, r->head.p, r->head.len);
	pfr_copy(o->text + r->head.len, r->scratch.p, r->scratch.len);
	o->below = t->open;
	t->open = o;
	r->nopen++;
	r->open_bytes += n;
	return 0;
}

static struct pfr_open *pop(struct tp_pfr *r, struct pfr_track *t)
{
	struct pfr_open *o = t->open;

	if (!o)
		return NULL;
	t->open = o->below;
	r->nopen--;
	r->open_bytes -= o->head_len + o->args_len;
	return o;
}

void pfr_seq_lost(struct tp_pfr *r, struct pfr_seq *s)
{
	struct pfr_open **p, *o;
	uint32_t i;

	s->valid = 0;
	for (i = 0; i < r->ntrk; i++) {
		for (p = &r->trk[i].open; (o = *p);) {
			if (o->seq != s->id) {
				p = &o->below;
				continue;
			}
			*p = o->below;
			r->nopen--;
			r->open_bytes -= o->head_len + o->args_len;
			r->notes[PFR_NOTE_LOST]++;
			free(o);
		}
	}
}

/* An async end with nothing open: kept (its args) for the next begin. */
static void early_end(struct tp_pfr *r, struct pfr_track *t, int64_t ts)
{
	size_t n = r->scratch.len;
	struct pfr_open *o;

	if (r->nopen >= PFR_OPEN_MAX || r->open_bytes + n > PFR_OPEN_BYTES) {
		r->notes[PFR_NOTE_UNMATCHED_END]++;
		return;
	}
	o = malloc(sizeof(*o) + n);
	if (!o) {
		r->notes[PFR_NOTE_UNMATCHED_END]++;
		return;
	}
	o->ts = ts;
	o->head_len = 0;
	o->args_len = (uint32_t)n;
	pfr_copy(o->text, r->scratch.p, n);
	o->below = NULL;
	if (t->early_tail)
		t->early_tail->below = o;
	else
		t->early = o;
	t->early_tail = o;
	r->nopen++;
	r->open_bytes += n;
}

static void slice_end(struct tp_pfr *r, struct pfr_track *t, int64_t ts)
{
	struct pfr_open *o = pop(r, t);
	struct tp_buf *b = &r->out;

	if (!o && t->role == PR_ASYNC) {
		early_end(r, t, ts);
		return;
	}
	if (!o) {
		r->notes[PFR_NOTE_UNMATCHED_END]++;
		return;
	}
	pfr_begin_event(r);
	tp_buf_lit(b, "{\"ph\":\"");
	tp_buf_char(b, t->role == PR_ASYNC ? 'e' : 'X');
	tp_buf_lit(b, "\",");
	pfr_put(b, o->text, o->head_len);
	if (t->role == PR_ASYNC) {
		where(r, t, ts);
		async_id(r, t);
		args_out(r, r->scratch.p, r->scratch.len, NULL, 0);
	} else {
		where(r, t, o->ts);
		tp_buf_lit(b, ",\"dur\":");
		/* Wrapping, as pfr_json_ts: a corrupt end may be anywhere. */
		tp_json_us(b, (int64_t)((uint64_t)ts - (uint64_t)o->ts));
		args_out(r, o->text + o->head_len, o->args_len,
			 r->scratch.p, r->scratch.len);
	}
	tp_buf_char(b, '}');
	free(o);
}

static void counter(struct tp_pfr *r, struct pfr_track *t, int64_t ts,
		    int dbl, int64_t iv, double dv)
{
	struct tp_buf *b = &r->out;
	const char *name = t->name ? t->name : "";
	const char *sp = strrchr(name, ' ');
	double v;

	if (t->role != PR_COUNTER) {	/* a value with no counter track */
		r->notes[PFR_NOTE_SKIPPED]++;
		return;
	}
	pfr_begin_event(r);
	tp_buf_lit(b, "{\"ph\":\"C\",\"name\":");
	if (sp && sp != name && sp[1])
		tp_json_strn(b, name, (size_t)(sp - name));
	else
		tp_json_str(b, name);
	where(r, t, ts);
	tp_buf_lit(b, ",\"args\":{");
	tp_json_str(b, sp && sp != name && sp[1] ? sp + 1 : "value");
	tp_buf_char(b, ':');
	if (!dbl && t->ctr_mult == 1 && !t->ctr_incremental) {
		tp_json_i64(b, iv);
	} else {
		v = (dbl ? dv : (double)iv) * (double)t->ctr_mult;
		if (t->ctr_incremental)
			v = t->ctr_acc += v;
		if (!dbl && v == (double)(int64_t)v && v < 9e15 && v > -9e15)
			tp_json_i64(b, (int64_t)v);
		else
			tp_json_double(b, v);
	}
	tp_buf_lit(b, "}}");
}

static void extra_counters(struct tp_pfr *r, const struct tev *e,
			   int64_t ts)
{
	struct pfr_track *t;
	uint32_t i;

	for (i = 0; i < e->nxt && i < e->nxv; i++) {
		t = pfr_track_find(r, e->xtracks[i]);
		if (t) {
			pfr_track_use(r, t);
			counter(r, t, ts, 0, e->xvals[i], 0);
		}
	}
	for (i = 0; i < e->nxdt && i < e->nxdv; i++) {
		t = pfr_track_find(r, e->xdtracks[i]);
		if (t) {
			pfr_track_use(r, t);
			counter(r, t, ts, 1, 0, e->xdvals[i]);
		}
	}
}

static int trailer(struct tp_pfr *r, struct pfr_seq *s, struct pbr c,
		   const struct tev *e)
{
	struct tp_buf b = { 0 };
	char *d;
	int rc;

	if (e->type != 3 || !e->name || e->namelen != 14 ||
	    memcmp(e->name, "tprof metadata", 14))
		return 0;
	rc = pfr_trailer_of(r, s, c, &b);
	if (rc <= 0) {
		tp_buf_free(&b);
		return rc;
	}
	d = malloc(b.len + 1);
	if (!d) {
		tp_buf_free(&b);
		return pfr_fail(r, NULL, "out of memory");
	}
	pfr_copy(d, b.p, b.len);
	free(r->trailer);
	r->trailer = d;
	r->trailer_len = b.len;
	tp_buf_free(&b);
	return 1;
}

int pfr_track_event(struct tp_pfr *r, struct pfr_seq *s, struct pbr c,
		    int64_t ts)
{
	struct pfr_track *t;
	struct tev e;
	int rc;

	/* Times a trace can hold are bounded, so that every sum and
	 * difference of two (an end, a duration) fits in 64 bits, here and
	 * in the summary that reads these events (a corrupt trace's would
	 * overflow: found by fuzz_pftrace). */
	if (pfr_json_ts(r, ts) > PFR_TS_MAX ||
	    pfr_json_ts(r, ts) < -PFR_TS_MAX) {
		r->notes[PFR_NOTE_BAD_TIME]++;
		return 0;
	}
	if (scan(r, c, &e))
		return -1;
	rc = trailer(r, s, c, &e);
	if (rc)
		return rc < 0 ? -1 : 0;
	if (!e.has_track && s->has_def_track) {
		e.has_track = 1;
		e.track = s->def_track;
	}
	t = e.has_track ? pfr_track_find(r, e.track) : pfr_track_pseudo(r, s);
	if (!t && e.has_track)	/* never declared: the sequence's own */
		t = pfr_track_pseudo(r, s);
	if (!t)
		return r->failed ? -1 : 0;
	pfr_track_use(r, t);
	extra_counters(r, &e, ts);
	if (e.type == 4) {
		if (e.has_cval)
			counter(r, t, ts, e.cdouble, e.cval, e.dval);
		return 0;
	}
	if (e.type < 1 || e.type > 3) {
		r->notes[PFR_NOTE_SKIPPED]++;
		return 0;
	}
	r->scratch.len = 0;
	if (pfr_args(r, s, c, &r->scratch))
		return -1;
	if (e.type == 2 && t->skip_end) {
		t->skip_end = 0;
		return 0;
	}
	if (e.type == 2) {
		slice_end(r, t, ts);
		return 0;
	}
	if (e.type == 1 && fanout_slice(r, &e)) {
		t->skip_end = 1;	/* its END, written at once after it */
		head(r, s, c, &e);
		flows(r, t, &e, ts);
		return 0;
	}
	if (e.type == 3 && (e.nflows || e.nterms)) {
		head(r, s, c, &e);
		flows(r, t, &e, ts);
		return 0;
	}
	if (e.nflows || e.nterms)
		slice_flows(r, t, &e, ts);
	head(r, s, c, &e);
	if (e.type == 3) {
		simple(r, t, 'i', ts, NULL);
		return 0;
	}
	if (t->role == PR_ASYNC) {
		pfr_begin_event(r);
		tp_buf_lit(&r->out, "{\"ph\":\"b\",");
		pfr_put(&r->out, r->head.p, r->head.len);
		where(r, t, ts);
		async_id(r, t);
		args_out(r, r->scratch.p, r->scratch.len, NULL, 0);
		tp_buf_char(&r->out, '}');
		r->scratch.len = 0;	/* the "e" carries no args */
	}
	if (push(r, t, ts))
		return -1;
	if (t->role == PR_ASYNC && t->early) {
		struct pfr_open *o = t->early;

		t->early = o->below;
		if (!t->early)
			t->early_tail = NULL;
		r->nopen--;
		r->open_bytes -= o->args_len;
		r->scratch.len = 0;
		pfr_put(&r->scratch, o->text, o->args_len);
		slice_end(r, t, o->ts);
		free(o);
	}
	return 0;
}

/* Slices still open at the end: "B" events (async: left open). */
void pfr_close_open(struct tp_pfr *r)
{
	struct pfr_open *o;
	struct tp_buf *b = &r->out;
	uint32_t i;

	for (i = 0; i < r->ntrk; i++) {
		struct pfr_track *t = &r->trk[i];

		while ((o = t->early)) {
			r->notes[PFR_NOTE_UNMATCHED_END]++;
			t->early = o->below;
			r->nopen--;
			r->open_bytes -= o->args_len;
			free(o);
		}
		t->early_tail = NULL;
		while ((o = pop(r, t))) {
			r->notes[PFR_NOTE_UNENDED]++;
			if (t->role != PR_ASYNC) {
				pfr_begin_event(r);
				tp_buf_lit(b, "{\"ph\":\"B\",");
				pfr_put(b, o->text, o->head_len);
				where(r, t, o->ts);
				args_out(r, o->text + o->head_len,
					 o->args_len, NULL, 0);
				tp_buf_char(b, '}');
			}
			free(o);
		}
	}
}
