/* cupti/: the CUPTI client: GPU activity, API callbacks, devices, GPU
 * tracks; on util/ .. output/. */
/* CUPTI activity records into trace events, on the writer thread.
 *
 * GPU ops go on (device, stream) tracks with Kineto's categories and
 * args. Each is joined to its launch by a flow: one "s" on the CPU call
 * (written with the first op of that correlation) and an "f" per op.
 *
 * An op's duration is always its record's end - start. Its times come
 * from tprof's own tick clock (CUPTI's timestamp callback returns
 * nanoseconds, a fixed linear function of the ticks the hooks read, and
 * both go through tp_trace_ns), so they need no correction; what is done
 * anyway is counted: an op that starts before
 * its launch call is moved whole to the call's start ("shifted"), an op
 * that overlaps another of its track goes to the next lane of the track
 * ("overlapped", tracks.h), a record whose time is far outside the trace
 * (another tool replaced the timestamp source) is not placed
 * ("unclocked").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "capture/capture.h"
#include "record/corrmap.h"
#include "encode/flow_ids.h"
#include "summary/proc_summary.h"
#include "session/session.h"
#include "stacks/symbols.h"
#include "clockmap.h"
#include "cupti.h"
#include "devices.h"
#include "tracks.h"

static struct tp_cupti_counts N;
static int raw_ts;
static int64_t mem_allocated[TP_MAX_DEVICES];
static uint64_t dev_seen;	/* devices with events: their tracks get names */

/* Kernel names: CUPTI shares one name pointer among a kernel's records,
 * so the demangled name (and its JSON string) is cached by that pointer; but the
 * pointer is CUPTI's and a module unload frees it (a later module's name
 * may get the same address), so a hit also compares the name itself,
 * copied when it was converted. */
#define NAMES 4096
static struct {
	const char *key;
	char *mangled;	/* the name as CUPTI gave it, copied */
	char *json;	/* demangled, as a JSON string */
	size_t len;
	char *raw;	/* demangled */
	size_t rawlen;
} names[NAMES];
static int64_t clock_lo = INT64_MIN, clock_hi = INT64_MAX;
static struct tp_cclock_line cupti_line;	/* CUPTI's clock to Unix */

void tp_cupti_convert_init(int raw_timestamps)
{
	raw_ts = raw_timestamps;
}

const struct tp_cupti_counts *tp_cupti_counts(void)
{
	return &N;
}

/* For collect.c, which counts buffers cut short. */
struct tp_cupti_counts *tp_cupti_counts_w(void)
{
	return &N;
}

/* tprof's timestamp callback returns nanoseconds, as cupti_activity.h
 * asks ("The returned timestamp must be in nanoseconds"), from ONE fixed
 * linear function of the hooks' ticks, set before the callback is
 * registered: ns = ns0 + (ticks - t0) * mult / 2^48 (the identity when
 * the ticks are CLOCK_MONOTONIC_RAW ns already). A record's time goes
 * back to ticks through its exact inverse (16 fractional bits kept) and
 * then through the same mapping as every CPU event, so the two
 * timelines cannot drift apart (test_gpu_tracks.c). */
static struct {
	uint64_t t0, ns0, mult;
} K = { 0, 0, 1ull << TP_CLOCK_SHIFT };

void tp_cupti_ns_init(void)
{
	struct timespec ms = { 0, 1000000 };
	struct tp_clock_point a, b;

	if (!tp_clock_use_tsc)
		return;
	a = tp_clock_sample();
	nanosleep(&ms, NULL);
	b = tp_clock_sample();
	if (b.ticks <= a.ticks || b.raw_ns <= a.raw_ns)
		return;
	K.mult = (uint64_t)((((unsigned __int128)(b.raw_ns - a.raw_ns)
			      << TP_CLOCK_SHIFT) + (b.ticks - a.ticks) / 2) /
			    (b.ticks - a.ticks));
	K.t0 = a.ticks;
	K.ns0 = a.raw_ns;
}

uint64_t tp_cupti_ns_now(void)
{
	uint64_t t = tp_ticks();
	unsigned __int128 d;

	if (t >= K.t0) {
		d = (unsigned __int128)(t - K.t0) * K.mult;
		return K.ns0 + (uint64_t)(d >> TP_CLOCK_SHIFT);
	}
	d = (unsigned __int128)(K.t0 - t) * K.mult;
	return K.ns0 - (uint64_t)(d >> TP_CLOCK_SHIFT);
}

