/* tprof recover: the keys every recovered trace's trailer opens with
 * (recover_origin.c), for a .tmp cut at its last sync (recover.c) and
 * for a killed flight recorder's window (recover_flight.c). */
#ifndef TP_CLI_RECOVER_ORIGIN_H
#define TP_CLI_RECOVER_ORIGIN_H

#include <stdint.h>

struct tp_buf;

/* "deviceProperties", "distributedInfo" and the "tprof" object's first
 * keys (recovered, pid, run_id, recovered_from), the object left open
 * for the caller's counts. */
void tp_recover_put_origin(struct tp_buf *b, int64_t rank, int64_t world,
			   int64_t pid, const char *run, const char *from);

#endif
