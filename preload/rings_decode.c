/* preload/: the library's life in the process (constructor, signals, fork,
 * exec), the program's capture gates and tprof's C API; the top layer. */
/* tprof_rings_decode: a killed process's rings file (record/ringfile.h)
 * turned into trace events by this library's own formatters, for `tprof
 * recover` (cli/recover/recover_rings.c), which dlopens libtprof.so with
 * TPROF_DISABLE=1 so that the constructor only registers the API tables.
 *
 * Each ring is read from its position at the file's published sync point
 * (what the .tmp holds before its synced length) to its head; kernel
 * names come from the file's notes, never from this process's symbols.
 * Not decoded (counted as unreadable): records whose API writes its own
 * events (NVTX ranges: their strings and open ranges were the writer's
 * state) and records cut by the kill. Call stacks are not in the file.
 *
 * The events are written in the .tmp's format: JSON lines, or (a
 * .pftrace.gz.tmp) Perfetto packets from an encoder of its own, the
 * trace's second writer (tp_enc_meta.writer = 1): its own packet
 * sequence, clock snapshot, interning and track uuids, so what it
 * appends after the cut needs nothing the killed writer wrote. Each
 * ring's thread is named by a thread_name event and its drops are the
 * args of a "tprof rings" instant on its track. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "stacks/symbols.h"
#include "record/api.h"
#include "encode/json.h"
#include "record/ringfile.h"
#include "record/spill.h"
#include "encode/tev.h"
#include "hooks/resolve.h"

struct dec {
	const struct tp_rf_view *v;
	tp_rf_out_fn out;
	void *arg;
	struct tp_rf_counts *c;
	struct tp_buf b;
	char head[64];		/* "pid":P,"tid":T,"ts": */
	size_t head_len;
	int64_t pid, tid;
	struct tp_targs args;
	struct tp_enc *pf;	/* NULL: JSON */
	int64_t last_end;	/* of the region's last event */
	uint64_t lost;		/* the region's spilled slots lost */
	/* a record and its extension, contiguous where they wrap */
	struct tp_event scratch[1 + TP_EV_EXT_MAX];
};

static int64_t trace_ns(const struct tp_rf_hdr *h, uint64_t ticks)
{
	return (int64_t)(tp_clock_to_unix(&h->map, ticks) -
			 (uint64_t)h->base_ns);
}

static void put_names(const struct tp_rf_view *v, struct tp_rf_counts *c)
{
	const struct tp_rf_note *n;
	uint64_t off = 0;

	while ((n = tp_rf_view_next_note(v, &off))) {
		if (n->type == TP_RF_NOTE_FN && n->len > sizeof(*n))
			tp_sym_note_function((const void *)(uintptr_t)n->a,
					     n->s);
		else if (n->type == TP_RF_NOTE_HANDLE)
			tp_sym_note_kernel_handle((const void *)(uintptr_t)
						  n->a, (const void *)
						  (uintptr_t)n->b);
		else if (n->type == TP_RF_NOTE_ENDED)
			c->dropped += n->b;
	}
}

static int flush(struct dec *d)
{
	int rc = 0;

	if (d->b.oom)
		return -1;
	if (d->b.len)
		rc = d->out(d->b.p, d->b.len, d->arg);
	d->b.len = 0;
	return rc;
}

/* One X event as the writer's put_event makes it, less what needs the
 * live process (capture gates, call stacks, the summary). */
static void put_record(struct dec *d, const struct tp_event *e)
{
	const struct tp_api *api = tp_api_get(e->api);
	const struct tp_rf_hdr *h = d->v->h;
	struct tp_tev ev;
	int64_t s, f;

	if (!api || api->emit) {
		d->c->unreadable++;
		return;
	}
	s = trace_ns(h, e->start);
	f = trace_ns(h, e->end);
	tp_targs_reset(&d->args);
	tp_targs_int(&d->args, "ret", e->ret);
	if (e->corr)
		tp_targs_uint(&d->args, "correlation", e->corr);
	if (api->args)
		api->args(&d->args, e);
	tp_targs_bool(&d->args, "from_rings", 1);
	memset(&ev, 0, sizeof(ev));
	ev.track.kind = TP_TEV_THREAD;
	ev.track.pid = d->pid;
	ev.track.tid = d->tid;
	ev.phase = TP_TEV_COMPLETE;
	ev.name = api->name;
	ev.namelen = strlen(api->name);
	ev.cat = api->cat;
	ev.catlen = strlen(api->cat);
	ev.ts_ns = s;
	ev.dur_ns = f > s ? f - s : 0;
	ev.args = d->args.a;
	ev.nargs = d->args.n;
	if (d->pf)
		tp_enc_event_into(d->pf, &d->b, &ev);
	else
		tp_tev_json_put(&d->b, &ev);
	if (ev.ts_ns + ev.dur_ns > d->last_end)
		d->last_end = ev.ts_ns + ev.dur_ns;
	d->c->records++;
}

