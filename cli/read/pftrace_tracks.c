/* The Perfetto reader's tracks (pftrace_int.h): TrackDescriptors by uuid,
 * and the (pid, tid) each track's events get in JSON.
 *
 * - A ThreadDescriptor's track is (pid, tid); a ProcessDescriptor's is
 *   (pid, 0), and its name and legacy_sort_index become process_name and
 *   process_sort_index.
 * - A CounterDescriptor's track holds "C" events of its root's pid.
 * - Any other track is named: a root first declared as "GPU N" or
 *   "GPU N ..." (how tprof declares a device before naming it) gets pid
 *   N, another root a made-up pid (2^30 + its number); under such a
 *   root, a track first declared as "stream S" is the thread (N, S), as
 *   Kineto's GPU streams are; any other named track's slices are async
 *   ("b"/"e") with the track's number as id, under its root's pid;
 *   but a track under a thread named "... (k)" (tprof convert's lane
 *   for slices that overlap without nesting) is that thread.
 *
 * Names are written as metadata events at the end (a track may be
 * renamed after its first event): every process and thread descriptor's,
 * and the names of named roots and streams that held events. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pftrace_int.h"

#define MADE_UP_PID (1ll << 30)

static uint32_t uhash(uint64_t k, uint32_t cap)
{
	k *= 0x9e3779b97f4a7c15ull;
	return (uint32_t)(k >> 32) & (cap - 1);
}

struct pfr_track *pfr_track_find(struct tp_pfr *r, uint64_t uuid)
{
	uint32_t h;

	if (!r->thcap)
		return NULL;
	for (h = uhash(uuid, r->thcap); r->thash[h];
	     h = (h + 1) & (r->thcap - 1))
		if (r->trk[r->thash[h] - 1].uuid == uuid)
			return &r->trk[r->thash[h] - 1];
	return NULL;
}

static int hash_grow(struct tp_pfr *r)
{
	uint32_t cap = r->thcap ? r->thcap * 2 : 256, i, h;
	uint32_t *t = calloc(cap, sizeof(*t));

	if (!t)
		return -1;
	for (i = 0; i < r->ntrk; i++) {
		for (h = uhash(r->trk[i].uuid, cap); t[h];
		     h = (h + 1) & (cap - 1))
			;
		t[h] = i + 1;
	}
	free(r->thash);
	r->thash = t;
	r->thcap = cap;
	return 0;
}

static struct pfr_track *track_new(struct tp_pfr *r, uint64_t uuid)
{
	struct pfr_track *t;
	uint32_t h;

	if (r->ntrk == PFR_TRACKS_MAX) {
		pfr_fail(r, NULL, "more than %u tracks (the reader's bound)",
			 PFR_TRACKS_MAX);
		return NULL;
	}
	if (r->ntrk == r->captrk) {
		uint32_t cap = r->captrk ? r->captrk * 2 : 64;

		t = realloc(r->trk, cap * sizeof(*t));
		if (!t)
			goto oom;
		r->trk = t;
		r->captrk = cap;
	}
	if ((r->ntrk + 1) * 2 > r->thcap && hash_grow(r))
		goto oom;
	t = &r->trk[r->ntrk++];
	memset(t, 0, sizeof(*t));
	t->uuid = uuid;
	t->ctr_mult = 1;
	for (h = uhash(uuid, r->thcap); r->thash[h];
	     h = (h + 1) & (r->thcap - 1))
		;
	r->thash[h] = r->ntrk;
	return t;
oom:
	pfr_fail(r, NULL, "out of memory");
	return NULL;
}

static void set_name(struct pfr_track *t, const uint8_t *s, size_t n)
{
	char *d = malloc(n + 1);

	if (!d)
		return;
	pfr_copy(d, s, n);
	d[n] = 0;
	free(t->name);
	t->name = d;
}

/* ProcessDescriptor (pid 1, process_name 6, legacy_sort_index 3) or
 * ThreadDescriptor (pid 1, tid 2, thread_name 5). */
