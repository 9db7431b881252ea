/* perfetto/: the Perfetto protobuf encoder of typed events: packets,
 * interning, tracks, annotations; on encode/ and below. */
/* Lanes for held events (`tprof convert`, perfetto_hold.c): slices that
 * overlap without nesting.
 *
 * A slice is written as a SLICE_BEGIN and an unnamed SLICE_END, and
 * Perfetto's importer closes the innermost open slice at an END
 * (SliceTracker). Two slices on one track that overlap without one
 * holding the other (Kineto's kernels that start a nanosecond before the
 * previous one ends) would swap ends: the first would end where the
 * second does. Held events come in start order, so each track keeps the
 * ends of its open slices; a slice that would outlast the one it starts
 * in goes to the first lane where it nests: a named track beside a
 * stream, under its device ("stream 7 (2)"), or under a thread ("python
 * (2)": no second thread track can have its tid). An instant
 * goes to the lane whose innermost open slice started last: the slice a
 * flow's end at a kernel's start belongs to.
 *
 * Bounded: LANES lanes of DEPTH open slices each; past that a slice stays
 * on the original track (ends may then swap, as before). DEPTH is as
 * deep as Perfetto's importer nests (v43: a slice's depth is a uint8;
 * v58: 512, slice_max_depth_exceeded past it): a Python stack deeper
 * than that goes on in a lane, where it shows. Each track's
 * lanes and stacks grow as they are used: every thread and stream has
 * one (up to the encoder's 2^20 tracks), most of them a single lane a
 * few slices deep. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfetto_int.h"

#define LANES 8
#define DEPTH 255

struct pf_open_slice {
	int64_t start, end;
};

struct pf_lane {
	uint32_t trk;		/* index in p->trk; lane 0 is the track */
	uint32_t depth, cap;
	struct pf_open_slice *open;
};

struct pf_lanes {
	uint32_t n;
	struct pf_lane l[];	/* n of them */
};

void pf_lanes_free(struct pf_track *t)
{
	uint32_t i;

	if (!t->lanes)
		return;
	for (i = 0; i < t->lanes->n; i++)
		free(t->lanes->l[i].open);
	free(t->lanes);
	t->lanes = NULL;
}

static void close_ended(struct pf_lane *l, int64_t ts)
{
	while (l->depth && l->open[l->depth - 1].end <= ts)
		l->depth--;
}

/* Whether [start, end) nests in the lane's innermost open slice, and
 * there is room for it: it is pushed. */
static int push(struct pf_lane *l, int64_t start, int64_t end)
{
	struct pf_open_slice *o;
	uint32_t cap;

	if (l->depth && l->open[l->depth - 1].end < end)
		return 0;
	if (l->depth == DEPTH)
		return 0;
	if (l->depth == l->cap) {
		cap = l->cap ? l->cap * 2 : 4;
		if (cap > DEPTH)
			cap = DEPTH;
		o = realloc(l->open, cap * sizeof(*o));
		if (!o)
			return 0;
		l->open = o;
		l->cap = cap;
	}
	l->open[l->depth].start = start;
	l->open[l->depth++].end = end;
	return 1;
}

/* Lane k (k >= 1) of the track at index base: a named track under the
 * same parent. Returns its index, or UINT32_MAX. */
static uint32_t new_lane(struct pf_enc *p, uint32_t base, uint32_t k,
			 int thread)
{
	struct pf_track *t = &p->trk[base];
	char name[256];
	/* A thread's lane hangs under the thread (no second thread track
	 * can have its tid); a stream's beside it, under the device. */
	uint64_t parent = thread ? t->uuid : t->parent;

	snprintf(name, sizeof(name), "%s (%u)", t->name ? t->name : "track",
		 k + 1);
	t = pf_track_get(p, TK_LANE, base, k, name, strlen(name), parent, 0,
			 0);
	return t ? (uint32_t)(t - p->trk) : UINT32_MAX;
}

/* Adds an empty lane on track trk to the track at index base. */
static struct pf_lane *add_lane(struct pf_enc *p, uint32_t base,
				uint32_t trk)
{
	struct pf_lanes *ls = p->trk[base].lanes;
	uint32_t n = ls ? ls->n : 0;

	ls = realloc(ls, sizeof(*ls) + (n + 1) * sizeof(ls->l[0]));
	if (!ls)
		return NULL;
	p->trk[base].lanes = ls;
	memset(&ls->l[n], 0, sizeof(ls->l[n]));
	ls->l[n].trk = trk;
	ls->n = n + 1;
	return &ls->l[n];
}

static struct pf_track *slice_lane(struct pf_enc *p, uint32_t base,
				   const struct tp_tev *ev)
{
	int64_t end = ev->ts_ns + (ev->dur_ns > 0 ? ev->dur_ns : 0);
	struct pf_lanes *ls = p->trk[base].lanes;
	struct pf_lane *l;
	uint32_t i, trk;

	for (i = 0; i < ls->n; i++) {
		l = &ls->l[i];
		close_ended(l, ev->ts_ns);
		if (push(l, ev->ts_ns, end))
			return &p->trk[l->trk];
	}
	if (ls->n == LANES)
		return &p->trk[base];
	trk = new_lane(p, base, ls->n, ev->track.kind == TP_TEV_THREAD);
	if (trk == UINT32_MAX)
		return &p->trk[base];
	l = add_lane(p, base, trk);	/* p->trk may have moved: by index */
	if (!l || !push(l, ev->ts_ns, end))
		return &p->trk[base];
	return &p->trk[trk];
}

static struct pf_track *instant_lane(struct pf_enc *p, uint32_t base,
				     const struct tp_tev *ev)
{
	struct pf_lanes *ls = p->trk[base].lanes;
	struct pf_lane *best = &ls->l[0], *l;
	uint32_t i;

	for (i = 0; i < ls->n; i++) {
		l = &ls->l[i];
		close_ended(l, ev->ts_ns);
		if (l->depth && (!best->depth ||
				 l->open[l->depth - 1].start >
				 best->open[best->depth - 1].start))
			best = l;
	}
	return &p->trk[best->trk];
}

struct pf_track *pf_lane_of(struct pf_enc *p, struct pf_track *t,
			    const struct tp_tev *ev)
{
	uint32_t base = (uint32_t)(t - p->trk);

	if (ev->track.kind != TP_TEV_THREAD &&
	    ev->track.kind != TP_TEV_GPU_STREAM)
		return t;
	if (!t->lanes && !add_lane(p, base, base))
		return t;
	if (ev->phase == TP_TEV_COMPLETE)
		return slice_lane(p, base, ev);
	return instant_lane(p, base, ev);
}
