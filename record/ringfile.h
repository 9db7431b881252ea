/* record/: the recording core: records, per-thread rings, threads,
 * drops, the clock, the rings file; on files/ .. util/. */
/* The rings file: <dir>/.tprof-rings.<pid>.<n>, mapped MAP_SHARED, so
 * that what the rings hold outlives a SIGKILL (the page cache keeps the
 * pages), with what a decoder needs to turn it into events.
 *
 * Layout (one build's structs: `layout` says which):
 *   0                  struct tp_rf_hdr (clock mapping, the .tmp's name,
 *                      the sync points, region states)
 *   TP_RF_LOG_OFF      the notes: an append-only log of kernel names
 *                      (host stub -> name, handle -> stub) and ended
 *                      threads' drop counts
 *   TP_RF_REGIONS_OFF  regions of region_bytes: struct tp_rf_region, the
 *                      thread's struct tp_thread (its ring's head, drop
 *                      count, tid, name) at TP_RF_THREAD_OFF and the
 *                      ring's slots at TP_RF_SLOTS_OFF
 *
 * Sync points are double-buffered by generation: the writer fills slot
 * (gen + 1) & 1 (the .tmp's inflated length and each ring's read
 * position), then publishes gen + 1, so a kill mid-update leaves the
 * copy of gen whole. Records from a ring's position at the published
 * generation to its head are not in the .tmp's synced part and are still
 * in the ring: its slots go back to the producer only after a sync
 * (struct tp_ring's hold).
 */
#ifndef TP_RINGFILE_H
#define TP_RINGFILE_H

#include <stddef.h>
#include <stdint.h>

#include "clock.h"
#include "thread.h"

#define TP_RF_MAGIC "TPRINGS"
#define TP_RF_VERSION 1u
#define TP_RF_LAYOUT ((uint32_t)(sizeof(struct tp_thread) << 8 | \
				 sizeof(struct tp_event)))
#define TP_RF_MAX_REGIONS 2048u
#define TP_RF_LOG_OFF 65536u
#define TP_RF_LOG_BYTES (1u << 20)
#define TP_RF_REGIONS_OFF (TP_RF_LOG_OFF + TP_RF_LOG_BYTES)
#define TP_RF_THREAD_OFF 64u
#define TP_RF_SLOTS_OFF 4096u
#define TP_RF_PREFIX ".tprof-rings."

/* TAKEN: being set up, not yet for the decoder. */
enum { TP_RF_FREE, TP_RF_USED, TP_RF_TAKEN };

enum {
	TP_RF_NOTE_FN = 1,	/* a: host stub, s: its device name */
	TP_RF_NOTE_HANDLE,	/* a: kernel handle, b: host stub */
	TP_RF_NOTE_ENDED,	/* a: tid, b: calls its ring dropped */
};

struct tp_rf_hdr {
	char magic[8];
	uint32_t version;
	uint32_t layout;
	int32_t pid;
	int32_t clock_ready;
	int64_t base_ns;
	struct tp_clock_map map;
	uint64_t region_bytes;
	uint64_t n_slots;
	uint32_t n_regions;
	uint32_t lock;		/* region table and file growth */
	uint64_t gen;		/* the published sync point, 0: none */
	uint64_t tmp_len[2];	/* the .tmp's inflated length at it */
	uint64_t log_used;	/* bytes of notes reserved */
	uint64_t log_lost;	/* notes that found the log full */
	char tmp_name[512];	/* the .tmp's file name, "" before it opens */
	uint8_t state[TP_RF_MAX_REGIONS];
};

struct tp_rf_region {
	uint64_t sync_pos[2];	/* the ring's read position per generation */
	uint32_t index;		/* the region's number */
};

struct tp_rf_note {
	uint32_t type;		/* written last: 0 while being written */
	uint32_t len;		/* the whole note, a multiple of 8 */
	uint64_t a, b;
	char s[];
};