static int desc_body(struct tp_pfr *r, struct pfr_track *t, struct pbr c,
		     int thread)
{
	struct pbr_field f;
	const char *why;
	int rc;

	t->kind = thread ? PT_THREAD : PT_PROCESS;
	while ((rc = pbr_next(&c, &f, &why)) > 0) {
		if (f.num == 1 && f.wt == PBR_VARINT)
			t->pid = (int32_t)f.v;
		else if (thread && f.num == 2 && f.wt == PBR_VARINT)
			t->tid = (int64_t)f.v;
		else if (f.num == (thread ? 5u : 6u) && f.wt == PBR_LEN)
			set_name(t, f.sub.p, (size_t)(f.sub.end - f.sub.p));
		else if (!thread && f.num == 3 && f.wt == PBR_VARINT) {
			t->has_sort = 1;
			t->sort = (int32_t)f.v;
		}
	}
	return rc < 0 ? pfr_fail(r, c.p, "%s descriptor: %s",
				 thread ? "thread" : "process", why) : 0;
}

/* CounterDescriptor: unit_multiplier 4, is_incremental 5. */
static int counter_body(struct tp_pfr *r, struct pfr_track *t, struct pbr c)
{
	struct pbr_field f;
	const char *why;
	int rc;

	t->kind = PT_COUNTER;
	while ((rc = pbr_next(&c, &f, &why)) > 0) {
		if (f.num == 4 && f.wt == PBR_VARINT && f.v)
			t->ctr_mult = (int64_t)f.v;
		else if (f.num == 5 && f.wt == PBR_VARINT)
			t->ctr_incremental = f.v != 0;
	}
	return rc < 0 ? pfr_fail(r, c.p, "counter descriptor: %s", why) : 0;
}

static int numbered(const char *name, const char *prefix, int64_t *n);

int pfr_descriptor(struct tp_pfr *r, struct pbr c)
{
	struct pbr whole = c, body;
	struct pbr_field f;
	struct pfr_track *t;
	uint64_t uuid = 0;
	const char *why;
	int rc, has = 0, fresh;

	while ((rc = pbr_next(&c, &f, &why)) > 0)
		if (f.num == 1 && f.wt == PBR_VARINT) {
			uuid = f.v;
			has = 1;
		}
	if (rc < 0)
		return pfr_fail(r, c.p, "TrackDescriptor: %s", why);
	if (!has)
		return 0;	/* no uuid: nothing can refer to it */
	t = pfr_track_find(r, uuid);
	fresh = !t;
	if (!t && !(t = track_new(r, uuid)))
		return -1;
	c = whole;
	while (pbr_next(&c, &f, &why) > 0) {
		body = f.sub;
		if (f.num == 5 && f.wt == PBR_VARINT && f.v != uuid)
			t->parent = f.v;
		else if ((f.num == 2 || f.num == 10 || f.num == 13) &&
			 f.wt == PBR_LEN && t->kind != PT_PROCESS &&
			 t->kind != PT_THREAD)
			set_name(t, body.p, (size_t)(body.end - body.p));
		else if ((f.num == 3 || f.num == 4) && f.wt == PBR_LEN) {
			if (desc_body(r, t, body, f.num == 4))
				return -1;
		} else if (f.num == 8 && f.wt == PBR_LEN &&
			   counter_body(r, t, body))
			return -1;
	}
	if (fresh && t->kind == PT_NAMED)
		t->numbered = numbered(t->name, t->parent ? "stream " : "GPU ",
				       &t->number);
	return 0;
}

struct pfr_track *pfr_track_pseudo(struct tp_pfr *r, struct pfr_seq *s)
{
	struct pfr_track *t;
	char name[48];
	uint64_t uuid;

