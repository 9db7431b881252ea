/* config/: TPROF_* configuration, parsed and checked; on util/ only. */
/* TPROF_* environment variables, parsed once at load.
 *
 * Parsing is a pure function of a lookup callback so the tests (and
 * `tprof env-check`, which tprof-run uses to vet its flags) run the very
 * same code as the preloaded library.
 */
#ifndef TP_CONFIG_H
#define TP_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "config_capture.h"
#include "config_flight.h"
#include "config_num.h"

enum tp_source {
	TP_SRC_CUDA = 1u << 0,
	TP_SRC_GPU = 1u << 1,
	TP_SRC_CUBLAS = 1u << 2,
	TP_SRC_CUDNN = 1u << 3,
	TP_SRC_NCCL = 1u << 4,
	TP_SRC_NVTX = 1u << 5,
	TP_SRC_MEM = 1u << 6,
	/* GPU health counters from NVML (nvml/): not a hooked library, so
	 * never among the sources being recorded that hooks test. */
	TP_SRC_GPUMETRICS = 1u << 7,
	TP_SRC_ALL = (1u << 8) - 1,
	/* The host side, off unless named ("all" stays the GPU side):
	 * CPU sampling and blocking OS calls over a threshold. */
	TP_SRC_CPU = 1u << 8,
	TP_SRC_OSRT = 1u << 9,
};

#define TP_DEFAULT_DIR "./tprof-traces"
#define TP_DEFAULT_NAME "tprof"
#define TP_DEFAULT_BUFFER_MB 16
#define TP_MAX_BUFFER_MB 4096
/* TPROF_SPILL_MB: the pool of spill chunks all threads share once their
 * ring is full (record/spill.h); 0: none. */
#define TP_DEFAULT_SPILL_MB 128
#define TP_MAX_SPILL_MB 65536
/* CUPTI activity buffers: TPROF_CUPTI_BUFFER_MB caps their total. */
#define TP_DEFAULT_CUPTI_BUFFER_MB 64
#define TP_MIN_CUPTI_BUFFER_MB 2
#define TP_MAX_CUPTI_BUFFER_MB 4096

struct tp_config {
	char dir[4096];
	char name[256];
	unsigned sources;
	unsigned buffer_mb;
	unsigned spill_mb;
	unsigned cupti_buffer_mb;
	char cupti_lib[4096];	/* TPROF_CUPTI_LIB, empty: search */
	int log_level;
	int disabled;
	int rank;
	int world_size;
	const char *rank_from;	/* the variable the rank came from */
	/* TPROF_BACKTRACE: capture stacks of calls at least bt_threshold_ns
	 * long, or of every call of the kinds in bt_all_kinds. */
	int bt_on;
	uint64_t bt_threshold_ns;
	unsigned bt_all_kinds;
	unsigned bt_depth;
	struct tp_capture_config cap;
	struct tp_flight_config fl;	/* TPROF_FLIGHT, TPROF_HANG */
	int summary;		/* TPROF_SUMMARY: who prints the table */
	int ring_file;		/* TPROF_RING_FILE: rings in a file mapping
				 * that outlives a kill (default 1) */
	int format;		/* TPROF_FORMAT: enum tp_format */
	int gzip_level;		/* TPROF_GZIP_LEVEL: the trace's, 1 to 9 */
	int gm_hz;		/* TPROF_GPU_METRICS_HZ: samples a second */
	unsigned sample_hz;	/* TPROF_SAMPLE_HZ: CPU samples per second
				 * of a thread's CPU time */
	uint64_t osrt_min_ns;	/* TPROF_OSRT_MIN_US: a blocking call this
				 * long or longer is recorded */
	int sampler;		/* TPROF_SAMPLER: enum tp_sampler */
};

#define TP_DEFAULT_GPU_METRICS_HZ 10
#define TP_MAX_GPU_METRICS_HZ 100

/* TPROF_FORMAT: what the trace file is. */
enum tp_format {
	TP_FORMAT_JSON,		/* <name>-rank<R>.trace.json.gz (Kineto) */
	TP_FORMAT_PERFETTO,	/* <name>-rank<R>.pftrace.gz (TrackEvent) */
};

/* TPROF_SUMMARY: the summary table on stderr at exit. The files are
 * written in every case. */
enum {
	TP_SUMMARY_RANK0,
	TP_SUMMARY_ALL,
	TP_SUMMARY_NONE,
};

/* Kinds of calls, for TPROF_BACKTRACE=all:KINDS. */
enum tp_call_kind {
	TP_KIND_OTHER = 0,
	TP_KIND_SYNC = 1u << 0,
	TP_KIND_MEMCPY = 1u << 1,
	TP_KIND_LAUNCH = 1u << 2,
	TP_KIND_ALLOC = 1u << 3,
	TP_KIND_ALL = (1u << 4) - 1,
};

/* TPROF_SAMPLE_HZ, TPROF_OSRT_MIN_US, TPROF_SAMPLER. */
#define TP_DEFAULT_SAMPLE_HZ 1000
#define TP_MIN_SAMPLE_HZ 10
#define TP_MAX_SAMPLE_HZ 10000
#define TP_DEFAULT_OSRT_MIN_NS 1000000ull
#define TP_MAX_OSRT_MIN_US 60000000L

/* How CPU samples are taken (docs/design/host-sampling.md). */
enum tp_sampler {
	TP_SAMPLER_AUTO,	/* perf_event_open, else timers */
	TP_SAMPLER_PERF,	/* perf_event_open only */
	TP_SAMPLER_TIMER,	/* per-thread CPU-time timers only */
};

#define TP_DEFAULT_BT_DEPTH 32
#define TP_MAX_BT_DEPTH 128

/* 0, or -1 with a one-line message (without the "tprof: error: " prefix)
 * in err. */
int tp_config_parse(struct tp_config *c, tp_getenv_fn get, char *err,
		    size_t errlen);
int tp_parse_sources(const char *s, unsigned *out, char *err, size_t errlen);
/* config_names.c: 1 and a message naming the first TPROF_* variable of
 * envp that tprof does not know (and the closest it does), else 0. */
int tp_config_unknown(char *const *envp, char *msg, size_t len);
const char *tp_source_name(unsigned bit);
void tp_config_sources_str(unsigned sources, char *buf, size_t len);

#endif
