/* encode/: the typed event model (tev.h) and the JSON encoder; on
 * util/ and gzip/. */
/* The typed event model and the encoder interface.
 *
 * An event says what happened (track, name, category, phase, time in
 * integer ns, typed args), never how it is written: an encoder turns it
 * into bytes. Two encoders exist: Kineto-style JSON (tev_json.c, today's
 * trace syntax) and Perfetto protobuf (perfetto_enc.c). `tprof convert`
 * and the library's writer both speak it: every producer of the writer's
 * events hands them to tp_tev_put (below).
 *
 * Strings are (pointer, length) pairs and are borrowed: an encoder copies
 * what it keeps (interning tables), so callers may reuse their buffers as
 * soon as tp_enc_event returns.
 */
#ifndef TP_TEV_H
#define TP_TEV_H

#include <stddef.h>
#include <stdint.h>

#include "json.h"

/* Where an event goes. Processes and threads are the host side; a GPU
 * device holds streams (Kineto's JSON writes them as pid = device,
 * tid = stream). Counter and async tracks hang under a process or device
 * and are named by the event (and, for counters, the arg key). */
enum tp_tev_track_kind {
	TP_TEV_THREAD,		/* pid, tid */
	TP_TEV_GPU_STREAM,	/* pid = device, tid = stream */
	TP_TEV_COUNTER,		/* pid, name; tid -1: pid is a GPU device */
	TP_TEV_ASYNC,		/* pid, id, name of the begin event */
};

struct tp_tev_track {
	enum tp_tev_track_kind kind;
	int64_t pid;
	int64_t tid;
	uint64_t id;		/* ASYNC: the range's id */
};

enum tp_tev_phase {
	TP_TEV_COMPLETE,	/* ts, dur */
	TP_TEV_INSTANT,
	TP_TEV_COUNTER_SET,	/* one sample per numeric arg */
	TP_TEV_ASYNC_BEGIN,
	TP_TEV_ASYNC_END,
	TP_TEV_FLOW_START,	/* flow_id */
	TP_TEV_FLOW_END,	/* flow_id */
	TP_TEV_PROCESS_NAME,	/* name: the process's (or device's) name */
	TP_TEV_THREAD_NAME,	/* name: the thread's (or stream's) name */
	TP_TEV_SORT_INDEX,	/* flow_id: the sort index */
	TP_TEV_THREAD_SORT_INDEX, /* flow_id: the thread's (stream's) index */
};

enum tp_targ_type {
	TP_TARG_NULL,
	TP_TARG_BOOL,
	TP_TARG_INT,
	TP_TARG_UINT,
	TP_TARG_U128,		/* FLOPs: can exceed 2^64 */
	TP_TARG_DOUBLE,
	TP_TARG_STRING,
	TP_TARG_POINTER,	/* JSON: "0x..." string */
	TP_TARG_ARRAY,		/* n elements follow, depth-first */
	TP_TARG_DICT,		/* n members follow, depth-first */
	/* A value already encoded as JSON text (str): a kernel name or a
	 * call stack the writer caches escaped. The JSON encoder copies it;
	 * Perfetto shows a plain string as a string, anything else as
	 * legacy JSON. */
	TP_TARG_JSON,
	/* A decimal with three places, as thousandths in i (occupancy,
	 * bandwidth): JSON writes "12.345", Perfetto a double. */
	TP_TARG_MILLI,
};

/* One arg, or one element of an array/dict. Nested values are stored
 * flat, in order: an ARRAY or DICT entry with n = k is followed by its k
 * children (each possibly nested itself). Array elements have no key. */
struct tp_targ {
	enum tp_targ_type type;
	uint32_t keylen;
	const char *key;
	union {
		int64_t i;
		uint64_t u;
		unsigned __int128 u128;
		double d;
		struct {
			const char *s;
			size_t len;
		} str;
		uint32_t n;
	} v;
};

/* The args-writer: a fixed array, so writing args never allocates. A
 * full writer drops further args and sets overflow (the event is still
 * written, its args cut). */
