/* record/: the recording core: records, per-thread rings, threads,
 * drops, the clock, the rings file; on files/ .. util/. */
/* What the writer needs to know of each recorded API: the name shown in
 * the trace, its category, and how to print its args. The tables live
 * with the hooks (preload/) and are registered by source. */
#ifndef TP_API_H
#define TP_API_H

#include <stdint.h>

#include "event.h"
#include "encode/json.h"
#include "encode/tev.h"

struct tp_thread;

struct tp_api {
	const char *name;
	const char *cat;
	/* Adds the call's args (keys and typed values); the encoder
	 * decides their syntax. */
	void (*args)(struct tp_targs *w, const struct tp_event *e);
	/* Instead of the X event: writes whatever the record stands for
	 * (events of other phases, state kept across records) and returns
	 * the number of events written. */
	unsigned (*emit)(struct tp_buf *b, struct tp_thread *t,
			 const struct tp_event *e);
};

/* API ids are (table << 10 | index): the high bits pick the table. */
#define TP_API_TABLE_SHIFT 10
#define TP_API_MAX_TABLES 16

/* The tables, one per source of records. */
#define TP_TABLE_CUDART 0
#define TP_TABLE_CUPTI_RUNTIME 1
#define TP_TABLE_CUPTI_DRIVER 2
#define TP_TABLE_CUBLAS 3
#define TP_TABLE_CUDNN 4
#define TP_TABLE_NCCL 5
#define TP_TABLE_NVTX 6
#define TP_TABLE_HOST 7		/* CPU samples (sampling/) */
#define TP_TABLE_OSRT 8		/* blocking OS calls (hooks/osrt/) */

#define TP_API_ID(table, index) ((uint16_t)((table) << TP_API_TABLE_SHIFT | \
					    (index)))

void tp_api_register(unsigned table, const struct tp_api *apis, unsigned n);
const struct tp_api *tp_api_get(uint16_t id);

#endif
