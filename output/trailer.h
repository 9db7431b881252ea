/* output/: the background writer: drains the rings into the trace file,
 * with its metadata and trailer; on every folder above. */
/* The parts of the trace around the events: the process and thread name
 * metadata, and the closing keys (deviceProperties, the tprof object with
 * the run's identity, configuration and per-thread counts). */
#ifndef TP_TRAILER_H
#define TP_TRAILER_H

#include <stdint.h>
#include <sys/types.h>

#include "record/clock.h"
#include "record/gpu_source.h"
#include "encode/json.h"
#include "writer.h"

struct tp_thread_stat {
	pid_t tid;
	char name[64];
	uint64_t events;
	uint64_t dropped;
};

/* Threads seen so far; past TP_MAX_THREAD_STATS the rest are summed into
 * the last entry so memory stays bounded with short-lived threads. */
#define TP_MAX_THREAD_STATS 4096

struct tp_thread_stats {
	struct tp_thread_stat *v;
	unsigned n;
	unsigned cap;
	uint64_t dropped;
	uint64_t no_ring;	/* of dropped: calls of threads without a
				 * ring (an address-space limit) */
};

void tp_thread_stats_add(struct tp_thread_stats *s, pid_t tid,
			 const char *name, uint64_t events, uint64_t dropped);
void tp_thread_stats_free(struct tp_thread_stats *s);

struct tp_trailer_info {
	uint64_t events;
	struct tp_clock_point end;
	const struct tp_clock_map *map;
	const struct tp_thread_stats *stats;
	const struct tp_gpu_source *gpu;	/* NULL without CUPTI */
	const struct tp_writer_ext *const *ext;
	unsigned n_ext;
	const char *compressor;		/* tp_gz_codec_name */
};

void tp_trailer_process_name(struct tp_buf *b);
/* The end of the events: thread names (this process's, the extensions',
 * the GPU's), as typed events through tp_tev_put. */
void tp_trailer_put_meta(struct tp_buf *b, const struct tp_trailer_info *info);
/* The closing keys as JSON text, "deviceProperties": [...], ...,
 * "tprof": {...}, without the braces around them: the JSON trace's last
 * members, Perfetto's metadata event. */
void tp_trailer_put_json(struct tp_buf *b, const struct tp_trailer_info *info);

#endif