static const struct tp_event *record_at(struct dec *d,
					const struct tp_event *slots,
					uint64_t mask, uint64_t pos, unsigned n)
{
	unsigned i;

	if ((pos & mask) + n <= mask + 1)
		return &slots[pos & mask];
	for (i = 0; i < n; i++)
		d->scratch[i] = slots[(pos + i) & mask];
	return d->scratch;
}

/* Perfetto: the thread's name, and its drops as the args of an instant
 * after its last event (a name has no args in Perfetto). */
static void pf_thread(struct dec *d, const struct tp_thread *t,
		      const char *name, int drops)
{
	struct tp_tev ev;

	memset(&ev, 0, sizeof(ev));
	ev.track.kind = TP_TEV_THREAD;
	ev.track.pid = d->pid;
	ev.track.tid = d->tid;
	if (!drops) {
		ev.phase = TP_TEV_THREAD_NAME;
		ev.name = name;
		ev.namelen = strlen(name);
		tp_enc_event_into(d->pf, &d->b, &ev);
		return;
	}
	tp_targs_reset(&d->args);
	tp_targs_uint(&d->args, "dropped", t->ring.dropped - t->dropped_base);
	if (d->lost)
		tp_targs_uint(&d->args, "spilled_lost", d->lost);
	tp_targs_bool(&d->args, "from_rings", 1);
	ev.phase = TP_TEV_INSTANT;
	ev.name = "tprof rings";
	ev.namelen = 11;
	ev.cat = "tprof";
	ev.catlen = 5;
	ev.ts_ns = d->last_end;
	ev.args = d->args.a;
	ev.nargs = d->args.n;
	tp_enc_event_into(d->pf, &d->b, &ev);
}

static void thread_name(struct dec *d, const struct tp_thread *t)
{
	char name[sizeof(t->name) + 1];

	memcpy(name, t->name, sizeof(t->name));
	name[sizeof(t->name)] = '\0';
	if (d->pf) {
		pf_thread(d, t, name, 0);
		return;
	}
	tp_buf_lit(&d->b, ",\n{\"ph\":\"M\",\"name\":\"thread_name\",");
	tp_buf_put(&d->b, d->head, d->head_len - 6);	/* less ,"ts": */
	tp_buf_lit(&d->b, ",\"args\":{\"name\":");
	tp_json_str(&d->b, name);
	tp_buf_lit(&d->b, ",\"dropped\":");
	tp_json_u64(&d->b, t->ring.dropped - t->dropped_base);
	if (d->lost) {
		tp_buf_lit(&d->b, ",\"spilled_lost\":");
		tp_json_u64(&d->b, d->lost);
	}
	tp_buf_lit(&d->b, "}}");
}

/* At a spill segment, *pos moves past it and its slots that held
 * records are added to *lost: they were in chunks of the killed
 * process's memory, gone with it. 0 when *pos is in the ring's slots. */
static int spilled(const struct tp_ring *r, uint64_t *pos, uint64_t head,
		   uint64_t *lost)
{
	uint64_t first, end = tp_spill_seg_end(r, *pos, &first);

	if (end == *pos)
		return 0;
	if (end > head)
		end = head;
	if (first < *pos)
		first = *pos;
	if (end > first)
		*lost += end - first;
	*pos = end;
	return 1;
}

/* Positions [pos, head) that were written to the ring's slots, not to
 * spill chunks; *lost: the spilled slots among them. */
static uint64_t ring_span(const struct tp_ring *r, uint64_t pos,
			  uint64_t head, uint64_t *lost)
{
	uint64_t n = 0;

	*lost = 0;
	while (pos < head) {
		if (spilled(r, &pos, head, lost))
			continue;
		n++;
		pos++;
	}
	return n;
}

