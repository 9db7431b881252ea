/* The Perfetto reader's flows begun on a slice (flow_ids on a
 * SLICE_BEGIN), held until they end or step (pftrace_int.h).
 *
 * Perfetto's importer binds such a flow to the slice and keeps an id
 * that never ends aside without a word (FlowTracker::Begin); tprof's
 * writer puts one on every call with a correlation id, most of which
 * (a synchronize, a malloc) start no GPU work. Written at once as JSON
 * "s" events they would all be flows without an end, so a start is kept
 * here (where: pid, tid, time) and written with its end. Bounded: at
 * most PEND_MAX held, the oldest let go first (a start whose end is that
 * far away is taken for one that has none). */
#include <stdlib.h>
#include <string.h>

#include "pftrace_int.h"

#define PEND_MAX (1u << 18)
#define PEND_CAP (PEND_MAX * 2)

struct pfr_pend {
	uint64_t key;		/* id + 1; 0: empty */
	int64_t jpid, jtid, ts;
};

uint32_t pfr_key_home(uint64_t key, uint32_t cap)
{
	return (uint32_t)(key * 0x9e3779b97f4a7c15ull >> 40) & (cap - 1);
}

static uint64_t key_at(const char *tab, size_t size, uint32_t i)
{
	uint64_t k;

	memcpy(&k, tab + (size_t)i * size, sizeof(k));
	return k;
}

/* Backward-shift deletion: every probe chain stays whole. */
void pfr_key_del(void *table, size_t size, uint32_t cap, uint32_t h)
{
	static const uint64_t empty;
	char *tab = table;
	uint32_t j = h, want;

	for (;;) {
		memcpy(tab + (size_t)h * size, &empty, sizeof(empty));
		for (;;) {
			j = (j + 1) & (cap - 1);
			if (!key_at(tab, size, j))
				return;
			want = pfr_key_home(key_at(tab, size, j), cap);
			if (((j - want) & (cap - 1)) >= ((j - h) & (cap - 1)))
				break;
		}
		memcpy(tab + (size_t)h * size, tab + (size_t)j * size, size);
		h = j;
	}
}

/* Whether id is in the set; drop: take it out; add: put it in. A full
 * set adds nothing. */
int pfr_idset(struct pfr_idset *set, uint64_t id, int drop, int add)
{
	uint64_t k = id + 1, *nt;
	uint32_t h, i, cap;

	if (!k)
		return 0;
	if (add && (set->n + 1) * 2 > set->cap) {
		if (set->n >= PFR_FLOWS_MAX)
			return 0;	/* full: written as a new start */
		cap = set->cap ? set->cap * 2 : 256;
		nt = calloc(cap, sizeof(*nt));
		if (!nt)
			return 0;
		for (i = 0; i < set->cap; i++) {
			if (!set->keys[i])
				continue;
			for (h = pfr_key_home(set->keys[i], cap); nt[h];
			     h = (h + 1) & (cap - 1))
				;
			nt[h] = set->keys[i];
		}
		free(set->keys);
		set->keys = nt;
		set->cap = cap;
	}
	if (!set->cap)
		return 0;
	for (h = pfr_key_home(k, set->cap); set->keys[h];
	     h = (h + 1) & (set->cap - 1)) {
		if (set->keys[h] != k)
			continue;
		if (drop) {
			pfr_key_del(set->keys, sizeof(*set->keys), set->cap, h);
			set->n--;
		}
		return 1;
	}
	if (add) {
		set->keys[h] = k;
		set->n++;
	}
	return 0;
}

static struct pfr_pend *find(struct tp_pfr *r, uint64_t key)
{
	uint32_t h;

	for (h = pfr_key_home(key, PEND_CAP); r->pend[h].key;
	     h = (h + 1) & (PEND_CAP - 1))
		if (r->pend[h].key == key)
			return &r->pend[h];
	return NULL;
}

static void del(struct tp_pfr *r, struct pfr_pend *p)
{
	pfr_key_del(r->pend, sizeof(*r->pend), PEND_CAP,
		    (uint32_t)(p - r->pend));
	r->npend--;
}

/* The oldest entry of the order kept, gone (or already taken). */
static void let_go_oldest(struct tp_pfr *r)
{
	uint64_t key = r->pend_order[r->pend_tail++ & (PEND_MAX - 1)];
	struct pfr_pend *p = find(r, key);

	if (p)
		del(r, p);
}

int pfr_pend_add(struct tp_pfr *r, uint64_t id, int64_t jpid, int64_t jtid,
		 int64_t ts)
{
	uint64_t key = id + 1;
	struct pfr_pend *p;
	uint32_t h;

	if (!key)
		return -1;
	if (!r->pend) {
		r->pend = calloc(PEND_CAP, sizeof(*r->pend));
		r->pend_order = malloc(PEND_MAX * sizeof(*r->pend_order));
		if (!r->pend || !r->pend_order) {
			pfr_pend_free(r);
			return -1;
		}
	}
	while (r->npend == PEND_MAX || r->pend_head - r->pend_tail == PEND_MAX)
		let_go_oldest(r);
	p = find(r, key);
	if (!p) {
		for (h = pfr_key_home(key, PEND_CAP); r->pend[h].key;
		     h = (h + 1) & (PEND_CAP - 1))
			;
		p = &r->pend[h];
		r->npend++;
	}
	p->key = key;
	p->jpid = jpid;
	p->jtid = jtid;
	p->ts = ts;
	r->pend_order[r->pend_head++ & (PEND_MAX - 1)] = key;
	return 0;
}

int pfr_pend_take(struct tp_pfr *r, uint64_t id, int64_t *jpid,
		  int64_t *jtid, int64_t *ts)
{
	struct pfr_pend *p;

	if (!r->pend || !(p = find(r, id + 1)))
		return 0;
	*jpid = p->jpid;
	*jtid = p->jtid;
	*ts = p->ts;
	del(r, p);
	return 1;
}

void pfr_pend_free(struct tp_pfr *r)
{
	free(r->pend);
	free(r->pend_order);
	r->pend = NULL;
	r->pend_order = NULL;
	r->npend = 0;
	r->pend_head = r->pend_tail = 0;
}

void pfr_ended_add(struct tp_pfr *r, uint64_t id)
{
	if (!r->ended && !(r->ended = calloc(PFR_ENDED, sizeof(*r->ended))))
		return;		/* no memory: fan-outs stay unfolded */
	r->ended[pfr_key_home(id + 1, PFR_ENDED)] = id + 1;
}

int pfr_ended_has(const struct tp_pfr *r, uint64_t id)
{
	return r->ended && id + 1 &&
	       r->ended[pfr_key_home(id + 1, PFR_ENDED)] == id + 1;
}
