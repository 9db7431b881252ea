/* output/: the background writer: drains the rings into the trace file,
 * with its metadata and trailer; on every folder above. */
/* The flight recorder's window (TPROF_FLIGHT): the writer drains and
 * formats as always, but each flush of JSON text goes here instead of the
 * file, as one chunk stamped with the tick it was flushed at. Chunks whose
 * every event ended more than TPROF_FLIGHT seconds ago are freed, and so
 * are the oldest when the window would pass TPROF_FLIGHT_MB. A dump writes
 * the header, the chunks and a trailer into a new trace file. */
#ifndef TP_FLIGHT_H
#define TP_FLIGHT_H

#include <stddef.h>
#include <stdint.h>

struct tp_buf;

/* 1 when TPROF_FLIGHT is set. */
int tp_flight_on(void);
/* A flush: len bytes of events (n of them), all ended before tick now. */
void tp_flight_put(const char *p, size_t len, uint64_t n, uint64_t now);
/* Frees what fell out of the window by now. */
void tp_flight_evict(uint64_t now);
/* Calls fn on every chunk of the dump's window, oldest first; returns the
 * events they hold. */
uint64_t tp_flight_each(void (*fn)(const char *p, size_t len));
/* The "hang" and "flight" keys of the trace's tprof object. */
void tp_flight_put_stats(struct tp_buf *b);
/* Async-signal-safe: why the next stop dumps ("SIGTERM", ...): a
 * normal exit writes nothing unless TPROF_FLIGHT_DUMP_AT_EXIT=1. */
void tp_flight_trigger(const char *why);
/* The reason given (and in *at its tick), or NULL: the final stop should
 * write the window. */
const char *tp_flight_exit_reason(uint64_t *at);
void tp_flight_after_fork(void);
/* The flight file's number of the newest chunk kept (0: none): a sync
 * point of the rings file says its records up to there are in it. */
uint64_t tp_flight_synced_seq(void);
/* A dump starts (why: the trace's flight.trigger; NULL once done) for a
 * trigger at tick `at`: its window is the SECONDS before `at`, to the
 * event (X events that ended before it are left out). */
void tp_flight_dumping(const char *why, uint64_t at);

#endif