/* The records of region i from its synced position to its head. */
static int put_region(struct dec *d, unsigned i)
{
	const struct tp_rf_hdr *h = d->v->h;
	const struct tp_rf_region *reg = tp_rf_view_region(d->v, i);
	const struct tp_thread *t;
	const struct tp_event *slots, *e;
	uint64_t pos, head, span, skip = 0, mask = h->n_slots - 1;

	if (!reg || h->state[i] != TP_RF_USED)
		return 0;
	t = (const struct tp_thread *)((const char *)reg + TP_RF_THREAD_OFF);
	slots = (const struct tp_event *)((const char *)reg + TP_RF_SLOTS_OFF);
	pos = reg->sync_pos[h->gen & 1];
	head = t->ring.head;
	span = head < pos ? 0 : ring_span(&t->ring, pos, head, &d->lost);
	d->c->threads++;
	d->c->spilled_lost += d->lost;
	/* since this trace began (an earlier one: a failed exec) */
	d->c->dropped += t->ring.dropped - t->dropped_base;
	d->pid = h->pid;
	d->tid = t->tid;
	d->head_len = (size_t)snprintf(d->head, sizeof(d->head),
				       "\"pid\":%d,\"tid\":%d,\"ts\":",
				       (int)h->pid, (int)t->tid);
	thread_name(d, t);
	d->last_end = 0;
	if (head < pos || span > h->n_slots) {
		d->c->unreadable += head > pos ? head - pos : 0;
		if (d->pf)
			pf_thread(d, t, NULL, 1);
		return flush(d);
	}
	while (pos < head) {
		unsigned n;

		if (spilled(&t->ring, &pos, head, &skip))
			continue;
		n = 1 + (slots[pos & mask].flags & TP_EV_EXT_MASK);

		if (n > head - pos) {		/* cut: cannot be */
			d->c->unreadable++;
			break;
		}
		e = record_at(d, slots, mask, pos, n);
		put_record(d, e);
		pos += n;
		if (d->b.len >= 65536 && flush(d) < 0)
			return -1;
	}
	if (d->pf)
		pf_thread(d, t, NULL, 1);
	return flush(d);
}

static int ends_with(const char *s, const char *suf)
{
	size_t n = strlen(s), k = strlen(suf);

	return n >= k && !strcmp(s + n - k, suf);
}

/* A .pftrace.gz.tmp, or a Perfetto flight file (record/flightfile.h:
 * its name ends in .pftrace): the decoder's own Perfetto encoder, begun
 * into b. */
static int pf_start(struct dec *d, const struct tp_rf_hdr *h)
{
	struct tp_enc_meta m = { .trace_name = h->tmp_name,
				 .base_unix_ns = h->base_ns, .writer = 1 };

	if (!ends_with(h->tmp_name, ".pftrace.gz.tmp") &&
	    !ends_with(h->tmp_name, ".pftrace"))
		return 0;
	d->pf = tp_enc_perfetto_new();
	if (!d->pf)
		return -1;
	tp_enc_begin(d->pf, &m);
	tp_buf_put(&d->b, d->pf->out.p, d->pf->out.len);
	d->pf->out.len = 0;
	return d->pf->out.oom ? -1 : 0;
}

__attribute__((visibility("default")))
int tprof_rings_decode(const char *path, tp_rf_out_fn out, void *arg,
		       struct tp_rf_counts *c, char *why, size_t whylen)
{
	struct tp_rf_view v;
	struct dec d;
	unsigned i;
	int rc = 0;

	memset(c, 0, sizeof(*c));
	if (tp_rf_open_view(path, &v, why, whylen) < 0)
		return -1;
	if (!v.h->clock_ready || !v.h->gen ||
	    v.h->n_slots < 2 || (v.h->n_slots & (v.h->n_slots - 1))) {
		snprintf(why, whylen, "the process died before its first "
			 "sync point");
		tp_rf_close_view(&v);
		return -1;
	}
	memset(&d, 0, sizeof(d));
	d.v = &v;
	d.out = out;
	d.arg = arg;
	d.c = c;
	tp_sym_set_offline();
	tp_resolve_set_quiet();
	put_names(&v, c);
	rc = pf_start(&d, v.h);
	for (i = 0; i < v.h->n_regions && i < TP_RF_MAX_REGIONS && !rc; i++)
		rc = put_region(&d, i);
	if (rc < 0)
		snprintf(why, whylen, "cannot write the decoded events");
	tp_buf_free(&d.b);
	tp_enc_free(d.pf);
	tp_rf_close_view(&v);
	return rc;
}
