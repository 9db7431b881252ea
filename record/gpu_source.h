/* record/: the recording core: records, per-thread rings, threads,
 * drops, the clock, the rings file; on files/ .. util/. */
/* GPU activity joins the trace through the writer. tprof's CUPTI module
 * (cupti/) registers one of these; the writer calls it on its own thread,
 * so conversion and formatting never run on the program's threads.
 */
#ifndef TP_GPU_SOURCE_H
#define TP_GPU_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "clock.h"
#include "encode/json.h"

struct tp_gpu_source {
	/* Start of a drain cycle, before the CPU rings: flush CUPTI when
	 * due and take what it delivered. final: the trace is ending. */
	void (*take)(int final);
	/* After the CPU rings: convert what was taken a cycle ago (all of
	 * it when final), so the launches they point to are written first.
	 * flush() may be called between records. Returns events written. */
	uint64_t (*convert)(struct tp_buf *b, const struct tp_clock_map *m,
			    void (*flush)(void), int final);
	/* After the last recording window, once its GPU work had time to
	 * finish: stop collecting for good (the source does it where its
	 * library allows; records still delivered are converted). */
	void (*teardown)(void);
	/* Trailer parts: track names (each preceded by ",\n"), the elements
	 * of deviceProperties, and ",\n \"cupti\": {...}". */
	void (*put_meta)(struct tp_buf *b);
	void (*put_devices)(struct tp_buf *b);
	void (*put_stats)(struct tp_buf *b);
	/* Appended to the "wrote ..." line at exit; may be left empty. */
	void (*exit_note)(char *s, size_t len);
	/* Records CUPTI dropped (its buffers were full). */
	uint64_t (*dropped)(void);
};

void tp_writer_set_gpu(const struct tp_gpu_source *g);

#endif