/* The callback's ns as Unix ns through the trace's map m: ticks with 16
 * fractional bits, then m's line, rounded once. */
static uint64_t ns_to_unix(const struct tp_clock_map *m, uint64_t ns)
{
	const __int128 half = (__int128)1 << (TP_CLOCK_SHIFT + 15);
	const __int128 far = (__int128)1 << 50;	/* 13 days: unclocked */
	__int128 dns = (__int128)(int64_t)(ns - K.ns0), q, d;

	if (dns > far || dns < -far)
		dns = dns > 0 ? far : -far;
	q = (dns * ((__int128)1 << (TP_CLOCK_SHIFT + 16))) / (__int128)K.mult;
	d = ((__int128)K.t0 << 16) + q - ((__int128)m->base_ticks << 16);
	d = d * (__int128)m->mult;
	d = d >= 0 ? (d + half) >> (TP_CLOCK_SHIFT + 16) :
		     -((-d + half) >> (TP_CLOCK_SHIFT + 16));
	return m->base_ns + (uint64_t)(int64_t)d + (uint64_t)m->unix_offset;
}

/* With tprof's timestamp callback, t is in its ns (above); else in
 * CUPTI's own clock, mapped by the line collect.c fits (clockmap.h). */
static int64_t rel_ns(const struct tp_clock_map *m, uint64_t t)
{
	uint64_t unix_ns = raw_ts ? ns_to_unix(m, t) :
				    (uint64_t)tp_cclock_unix(&cupti_line, t);

	return (int64_t)(unix_ns - (uint64_t)tp_sess.base_ns);
}

int64_t tp_cupti_trace_ns(const struct tp_clock_map *m, uint64_t t)
{
	return rel_ns(m, t);
}

void tp_cupti_convert_line(const struct tp_cclock_line *l)
{
	cupti_line = *l;
}

void tp_cupti_convert_window(int64_t lo_ns, int64_t hi_ns)
{
	clock_lo = lo_ns;
	clock_hi = hi_ns;
}

/* What an op is called: its category, its name and, for kernels, the
 * name as cached JSON; every length known (the JSON encoder copies them
 * with no escape pass: tev.h's plain_names). */
struct op_name {
	const char *cat, *name, *json;
	size_t catlen, namelen, jsonlen;
};

/* A literal category, its length folded. */
#define CAT(s) .cat = (s), .catlen = sizeof(s) - 1

/* The name demangled, and as a JSON string, into n; -1 when out of
 * memory. */
static int kernel_name(const char *name, struct op_name *n)
{
	uintptr_t h = ((uintptr_t)name >> 4) * 0x9e3779b97f4a7c15ull;
	unsigned i = (unsigned)(h >> 40) & (NAMES - 1);
	struct tp_buf e = { 0 };
	char *dem;

	if (!name)
		name = "?";
	if (names[i].key != name || strcmp(names[i].mangled, name)) {
		char *mangled = strdup(name);

		if (!mangled)
			return -1;
		dem = strdup(name);
		if (dem)
			dem = tp_sym_demangle(dem);
		if (!dem)
			dem = strdup(name);
		if (dem)
			tp_json_str(&e, dem);
		if (!dem || e.oom) {
			free(dem);
			free(mangled);
			tp_buf_free(&e);
			return -1;
		}
		free(names[i].json);
		free(names[i].raw);
		free(names[i].mangled);
		names[i].key = name;
		names[i].mangled = mangled;
		names[i].json = e.p;
		names[i].len = e.len;
		names[i].raw = dem;
		names[i].rawlen = strlen(dem);
	}
	n->name = names[i].raw;
	n->namelen = names[i].rawlen;
	n->json = names[i].json;
	n->jsonlen = names[i].len;
	return 0;
}

/* The op being written: its event and args. With JSON output the event
 * is written up to its args when opened and each arg is appended as it
 * is added (tp_tev_json_open), so one formatter per record kind serves
 * both encoders and nothing is built to be walked again; the array is
 * still filled: the summary reads it, and Perfetto is given it whole
 * when the op closes. Only the writer thread converts records. */