#define TP_TARGS_MAX 128

/* The adders are forced inline, so a literal key's length is folded
 * (a copy not inlined would call strlen for every arg). */
#define TP_TARGS_INLINE static inline __attribute__((always_inline))

struct tp_targs {
	uint32_t n;
	uint32_t open[8];	/* indexes of open arrays/dicts */
	uint32_t depth;
	int overflow;
	/* JSON streaming (tp_tev_json_open): each arg kept is also appended
	 * to json as it arrives, so the JSON writer never walks the array
	 * again. jseen: bit d set when the container at depth d has an
	 * element (a comma goes before the next); jarr: bit d set when it
	 * is an array (its elements' keys are not written). Keys are
	 * written as they are: only for static keys (tp_tev's static_keys). */
	struct tp_buf *json;
	uint32_t jseen;
	uint32_t jarr;
	struct tp_targ a[TP_TARGS_MAX];
};

static inline void tp_targs_reset(struct tp_targs *w)
{
	w->n = 0;
	w->depth = 0;
	w->overflow = 0;
	w->json = NULL;
}

/* JSON streaming: the separator and "key": of the entry just kept. */
TP_TARGS_INLINE void tp_targs_jkey(struct tp_targs *w, const char *key,
				 size_t keylen)
{
	struct tp_buf *b = w->json;
	uint32_t bit = 1u << w->depth;
	char *p;

	if (tp_buf_reserve(b, keylen + 4))
		return;
	p = b->p + b->len;
	if (w->jseen & bit)
		*p++ = ',';
	w->jseen |= bit;
	if (key && !(w->jarr & bit)) {
		*p++ = '"';
		memcpy(p, key, keylen);
		p += keylen;
		*p++ = '"';
		*p++ = ':';
	}
	b->len = (size_t)(p - b->p);
}

/* JSON streaming of the less common types (tev_json.c). */
void tp_targs_json_value(struct tp_targs *w, const struct tp_targ *a);

/* The slow path of tp_targs_add: a full writer, a dropped container. */
struct tp_targ *tp_targs_add_slow(struct tp_targs *w, const char *key,
				  size_t keylen, enum tp_targ_type type);

/* The next entry, keyed (NULL in an array), or NULL when dropped. It is
 * not streamed as JSON (tp_tev_json_open): the writer's formatters use
 * the typed adders below (the *k forms take a key's length). The
 * adders below are inline, so a literal key's length is folded. */
TP_TARGS_INLINE struct tp_targ *tp_targs_add(struct tp_targs *w,
					   const char *key, size_t keylen,
					   enum tp_targ_type type)
{
	struct tp_targ *a;
	uint32_t d = w->depth;

	if (__builtin_expect(w->n >= TP_TARGS_MAX || d > 8 ||
			     (d && w->open[d - 1] == UINT32_MAX), 0))
		return tp_targs_add_slow(w, key, keylen, type);
	/* The open container counts its direct children only. */
	if (d)
		w->a[w->open[d - 1]].v.n++;
	a = &w->a[w->n++];
	a->type = type;
	a->key = key;
	a->keylen = (uint32_t)keylen;
	return a;
}

#define TP_TARGS_KEYLEN(k) ((k) ? __builtin_strlen(k) : 0)

TP_TARGS_INLINE void tp_targs_int(struct tp_targs *w, const char *key,
				int64_t v)
{
	struct tp_targ *a = tp_targs_add(w, key, TP_TARGS_KEYLEN(key),
					 TP_TARG_INT);

	if (!a)
		return;
	a->v.i = v;
	if (!w->json)
		return;
	tp_targs_jkey(w, key, TP_TARGS_KEYLEN(key));
	tp_json_i64(w->json, v);
}

TP_TARGS_INLINE void tp_targs_uintk(struct tp_targs *w, const char *key,
				 size_t keylen, uint64_t v)
{
	struct tp_targ *a = tp_targs_add(w, key, keylen,
					 TP_TARG_UINT);

	if (!a)
		return;
	a->v.u = v;
	if (!w->json)
		return;
	tp_targs_jkey(w, key, keylen);
	tp_json_u64(w->json, v);
}

