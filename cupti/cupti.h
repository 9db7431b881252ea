/* cupti/: the CUPTI client: GPU activity, API callbacks, devices, GPU
 * tracks; on trace/ .. output/. */
/* tprof's CUPTI client: GPU kernels, copies, memsets, syncs and memory,
 * each joined to the CPU call that launched it.
 *
 * libcupti is loaded at run time (loader.c), never linked; collection
 * (collect.c) subscribes once per process and hands CUPTI's buffers to
 * the writer, which turns records into trace events (convert.c) on its
 * own thread. callbacks.c runs on the program's threads, inside CUDA
 * calls: it only notes correlation ids and times calls no hook saw.
 */
#ifndef TP_CUPTI_H
#define TP_CUPTI_H

#include <stddef.h>
#include <stdint.h>

#include <cupti.h>

#include "trace/api.h"
#include "trace/clock.h"
#include "trace/config.h"
#include "trace/json.h"

/* The entry points tprof uses, resolved from the loaded libcupti. */
struct tp_cupti_fns {
	CUptiResult (*get_version)(uint32_t *);
	CUptiResult (*get_result_string)(CUptiResult, const char **);
	CUptiResult (*subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc,
				 void *);
	CUptiResult (*unsubscribe)(CUpti_SubscriberHandle);
	CUptiResult (*enable_callback)(uint32_t, CUpti_SubscriberHandle,
				       CUpti_CallbackDomain, CUpti_CallbackId);
	CUptiResult (*get_callback_name)(CUpti_CallbackDomain, uint32_t,
					 const char **);
	CUptiResult (*activity_enable)(CUpti_ActivityKind);
	CUptiResult (*activity_disable)(CUpti_ActivityKind);
	CUptiResult (*register_callbacks)(CUpti_BuffersCallbackRequestFunc,
					  CUpti_BuffersCallbackCompleteFunc);
	CUptiResult (*register_timestamp)(CUpti_TimestampCallbackFunc);
	CUptiResult (*flush_all)(uint32_t);
	CUptiResult (*get_next_record)(uint8_t *, size_t, CUpti_Activity **);
	CUptiResult (*get_num_dropped)(CUcontext, uint32_t, size_t *);
	CUptiResult (*finalize)(void);
};

extern struct tp_cupti_fns tp_cupti;

/* loader.c: 0 with the library's path and API version, or -1 with why
 * (a phrase naming the cause and the fix). */
int tp_cupti_load(const struct tp_config *c, char *path, size_t plen,
		  uint32_t *version, char *why, size_t wlen);
const char *tp_cupti_result(CUptiResult r);

/* callbacks.c */
void CUPTIAPI tp_cupti_on_callback(void *userdata, CUpti_CallbackDomain dom,
				   CUpti_CallbackId cbid, const void *data);
/* Enables the callbacks tprof needs and registers their names as API
 * tables; returns how many were enabled. */
unsigned tp_cupti_enable_callbacks(CUpti_SubscriberHandle sub);

#define TP_CUPTI_RUNTIME_TABLE TP_TABLE_CUPTI_RUNTIME
#define TP_CUPTI_DRIVER_TABLE TP_TABLE_CUPTI_DRIVER

/* convert.c: writer thread only. Timestamps are CLOCK_MONOTONIC_RAW ns
 * when tprof's timestamp callback is in force, else CUPTI's default
 * (CLOCK_REALTIME). */
struct tp_cupti_counts {
	uint64_t records, kernels, memcpys, memsets, syncs, memory, overhead;
	uint64_t zero_ts, clamped, unlinked, unknown;
};

void tp_cupti_convert_init(int raw_timestamps);
uint64_t tp_cupti_convert(struct tp_buf *b, const struct tp_clock_map *m,
			  const CUpti_Activity *r);
const struct tp_cupti_counts *tp_cupti_counts(void);
void tp_cupti_put_meta(struct tp_buf *b);
void tp_cupti_put_devices(struct tp_buf *b);

/* driver.c: 0 when libcuda.so.1 is a driver that answers, else -1 with
 * why. Nothing in CUPTI is called before this says 0. */
int tp_cuda_driver_check(char *why, size_t wlen);

/* collect.c */
void tp_cupti_start(void);
/* detect.c */
int tp_cupti_program_has_gpu_code(void);
void tp_cupti_after_fork(void);

#endif