	if (s->pseudo_track)
		return pfr_track_find(r, s->pseudo_track);
	/* Out of the way of writers' uuids, one per sequence. */
	uuid = 0xfffffff000000000ull | s->id;
	t = pfr_track_find(r, uuid);
	if (!t && !(t = track_new(r, uuid)))
		return NULL;
	snprintf(name, sizeof(name), "sequence %u", s->id);
	set_name(t, (const uint8_t *)name, strlen(name));
	t->kind = PT_THREAD;
	t->pid = MADE_UP_PID - 1;
	t->tid = s->id;
	s->pseudo_track = uuid;
	return t;
}

static struct pfr_track *parent_of(struct tp_pfr *r, struct pfr_track *t)
{
	return t->parent ? pfr_track_find(r, t->parent) : NULL;
}

/* The track's root, following parents (a cycle stops the walk). */
static struct pfr_track *root_of(struct tp_pfr *r, struct pfr_track *t)
{
	struct pfr_track *p;
	int i;

	for (i = 0; i < 64 && (p = parent_of(r, t)); i++)
		t = p;
	return t;
}

/* N of a name "PREFIX N" or "PREFIX N ...". */
static int numbered(const char *name, const char *prefix, int64_t *n)
{
	size_t k = strlen(prefix);
	char *end;
	long long v;

	if (!name || strncmp(name, prefix, k) || name[k] < '0' ||
	    name[k] > '9')
		return 0;
	v = strtoll(name + k, &end, 10);
	if (*end && *end != ' ')
		return 0;
	*n = v;
	return 1;
}

/* The pid of a root track (or of a thread's or process's track). */
static int64_t root_pid(struct tp_pfr *r, struct pfr_track *t)
{
	if (t->kind == PT_PROCESS || t->kind == PT_THREAD)
		return t->pid;
	if (!t->parent && t->numbered)
		return t->number;
	if (!t->jpid) {
		r->nroots++;
		t->jpid = MADE_UP_PID + r->nroots;
	}
	return t->jpid;
}

/* The nearest thread or process ancestor's pid, else the root's. */
static int64_t pid_above(struct tp_pfr *r, struct pfr_track *t)
{
	struct pfr_track *p = t;
	int i;

	for (i = 0; i < 64 && p; i++, p = parent_of(r, p))
		if (p->kind == PT_PROCESS || p->kind == PT_THREAD)
			return p->pid;
	return root_pid(r, root_of(r, t));
}

/* tprof convert's lane of a thread (perfetto_lanes.c): a named track
 * under the thread, named "<thread's name> (k)" (the name the thread had
 * then, which metadata later in the trace may change), holding slices
 * that overlap the thread's without nesting. Its slices are the
 * thread's. */
static int is_lane(const struct pfr_track *t)
{
	const char *p = t->name ? strrchr(t->name, '(') : NULL;
	const char *d;

	if (!p || p == t->name || p[-1] != ' ')
		return 0;
	for (d = p + 1; *d >= '0' && *d <= '9'; d++)
		;
	return d > p + 1 && d[0] == ')' && !d[1];
}

void pfr_track_use(struct tp_pfr *r, struct pfr_track *t)
{
	struct pfr_track *root, *par;

	root = root_of(r, t);
	root->used = 1;
	t->used = 1;
	if (t->role)
		return;
	switch (t->kind) {
	case PT_THREAD:
		t->role = PR_THREAD;
		par = parent_of(r, t);
		t->jpid = t->pid || !par ? t->pid : pid_above(r, par);
		t->jtid = t->tid;
		return;
	case PT_PROCESS:
		t->role = PR_THREAD;
		t->jpid = t->pid;
		t->jtid = 0;
		return;
	case PT_COUNTER:
		t->role = PR_COUNTER;
		t->jpid = pid_above(r, t);
		return;
	}
	par = parent_of(r, t);
	if (par && par->kind == PT_THREAD && is_lane(t)) {
		t->role = PR_THREAD;
		t->jpid = par->pid;
		t->jtid = par->tid;
		return;
	}
	if (par && par == root && root->kind == PT_NAMED && root->numbered &&
	    t->numbered) {
		t->role = PR_THREAD;
		t->jpid = root->number;
		t->jtid = t->number;
		return;
	}
	t->role = PR_ASYNC;
	t->jpid = pid_above(r, t);
	t->async_id = (uint64_t)(t - r->trk) + 1;
}