TP_TARGS_INLINE void tp_targs_uint(struct tp_targs *w, const char *key,
				uint64_t v)
{
	tp_targs_uintk(w, key, TP_TARGS_KEYLEN(key), v);
}

TP_TARGS_INLINE void tp_targs_u128(struct tp_targs *w, const char *key,
				 unsigned __int128 v)
{
	struct tp_targ *a = tp_targs_add(w, key, TP_TARGS_KEYLEN(key),
					 TP_TARG_U128);

	if (!a)
		return;
	a->v.u128 = v;
	if (!w->json)
		return;
	tp_targs_jkey(w, key, TP_TARGS_KEYLEN(key));
	tp_targs_json_value(w, a);
}

TP_TARGS_INLINE void tp_targs_double(struct tp_targs *w, const char *key,
				   double v)
{
	struct tp_targ *a = tp_targs_add(w, key, TP_TARGS_KEYLEN(key),
					 TP_TARG_DOUBLE);

	if (!a)
		return;
	a->v.d = v;
	if (!w->json)
		return;
	tp_targs_jkey(w, key, TP_TARGS_KEYLEN(key));
	tp_json_double(w->json, v);
}

TP_TARGS_INLINE void tp_targs_bool(struct tp_targs *w, const char *key, int v)
{
	struct tp_targ *a = tp_targs_add(w, key, TP_TARGS_KEYLEN(key),
					 TP_TARG_BOOL);

	if (!a)
		return;
	a->v.i = !!v;
	if (!w->json)
		return;
	tp_targs_jkey(w, key, TP_TARGS_KEYLEN(key));
	tp_targs_json_value(w, a);
}

TP_TARGS_INLINE void tp_targs_ptrk(struct tp_targs *w, const char *key,
				 size_t keylen, uint64_t v)
{
	struct tp_targ *a = tp_targs_add(w, key, keylen,
					 TP_TARG_POINTER);

	if (!a)
		return;
	a->v.u = v;
	if (!w->json)
		return;
	tp_targs_jkey(w, key, keylen);
	tp_json_hex(w->json, v);
}

TP_TARGS_INLINE void tp_targs_ptr(struct tp_targs *w, const char *key,
				uint64_t v)
{
	tp_targs_ptrk(w, key, TP_TARGS_KEYLEN(key), v);
}

TP_TARGS_INLINE void tp_targs_milli(struct tp_targs *w, const char *key,
				  int64_t thousandths)
{
	struct tp_targ *a = tp_targs_add(w, key, TP_TARGS_KEYLEN(key),
					 TP_TARG_MILLI);

	if (!a)
		return;
	a->v.i = thousandths;
	if (!w->json)
		return;
	tp_targs_jkey(w, key, TP_TARGS_KEYLEN(key));
	tp_json_us(w->json, thousandths);
}

/* s (len bytes) as a string; JSON: text already encoded as JSON. */
TP_TARGS_INLINE void tp_targs_strk(struct tp_targs *w, const char *key,
				 size_t keylen, const char *s, size_t len)
{
	struct tp_targ *a = tp_targs_add(w, key, keylen,
					 TP_TARG_STRING);

	if (!a)
		return;
	a->v.str.s = s;
	a->v.str.len = len;
	if (!w->json)
		return;
	tp_targs_jkey(w, key, keylen);
	tp_json_strn(w->json, s, len);
}

TP_TARGS_INLINE void tp_targs_str(struct tp_targs *w, const char *key,
				const char *s, size_t len)
{
	tp_targs_strk(w, key, TP_TARGS_KEYLEN(key), s, len);
}

