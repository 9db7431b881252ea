/* cupti/: the CUPTI client: GPU activity, API callbacks, devices, GPU
 * tracks; on util/ .. output/. */
#include <stdlib.h>
#include <string.h>

#include "tracks.h"

#define SLOTS 8192	/* power of two; streams x devices x lanes */

static struct tp_track tracks[SLOTS];
static unsigned used;

struct tp_track *tp_track_get(uint32_t pid, uint32_t tid)
{
	uint64_t h = ((uint64_t)pid << 32 | tid) * 0x9e3779b97f4a7c15ull;
	unsigned i = (unsigned)(h >> 51) & (SLOTS - 1), n;

	for (n = 0; n < SLOTS; n++, i = (i + 1) & (SLOTS - 1)) {
		struct tp_track *t = &tracks[i];

		if (t->used && t->pid == pid && t->tid == tid)
			return t;
		if (t->used)
			continue;
		if (used >= SLOTS * 3 / 4)
			return NULL;
		t->used = 1;
		t->pid = pid;
		t->tid = tid;
		t->base_tid = tid;
		t->horizon = INT64_MIN;
		used++;
		return t;
	}
	return NULL;
}

/* The index of the first span starting at or after s. */
static unsigned first_at(const struct tp_track *t, int64_t s)
{
	unsigned lo = 0, hi = t->n;

	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;

		if (t->v[mid].s < s)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* A zero-length op takes its nanosecond: two at one time never nest. */
static int overlaps(const struct tp_span *a, int64_t s, int64_t e)
{
	int64_t ae = a->e > a->s ? a->e : a->s + 1;

	if (e <= s)
		e = s + 1;
	return a->s < e && ae > s;
}

/* Spans are sorted and disjoint, so only the neighbours of the place s
 * would go can overlap [s, e). */
static int fits(const struct tp_track *t, int64_t s, int64_t e, unsigned *at)
{
	unsigned i = first_at(t, s);

	*at = i;
	if (i > 0 && overlaps(&t->v[i - 1], s, e))
		return 0;
	return i == t->n || !overlaps(&t->v[i], s, e);
}

static int insert(struct tp_track *t, unsigned at, int64_t s, int64_t e)
{
	struct tp_span *v;
	unsigned drop;

	if (t->n == TP_TRACK_SPANS) {
		/* Forget the older half: records arrive within a few
		 * buffers of each other, far fewer ops than this. */
		drop = TP_TRACK_SPANS / 2;
		if (at < drop)
			drop = at;
		if (!drop)
			return -1;
		t->horizon = t->v[drop - 1].e;
		memmove(t->v, t->v + drop, (t->n - drop) * sizeof(*t->v));
		t->n -= drop;
		at -= drop;
	}
	if (t->n == t->cap) {
		unsigned cap = t->cap ? t->cap * 2 : 64;

		v = realloc(t->v, cap * sizeof(*v));
		if (!v)
			return -1;
		t->v = v;
		t->cap = cap;
	}
	memmove(t->v + at + 1, t->v + at, (t->n - at) * sizeof(*t->v));
	t->v[at].s = s;
	t->v[at].e = e;
	t->n++;
	return 0;
}

struct tp_track *tp_track_place(uint32_t pid, uint32_t tid, int64_t s,
				int64_t e, int *late)
{
	struct tp_track *t;
	unsigned lane, at;

	*late = 0;
	for (lane = 0; lane <= TP_MAX_LANES; lane++) {
		t = tp_track_get(pid, tid ^ (lane << TP_LANE_SHIFT));
		if (!t)
			return NULL;
		t->lane = lane;
		t->base_tid = tid;
		if (!fits(t, s, e, &at))
			continue;
		if (s < t->horizon)
			*late = 1;
		return insert(t, at, s, e) < 0 ? NULL : t;
	}
	return NULL;
}

void tp_track_each(void (*fn)(const struct tp_track *t, void *arg), void *arg)
{
	unsigned i;

	for (i = 0; i < SLOTS; i++)
		if (tracks[i].used)
			fn(&tracks[i], arg);
}

void tp_track_reset(void)
{
	unsigned i;

	for (i = 0; i < SLOTS; i++)
		free(tracks[i].v);
	memset(tracks, 0, sizeof(tracks));
	used = 0;
}