static struct tp_targs A;
static struct tp_tev X = {
	.static_keys = 1,	/* literals */
	.plain_names = 1,	/* struct op_name's */
};

static void open_op(struct tp_buf *b, enum tp_tev_phase phase,
		    enum tp_tev_track_kind kind, const struct op_name *n,
		    uint32_t pid, int64_t tid, int64_t s, int64_t e)
{
	X.track.kind = kind;
	X.track.pid = pid;
	X.track.tid = tid;
	X.phase = phase;
	X.cat = n->cat;
	X.catlen = n->catlen;
	X.name = n->name;
	X.namelen = n->namelen;
	X.name_json = n->json;
	X.name_json_len = n->jsonlen;
	X.ts_ns = s;
	X.dur_ns = e - s;
	X.flow_in = 0;
	tp_targs_reset(&A);
	if (!tp_tev_sink)
		tp_tev_json_open(b, &X, &A);
}

static void close_op(struct tp_buf *b)
{
	X.args = A.a;
	X.nargs = A.n;
	if (!tp_tev_sink)
		tp_tev_json_close(b, &X, &A);
	else
		tp_tev_put(b, &X);
}

/* The summary takes each GPU op as the trace has it, args typed. */
static void summarize(struct tp_buf *b, const char *cat, const char *name,
		      uint32_t pid, uint32_t tid, int64_t s, int64_t e,
		      uint32_t corr)
{
	if (b->oom)
		return;
	tp_psum_tspan(cat, name, pid, tid, s, e - s, corr, A.a, A.n);
}

/* A flow's events differ only in track, time and id: one template per
 * side, set once. The launch's side ("s") is a CPU thread, the op's
 * ("f", bound to the enclosing slice) a GPU stream. */
#define FLOW(kind_, phase_) {						\
	.track.kind = (kind_), .phase = (phase_), .name = "ac2g",	\
	.namelen = 4, .cat = "ac2g", .catlen = 4, .plain_names = 1,	\
	.flow_binds_enclosing = (phase_) == TP_TEV_FLOW_END,		\
}

static struct tp_tev flows[2] = {
	FLOW(TP_TEV_THREAD, TP_TEV_FLOW_START),
	FLOW(TP_TEV_GPU_STREAM, TP_TEV_FLOW_END),
};

static void put_flow(struct tp_buf *b, int end, uint64_t id, uint32_t pid,
		     uint32_t tid, int64_t ts)
{
	struct tp_tev *ev = &flows[!!end];

	ev->track.pid = pid;
	ev->track.tid = tid;
	ev->ts_ns = ts;
	ev->flow_id = id;
	tp_tev_put(b, ev);
}

/* Whether the schedule drops this op: with its launch when the launch
 * was seen (the GPU work of a kept step may run after the step ends).
 * A launch made while nothing was recorded is not seen: one older than
 * every kept launch (a wait step before the window) goes, others go by
 * their own start. Not counted as lost. */
static int dropped(const struct tp_clock_map *m, const struct tp_corr *launch,
		   uint32_t corr, uint64_t start)
{
	uint32_t lowest;

	if (launch)
		return !launch->kept;
	if (!tp_capture_filtering())
		return 0;
	lowest = tp_corr_lowest_kept();
	if (corr && (!lowest || corr < lowest))
		return 1;
	return start && !tp_capture_kept_ns(rel_ns(m, start));
}

/* The times an op is written with, [*s, *e] in ns from the trace base,
 * and its track (a lane of (pid, tid)); NULL when it is not written: no
 * time (an incomplete record), end before start, a time outside the
 * trace's clock, or no lane free. Each case is counted. */
static struct tp_track *place(const struct tp_clock_map *m, uint32_t pid,
			      uint32_t tid, const struct tp_corr *launch,
			      uint64_t start, uint64_t end, int64_t *s,
			      int64_t *e)
{
	struct tp_track *tr;
	int late;

	if (!start || !end) {
		N.zero_ts++;
		return NULL;
	}
	*s = rel_ns(m, start);
	*e = rel_ns(m, end);
	if (*e < *s || *s < clock_lo || *e > clock_hi) {
		N.unclocked++;
		return NULL;
	}
	/* No op starts before the call that launched it: a clock mapping
	 * that says otherwise is wrong by at least that much. */
	if (launch && *s < launch->ts_ns) {
		if ((uint64_t)(launch->ts_ns - *s) > N.shifted_max_ns)
			N.shifted_max_ns = (uint64_t)(launch->ts_ns - *s);
		*e += launch->ts_ns - *s;
		*s = launch->ts_ns;
		N.shifted++;
	}
	tr = tp_track_place(pid, tid, *s, *e, &late);
	if (!tr) {
		N.unplaced++;
		return NULL;
	}
	N.overlapped += tr->lane != 0;
	N.late += late;
	return tr;
}