TP_TARGS_INLINE void tp_targs_json(struct tp_targs *w, const char *key,
				 const char *json, size_t len)
{
	struct tp_targ *a = tp_targs_add(w, key, TP_TARGS_KEYLEN(key),
					 TP_TARG_JSON);

	if (!a)
		return;
	a->v.str.s = json;
	a->v.str.len = len;
	if (!w->json)
		return;
	tp_targs_jkey(w, key, TP_TARGS_KEYLEN(key));
	tp_buf_put(w->json, json, len);
}

TP_TARGS_INLINE void tp_targs_cstr(struct tp_targs *w, const char *key,
				 const char *s)
{
	tp_targs_str(w, key, s, __builtin_strlen(s));
}

/* Opens an array (dict = 0) or dict; what is added until tp_targs_close
 * are its elements. */
void tp_targs_openk(struct tp_targs *w, const char *key, size_t keylen,
		    int dict);

TP_TARGS_INLINE void tp_targs_open(struct tp_targs *w, const char *key,
				 int dict)
{
	tp_targs_openk(w, key, TP_TARGS_KEYLEN(key), dict);
}

void tp_targs_close(struct tp_targs *w);
/* Entries taken by the value starting at index i (1 for a scalar). */
uint32_t tp_targ_span(const struct tp_targ *a, uint32_t n, uint32_t i);

/* An array of three unsigned (a CUDA dim3: grid, block), as open, three
 * tp_targs_uint and close would write it, in one step: launches have two.
 * The key is written here, inline, so its length is a constant. */
void tp_targs_uint3k(struct tp_targs *w, const char *key, size_t keylen,
		     const uint32_t *d);
void tp_targs_uint3_fill(struct tp_targs *w, const char *key,
			 size_t keylen, const uint32_t *d);

TP_TARGS_INLINE void tp_targs_uint3(struct tp_targs *w, const char *key,
				    const uint32_t *d)
{
	if (__builtin_expect(w->depth || w->n + 4 > TP_TARGS_MAX, 0)) {
		tp_targs_uint3k(w, key, TP_TARGS_KEYLEN(key), d);
		return;
	}
	if (w->json)
		tp_targs_jkey(w, key, TP_TARGS_KEYLEN(key));
	tp_targs_uint3_fill(w, key, TP_TARGS_KEYLEN(key), d);
}

/* The same for three signed values (CUPTI's grid and block are int32;
 * a negative one, never seen, takes the general way). */
void tp_targs_int3k(struct tp_targs *w, const char *key, size_t keylen,
		    int32_t x, int32_t y, int32_t z);
void tp_targs_int3_fill(struct tp_targs *w, const char *key, size_t keylen,
			int32_t x, int32_t y, int32_t z);

TP_TARGS_INLINE void tp_targs_int3(struct tp_targs *w, const char *key,
				   int32_t x, int32_t y, int32_t z)
{
	if (__builtin_expect(w->depth || w->n + 4 > TP_TARGS_MAX ||
			     (x | y | z) < 0, 0)) {
		tp_targs_int3k(w, key, TP_TARGS_KEYLEN(key), x, y, z);
		return;
	}
	if (w->json)
		tp_targs_jkey(w, key, TP_TARGS_KEYLEN(key));
	tp_targs_int3_fill(w, key, TP_TARGS_KEYLEN(key), x, y, z);
}

