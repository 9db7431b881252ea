/* encode/: the typed event model (tev.h) and the JSON encoder; on
 * util/ and gzip/. */
/* Flow ids in tprof's Perfetto traces, one scheme for the library's
 * launches (cupti/convert.c), `tprof convert` (cli/convert/convert_flows.c) and
 * the reader that folds them back (cli/read/pftrace_event.c).
 *
 * A Perfetto flow has one start and one end (FlowTracker::End forgets
 * the id); JSON's "s" links every "f" of its id (a graph launch's to
 * each of its kernels). So the k-th end after the first, 1 <= k <=
 * TP_FLOW_K_MAX, ends a flow of its own, id | k << 32, begun by an
 * instant at the start's place and time; past TP_FLOW_K_MAX ends keep
 * the base id (Perfetto links the first of them, JSON all). Bits 48-63:
 * convert's tag of a flow's category and name (convert_flows.c). The
 * base ids themselves fit in 32 bits (correlation ids, JSON ids below
 * 2^32 but for the tag). */
#ifndef TP_TRACE_FLOW_IDS_H
#define TP_TRACE_FLOW_IDS_H

#include <stdint.h>

#define TP_FLOW_K_SHIFT 32
#define TP_FLOW_K_MAX 0xffffu
#define TP_FLOW_K_MASK ((uint64_t)TP_FLOW_K_MAX << TP_FLOW_K_SHIFT)
#define TP_FLOW_TAG_SHIFT 48

/* The id of the k-th end after the first (k >= 1): id itself past
 * TP_FLOW_K_MAX, or when id has no room for k. */
static inline uint64_t tp_flow_fanout(uint64_t id, uint64_t k)
{
	if (!k || k > TP_FLOW_K_MAX || (id & TP_FLOW_K_MASK))
		return id;
	return id | k << TP_FLOW_K_SHIFT;
}

/* The flow a fan-out id came from, and whether id is one. */
static inline uint64_t tp_flow_base(uint64_t id)
{
	return id & ~TP_FLOW_K_MASK;
}

static inline int tp_flow_is_fanout(uint64_t id)
{
	return (id & TP_FLOW_K_MASK) != 0;
}

#endif
