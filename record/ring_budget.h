/* record/: the recording core: records, per-thread rings, threads,
 * drops, the clock, the rings file; on files/ .. util/. */
/* How much address space the rings may take. Without a limit, each thread
 * gets the configured size (pages it never fills cost nothing). Under an
 * address-space limit (RLIMIT_AS, `ulimit -v`, common on shared clusters)
 * every byte tprof maps is one the program can no longer map, so the
 * rings together keep to a small share of the limit and of what is left
 * of it, and a thread gets a smaller ring, or none (its calls are then
 * counted as dropped, never lost silently).
 */
#ifndef TP_RING_BUDGET_H
#define TP_RING_BUDGET_H

#include <stddef.h>

/* Under a limit: all rings together at most limit / TP_RING_SHARE and
 * headroom / TP_RING_HEADROOM_SHARE, one ring at most limit /
 * TP_RING_ONE_SHARE, and none smaller than TP_RING_MIN_BYTES. */
#define TP_RING_SHARE 32
#define TP_RING_HEADROOM_SHARE 8
#define TP_RING_ONE_SHARE 4096
#define TP_RING_MIN_BYTES (64 * 1024)
/* The spill pool (record/spill.h), taken once: at most limit /
 * TP_RING_POOL_SHARE, within the rings' share. */
#define TP_RING_POOL_SHARE 128

/* Bytes a new ring may map (at most want), reserved; 0: none. */
size_t tp_ring_budget_take(size_t want);
/* The same for the spill pool. */
size_t tp_ring_budget_take_pool(size_t want);
/* Gives back bytes reserved (a ring freed, or mapped smaller). */
void tp_ring_budget_give(size_t bytes);
/* 1 when the process runs under an address-space limit. */
int tp_as_limited(void);

#endif
