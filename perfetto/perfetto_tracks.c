/* perfetto/: the Perfetto protobuf encoder of typed events: packets,
 * interning, tracks, annotations; on encode/ and below. */
/* The Perfetto encoder's tracks (perfetto_int.h): small uuids in order of
 * first use, each declared by a TrackDescriptor before its first event
 * and again when named; processes and threads, GPU devices holding their
 * streams, counter and async tracks under their process or device. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfetto_int.h"

void pf_descriptor(struct pf_enc *p, uint32_t kind, const struct pf_track *t,
		       int64_t pid, int64_t tid)
{
	struct tp_buf *b = &p->e.out;
	size_t at = b->len;
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
		/* Each named track on its own: a later name (a device's
		 * model, known after its first event) replaces the first
		 * (Perfetto v58 keeps a mergeable track's first name:
		 * TrackEventTracker::ReserveDescriptorTrack), and tracks of
		 * one name are not merged. v43 reads no such field. */
		tp_pb_u64(b, PF_TD_SIBLING_MERGE_BEHAVIOR,
			  PF_SIBLING_MERGE_NONE);
	}
	if (kind == TP_TEV_COUNTER) {
		s = tp_pb_open(b, PF_TD_COUNTER);
		tp_pb_close(b, s);
	}
	tp_pb_close(b, d);
	tp_pb_close(b, m);
	if (p->track_log && !b->oom)
		tp_buf_put(p->track_log, b->p + at, b->len - at);
}

char *pf_dup_name(const char *s, size_t n)
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
		return pf_dup_name(s, n);
	else
		return NULL;
	return pf_dup_name(tmp, strlen(tmp));
}

/* The track of (kind, k1, k2, s), declared on first use; NULL when the
 * table is full. */
struct pf_track *pf_track_get(struct pf_enc *p, uint32_t kind, int64_t k1,
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
	t->uuid = p->uuid_base + p->ntrk;	/* 1, 2, ...: short varints */
	t->parent = parent;
	t->name = default_name(kind, pid, tid, s, n);
	pf_descriptor(p, kind, t, pid, tid);
	return t;
}

/* The process or device track that holds ev's track. */
struct pf_track *pf_parent_of(struct pf_enc *p, const struct tp_tev *ev)
{
	int dev = ev->track.kind == TP_TEV_GPU_STREAM ||
		  (ev->track.kind == TP_TEV_COUNTER && ev->track.tid < 0);
	uint32_t kind = dev ? TK_DEVICE : TK_PROCESS;

	return pf_track_get(p, kind, ev->track.pid, 0, NULL, 0, 0, ev->track.pid, 0);
}

struct pf_track *pf_track_of(struct pf_enc *p, const struct tp_tev *ev,
				 const char *cname, size_t cn)
{
	const struct tp_tev_track *k = &ev->track;
	struct pf_track *par, *t;
	int plain = k->kind == TP_TEV_THREAD || k->kind == TP_TEV_GPU_STREAM;

	if (plain && p->last_valid && p->last_kind == k->kind &&
	    p->last_pid == k->pid && p->last_tid == k->tid)
		return &p->trk[p->last_idx];
	par = pf_parent_of(p, ev);
	if (!par)
		return NULL;
	switch (k->kind) {
	case TP_TEV_THREAD:
	case TP_TEV_GPU_STREAM:
		t = pf_track_get(p, k->kind, k->pid, k->tid, NULL, 0, par->uuid,
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
		return pf_track_get(p, k->kind, k->pid, 0, cname, cn, par->uuid,
			     k->pid, 0);
	case TP_TEV_ASYNC:
		return pf_track_get(p, k->kind, k->pid, (int64_t)k->id,
			     ev->cat ? ev->cat : "", ev->cat ? ev->catlen : 0,
			     par->uuid, k->pid, 0);
	}
	return NULL;
}

/* The flight recorder's dumps: a chunk of the window may name a track
 * whose descriptor went out with an older chunk. Parents first: a track
 * is always made after its parent, so index order is enough. */
void tp_enc_perfetto_tracks(struct tp_enc *e, struct tp_buf *b)
{
	struct pf_enc *p = (struct pf_enc *)e;
	const struct tp_pf_slot **by = calloc(p->ntrk ? p->ntrk : 1,
					      sizeof(*by));
	struct tp_buf own = e->out, *log = p->track_log;
	uint32_t i;

	if (!by) {
		b->oom = 1;
		return;
	}
	for (i = 0; i < p->tracks.cap; i++)
		if (p->tracks.s[i].hash && p->tracks.s[i].val < p->ntrk)
			by[p->tracks.s[i].val] = &p->tracks.s[i];
	e->out = *b;
	p->track_log = NULL;	/* declared again, not new */
	for (i = 0; i < p->ntrk; i++)
		if (by[i])
			pf_descriptor(p, by[i]->kind, &p->trk[i], by[i]->k1,
				      by[i]->k2);
	p->track_log = log;
	*b = e->out;
	e->out = own;
	free(by);
}

void tp_enc_perfetto_log_tracks(struct tp_enc *e, struct tp_buf *log)
{
	((struct pf_enc *)e)->track_log = log;
}
