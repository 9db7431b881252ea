/* The Perfetto reader's insides, shared by its files: pftrace_read.c
 * (its interface, framing, packets), pftrace_tracks.c (the
 * track table, and pids/tids for JSON), pftrace_event.c (TrackEvents to
 * JSON events), pftrace_args.c (debug annotations to JSON values),
 * pftrace_clock.c (clocks), pftrace_seq.c (errors, sequences, interning,
 * the JSON events' start: the bottom, called by all the others). They
 * call encode/json.h (tp_buf, escaping), json.h (to validate legacy JSON)
 * and pbr.h; nothing else. */
#ifndef TP_CLI_PFTRACE_INT_H
#define TP_CLI_PFTRACE_INT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "pbr.h"
#include "pftrace_read.h"
#include "encode/json.h"

/* Bounds: a fuzzed or hostile file gets one error, never unbounded
 * memory. Perfetto's own writers stay far below each. */
#define PFR_PACKET_MAX (96u << 20)	/* one TracePacket */
#define PFR_SEQS_MAX 4096u		/* packet sequences */
#define PFR_INTERN_MAX (1u << 20)	/* interned strings, all sequences */
#define PFR_INTERN_BYTES (64u << 20)
#define PFR_TRACKS_MAX (1u << 20)
#define PFR_OPEN_MAX (1u << 20)	/* slices begun and not ended */
#define PFR_OPEN_BYTES (256u << 20)
#define PFR_ENDED 4096		/* ended flow ids remembered */
#define PFR_FLOWS_MAX (1u << 20)	/* flow ids seen and not terminated */
#define PFR_TS_MAX (1ll << 61)		/* |time| from the trace's base */
#define PFR_SEQ_CLOCKS 16u
#define PFR_GLOBAL_CLOCKS 64u
#define PFR_DEPTH_MAX 64		/* nested debug annotations */

/* Interned kinds (InternedData's fields). */
enum { PI_CAT, PI_NAME, PI_ANAME, PI_STR, PI_KINDS };

struct pfr_clock {
	uint32_t id;
	int incremental;
	uint64_t mult;		/* ns per unit */
	int64_t last;		/* an incremental clock's value, in ns */
	int has_ref;
	int64_t ref_c, ref_out;	/* this clock and the output clock, ns */
};

struct pfr_ient {
	uint64_t key;		/* iid << 2 | kind; 0: empty */
	uint32_t off, len;
};

struct pfr_seq {
	uint32_t id;
	int valid;		/* incremental state cleared at least once */
	int has_def_clock, has_def_track;
	uint32_t def_clock;
	uint64_t def_track;
	struct pfr_ient *tab;
	uint32_t cap, n;
	struct tp_buf strs;
	struct pfr_clock clk[PFR_SEQ_CLOCKS];
	uint32_t nclk;
	uint64_t pseudo_track;	/* events with no track: 0 until made */
};

enum { PT_NAMED, PT_PROCESS, PT_THREAD, PT_COUNTER };
enum { PR_NONE, PR_THREAD, PR_ASYNC, PR_COUNTER };

struct pfr_open {
	struct pfr_open *below;
	int64_t ts;
	uint32_t seq;		/* the sequence of its begin */
	uint32_t head_len, args_len;	/* "name":..,"cat":.. then args */
	char text[];
};

struct pfr_track {
	uint64_t uuid, parent;
	int kind;
	int64_t pid, tid;	/* from the descriptor */
	char *name;
	/* "GPU N" / "stream S" as first declared (tprof declares a device
	 * and a stream with that name before any rename): numbered 1 and
	 * the number, kept whatever names follow. */
	int numbered;
	int64_t number;
	int has_sort;
	int64_t sort;
	/* The END of a fan-out start's zero-length slice is next
	 * (pftrace_event.c: fanout_slice). */
	int skip_end;
	int used;
	int role;		/* PR_*, set on first use */
	int64_t jpid, jtid;	/* as JSON writes them */
	uint64_t async_id;
	int ctr_incremental;
	int64_t ctr_mult;
	double ctr_acc;
	struct pfr_open *open;
	/* Async ends that came before their begins (tprof writes an NVTX
	 * range's end when it happens, on any thread): paired with the
	 * track's next begins, oldest first. */
	struct pfr_open *early, *early_tail;
};

/* A set of ids, open addressing (keys id + 1; 0: empty). */
struct pfr_idset {
	uint64_t *keys;
	uint32_t cap, n;
};

struct tp_pfr {
	tp_pfr_read_fn read;
	void *ctx;
	uint64_t off;		/* input bytes consumed */
	struct tp_buf pkt;	/* the packet being decoded */
	uint64_t pkt_off;	/* its first byte's offset */
	struct tp_buf out;	/* JSON text not yet handed out */
	size_t out_pos;
	unsigned char in[1 << 16];
	size_t in_pos, in_len;
	int in_eof;
	int state;		/* 0 header not written, 1 events, 2 done */
	int nevents;		/* events written (for the commas) */
	int failed;
	char err[200];

	struct pfr_seq *seqs;
	uint32_t nseqs, capseqs;
	uint64_t interned, intern_bytes;

	struct pfr_clock gclk[PFR_GLOBAL_CLOCKS];	/* ids 0..63 */
	uint32_t trace_clock;	/* primary_trace_clock, else BOOTTIME */
	uint32_t out_clock;	/* what JSON's ts counts: REALTIME if known */
	int have_base;
	int64_t base;		/* baseTimeNanoseconds */