static void meta(struct tp_pfr *r, const char *what, int64_t pid,
		 int64_t tid, const char *key, const char *s, int64_t v)
{
	struct tp_buf *b = &r->out;

	pfr_begin_event(r);
	tp_buf_lit(b, "{\"ph\":\"M\",\"name\":");
	tp_json_str(b, what);
	tp_buf_lit(b, ",\"pid\":");
	tp_json_i64(b, pid);
	tp_buf_lit(b, ",\"tid\":");
	tp_json_i64(b, tid);
	tp_buf_lit(b, ",\"args\":{");
	tp_json_str(b, key);
	tp_buf_char(b, ':');
	if (s)
		tp_json_str(b, s);
	else
		tp_json_i64(b, v);
	tp_buf_lit(b, "}}");
}

static int lane_of_thread(struct tp_pfr *r, struct pfr_track *t)
{
	struct pfr_track *par = parent_of(r, t);

	return par && par->kind == PT_THREAD;
}

/* A track that names (jpid, jtid) as a stream (lanes of a thread are
 * the thread's, named by its descriptor). */
static int names_stream(struct tp_pfr *r, struct pfr_track *t)
{
	return t->kind == PT_NAMED && t->used && t->name &&
	       t->role == PR_THREAD && !lane_of_thread(r, t);
}

/* A stream named once: tprof convert's lanes ("stream 7 (2)", a
 * named track beside the stream for slices that overlap without
 * nesting) read back as the stream's own (pid, tid), which keeps the
 * first name. The set holds a hash of (pid, tid): only a hit is checked
 * against the tracks before, so two streams whose hashes collide both
 * keep their names. */
static int stream_named(struct tp_pfr *r, struct pfr_idset *seen,
			struct pfr_track *t)
{
	uint64_t k = (uint64_t)t->jpid * 0x9e3779b97f4a7c15ull ^
		     (uint64_t)t->jtid;
	struct pfr_track *u;

	if (!pfr_idset(seen, k, 0, 1))
		return 0;
	for (u = r->trk; u < t; u++)
		if (u->jpid == t->jpid && u->jtid == t->jtid &&
		    names_stream(r, u))
			return 1;
	return 0;
}

void pfr_names(struct tp_pfr *r)
{
	struct pfr_idset seen = { 0 };
	uint32_t i;

	for (i = 0; i < r->ntrk; i++) {
		struct pfr_track *t = &r->trk[i];

		if (t->kind == PT_PROCESS) {
			if (t->name)
				meta(r, "process_name", t->pid, 0, "name",
				     t->name, 0);
			if (t->has_sort)
				meta(r, "process_sort_index", t->pid, 0,
				     "sort_index", NULL, t->sort);
		} else if (t->kind == PT_THREAD && t->name) {
			meta(r, "thread_name", t->used ? t->jpid : t->pid,
			     t->tid, "name", t->name, 0);
		} else if (t->kind == PT_NAMED && t->used && t->name &&
			   !t->parent) {
			meta(r, "process_name", root_pid(r, t), 0, "name",
			     t->name, 0);
		} else if (names_stream(r, t) && !stream_named(r, &seen, t)) {
			meta(r, "thread_name", t->jpid, t->jtid, "name",
			     t->name, 0);
		}
	}
	free(seen.keys);
}

void pfr_tracks_free(struct tp_pfr *r)
{
	uint32_t i;
	struct pfr_open *o;

	for (i = 0; i < r->ntrk; i++) {
		free(r->trk[i].name);
		while ((o = r->trk[i].open)) {
			r->trk[i].open = o->below;
			free(o);
		}
		while ((o = r->trk[i].early)) {
			r->trk[i].early = o->below;
			free(o);
		}
	}
	free(r->trk);
	free(r->thash);
}
