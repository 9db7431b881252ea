/* The background writer: drains every thread's ring, converts ticks to
 * trace time, formats JSON and streams it through gzip to the output
 * file, which it renames to its final name when complete. */
#ifndef TP_WRITER_H
#define TP_WRITER_H

#include <stdint.h>

/* Starts the writer thread (on the first recorded event). */
void tp_writer_start(void);
/* Stops it and completes the file; waits at most timeout_ms. Safe to
 * call when the writer never started. */
void tp_writer_stop(int timeout_ms);
/* The same from a signal handler: only async-signal-safe calls. */
void tp_writer_stop_from_signal(int timeout_ms);
void tp_writer_after_fork_child(void);

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
};

struct tp_writer_stats tp_writer_stats(void);

#endif