/* Perfetto: the op's slice ends the flow its launch's slice began
 * (output/writer.c); set before close_op. A Perfetto flow has one start
 * and one end, where JSON's "s" fans out to every op of the launch (a
 * graph's kernels): the k-th op after the first ends a flow of its own
 * (encode/flow_ids.h), begun by an instant on the launch's slice. */
static void flow_in(struct tp_buf *b, struct tp_corr *launch, uint32_t corr)
{
	uint64_t id;

	X.flow_in = 0;
	if (!tp_tev_sink || !launch || !corr)
		return;
	id = tp_flow_fanout(corr, launch->flowed);
	if (id != corr)
		put_flow(b, 0, id, (uint32_t)tp_sess.pid, launch->tid,
			 launch->ts_ns);
	if (launch->flowed < UINT32_MAX)
		launch->flowed++;
	X.flow_in = id;
}

/* The arrow from the launch to this op; the launch's "s" goes with the
 * first op of its correlation id. Perfetto has it on the slices. */
static void link(struct tp_buf *b, struct tp_corr *launch, uint32_t corr,
		 uint32_t pid, uint32_t tid, int64_t s)
{
	if (!corr)
		return;
	if (!launch) {
		N.unlinked++;
		return;
	}
	if (tp_tev_sink)
		return;
	if (!launch->flowed) {
		put_flow(b, 0, corr, (uint32_t)tp_sess.pid, launch->tid,
			 launch->ts_ns);
		launch->flowed = 1;
	}
	put_flow(b, 1, corr, pid, tid, s);
}

static void put_common(uint32_t dev, uint32_t ctx, uint32_t stream,
		       uint32_t corr)
{
	if (dev < TP_MAX_DEVICES)
		dev_seen |= 1ull << dev;
	tp_targs_uint(&A, "device", dev);
	tp_targs_uint(&A, "context", ctx);
	tp_targs_uint(&A, "stream", stream);
	tp_targs_uint(&A, "correlation", corr);
}

static void put_graph(uint32_t graph, uint64_t node)
{
	if (!graph && !node)
		return;
	tp_targs_uint(&A, "graph id", graph);
	tp_targs_uint(&A, "graph node id", node);
}

static uint64_t kernel(struct tp_buf *b, const struct tp_clock_map *m,
		       const CUpti_ActivityKernel10 *k)
{
	struct tp_corr *launch = tp_corr_find(k->correlationId);
	struct op_name n = { CAT("kernel") };
	struct tp_occupancy o;
	struct tp_track *tr;
	int64_t s, e;

	tp_context_note(k->contextId, k->deviceId);
	if (dropped(m, launch, k->correlationId, k->start))
		return 0;
	/* Copied now: the name is CUPTI's until its module is unloaded. */
	if (kernel_name(k->name, &n) < 0)
		return 0;
	tr = place(m, k->deviceId, k->streamId, launch, k->start, k->end, &s,
		   &e);
	if (!tr)
		return 0;
	N.kernels++;
	open_op(b, TP_TEV_COMPLETE, TP_TEV_GPU_STREAM, &n, k->deviceId,
		tr->tid, s, e);
	put_common(k->deviceId, k->contextId, k->streamId, k->correlationId);
	tp_targs_int3(&A, "grid", k->gridX, k->gridY, k->gridZ);
	tp_targs_int3(&A, "block", k->blockX, k->blockY, k->blockZ);
	tp_targs_uint(&A, "registers per thread", k->registersPerThread);
	tp_targs_uint(&A, "shared memory", (uint64_t)k->staticSharedMemory +
		      (uint64_t)k->dynamicSharedMemory);
	if (tp_occupancy(k, &o) == 0) {
		tp_targs_milli(&A, "blocks per SM", o.blocks_per_sm_milli);
		tp_targs_milli(&A, "warps per SM", o.warps_per_sm_milli);
		tp_targs_uint(&A, "est. achieved occupancy %",
			      (uint64_t)o.occupancy_pct);
	}
	put_graph(k->graphId, k->graphNodeId);
	flow_in(b, launch, k->correlationId);
	close_op(b);
	summarize(b, n.cat, n.name, k->deviceId, tr->tid, s, e,
		  k->correlationId);
	link(b, launch, k->correlationId, k->deviceId, tr->tid, s);
	return 1;
}