struct tp_tev {
	struct tp_tev_track track;
	enum tp_tev_phase phase;
	const char *name;
	size_t namelen;
	const char *cat;	/* may be NULL */
	size_t catlen;
	int64_t ts_ns;		/* trace clock: ns since the trace's base */
	int64_t dur_ns;
	uint64_t flow_id;	/* FLOW_*: the id; SORT_INDEX: the index */
	/* COMPLETE: a flow this slice starts (a launch) and one it ends
	 * (its GPU op), 0 for none. Perfetto writes them on the slice
	 * (flow_ids, terminating_flow_ids); JSON ignores them: its "s" and
	 * "f" are events of their own (FLOW_START, FLOW_END). */
	uint64_t flow_out, flow_in;
	int flow_binds_enclosing; /* FLOW_END: "bp":"e" */
	const struct tp_targ *args;
	uint32_t nargs;
	/* args[stable_from, stable_to), whole top-level args, come again
	 * and again with the same values (a launch's kernel, grid, block,
	 * shared memory, stream): the Perfetto encoder may reuse their
	 * bytes. Equal: none. Only with static_keys. */
	uint32_t stable_from, stable_to;
	/* The event has an args object even when it is empty (NVTX ranges
	 * always do; a converted event may not): JSON writes "args":{}. */
	int args_always;
	/* name and cat live as long as the process and never change (the
	 * hooks' tables): the JSON encoder keeps their text by address. */
	int static_names;
	/* The args' keys are literals of the code, plain printable ASCII
	 * without quotes or backslashes: written as they are. */
	int static_keys;
	/* name (unless name_json is given) and cat are plain printable
	 * ASCII without quotes or backslashes (literals, words built from
	 * literals): JSON copies them as they are, with no escape pass. */
	int plain_names;
	/* Optional: the name already as a JSON string, quoted and escaped
	 * (the writer caches kernel names so): JSON copies it. */
	const char *name_json;
	size_t name_json_len;
};

/* The trace's header facts. base_unix_ns: Unix time of trace-clock 0
 * (JSON: baseTimeNanoseconds). */
struct tp_enc_meta {
	const char *trace_name;
	int64_t base_unix_ns;
	/* Perfetto: 0 for a trace's first writer; k > 0 for the k-th
	 * writer appending to a trace cut short (`tprof recover` after a
	 * kill): its packet sequences and track ids are disjoint from every
	 * other writer's, so what it appends needs nothing before it. */
	uint32_t writer;
	/* Perfetto: every packet's time absolute (the trace clock), so a
	 * reader may leave packets out (the flight recorder's window). */
	int absolute_ts;
	/* Perfetto: complete events held back (a bounded number) and
	 * written in start order, longest first at equal starts, so a child
	 * that came before its parent of the same start nests under it
	 * (`tprof convert`; perfetto_hold.c). */
	int hold_complete;
	/* Perfetto: CLOCK_REALTIME and CLOCK_BOOTTIME read at one instant
	 * when known (the library's own trace), written as a second clock
	 * snapshot. A current trace_processor (v58) bridges BOOTTIME, its
	 * fallback clock for proto traces, to the trace clock and logs an
	 * error (clock_sync_unrelatable_clock_domains) when nothing relates
	 * them; with it, a system trace (traced, BOOTTIME) opened beside
	 * this one lines up too. (Not in the first snapshot: at its instant,
	 * baseTimeNanoseconds floored to 10^14 ns, BOOTTIME may be before
	 * boot, and snapshot times are unsigned.) */
	int has_boottime;
	int64_t pair_realtime_ns, pair_boottime_ns;
	/* Perfetto: the trace time of the run's metadata event when no
	 * event comes before it (`tprof recover`'s writer: the file's
	 * creation); else it is at the first event. */
	int64_t trailer_ts_ns;
};

struct tp_enc;

struct tp_enc_ops {
	int (*begin)(struct tp_enc *e, const struct tp_enc_meta *m);
	int (*event)(struct tp_enc *e, const struct tp_tev *ev);
	/* The top-level extras after the events (JSON: deviceProperties,
	 * distributedInfo, tprof), as JSON text "key": value pairs without
	 * the surrounding braces; Perfetto keeps them as a metadata event. */
	int (*trailer)(struct tp_enc *e, const char *json, size_t len);
	int (*end)(struct tp_enc *e);
	void (*free)(struct tp_enc *e);
};

/* An encoder appends to out; its owner drains out (to gzip, a file)
 * whenever it likes, typically when out.len passes a threshold. */
struct tp_enc {
	const struct tp_enc_ops *ops;
	struct tp_buf out;
	uint64_t events;
	uint64_t dropped;	/* events it could not place (table full) */
};

struct tp_enc *tp_enc_json_new(void);
/* One event as the JSON encoder writes it, with its leading ",\n": the
 * writer's streams, whose first line is written elsewhere. */
