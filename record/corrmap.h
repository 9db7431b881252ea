/* record/: the recording core: records, per-thread rings, threads,
 * drops, the clock, the rings file; on files/ .. util/. */
/* Which CPU call each CUPTI correlation id belongs to, as the writer saw
 * it: the GPU records of a launch arrive later (CUPTI delivers them in
 * buffers), and need the call's thread and start for their flow arrow and
 * for "a kernel never starts before its launch".
 *
 * Writer thread only. Direct-mapped on the id: ids are sequential, so
 * the table keeps the last `size` calls. GPU records come up to a flush
 * period and a writer cycle after their launch (longer while the writer
 * catches up with a burst), so at a few hundred thousand launches a
 * second 65,536 calls are not enough: a call noted less than
 * TP_CORR_HOLD_NS ago whose GPU work was not seen yet is never
 * overwritten, the table doubles instead, up to TP_CORR_MAX_SLOTS (24 MiB).
 * A slow program keeps the first 64 Ki slots (1.5 MiB).
 */
#ifndef TP_CORRMAP_H
#define TP_CORRMAP_H

#include <stdint.h>

#define TP_CORR_SLOTS (1u << 16)	/* at first */
#define TP_CORR_MAX_SLOTS (1u << 20)
#define TP_CORR_HOLD_NS 1000000000ll

struct tp_corr {
	uint32_t corr;
	uint32_t tid;
	int64_t ts_ns;		/* start, relative to baseTimeNanoseconds */
	/* JSON: its "s" flow event is written; Perfetto: how many of its
	 * GPU ops were linked (cupti/convert.c's flow_in) */
	uint32_t flowed;
	uint8_t kept;		/* written: 0 when the schedule dropped it */
};

void tp_corr_note(uint32_t corr, uint32_t tid, int64_t ts_ns, int kept);
/* The call with this id, or NULL when it was never seen (or is too old). */
struct tp_corr *tp_corr_find(uint32_t corr);
/* The oldest call noted as kept; 0 before the first. */
uint32_t tp_corr_lowest_kept(void);
void tp_corr_reset(void);
/* The table's slots now (it doubles under load). */
uint32_t tp_corr_slots(void);

#endif