static const char *const copy_kinds[] = {
	"Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA",
	"DtoD", "HtoH", "PtoP",
};

static const char *const mem_kinds[] = {
	"Unknown", "Pageable", "Pinned", "Device", "Array", "Managed",
	"Device Static", "Managed Static",
};

static const char *copy_kind(unsigned k)
{
	return k < sizeof(copy_kinds) / sizeof(copy_kinds[0]) ?
		copy_kinds[k] : copy_kinds[0];
}

static const char *mem_kind(unsigned k)
{
	return k < sizeof(mem_kinds) / sizeof(mem_kinds[0]) ?
		mem_kinds[k] : mem_kinds[0];
}

/* bytes per ns is GB/s; written with three decimals. */
static void put_bandwidth(uint64_t bytes, int64_t dur)
{
	tp_targs_milli(&A, "memory bandwidth (GB/s)",
		       dur > 0 ? (int64_t)((double)bytes * 1000.0 / dur) : 0);
}

struct copy {
	unsigned kind, src, dst;
	uint64_t bytes, start, end, graph_node;
	uint32_t dev, ctx, stream, corr, graph;
	int peer;
	uint32_t src_dev, dst_dev;
};

/* "Memcpy HtoD (Pinned -> Device)": fixed words only (at most 49
 * bytes), so plain text. */
static void copy_name(char *buf, const struct copy *c, struct op_name *n)
{
	char *p = stpcpy(buf, "Memcpy ");

	p = stpcpy(p, copy_kind(c->kind));
	p = stpcpy(p, " (");
	p = stpcpy(p, mem_kind(c->src));
	p = stpcpy(p, " -> ");
	p = stpcpy(p, mem_kind(c->dst));
	p = stpcpy(p, ")");
	n->name = buf;
	n->namelen = (size_t)(p - buf);
}

static uint64_t copy(struct tp_buf *b, const struct tp_clock_map *m,
		     const struct copy *c)
{
	struct tp_corr *launch = tp_corr_find(c->corr);
	struct op_name n = { CAT("gpu_memcpy") };
	struct tp_track *tr;
	char name[96];
	int64_t s, e;

	tp_context_note(c->ctx, c->dev);
	if (dropped(m, launch, c->corr, c->start))
		return 0;
	tr = place(m, c->dev, c->stream, launch, c->start, c->end, &s, &e);
	if (!tr)
		return 0;
	N.memcpys++;
	copy_name(name, c, &n);
	open_op(b, TP_TEV_COMPLETE, TP_TEV_GPU_STREAM, &n, c->dev, tr->tid, s,
		e);
	put_common(c->dev, c->ctx, c->stream, c->corr);
	tp_targs_uint(&A, "bytes", c->bytes);
	tp_targs_cstr(&A, "kind", copy_kind(c->kind));
	if (c->peer) {
		tp_targs_uint(&A, "src device", c->src_dev);
		tp_targs_uint(&A, "dst device", c->dst_dev);
	}
	put_bandwidth(c->bytes, e - s);
	put_graph(c->graph, c->graph_node);
	flow_in(b, launch, c->corr);
	close_op(b);
	summarize(b, n.cat, n.name, c->dev, tr->tid, s, e, c->corr);
	link(b, launch, c->corr, c->dev, tr->tid, s);
	return 1;
}

static uint64_t memcpy6(struct tp_buf *b, const struct tp_clock_map *m,
			const CUpti_ActivityMemcpy6 *r)
{
	struct copy c = {
		.kind = r->copyKind, .src = r->srcKind, .dst = r->dstKind,
		.bytes = r->bytes, .start = r->start, .end = r->end,
		.graph_node = r->graphNodeId, .dev = r->deviceId,
		.ctx = r->contextId, .stream = r->streamId,
		.corr = r->correlationId, .graph = r->graphId,
	};

	return copy(b, m, &c);
}

