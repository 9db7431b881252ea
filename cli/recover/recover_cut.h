/* A killed writer's gzip stream read as far as it goes, cut after its
 * last whole trace event (for tprof recover, recover.c). */
#ifndef TP_CLI_RECOVER_CUT_H
#define TP_CLI_RECOVER_CUT_H

#include <stddef.h>
#include <stdint.h>

#include "gzip/gzip.h"

struct tp_cut_result {
	uint64_t events;	/* whole events written to out */
	uint64_t bytes_cut;	/* inflated bytes after the last one */
	int ended;		/* the stream was complete (gzip trailer) */
	/* Perfetto: REALTIME ns at trace time 0, from its clock snapshot */
	int has_base;
	int64_t base_ns;
};

/* Inflates the gzip file at fd (from its start) and writes to out the
 * JSON up to and including the last whole element of "traceEvents",
 * streaming: memory is one inflated chunk plus one partial event.
 * Returns 0, or -1 with errno (a read or write error; a cut or corrupt
 * stream is no error: it ends the input). */
int tp_recover_cut(int fd, struct tp_gz *out, struct tp_cut_result *r);
/* As tp_recover_cut, reading no more than limit inflated bytes (the
 * length at the writer's last sync point, from its rings file). */
int tp_recover_cut_at(int fd, struct tp_gz *out, uint64_t limit,
		      struct tp_cut_result *r);
/* As tp_recover_cut_at; pf: the stream is Perfetto's TracePackets, cut
 * after its last whole packet. */
int tp_recover_cut_as(int fd, struct tp_gz *out, uint64_t limit, int pf,
		      struct tp_cut_result *r);

#endif
