/* output/: the background writer: drains the rings into the trace file,
 * with its metadata and trailer; on every folder above. */
/* The writer's state and the steps its files share: writer_file.c (the
 * trace file: header, flushes, sync points, trailer), writer_event.c (a
 * hooked call's record as its event), writer_host.c (the host rings:
 * CPU samples and blocking calls), writer_drain.c (a cycle over the
 * rings), writer_flight.c (the flight recorder's dumps) and writer.c (the
 * thread, start, stop, exec and fork), each calling only the ones listed
 * before it. Only the writer thread (or a benchmark driving the steps
 * synchronously) touches the state, except the fields said atomic. */
#ifndef TP_WRITER_STATE_H
#define TP_WRITER_STATE_H

#include <pthread.h>
#include <stdint.h>

#include "encode/tev.h"
#include "files/naming.h"
#include "files/owned_fd.h"
#include "gzip/gzip.h"
#include "record/event.h"
#include "record/thread.h"
#include "writer.h"

#define FLUSH_BYTES (256 * 1024)
#define CYCLE_MS 50
/* At this interval what was drained reaches the file as a sync point of
 * the gzip stream: a process killed outright (SIGKILL, the OOM killer)
 * loses at most this much of what already left the rings, and `tprof
 * recover` reads the .tmp up to its last sync. */
#define SYNC_NS 1000000000ull
/* The tick rate is measured over at least this long before the first
 * conversion, and then fixed for the life of the process. */
#define CALIBRATE_NS 100000000ull
#define CALIBRATE_MIN_NS 10000000ull
/* After the last recording window, GPU work launched in it may still be
 * running: CUPTI is torn down only after twice the longest kept step,
 * within these bounds. */
#define TEARDOWN_MIN_NS 500000000ull
#define TEARDOWN_MAX_NS 10000000000ull
/* The writer releases a ring's slots to its producer in batches, so the
 * producer's cache line holding the tail does not bounce per event. */
#define POP_BATCH 256

struct tp_writer_state {
	pthread_t thread;
	int started;
	int claimed;		/* tp_writer_start ran */
	int torn_down;		/* GPU collection ended after the last window */
	int gpu_now;		/* 1: the GPU's exit handler waits for its
				 * records; 2: a module unload does */
	/* Requests for gpu_now, counted: a request is served by a cycle
	 * that began after it (gpu_done reaches its number), never by one
	 * that took CUPTI's records before the requester's flush. */
	uint64_t gpu_req;
	uint64_t gpu_done;
	int stop;
	uint32_t done;		/* futex: 1 once the file is complete */
	uint32_t wake_seq;	/* futex: bumped by every wake-up */
	uint32_t sleeping;	/* the writer waits on wake_seq */
	uint64_t progress;	/* bumped as the writer writes: a stop waits
				 * while it moves */
	struct tp_owned_fd own;	/* the trace file's descriptor */
	int said_abandoned;
	int said_no_ring;	/* the exit line counted the calls of
				 * threads without a ring */
	int failed;
	int opened;
	int dumping;		/* flight: the window goes to a file now */
	int pf_live;		/* flight_pf: the window's encoder is made */
	size_t pf_restart_len;	/* flight_pf: W.buf holds only a restart */
	unsigned dumps;		/* flight: dump files made */
	int ff_head;		/* flight: the flight file has the header */
	struct tp_buf ff_tracks; /* flight_pf: descriptors not yet in the
				  * flight file */
	int ff_noted;		/* flight: the rings file names it */
	uint32_t dump_req;	/* a dump was asked for (signal, tprof dump) */
	uint64_t dump_at;	/* when */
	uint64_t flushed_events;	/* W.events at the last flush */
	struct tp_output out;
	struct tp_gz gz;
	struct tp_buf buf;
	uint64_t events;
	uint64_t synced_in;	/* gz.in_bytes at the last sync point */
	uint64_t synced_at;	/* CLOCK_MONOTONIC ns of that sync */
	/* ended threads whose rings are in the rings file: freed after the
	 * next sync point covers what was read from them */
	struct tp_thread *ended;
	struct tp_thread_stats stats;
	const struct tp_gpu_source *gpu;
	const struct tp_writer_ext *ext[TP_WRITER_MAX_EXT];
	unsigned n_ext;
	/* a record and its extension, made contiguous where they wrap */
	struct tp_event scratch[1 + TP_EV_EXT_MAX];
	struct tp_targs args;	/* the event being written */
};

/* One writer per process: every writer file's W. */
extern struct tp_writer_state tp_wr;
#define W tp_wr

struct tp_trailer_info;
struct tp_tev;

/* writer_file.c */
void tp_wr_mark_failed(const char *what, int err);
int tp_wr_fd_ok(void);
int tp_wr_flight_pf(void);
void tp_wr_chunk_start(void);
void tp_wr_flush(int force);
void tp_wr_flush_some(void);
void tp_wr_sync_now(void);
int tp_wr_pf_live_start(void);
void tp_wr_put_trailer(struct tp_buf *b, const struct tp_trailer_info *info);
int tp_wr_open_named(const char *name);
void tp_wr_write_chunk(const char *p, size_t len);
/* writer_event.c */
void tp_wr_put_event(struct tp_buf *b, struct tp_thread *t,
		     const struct tp_event *e);
void tp_wr_put_call(struct tp_buf *b, pid_t tid, const struct tp_event *e);
/* writer_host.c: the host rings (CPU samples, blocking calls), and the
 * sampler driven from the writer's cycle; final: the trace ends. */
void tp_wr_host_cycle(void);
void tp_wr_host_drain(int final);
void tp_wr_host_thread_stats(void);
void tp_wr_host_after_fork(void);
extern const struct tp_writer_ext tp_wr_host_ext;
/* writer_drain.c */
void tp_wr_calibrate(int final);
void tp_wr_thread_end(struct tp_thread *t);
void tp_wr_drain(int final);
void tp_wr_add_live_thread_stats(void);
/* writer_flight.c */
int tp_wr_flight_final(void);
void tp_wr_watch(void);

#endif