static uint64_t peer(struct tp_buf *b, const struct tp_clock_map *m,
		     const CUpti_ActivityMemcpyPtoP4 *r)
{
	struct copy c = {
		.kind = r->copyKind, .src = r->srcKind, .dst = r->dstKind,
		.bytes = r->bytes, .start = r->start, .end = r->end,
		.graph_node = r->graphNodeId, .dev = r->deviceId,
		.ctx = r->contextId, .stream = r->streamId,
		.corr = r->correlationId, .graph = r->graphId, .peer = 1,
		.src_dev = r->srcDeviceId, .dst_dev = r->dstDeviceId,
	};

	return copy(b, m, &c);
}

static uint64_t memset4(struct tp_buf *b, const struct tp_clock_map *m,
			const CUpti_ActivityMemset4 *r)
{
	char name[32];	/* "Memset (Managed Static)": fixed words */
	struct tp_corr *launch = tp_corr_find(r->correlationId);
	struct op_name n = { CAT("gpu_memset"), .name = name };
	struct tp_track *tr;
	int64_t s, e;

	tp_context_note(r->contextId, r->deviceId);
	if (dropped(m, launch, r->correlationId, r->start))
		return 0;
	tr = place(m, r->deviceId, r->streamId, launch, r->start, r->end, &s,
		   &e);
	if (!tr)
		return 0;
	N.memsets++;
	n.namelen = (size_t)(stpcpy(stpcpy(stpcpy(name, "Memset ("),
					     mem_kind(r->memoryKind)), ")") -
			     name);
	open_op(b, TP_TEV_COMPLETE, TP_TEV_GPU_STREAM, &n, r->deviceId,
		tr->tid, s, e);
	put_common(r->deviceId, r->contextId, r->streamId, r->correlationId);
	tp_targs_uint(&A, "bytes", r->bytes);
	tp_targs_uint(&A, "value", r->value);
	put_bandwidth(r->bytes, e - s);
	put_graph(r->graphId, r->graphNodeId);
	flow_in(b, launch, r->correlationId);
	close_op(b);
	summarize(b, n.cat, n.name, r->deviceId, tr->tid, s, e,
		  r->correlationId);
	link(b, launch, r->correlationId, r->deviceId, tr->tid, s);
	return 1;
}

static const char *sync_name(unsigned type)
{
	switch (type) {
	case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE:
		return "Event Sync";
	case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT:
		return "Stream Wait Event";
	case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE:
		return "Stream Sync";
	case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE:
		return "Context Sync";
	}
	return "Sync";
}

/* Syncs are CPU-side waits: a track of their own per stream (and one per
 * device for context syncs), beside the stream they wait for. */
static uint64_t sync2(struct tp_buf *b, const struct tp_clock_map *m,
		      const CUpti_ActivitySynchronization2 *r)
{
	uint32_t dev = tp_context_device(r->contextId);
	int on_stream = r->streamId != CUPTI_SYNCHRONIZATION_INVALID_VALUE;
	uint32_t tid = on_stream ? TP_SYNC_TID_BASE + (r->streamId &
						       0x3ffffffu)
				 : TP_SYNC_TID_DEVICE;
	struct op_name n = { CAT("cuda_sync"), .name = sync_name(r->type) };
	struct tp_track *tr;
	int64_t s, e;

	/* The wait starts with its call: no launch floor applies. tprof's
	 * own wait at exit is not the program's. */
	if (tp_cupti_is_own(r->correlationId) ||
	    dropped(m, tp_corr_find(r->correlationId), r->correlationId,
		    r->start))
		return 0;
	tr = place(m, dev, tid, NULL, r->start, r->end, &s, &e);
	if (!tr)
		return 0;
	N.syncs++;
	n.namelen = strlen(n.name);
	open_op(b, TP_TEV_COMPLETE, TP_TEV_GPU_STREAM, &n, dev, tr->tid, s, e);
	put_common(dev, r->contextId, on_stream ? r->streamId : 0,
		   r->correlationId);
	if (r->cudaEventId != CUPTI_SYNCHRONIZATION_INVALID_VALUE)
		tp_targs_uint(&A, "event", r->cudaEventId);
	close_op(b);
	summarize(b, n.cat, n.name, dev, tr->tid, s, e, r->correlationId);
	return 1;
}

