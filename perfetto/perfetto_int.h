/* perfetto/: the Perfetto protobuf encoder of typed events: packets,
 * interning, tracks, annotations; on encode/ and below. */
/* The Perfetto encoder's insides, shared by its files: perfetto_enc.c
 * (packets, clocks, events), perfetto_intern.c (interning),
 * perfetto_tracks.c (the track table and descriptors), perfetto_args.c
 * (typed args as debug annotations), perfetto_arun.c (runs of args that
 * come again, their bytes reused), perfetto_hold.c (complete events held
 * and written in start order). */
#ifndef TP_PERFETTO_INT_H
#define TP_PERFETTO_INT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "pb.h"
#include "perfetto_ids.h"
#include "pf_tab.h"
#include "encode/tev.h"

#define SEQ_ID 1
/* The k-th appending writer (tp_enc_meta.writer): its sequence and its
 * track uuids. */
#define SEQ_ID_WRITER(k) (0x40000000u + (k))
#define UUID_BASE_WRITER(k) ((uint64_t)(k) << 40)
#define INTERN_MAX (1u << 16)
#define INTERN_BYTES (16u << 20)
#define TRACKS_MAX (1u << 20)

enum { IK_NAME, IK_CAT, IK_ANAME, IK_STR };

/* Strings longer than this are written inline, not interned. */
#define INTERN_LEN_MAX 4096

/* Track kinds of the track table: the typed model's, plus the parents. */
enum { TK_PROCESS = 16, TK_DEVICE, TK_META, TK_LANE };

struct pf_lanes;

struct pf_track {
	uint64_t uuid;
	uint64_t parent;
	char *name;
	int64_t sort;
	int has_sort;
	struct pf_lanes *lanes;	/* held events only (perfetto_lanes.c) */
};

#define PF_PCACHE 512

/* A run of annotations kept for reuse (perfetto_arun.c): as many as a
 * training step's distinct launches (256 in bench_writer's step). Each
 * arg is kept as two 16-byte words, (type and key length, key) and its
 * value with the bytes its type does not use cleared. */
#define PF_ARUNS 1024
#define PF_ARUN_ARGS 16
#define PF_AHIST 16384
typedef uint64_t pf_v2 __attribute__((vector_size(16)));
struct pf_aword {
	pf_v2 head, val;
	pf_v2 mask;	/* the value bytes its type sets */
};
struct pf_arun {
	uint32_t n;		/* args; 0: empty */
	uint32_t gen;		/* the interning state its bytes need */
	uint32_t len;
	uint32_t nstr;		/* string values, at args stri[] */
	uint64_t seen;		/* where it was used last in the history, +1 */
	struct pf_aword w[PF_ARUN_ARGS];	/* flat: array elements count */
	uint8_t stri[PF_ARUN_ARGS];
	char strs[256];		/* the string values' bytes, copied */
	unsigned char bytes[256];
};

struct pf_enc {
	struct tp_enc e;
	struct tp_pf_tab intern;
	struct tp_pf_tab tracks;
	struct pf_track *trk;
	uint32_t ntrk, captrk;
	uint32_t next_iid;
	uint64_t inc_ts;	/* clock 64's value after the last packet */
	/* TrackEventDefaults.track_uuid in force (0: none), and the track of
	 * the previous event: a second event in a row on a thread or stream
	 * makes it the default, so its packets omit track_uuid. */
	uint64_t def_track, prev_track;
	int64_t base_unix_ns;
	int64_t min_ts;		/* the earliest packet time written */
	int64_t trailer_ts;	/* tp_enc_meta's trailer_ts_ns */
	int seen_ts;
	int has_boottime;
	int64_t pair_realtime_ns, pair_boottime_ns;
	struct tp_buf in[4];	/* its new interned entries, by kind */
	int in_any;		/* one of in[] is not empty */
	/* The thread or stream of the last event: launches come in runs
	 * on one thread, so most events skip both table lookups. */
	int64_t last_pid, last_tid;
	uint32_t last_kind, last_idx;
	int last_valid;
	/* Interned strings by address (pf_intern_at): the writer hands the
	 * same names, keys and kernel names over and over. gen changes when
	 * the state is cleared, which empties the cache. */
	uint32_t gen;
	struct pf_pc {
		const char *s;
		uint32_t n, gen, off, iid;
		uint32_t kind;
	} pc[PF_PCACHE];
	/* The event being written has static keys (tev.h). */
	int static_keys;
	uint32_t seq_id;	/* SEQ_ID, or SEQ_ID_WRITER(k) */
	uint64_t uuid_base;	/* added to every track's uuid */
	int abs_ts;		/* tp_enc_meta.absolute_ts */
	struct pf_arun *arun;	/* PF_ARUNS of them, made at first use */
	/* The runs used, in order (their indexes), the last PF_AHIST:
	 * the one after the place being followed is tried first. */
	uint16_t *ahist;
	uint64_t ahist_n;	/* runs used */
	uint64_t ahist_at;	/* the place predicted (0: none) */
	int hold;		/* tp_enc_meta.hold_complete */
	/* Every TrackDescriptor packet written is copied here too (the
	 * flight recorder keeps them beside its window on disk: a chunk
	 * that outlives the one declaring its track needs them). */
	struct tp_buf *track_log;
	/* Writes a complete event or an instant (perfetto_enc.c's
	 * pf_sliced): how perfetto_hold.c writes what it held, without a
	 * call back into the file that calls it. */
	void (*write_held)(struct pf_enc *p, const struct tp_tev *ev);
	/* Complete events and instants held back (perfetto_hold.c), a
	 * heap of them in the order they will be written. */
	struct pf_held **held;
	uint32_t nheld;
	uint64_t held_seq;
	size_t held_bytes;
};