void tp_tev_json_put(struct tp_buf *b, const struct tp_tev *ev);
/* The same without the ",\n": the first event of the writer's trace. */
void tp_tev_json_first(struct tp_buf *b, const struct tp_tev *ev);
/* tp_tev_json_put in two halves, the args streamed between them: open
 * writes ev up to its args object (ev's args and nargs are not read) and
 * points w at b; each arg w keeps is appended as it arrives (ev must
 * have static_keys); close ends the event and stops the streaming. The
 * bytes are tp_tev_json_put's for the same event. */
void tp_tev_json_open(struct tp_buf *b, const struct tp_tev *ev,
		      struct tp_targs *w);
void tp_tev_json_close(struct tp_buf *b, const struct tp_tev *ev,
		       struct tp_targs *w);
struct tp_enc *tp_enc_perfetto_new(void);
/* Perfetto: the incremental state cleared (a clock snapshot, fresh
 * interning) into b, so what follows decodes without anything before it
 * but the track descriptors. */
void tp_enc_perfetto_restart(struct tp_enc *e, struct tp_buf *b);
/* Perfetto: the JSON value [json, json+len) as a DebugAnnotation's
 * typed value (nested dict entries and array values) appended to b;
 * 0, or -1 when it is not valid JSON (b then holds a part of it). */
int tp_pf_json_annotation(struct tp_buf *b, const char *json, size_t len);
/* Perfetto: every track known so far declared again into b. */
void tp_enc_perfetto_tracks(struct tp_enc *e, struct tp_buf *b);
/* Perfetto: each TrackDescriptor packet written from now on (a new track,
 * or one named) is also appended to log (NULL: no more). */
void tp_enc_perfetto_log_tracks(struct tp_enc *e, struct tp_buf *log);
/* Perfetto: the packets of [buf, buf+len) (an encoder's output with
 * absolute_ts, starting on a packet) without the complete slices that
 * ended before cut_ns; the interned data they carried is kept. Returns
 * the new length; *left counts the slices left out. */
size_t tp_pf_trim(char *buf, size_t len, int64_t cut_ns, uint64_t *left);
/* JSON: the events of [buf, buf+len) (the writer's ",\n{...}" lines)
 * without the X events that ended before cut_ns (a chunk holds what one
 * cycle drained, which may have ended before the window when the writer
 * ran late). Returns the new length; *left counts those left out. */
size_t tp_json_trim(char *buf, size_t len, int64_t cut_ns, uint64_t *left);

static inline int tp_enc_begin(struct tp_enc *e, const struct tp_enc_meta *m)
{
	return e->ops->begin(e, m);
}

static inline int tp_enc_event(struct tp_enc *e, const struct tp_tev *ev)
{
	e->events++;
	return e->ops->event(e, ev);
}

static inline int tp_enc_trailer(struct tp_enc *e, const char *j, size_t n)
{
	return e->ops->trailer(e, j, n);
}

static inline int tp_enc_end(struct tp_enc *e)
{
	return e->ops->end(e);
}

static inline void tp_enc_free(struct tp_enc *e)
{
	if (e)
		e->ops->free(e);
}

/* One event appended to b instead of the encoder's own out (the
 * library's writer owns the buffer its producers fill). */
int tp_enc_event_into(struct tp_enc *e, struct tp_buf *b,
		      const struct tp_tev *ev);

/* The library's output: every producer of the writer's events (hooks,
 * CUPTI, NVTX, steps, metadata) hands them to tp_tev_put, which writes
 * them in the trace's format: JSON lines (tp_tev_sink NULL, the default)
 * or the Perfetto encoder tp_tev_sink (TPROF_FORMAT=perfetto). Only the
 * writer thread calls it. */
extern struct tp_enc *tp_tev_sink;

static inline void tp_tev_put(struct tp_buf *b, const struct tp_tev *ev)
{
	if (!tp_tev_sink)
		tp_tev_json_put(b, ev);
	else
		tp_enc_event_into(tp_tev_sink, b, ev);
}
#endif