/* Device memory as a counter per device: allocated bytes after each
 * allocation and release. */
static uint64_t memory4(struct tp_buf *b, const struct tp_clock_map *m,
			const CUpti_ActivityMemory4 *r)
{
	struct op_name n = { CAT("gpu_memory"), .name = "GPU memory",
			     .namelen = 10 };
	int64_t *total, ts;

	if (r->deviceId >= TP_MAX_DEVICES ||
	    r->memoryKind != CUPTI_ACTIVITY_MEMORY_KIND_DEVICE)
		return 0;
	if (!r->timestamp) {
		N.zero_ts++;
		return 0;
	}
	if (rel_ns(m, r->timestamp) < clock_lo ||
	    rel_ns(m, r->timestamp) > clock_hi) {
		N.unclocked++;
		return 0;
	}
	total = &mem_allocated[r->deviceId];
	if (r->memoryOperationType ==
	    CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION)
		*total += (int64_t)r->bytes;
	else if (r->memoryOperationType ==
		 CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE)
		*total -= (int64_t)r->bytes;
	else
		return 0;
	if (*total < 0)
		*total = 0;
	if (!tp_capture_kept_ns(rel_ns(m, r->timestamp)))
		return 0;
	N.memory++;
	dev_seen |= 1ull << r->deviceId;
	ts = rel_ns(m, r->timestamp);
	/* tid -1: a device's counter. */
	open_op(b, TP_TEV_COUNTER_SET, TP_TEV_COUNTER, &n, r->deviceId, -1, ts,
		ts);
	tp_targs_int(&A, "allocated", *total);
	close_op(b);
	tp_psum_memory(r->deviceId, ts, *total);
	return 1;
}

static const char *overhead_name(unsigned kind)
{
	switch (kind) {
	case CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER:
		return "Driver compiler";
	case CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH:
		return "CUPTI buffer flush";
	case CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION:
		return "CUPTI instrumentation";
	case CUPTI_ACTIVITY_OVERHEAD_CUPTI_RESOURCE:
		return "CUPTI resource";
	case CUPTI_ACTIVITY_OVERHEAD_RUNTIME_TRIGGERED_MODULE_LOADING:
		return "Module loading";
	case CUPTI_ACTIVITY_OVERHEAD_LAZY_FUNCTION_LOADING:
		return "Lazy function loading";
	case CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL:
		return "Command buffer full";
	case CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST:
		return "Activity buffer request";
	}
	return "CUPTI overhead";
}

/* Time CUPTI and the driver spent on their own work, on one track of the
 * process so it never cuts into the program's calls. */
static uint64_t overhead3(struct tp_buf *b, const struct tp_clock_map *m,
			  const CUpti_ActivityOverhead3 *r)
{
	uint32_t pid = (uint32_t)tp_sess.pid;
	struct op_name n = { CAT("overhead"),
			     .name = overhead_name(r->overheadKind) };
	struct tp_track *tr;
	int64_t s, e;

	if (dropped(m, NULL, 0, r->start))
		return 0;
	tr = place(m, pid, TP_OVERHEAD_TID, NULL, r->start, r->end, &s, &e);
	if (!tr)
		return 0;
	N.overhead++;
	n.namelen = strlen(n.name);
	open_op(b, TP_TEV_COMPLETE, TP_TEV_THREAD, &n, pid, tr->tid, s, e);
	tp_targs_uint(&A, "correlation", r->correlationId);
	if (r->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ||
	    r->objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS)
		tp_targs_uint(&A, "thread", r->objectId.pt.threadId);
	close_op(b);
	return 1;
}