/* A packet: Trace.packet, a length-delimited TracePacket. */
static inline size_t packet_open(struct pf_enc *p)
{
	size_t m = tp_pb_open(&p->e.out, PF_TRACE_PACKET);

	tp_pb_u64(&p->e.out, PF_PKT_SEQ_ID, p->seq_id);
	return m;
}

/* An arg whose value is a string it borrows (v.str). */
static inline int pf_targ_has_str(enum tp_targ_type t)
{
	return t == TP_TARG_STRING || t == TP_TARG_JSON;
}

/* perfetto_intern.c */
uint64_t pf_intern(struct pf_enc *p, int kind, const char *s, size_t n);
uint64_t pf_intern_miss(struct pf_enc *p, int kind, const char *s, size_t n,
			struct pf_pc *c);

/* The same, looked up by address first (inline: the writer hands the
 * same names, keys and kernel names over and over); stat: s is static
 * (tev.h), its address alone names it, else the bytes are compared too.
 * The slot takes every bit of the address: keys of one formatter are
 * string literals a few bytes apart ("block" and "shared memory" share
 * an 8-byte word), which dropping the low bits made evict each other on
 * every launch. */
static inline uint64_t pf_intern_at(struct pf_enc *p, int kind,
				    const char *s, size_t n, int stat)
{
	unsigned i = (unsigned)((((uintptr_t)s << 2 | (unsigned)kind) *
				 0x9e3779b97f4a7c15ull) >> 54) & (PF_PCACHE - 1);
	struct pf_pc *c = &p->pc[i];

	if (c->s == s && c->n == n && c->kind == (uint32_t)kind &&
	    c->gen == p->gen &&
	    (stat || !memcmp(p->intern.strs.p + c->off, s, n)))
		return c->iid;
	return pf_intern_miss(p, kind, s, n, c);
}

/* perfetto_tracks.c */
struct pf_track *pf_track_get(struct pf_enc *p, uint32_t kind, int64_t k1,
			      int64_t k2, const char *s, size_t n,
			      uint64_t parent, int64_t pid, int64_t tid);
struct pf_track *pf_parent_of(struct pf_enc *p, const struct tp_tev *ev);
struct pf_track *pf_track_of(struct pf_enc *p, const struct tp_tev *ev,
			     const char *cname, size_t cn);
void pf_descriptor(struct pf_enc *p, uint32_t kind, const struct pf_track *t,
		   int64_t pid, int64_t tid);
char *pf_dup_name(const char *s, size_t n);

/* perfetto_hold.c: ev held (a copy), the earliest written if the hold
 * is full; -1: no memory, ev not held (write it at once). */
int pf_hold(struct pf_enc *p, const struct tp_tev *ev);
/* Writes every held event, in order. */
void pf_hold_drain(struct pf_enc *p);
void pf_hold_free(struct pf_enc *p);

/* perfetto_lanes.c: the track a held event goes on, in start order. */
struct pf_track *pf_lane_of(struct pf_enc *p, struct pf_track *t,
			    const struct tp_tev *ev);
void pf_lanes_free(struct pf_track *t);

/* perfetto_args.c */
void pf_put_annotations(struct pf_enc *p, const struct tp_targ *a,
			uint32_t n);

/* perfetto_arun.c: the same for a run of args with static keys that
 * comes again (tp_tev's stable_from/stable_to), its bytes reused. */
void pf_put_stable(struct pf_enc *p, const struct tp_targ *a, uint32_t n);

#endif
