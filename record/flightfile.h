/* record/: the recording core: records, per-thread rings, threads,
 * drops, the clock, the rings file; on files/ .. util/. */
/* The flight recorder's window on disk: <dir>/.tprof-flight.<pid>.<n>, a
 * file mapping (MAP_SHARED) whose pages outlive a SIGKILL, as the rings
 * file's do. The writer copies each deflated chunk of the window into it
 * as it keeps the chunk (output/flight.c), and the rings of a flight
 * process live in the rings file, synced to the chunks (a sync point's
 * tmp_len is the last chunk written then): after a SIGKILL, `tprof
 * recover` rebuilds the window from the chunks and appends the rings'
 * records past that sync point, so a kill loses only what no decoder
 * can read.
 *
 * Layout: 0: struct tp_ff_hdr; TP_FF_HEAD_OFF: the trace's header text
 * (JSON, up to the first event); TP_FF_DATA_OFF: a ring of `cap` bytes
 * of chunks (struct tp_ff_chunk then its deflated text, 8-aligned), the
 * oldest at first_off; a chunk that does not fit before the end goes at
 * 0, after a TP_FF_WRAP word where one fits. The writer evicts the
 * oldest for room, moving first_off then first_seq, then writes the
 * chunk, its magic last, then last_seq.
 *
 * In Perfetto format (format 1) the header text is empty: a chunk's
 * packets need nothing before them but the TrackDescriptors of the
 * tracks they use, and the one declaring a track may have aged out
 * with its chunk. So every descriptor the encoder writes is also
 * appended past the ring, at TP_FF_DATA_OFF + cap, tracks_len counting
 * whole packets only (it moves after each append is written): the
 * recovered trace declares them all first, as a dump does. The name
 * ends in ".pftrace", which tells the rings' decoder the format too. */
#ifndef TP_FLIGHTFILE_H
#define TP_FLIGHTFILE_H

#include <stddef.h>
#include <stdint.h>

#define TP_FF_MAGIC "TPFLIGHT"
#define TP_FF_VERSION 2u
#define TP_FF_PREFIX ".tprof-flight."
#define TP_FF_HEAD_OFF 4096u
#define TP_FF_DATA_OFF 65536u
#define TP_FF_CHUNK 0x4b484354u	/* "TCHK" */
#define TP_FF_WRAP 0x50525754u	/* "TWRP" */

struct tp_ff_hdr {
	char magic[8];
	uint32_t version;
	int32_t pid;
	uint64_t cap;		/* bytes of the chunk ring */
	uint64_t flight_ns;	/* TPROF_FLIGHT */
	int32_t rank;
	int32_t world;
	uint64_t head_len;	/* bytes of header text */
	uint64_t first_off;	/* the oldest chunk kept, in the ring */
	uint64_t first_seq;
	uint64_t last_seq;	/* the newest chunk whole, 0: none */
	uint64_t dumps;		/* dumps written already */
	char run[256];
	char name[512];		/* TPROF_NAME */
	uint32_t format;	/* 0 JSON, 1 Perfetto */
	uint32_t pad;
	int64_t base_ns;	/* the trace's base time (Unix ns) */
	uint64_t tracks_len;	/* Perfetto: bytes of descriptors past the ring */
};

struct tp_ff_chunk {
	uint32_t magic;		/* TP_FF_CHUNK, written last */
	uint32_t zlen;		/* deflated bytes after this */
	uint64_t seq;
	uint64_t len;		/* of the text, inflated */
	uint64_t events;
	int64_t end_ns;		/* trace time: its events ended before */
};

_Static_assert(sizeof(struct tp_ff_hdr) <= TP_FF_HEAD_OFF, "header size");

/* Writer side: the output directory and TPROF_FLIGHT_MB (the ring's
 * size), before the first chunk. */
void tp_ff_configure(const char *dir, uint64_t cap, uint64_t flight_ns,
		     int perfetto);
/* The chunk, copied in (the file made at the first); its number, or 0
 * when there is no file (one warning: a SIGKILL then loses the window). */
uint64_t tp_ff_put(const void *z, uint32_t zlen, uint64_t len,
		   uint64_t events, int64_t end_ns);
/* The window in memory let chunks up to seq go: the file lets them go
 * too. */
void tp_ff_forget_until(uint64_t seq);
/* The trace's header text, who wrote it, and the dumps made so far. */
void tp_ff_set_head(const char *text, size_t len, int rank, int world,
		    const char *run, const char *name);
void tp_ff_set_dumps(uint64_t dumps);
/* The trace's base time (Unix ns), for a recovered Perfetto trace's
 * clock. */
void tp_ff_set_base(int64_t base_ns);
/* Perfetto: descriptor packets appended to the file's log of them; 0,
 * or -1 (the file is gone then, with one warning: a track whose
 * descriptor is not kept would leave its events unreadable). */
int tp_ff_add_tracks(const void *p, size_t len);
/* The file's name ("" without one), for the rings file to point at. */
const char *tp_ff_name(void);
/* The window is in a trace (a normal end): the file goes. */
void tp_ff_remove(void);
void tp_ff_after_fork(void);

/* Reader side (tprof recover). */
struct tp_ff_view {
	const char *base;
	size_t size;
	const struct tp_ff_hdr *h;
};

int tp_ff_open_view(const char *path, struct tp_ff_view *v, char *why,
		    size_t whylen);
void tp_ff_close_view(struct tp_ff_view *v);
/* Perfetto: the descriptors' log (whole packets), NULL when it is not
 * in the file. */
const char *tp_ff_view_tracks(const struct tp_ff_view *v, size_t *len);
struct tp_ff_iter {
	uint64_t off;		/* the next chunk's, in the ring */
	uint64_t seq;		/* the last one's */
	int started;
};

/* The chunks from the oldest kept to seq `upto` (0: the newest), oldest
 * first, from a zeroed iterator; NULL at the end. */
const struct tp_ff_chunk *tp_ff_view_next(const struct tp_ff_view *v,
					  struct tp_ff_iter *it,
					  uint64_t upto);

#endif