uint64_t tp_cupti_convert(struct tp_buf *b, const struct tp_clock_map *m,
			  const CUpti_Activity *r)
{
	N.records++;
	switch (r->kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		return kernel(b, m, (const CUpti_ActivityKernel10 *)r);
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		return memcpy6(b, m, (const CUpti_ActivityMemcpy6 *)r);
	case CUPTI_ACTIVITY_KIND_MEMCPY2:
		return peer(b, m, (const CUpti_ActivityMemcpyPtoP4 *)r);
	case CUPTI_ACTIVITY_KIND_MEMSET:
		return memset4(b, m, (const CUpti_ActivityMemset4 *)r);
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
		return sync2(b, m, (const CUpti_ActivitySynchronization2 *)r);
	case CUPTI_ACTIVITY_KIND_MEMORY2:
		return memory4(b, m, (const CUpti_ActivityMemory4 *)r);
	case CUPTI_ACTIVITY_KIND_OVERHEAD:
		return overhead3(b, m, (const CUpti_ActivityOverhead3 *)r);
	case CUPTI_ACTIVITY_KIND_DEVICE:
		tp_device_note((const CUpti_ActivityDevice5 *)r);
		/* the report's "memory near capacity" */
		tp_psum_device_memory(((const CUpti_ActivityDevice5 *)r)->id,
				      (int64_t)((const CUpti_ActivityDevice5 *)
						r)->globalMemorySize);
		return 0;
	case CUPTI_ACTIVITY_KIND_CONTEXT: {
		const CUpti_ActivityContext3 *c = (const void *)r;

		tp_context_note(c->contextId, c->deviceId);
		return 0;
	}
	default:
		N.unknown++;
		return 0;
	}
}

static void put_meta(struct tp_buf *b, enum tp_tev_phase what,
		     enum tp_tev_track_kind kind, uint32_t pid, uint32_t tid,
		     const char *name, int64_t sort)
{
	const struct tp_tev ev = {
		.track = { .kind = kind, .pid = pid, .tid = tid },
		.phase = what,
		.name = name,
		.namelen = name ? strlen(name) : 0,
		.flow_id = (uint64_t)sort,
	};

	tp_tev_put(b, &ev);
}

/* GPUs sort after the CPU process (whose index is its rank). */
#define GPU_SORT_BASE 1000000

static void put_track_meta(const struct tp_track *t, void *arg)
{
	struct tp_buf *b = arg;
	char name[160];

	uint32_t base = t->base_tid;
	char lane[16] = "";
	int n;

	if (t->lane)
		snprintf(lane, sizeof(lane), " (%u)", t->lane + 1);
	if (base == TP_OVERHEAD_TID && t->pid == (uint32_t)tp_sess.pid)
		n = snprintf(name, sizeof(name), "CUPTI overhead");
	else if (base == TP_SYNC_TID_DEVICE)
		n = snprintf(name, sizeof(name), "device sync");
	else if (base >= TP_SYNC_TID_BASE)
		n = snprintf(name, sizeof(name), "stream %u sync",
			     base - TP_SYNC_TID_BASE);
	else
		n = snprintf(name, sizeof(name), "stream %u", base);
	if (n > 0 && (size_t)n < sizeof(name))
		snprintf(name + n, sizeof(name) - (size_t)n, "%s", lane);
	/* The overhead track is the process's, the others a device's. */
	if (base == TP_OVERHEAD_TID && t->pid == (uint32_t)tp_sess.pid) {
		put_meta(b, TP_TEV_THREAD_NAME, TP_TEV_THREAD, t->pid, t->tid,
			 name, 0);
		return;
	}
	put_meta(b, TP_TEV_THREAD_NAME, TP_TEV_GPU_STREAM, t->pid, t->tid,
		 name, 0);
	put_meta(b, TP_TEV_THREAD_SORT_INDEX, TP_TEV_GPU_STREAM, t->pid,
		 t->tid, NULL, t->tid);
}

void tp_cupti_put_meta(struct tp_buf *b)
{
	const struct tp_device *d;
	char name[192];
	unsigned dev;

	tp_track_each(put_track_meta, b);
	for (dev = 0; dev < TP_MAX_DEVICES; dev++) {
		if (!(dev_seen >> dev & 1))
			continue;
		d = tp_device_get(dev);
		if (d && d->name[0])
			snprintf(name, sizeof(name), "GPU %u (%s)", dev,
				 d->name);
		else
			snprintf(name, sizeof(name), "GPU %u", dev);
		put_meta(b, TP_TEV_PROCESS_NAME, TP_TEV_GPU_STREAM, dev, 0,
			 name, 0);
		put_meta(b, TP_TEV_SORT_INDEX, TP_TEV_GPU_STREAM, dev, 0, NULL,
			 GPU_SORT_BASE + dev);
	}
}
