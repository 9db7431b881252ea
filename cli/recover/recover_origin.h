/* tprof recover: the keys every recovered trace's trailer opens with
 * (recover_origin.c), for a .tmp cut at its last sync (recover.c) and
 * for a killed flight recorder's window (recover_flight.c); in
 * Perfetto, the event that carries them. */
#ifndef TP_CLI_RECOVER_ORIGIN_H
#define TP_CLI_RECOVER_ORIGIN_H

#include <stddef.h>
#include <stdint.h>

struct tp_buf;

/* "deviceProperties", "distributedInfo" and the "tprof" object's first
 * keys (recovered, pid, run_id, recovered_from), the object left open
 * for the caller's counts. */
void tp_recover_put_origin(struct tp_buf *b, int64_t rank, int64_t world,
			   int64_t pid, const char *run, const char *from);

/* Perfetto: the trailer's pairs [pairs, pairs+len) as the "tprof
 * metadata" event, appended to b from an encoder of its own (the trace's
 * third writer: its own sequence and clock snapshot), at trace time
 * ts_ns (0: its first event's). */
void tp_recover_put_pf_trailer(struct tp_buf *b, const char *name,
			       int64_t base_ns, int64_t ts_ns,
			       const char *pairs, size_t len);

#endif
