/* output/: the background writer: drains the rings into the trace file,
 * with its metadata and trailer; on every folder above. */
/* The background writer: drains every thread's ring, converts ticks to
 * trace time, formats JSON and streams it through gzip to the output
 * file, which it renames to its final name when complete. */
#ifndef TP_WRITER_H
#define TP_WRITER_H

#include <stdint.h>
#include <sys/types.h>

/* Starts the writer thread (on the first recorded event). */
void tp_writer_start(void);
/* Stops recording at once and waits while the writer completes the file:
 * as long as it makes progress, giving up (with one line on stderr) only
 * after stall_ms without any. Safe to call when the writer never
 * started. */
void tp_writer_stop(int stall_ms);
/* From the GPU's exit handler: has the writer take and convert every GPU
 * record now, while CUDA is alive; waits at most timeout_ms. */
void tp_writer_gpu_final(int timeout_ms);
/* The same mid-run (a module is unloaded): every GPU record delivered so
 * far is converted now; collection goes on. */
void tp_writer_gpu_convert(int timeout_ms);
/* Runs a cycle now (async-signal-safe, no lock, a system call only when
 * the writer sleeps). */
void tp_writer_wake(void);
/* The same from a signal handler: only async-signal-safe calls. 0 once
 * the file is complete, -1 when the writer never started or was given
 * up. */
int tp_writer_stop_from_signal(int stall_ms);
void tp_writer_after_fork_child(void);
/* After tp_writer_stop, for a failed exec: recording goes on into a new
 * file. 0, or -1 when the old writer never finished. */
int tp_writer_restart(void);
/* At exit: one line for calls of threads without a ring when no trace
 * file counted them (none could be written, or none was begun). */
void tp_writer_note_unrecorded(void);
/* Async-signal-safe: the flight recorder's window and the hang state are
 * dumped at the writer's next cycle (TPROF_DUMP_SIGNAL, `tprof dump`). */
void tp_writer_request_dump(void);

/* The writer's steps, for the thread and for benchmarks that drive it
 * synchronously on one core. */
int tp_writer_open(void);
void tp_writer_drain(void);
int tp_writer_finish(void);

struct tp_writer_stats {
	uint64_t events;
	uint64_t dropped;
	uint64_t raw_bytes;	/* JSON before compression */
	uint64_t file_bytes;
	const char *compressor;	/* "isa-l" or "zlib" */
};

struct tp_writer_stats tp_writer_stats(void);

struct tp_buf;
struct tp_thread;

/* A source that keeps state across its records (NVTX ranges open on a
 * thread) and adds to the trailer. Every function is optional and runs on
 * the writer thread. */
struct tp_writer_ext {
	/* The thread exits or the trace ends: write what is still open,
	 * ending at end_ns; returns the number of events written. */
	unsigned (*thread_end)(struct tp_buf *b, struct tp_thread *t,
			       int64_t end_ns);
	/* The trace ends (after every thread's thread_end): write what is
	 * still open across threads; returns the events written. */
	unsigned (*trace_end)(struct tp_buf *b, int64_t end_ns);
	/* Each drain cycle, after the GPU's records: write what the source
	 * gathered since (samples of another thread); returns the events
	 * written. */
	unsigned (*cycle)(struct tp_buf *b);
	/* Metadata events, each as ",\n{...}". */
	void (*put_meta)(struct tp_buf *b);
	/* Keys of the "tprof" object, each as ",\n \"key\": ...". */
	void (*put_stats)(struct tp_buf *b);
	/* A name given to a thread that replaces its OS name, or NULL. */
	const char *(*thread_name)(pid_t tid);
};

#define TP_WRITER_MAX_EXT 6

void tp_writer_add_ext(const struct tp_writer_ext *x);

#endif
