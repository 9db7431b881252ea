/* tprof check: are a tprof trace's NVTX ranges consistent with what it
 * says it dropped? A range is written whole (an X event, or an async
 * begin and end written together) or dropped whole and counted in the
 * trailer's "nvtx" object, pairing "id". So: the ranges written are as
 * many as it counts; pops dropped are no more than pushes dropped (ends
 * than starts); its range drops are among its events dropped; every
 * async begin has its one end and every end its begin. A trace whose
 * ranges were paired by order (written before range ids) while events
 * were dropped may hold ranges that never happened: said once.
 *
 * The async matching keeps only the begins still waiting for their end
 * (tprof writes each pair together, so a handful), at most OPEN_MAX:
 * past that the matching stops, said once, so that memory stays fixed.
 */
#include "check.h"
#include "check_int.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* The track of ProfilerStep#N events (capture/capture.h): not NVTX. */
#define STEPS_TID 1000000000
#define OPEN_MAX 65536
#define BUCKETS 4096

/* A begin waiting for its end, or an end (written first) for its
 * begin. */
struct open_b {
	struct open_b *next;
	uint64_t key;		/* id, cat and pid hashed */
	int64_t id, pid, ts;
	uint32_t cat;
	char ph;
};

static uint64_t mix(uint64_t h, uint64_t v)
{
	return (h ^ v) * 0x100000001b3ull;
}

static int is_ua(const struct tp_json_node *cat)
{
	return cat && cat->type == TP_JSON_STRING &&
	       !strcmp(cat->str, "user_annotation");
}

static int int_of(const struct tp_json_node *ev, const char *k, int64_t *v)
{
	return tp_json_int64(tp_json_get(ev, k), v);
}

static struct open_b **find(struct ck_ranges *r, uint64_t key, int64_t id,
			    int64_t pid, uint32_t cat)
{
	struct open_b **p;

	if (!r->tab)
		r->tab = calloc(BUCKETS, sizeof(*r->tab));
	if (!r->tab)
		return NULL;
	p = (struct open_b **)&r->tab[key % BUCKETS];
	while (*p && ((*p)->id != id || (*p)->pid != pid || (*p)->cat != cat))
		p = &(*p)->next;
	return p;
}

static void async_ev(struct ck *ck, const struct tp_json_node *ev, char ph,
		     int64_t ts)
{
	struct ck_ranges *r = &ck->rg;
	const struct tp_json_node *cat = tp_json_get(ev, "cat");
	int64_t id, pid;
	int64_t c;
	struct open_b **p, *b;
	uint64_t key;

	if (r->gave_up || !int_of(ev, "id", &id) || !int_of(ev, "pid", &pid))
		return;
	c = cat && cat->type == TP_JSON_STRING ?
	    ck_intern(&ck->strs, cat->str, cat->len) :
	    ck_intern(&ck->strs, "", 0);
	if (c < 0)
		return;
	key = mix(mix(mix(0xcbf29ce484222325ull, (uint64_t)id),
		      (uint64_t)pid), (uint64_t)c);
	p = find(r, key, id, pid, (uint32_t)c);
	if (!p)
		return;
	if (*p && (*p)->ph != ph) {	/* its other half */
		if (ph == 'e' ? ts < (*p)->ts : (*p)->ts < ts)
			r->backwards++;
		b = *p;
		*p = b->next;
		free(b);
		r->open--;
		return;
	}
	if (*p) {			/* a second begin (or end) */
		r->twice++;
		return;
	}
	if (r->open == OPEN_MAX || !(b = calloc(1, sizeof(*b)))) {
		r->gave_up = 1;
		return;
	}
	b->key = key;
	b->id = id;
	b->pid = pid;
	b->cat = (uint32_t)c;
	b->ts = ts;
	b->ph = ph;
	*p = b;
	r->open++;
}

void ck_ranges_event(struct ck *ck, const struct tp_json_node *ev, char ph,
		     int64_t ts, int ts_ok)
{
	int64_t tid;

	if (!is_ua(tp_json_get(ev, "cat")))
		return;
	if (ph == 'X') {
		if (!int_of(ev, "tid", &tid) || tid != STEPS_TID)
			ck->rg.ranges++;
		return;
	}
	if ((ph == 'b' || ph == 'e') && ts_ok)
		async_ev(ck, ev, ph, ts);
}

static int64_t num(const struct tp_json_node *o, const char *k)
{
	int64_t v;

	return tp_json_int64(tp_json_get(o, k), &v) ? v : -1;
}

/* a += b, where -1 is "not said" */
static void add(int64_t *a, int64_t b)
{
	*a = *a < 0 || b < 0 ? -1 : *a + b;
}