_Static_assert(sizeof(struct tp_rf_hdr) <= TP_RF_LOG_OFF, "header size");
_Static_assert(TP_RF_THREAD_OFF + sizeof(struct tp_thread) <= TP_RF_SLOTS_OFF,
	       "tp_thread does not fit its region page");

/* Writer side (the recording process). */

/* The output directory, and why rings stay in memory (NULL: they go to
 * a file when the process's limits allow). Until called: in memory. */
void tp_rf_configure(const char *dir, const char *off_why);

/* A thread's state in a region of the file (made at the first call, when
 * TPROF_RING_FILE, no flight mode, no RLIMIT_AS or RLIMIT_FSIZE), its
 * ring holding slots until a sync; NULL: the caller keeps it in memory. */
struct tp_thread *tp_rf_thread_alloc(size_t ring_bytes);
/* Whether t lives in the file. */
static inline int tp_rf_owns(const struct tp_thread *t)
{
	return t->ring.external;
}
/* Gives t's region back (its records are synced). */
void tp_rf_thread_free(struct tp_thread *t);
/* A fork child: unmaps t's region (the parent's) without a write. */
void tp_rf_thread_forget(struct tp_thread *t);
/* A fork child: the parent's file is closed, never written; a file of
 * the child's own is made if it records. */
void tp_rf_after_fork(void);
/* Appends a note (kernel names, an ended thread); nothing without a
 * file. Any thread. */
void tp_rf_note(uint32_t type, uint64_t a, uint64_t b, const char *s);
void tp_rf_set_trace(const char *tmp_path);
void tp_rf_set_clock(const struct tp_clock_map *m, int64_t base_ns);
/* A sync point (the writer only): begin gives the next generation, each
 * ring of the file gets its read position recorded for it, end publishes
 * it with the .tmp's inflated length. The caller then gives the rings'
 * read slots back (tp_ring_publish). */
uint64_t tp_rf_sync_begin(void);
void tp_rf_sync_ring(struct tp_thread *t, uint64_t gen);
void tp_rf_sync_end(uint64_t gen, uint64_t tmp_len);
/* The trace is complete: the file goes (mappings stay valid). */
void tp_rf_remove(void);
int tp_rf_active(void);

/* Reader side (tprof recover and the decoder). */
struct tp_rf_view {
	const char *base;
	size_t size;
	const struct tp_rf_hdr *h;
};

/* Maps path read-only and checks it is a rings file of this build;
 * 0, or -1 with a reason in why. */
int tp_rf_open_view(const char *path, struct tp_rf_view *v, char *why,
		    size_t whylen);
void tp_rf_close_view(struct tp_rf_view *v);
/* Region i's bookkeeping and thread, NULL when outside the file. */
const struct tp_rf_region *tp_rf_view_region(const struct tp_rf_view *v,
					     unsigned i);
/* The notes in order: *off starts at 0; NULL at the end. */
const struct tp_rf_note *tp_rf_view_next_note(const struct tp_rf_view *v,
					      uint64_t *off);

/* The decoder libtprof.so exports for tprof recover (dlopened with
 * TPROF_DISABLE=1): every record of path's rings past its published sync
 * point, as trace events (each ",\n{...}") handed to out, then a
 * thread_name event per thread. 0, or -1 with a reason in why. */
struct tp_rf_counts {
	uint64_t records;	/* events decoded */
	uint64_t threads;	/* rings read */
	uint64_t unreadable;	/* records that could not be decoded */
	uint64_t dropped;	/* calls the rings dropped (full) */
	uint64_t spilled_lost;	/* slots of spill chunks (records and
				 * their extensions) the kill took */
};
typedef int (*tp_rf_out_fn)(const char *s, size_t len, void *arg);
typedef int (*tp_rf_decode_fn)(const char *path, tp_rf_out_fn out,
			       void *arg, struct tp_rf_counts *c, char *why,
			       size_t whylen);
#define TP_RF_DECODE_SYM "tprof_rings_decode"

#endif
