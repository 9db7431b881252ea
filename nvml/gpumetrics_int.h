/* nvml/: the GPU health counters from NVML, sampled beside the trace; on
 * util/ .. cupti/. */
/* Inside the GPU health counters: the loaded NVML (load.c), the
 * sampling thread (sampler.c) and the writer's side (emit.c), which
 * share the state below. The writer publishes the devices (slots
 * 0..ndev, release) and drains the samples; the sampler maps them to
 * NVML, reads them and pushes one sample per device and period into a
 * single-producer single-consumer ring. */
#ifndef TP_GPUMETRICS_INT_H
#define TP_GPUMETRICS_INT_H

#include <stddef.h>
#include <stdint.h>

#include "nvml_api.h"

/* The counters of a sample; names are the trace's arg keys. */
#define TP_GM_METRICS(X) \
	X(SM, "sm_mhz") X(MEMCLK, "mem_mhz") \
	X(POWER, "power_mw") X(LIMIT, "power_limit_mw") \
	X(TEMP, "temp_c") \
	X(GUTIL, "gpu_util_pct") X(MUTIL, "mem_util_pct") \
	X(MUSED, "mem_used_bytes") X(MTOTAL, "mem_total_bytes") \
	X(REASONS, "clock_events") \
	X(PCIE_TX, "pcie_tx_kbps") X(PCIE_RX, "pcie_rx_kbps") \
	X(NVL_TX, "nvlink_tx_kib") X(NVL_RX, "nvlink_rx_kib") \
	X(ECC_C, "ecc_corrected") X(ECC_U, "ecc_uncorrected") \
	X(XID_N, "xid_count") X(XID_LAST, "xid_last")

#define TP_GM_ENUM(id, name) GM_##id,
enum tp_gm_metric { TP_GM_METRICS(TP_GM_ENUM) GM_N };
#undef TP_GM_ENUM

extern const char *const tp_gm_names[GM_N];

/* Devices sampled per process (a process drives a few GPUs at most). */
#define TP_GM_DEVICES 16
/* Samples between two writer cycles (50 ms): 256 periods of slack. */
#define TP_GM_RING 256

/* Why a metric is unavailable: an NVML return, or this one. */
#define TP_GM_NO_SYMBOL (-1)

struct tp_gm_sample {
	uint64_t ticks;
	uint32_t slot;
	uint32_t valid;		/* bit per metric */
	uint64_t v[GM_N];
};

struct tp_gm_dev {
	/* set by the writer before ndev covers the slot */
	uint32_t cuda_id;
	char uuid[TP_NVML_UUID_SIZE];
	/* the sampler's (read by the writer with atomics) */
	nvmlDevice_t h;
	int map_rc;		/* 0 mapped; else why not */
	int gone[GM_N];		/* non-zero: not asked again, and why */
	uint64_t failed[GM_N];	/* transient failures */
	int last_rc[GM_N];
	uint64_t xid_count, xid_last;
	int mapped;
};

struct tp_gm_state {
	uint32_t ndev;		/* published slots (release/acquire) */
	struct tp_gm_dev dev[TP_GM_DEVICES];
	uint32_t stop;		/* futex: the writer asks the sampler to end */
	uint32_t done;		/* futex: the sampler ended */
	int started;
	int abandoned;		/* it did not end in time */
	int64_t hz;
	uint64_t period_ns;
	/* the sampler's state: set once, before ready (release) */
	char state[160];
	uint32_t state_ready;
	struct tp_gm_sample ring[TP_GM_RING];
	uint64_t head;		/* sampler: next to write */
	uint64_t tail;		/* writer: next to read */
	uint64_t dropped;	/* samples lost to a full ring */
	uint64_t written;	/* samples the writer took */
	uint64_t cpu_ns;	/* the sampler's own CPU time, at its end */
	uint64_t wall_ns;	/* and its life */
};

extern struct tp_gm_state tp_gm;

/* load.c: the NVML entry points, NULL where the library lacks them. */
struct tp_nvml_fns {
	nvmlReturn_t (*init_v2)(void);
	nvmlReturn_t (*shutdown)(void);
	nvmlReturn_t (*by_uuid)(const char *, nvmlDevice_t *);
	nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned int *);
	nvmlReturn_t (*power)(nvmlDevice_t, unsigned int *);
	nvmlReturn_t (*limit)(nvmlDevice_t, unsigned int *);
	nvmlReturn_t (*temp)(nvmlDevice_t, int, unsigned int *);
	nvmlReturn_t (*util)(nvmlDevice_t, nvmlUtilization_t *);
	nvmlReturn_t (*mem)(nvmlDevice_t, nvmlMemory_t *);
	nvmlReturn_t (*reasons)(nvmlDevice_t, unsigned long long *);
	nvmlReturn_t (*pcie)(nvmlDevice_t, int, unsigned int *);
	nvmlReturn_t (*ecc)(nvmlDevice_t, int, int, unsigned long long *);
	nvmlReturn_t (*fields)(nvmlDevice_t, int, nvmlFieldValue_t *);
	nvmlReturn_t (*set_create)(nvmlEventSet_t *);
	nvmlReturn_t (*register_events)(nvmlDevice_t, unsigned long long,
					nvmlEventSet_t);
	nvmlReturn_t (*set_wait)(nvmlEventSet_t, nvmlEventData_t *,
				 unsigned int);
	nvmlReturn_t (*set_free)(nvmlEventSet_t);
};

/* Loads libnvidia-ml.so.1 and initializes it: 0, or -1 with why in
 * (the sampler's state). */
int tp_nvml_open(struct tp_nvml_fns *f, char *why, size_t len);
/* A return as words: "not supported", "no permission", ... */
const char *tp_nvml_rc_words(int rc);

/* sampler.c */
int tp_gm_sampler_start(void);
/* Asks the sampler to end and waits at most wait_ms; 0 once it ended. */
int tp_gm_sampler_stop(int wait_ms);
void tp_gm_sampler_after_fork(void);

#endif