	struct pfr_track *trk;
	uint32_t ntrk, captrk;
	uint32_t *thash;	/* uuid -> index + 1 */
	uint32_t thcap;
	uint32_t nroots;	/* roots given made-up pids */
	uint64_t nopen, open_bytes;
	struct pfr_idset flows;		/* open flow ids */
	/* Fan-out flows' ids (id | k << 32, k >= 1) whose start was left
	 * out: their ends are written with the base id (flows()). */
	struct pfr_idset folded;
	/* Flow ids whose end was written lately (direct-mapped by id,
	 * PFR_ENDED entries, id + 1; 0: empty): the library's fan-out
	 * starts come after their base flow's first end. */
	uint64_t *ended;
	/* Flows begun on a slice, not yet written (pftrace_flows.c): a
	 * table, and the order they came in. */
	struct pfr_pend *pend;
	uint64_t *pend_order;
	uint32_t npend;
	uint64_t pend_head, pend_tail;

	char *trailer;		/* the "tprof metadata" JSON object */
	size_t trailer_len;
	struct tp_buf scratch;	/* one event's args */
	struct tp_buf head;	/* one event's name and category */
	struct tp_buf jcopy;	/* legacy JSON being validated */

	uint64_t notes[PFR_NOTE_KINDS];
	uint32_t cur_seq;	/* the packet's being read */
};

#define PFR_OUT_CLOCK_NONE 0xffffffffu

/* Copies that may be empty: memcpy's pointers must not be NULL even for
 * no bytes, and an empty buffer's may be. */
static inline void pfr_put(struct tp_buf *b, const void *p, size_t n)
{
	if (n)
		tp_buf_put(b, (const char *)p, n);
}

static inline void pfr_copy(void *d, const void *s, size_t n)
{
	if (n)
		memcpy(d, s, n);
}

/* pftrace_seq.c: the base, called by every other file. */
int pfr_fail(struct tp_pfr *r, const uint8_t *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
struct pfr_seq *pfr_seq_get(struct tp_pfr *r, uint32_t id);
void pfr_seq_clear(struct tp_pfr *r, struct pfr_seq *s);
/* Packets of s were lost before this one (pftrace_event.c): its state
 * is no longer valid, and the slices it began are left out. */
void pfr_seq_lost(struct tp_pfr *r, struct pfr_seq *s);
int pfr_interned_data(struct tp_pfr *r, struct pfr_seq *s, struct pbr c);
int pfr_intern_get(struct tp_pfr *r, struct pfr_seq *s, int kind,
		   uint64_t iid, const char **str, size_t *len);
/* Starts a JSON event: the header before the first, else a comma. */
void pfr_begin_event(struct tp_pfr *r);
int64_t pfr_json_ts(const struct tp_pfr *r, int64_t t);

/* pftrace_clock.c */
int pfr_clock_snapshot(struct tp_pfr *r, struct pfr_seq *s, struct pbr c);
/* A packet's timestamp on clock cid, in JSON's clock's ns. */
int64_t pfr_packet_ts(struct tp_pfr *r, struct pfr_seq *s, uint32_t cid,
		      uint64_t raw);

/* pftrace_tracks.c */
struct pfr_track *pfr_track_find(struct tp_pfr *r, uint64_t uuid);
int pfr_descriptor(struct tp_pfr *r, struct pbr c);
/* A track made for events that name no track (the sequence's own). */
struct pfr_track *pfr_track_pseudo(struct tp_pfr *r, struct pfr_seq *s);
void pfr_track_use(struct tp_pfr *r, struct pfr_track *t);
void pfr_names(struct tp_pfr *r);
void pfr_tracks_free(struct tp_pfr *r);

/* pftrace_flows.c: open addressing over entries of size bytes that
 * begin with a 64-bit key (0: empty), cap a power of two: a key's first
 * slot, and the deletion of slot h (the flow tables' both). */
uint32_t pfr_key_home(uint64_t key, uint32_t cap);
void pfr_key_del(void *table, size_t size, uint32_t cap, uint32_t h);
/* Whether id is in the set; drop: take it out; add: put it in (a full
 * set adds nothing). */
int pfr_idset(struct pfr_idset *set, uint64_t id, int drop, int add);

/* A flow begun on a slice at (jpid, jtid, ts), held
 * (-1: not held, no memory: write its start now); taken back (1) when it
 * ends or steps, 0 if not held. */
int pfr_pend_add(struct tp_pfr *r, uint64_t id, int64_t jpid, int64_t jtid,
		 int64_t ts);
int pfr_pend_take(struct tp_pfr *r, uint64_t id, int64_t *jpid,
		  int64_t *jtid, int64_t *ts);
void pfr_pend_free(struct tp_pfr *r);
/* A flow id whose end was written, remembered (the latest PFR_ENDED,
 * about: one per slot); whether id is remembered. */
void pfr_ended_add(struct tp_pfr *r, uint64_t id);
int pfr_ended_has(const struct tp_pfr *r, uint64_t id);

/* pftrace_event.c */
int pfr_track_event(struct tp_pfr *r, struct pfr_seq *s, struct pbr c,
		    int64_t ts);
void pfr_close_open(struct tp_pfr *r);

/* pftrace_args.c: the annotations of TrackEvent message c, as the body of
 * a JSON object ("k":v,...) appended to b. */
int pfr_arg_name(struct tp_pfr *r, struct pfr_seq *s, struct pbr c,
		 struct tp_buf *b);
int pfr_args(struct tp_pfr *r, struct pfr_seq *s, struct pbr c,
	     struct tp_buf *b);
/* The "trailer" annotation of a "tprof metadata" instant, if c holds
 * one, typed or legacy JSON: 1 and the object's members in out, else 0;
 * -1 on a malformed annotation. */
int pfr_trailer_of(struct tp_pfr *r, struct pfr_seq *s, struct pbr c,
		   struct tp_buf *out);

#endif
