/* perfetto/: the Perfetto protobuf encoder of typed events: packets,
 * interning, tracks, annotations; on encode/ and below. */
/* Complete events and instants held back and written in start order,
 * longest first at equal starts, so instants after the slices that open
 * at their time (tp_enc_meta.hold_complete: `tprof convert`).
 *
 * Why: a complete event is written as its SLICE_BEGIN and SLICE_END at
 * once. Perfetto's importer sorts packets by timestamp, equal ones in
 * the order they were read (TraceSorter: TimestampedEvent::operator<),
 * and an unnamed SLICE_END closes the innermost open slice
 * (SliceTracker). A child written before a parent of the same start, as
 * in a trace written in end order or a Kineto trace of whole-us times,
 * then opens first: the parent is nested under it and the child's end
 * closes the parent. An instant written before the slice that opens at
 * its time (JSON's flow end at its kernel's start, bound to the kernel)
 * is not inside it. The JSON importer sorts equal starts longest first;
 * this does the same for the protobuf.
 *
 * Bounded: at most HOLD_EVENTS events and HOLD_BYTES bytes are held; past
 * either, the earliest is written. A parent that arrives after more
 * events than that since its child of the same start still nests wrong.
 * The events are deep copies (their strings are borrowed, tev.h). */
#include <stdlib.h>
#include <string.h>

#include "perfetto_int.h"

#define HOLD_EVENTS 4096
#define HOLD_BYTES (64u << 20)

struct pf_held {
	struct tp_tev ev;
	uint64_t seq;		/* arrival: equal events keep their order */
	size_t bytes;
};

/* The copy's args: after the header, aligned for a 128-bit value. */
#define HELD_ARGS_OFF ((sizeof(struct pf_held) + _Alignof(struct tp_targ) - \
			1) & ~(_Alignof(struct tp_targ) - 1))

static const char *put_str(char **s, const char *src, size_t n)
{
	char *at = *s;

	if (!src)
		return NULL;
	memcpy(at, src, n);
	*s = at + n;
	return at;
}

/* One block: header, args, then every string the event borrows. The
 * copy's names and keys are not static (tev.h): its addresses are
 * reused once it is freed, so interning compares their bytes. */
static struct pf_held *held_copy(const struct tp_tev *ev, uint64_t seq)
{
	size_t strs = ev->namelen + ev->catlen, size;
	struct pf_held *h;
	struct tp_targ *a;
	uint32_t i;
	char *s;

	for (i = 0; i < ev->nargs; i++) {
		strs += ev->args[i].keylen;
		if (pf_targ_has_str(ev->args[i].type))
			strs += ev->args[i].v.str.len;
	}
	size = HELD_ARGS_OFF + ev->nargs * sizeof(*a) + strs;
	h = malloc(size);
	if (!h)
		return NULL;
	a = (struct tp_targ *)((char *)h + HELD_ARGS_OFF);
	s = (char *)(a + ev->nargs);
	h->ev = *ev;
	h->seq = seq;
	h->bytes = size;
	h->ev.name = put_str(&s, ev->name, ev->namelen);
	h->ev.cat = put_str(&s, ev->cat, ev->catlen);
	h->ev.name_json = NULL;
	h->ev.name_json_len = 0;
	h->ev.static_names = 0;
	h->ev.static_keys = 0;
	if (ev->nargs)
		memcpy(a, ev->args, ev->nargs * sizeof(*a));
	for (i = 0; i < ev->nargs; i++) {
		a[i].key = put_str(&s, a[i].key, a[i].keylen);
		if (pf_targ_has_str(a[i].type))
			a[i].v.str.s = put_str(&s, a[i].v.str.s,
					       a[i].v.str.len);
	}
	h->ev.args = a;
	return h;
}

/* a is written before b: earlier start, then longer, then arrival. */
static int before(const struct pf_held *a, const struct pf_held *b)
{
	if (a->ev.ts_ns != b->ev.ts_ns)
		return a->ev.ts_ns < b->ev.ts_ns;
	if (a->ev.dur_ns != b->ev.dur_ns)
		return a->ev.dur_ns > b->ev.dur_ns;
	return a->seq < b->seq;
}

static void sift_up(struct pf_held **q, uint32_t i)
{
	struct pf_held *h = q[i];

	while (i && before(h, q[(i - 1) / 2])) {
		q[i] = q[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	q[i] = h;
}

static void sift_down(struct pf_held **q, uint32_t n, uint32_t i)
{
	struct pf_held *h = q[i];
	uint32_t c;

	while ((c = 2 * i + 1) < n) {
		if (c + 1 < n && before(q[c + 1], q[c]))
			c++;
		if (!before(q[c], h))
			break;
		q[i] = q[c];
		i = c;
	}
	q[i] = h;
}

/* Writes the earliest held event. */
static void write_first(struct pf_enc *p)
{
	struct pf_held *h = p->held[0];

	p->nheld--;
	p->held_bytes -= h->bytes;
	if (p->nheld) {
		p->held[0] = p->held[p->nheld];
		sift_down(p->held, p->nheld, 0);
	}
	p->write_held(p, &h->ev);
	free(h);
}

int pf_hold(struct pf_enc *p, const struct tp_tev *ev)
{
	struct pf_held *h;

	if (!p->held) {
		p->held = malloc((HOLD_EVENTS + 1) * sizeof(*p->held));
		if (!p->held)
			return -1;
	}
	h = held_copy(ev, p->held_seq++);
	if (!h)
		return -1;
	/* In first, then the earliest out: the new one may be it. */
	p->held[p->nheld] = h;
	p->held_bytes += h->bytes;
	sift_up(p->held, p->nheld++);
	while (p->nheld > HOLD_EVENTS ||
	       (p->nheld > 1 && p->held_bytes > HOLD_BYTES))
		write_first(p);
	return 0;
}

void pf_hold_drain(struct pf_enc *p)
{
	while (p->nheld)
		write_first(p);
}

void pf_hold_free(struct pf_enc *p)
{
	uint32_t i;

	for (i = 0; i < p->nheld; i++)
		free(p->held[i]);
	free(p->held);
	p->held = NULL;
	p->nheld = 0;
	p->held_bytes = 0;
}