/* One trace's account (a merged trace: each input's, summed). */
static void account(struct ck_ranges *r, const struct tp_json_node *tprof,
		    const struct tp_json_node *nv, int window)
{
	const struct tp_json_node *p = tp_json_get(nv, "pairing"),
		*d = tp_json_get(nv, "dropped"),
		*w = tp_json_get(nv, "window");
	int64_t dropped = num(tprof, "events_dropped");

	if (!(p && p->type == TP_JSON_STRING && !strcmp(p->str, "id"))) {
		r->by_id = 0;
		if (dropped > 0)
			add(&r->order_dropped, dropped);
	}
	r->window |= window || (w && w->type == TP_JSON_TRUE);
	add(&r->counted, num(nv, "ranges"));
	add(&r->events_dropped, dropped);
	add(&r->pushes, num(d, "pushes"));
	add(&r->pops, num(d, "pops"));
	add(&r->starts, num(d, "starts"));
	add(&r->ends, num(d, "ends"));
}

void ck_ranges_trailer(struct ck *ck, const struct tp_json_node *tprof)
{
	struct ck_ranges *r = &ck->rg;
	const struct tp_json_node *nv = tp_json_get(tprof, "nvtx"),
		*fl = tp_json_get(tprof, "flight"),
		*merged = tp_json_get(tprof, "merged"), *in;

	r->by_id = 1;
	if (nv && nv->type == TP_JSON_OBJECT) {
		r->have = 1;
		account(r, tprof, nv, fl && fl->type == TP_JSON_OBJECT);
		return;
	}
	if (!merged || merged->type != TP_JSON_ARRAY)
		return;
	for (in = merged->child; in; in = in->next) {
		nv = tp_json_get(in, "nvtx");
		if (!nv || nv->type != TP_JSON_OBJECT)
			continue;
		r->have = 1;
		account(r, in, nv, 0);
	}
}

/* By order, across drops. */
static void old_pairing(struct ck *ck, const struct ck_ranges *r)
{
	if (r->order_dropped > 0 && r->ranges)
		ck_problem(ck, "%" PRIu64 " NVTX ranges were paired by order "
			   "while %" PRId64 " events were dropped: some may "
			   "never have happened (a push and a pop dropped "
			   "apart pair the wrong ones; this trace was written "
			   "before tprof paired ranges by id: record it "
			   "again)", r->ranges, r->order_dropped);
}

static void counts(struct ck *ck, const struct ck_ranges *r)
{
	/* A flight recorder's dump holds only its window's ranges. */
	if (!r->window && r->counted >= 0 &&
	    (uint64_t)r->counted != r->ranges)
		ck_problem(ck, "the trace holds %" PRIu64 " NVTX ranges but "
			   "its trailer counts %" PRId64 ": its ranges and "
			   "drops do not add up", r->ranges, r->counted);
	if (r->pops > r->pushes || r->ends > r->starts)
		ck_problem(ck, "more NVTX range ends dropped than begins "
			   "(pops %" PRId64 ", pushes %" PRId64 ", ends %"
			   PRId64 ", starts %" PRId64 "): an end was dropped "
			   "apart from its begin", r->pops, r->pushes,
			   r->ends, r->starts);
	if (r->events_dropped >= 0 && r->pushes >= 0 && r->pops >= 0 &&
	    r->starts >= 0 && r->ends >= 0 &&
	    r->pushes + r->pops + r->starts + r->ends > r->events_dropped)
		ck_problem(ck, "the trailer counts more NVTX ranges dropped "
			   "than events dropped (%" PRId64 ")",
			   r->events_dropped);
}

static void async(struct ck *ck, struct ck_ranges *r)
{
	struct open_b *b;
	unsigned i;

	for (i = 0; r->tab && i < BUCKETS; i++)
		for (b = r->tab[i]; b; b = b->next)
			r->open_b += b->ph == 'b';
	if (r->gave_up) {
		fprintf(ck->out, "%s: note: more than %d async ranges open at "
			"once: their begins and ends not matched\n", ck->path,
			OPEN_MAX);
		return;
	}
	if (r->open || r->twice)
		ck_problem(ck, "async ranges not whole: %" PRIu64 " begins "
			   "without their end, %" PRIu64 " ends without "
			   "their begin, %" PRIu64 " twice", r->open_b,
			   r->open - r->open_b, r->twice);
	if (r->backwards)
		ck_problem(ck, "%" PRIu64 " async ranges end before they "
			   "begin", r->backwards);
}

void ck_ranges_done(struct ck *ck)
{
	struct ck_ranges *r = &ck->rg;

	if (!r->have)
		return;
	if (!r->by_id) {
		old_pairing(ck, r);
		return;
	}
	counts(ck, r);
	async(ck, r);
}

void ck_ranges_free(struct ck *ck)
{
	struct ck_ranges *r = &ck->rg;
	struct open_b *b, *next;
	unsigned i;

	if (!r->tab)
		return;
	for (i = 0; i < BUCKETS; i++)
		for (b = r->tab[i]; b; b = next) {
			next = b->next;
			free(b);
		}
	free(r->tab);
	r->tab = NULL;
}
