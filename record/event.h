/* record/: the recording core: records, per-thread rings, threads,
 * drops, the clock, the rings file; on files/ .. util/. */
/* The fixed-size record every hook writes into its thread's ring.
 *
 * Records hold raw values only (ticks, pointers, sizes, an API id): names
 * are static strings found through the API id, and kernel names are
 * resolved from their host stub address by the writer, so the hot path
 * never copies a string.
 */
#ifndef TP_EVENT_H
#define TP_EVENT_H

#include <stdint.h>

struct tp_launch_args {
	uint64_t func;		/* host stub, or cudaKernel_t handle */
	uint32_t grid[3];
	uint32_t block[3];
	uint64_t shmem;
};

struct tp_copy_args {
	uint64_t dst;
	uint64_t src;
	uint64_t bytes;
	uint32_t kind;		/* enum cudaMemcpyKind */
	int32_t dst_dev;	/* peer copies */
	int32_t src_dev;
	uint32_t height;	/* 2D copies: bytes = width * height */
};

struct tp_mem_args {
	uint64_t ptr;
	uint64_t bytes;
	uint32_t flags;
	int32_t value;		/* memset */
};

struct tp_event_args {
	uint64_t handle;	/* event, graph exec, ... */
	uint64_t other;
	uint32_t flags;
};

struct tp_event {
	uint64_t start;		/* ticks */
	uint64_t end;
	uint16_t api;		/* enum tp_api */
	uint16_t flags;		/* TP_EV_EXT_MASK: extension slots after it */
	int32_t ret;		/* the call's return code */
	uint64_t stream;
	union {
		struct tp_launch_args launch;
		struct tp_copy_args copy;
		struct tp_mem_args mem;
		struct tp_event_args ev;
		uint64_t raw[5];
	} a;
	uint32_t stack;		/* interned call stack id, 0 for none */
	uint32_t corr;		/* CUPTI correlation id, 0 for none */
};

_Static_assert(sizeof(struct tp_event) == 80, "tp_event size changed");

/* A record may be followed in its ring by up to 15 extension slots of
 * raw bytes (shapes that do not fit in `a`, a copied string): the writer
 * hands the record and its extension to the formatter contiguously, the
 * extension starting at (e + 1). */
#define TP_EV_EXT_MASK 0xfu
#define TP_EV_EXT_MAX 15u
#define TP_EV_SLOT_BYTES sizeof(struct tp_event)

static inline const void *tp_event_ext(const struct tp_event *e)
{
	return e + 1;
}

#endif
