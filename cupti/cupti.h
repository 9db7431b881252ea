/* cupti/: the CUPTI client: GPU activity, API callbacks, devices, GPU
 * tracks; on util/ .. output/. */
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

#include "record/api.h"
#include "record/clock.h"
#include "config/config.h"
#include "encode/json.h"

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
	CUptiResult (*enable_domain)(uint32_t, CUpti_SubscriberHandle,
				     CUpti_CallbackDomain);
	CUptiResult (*set_attribute)(CUpti_ActivityAttribute, size_t *,
				     void *);
	CUptiResult (*get_timestamp)(uint64_t *);
	/* Optional (NULL when the library lacks it; every CUPTI 12.6-13.x
	 * header declares it). */
	CUptiResult (*enable_and_dump)(CUpti_ActivityKind);
};

extern struct tp_cupti_fns tp_cupti;
/* The loaded libcupti's handle (multi.c resolves the v2 calls on it). */
extern void *tp_cupti_lib;

/* loader.c: 0 with the library's path and API version, or -1 with why
 * (a phrase naming the cause and the fix). */
int tp_cupti_load(const struct tp_config *c, char *path, size_t plen,
		  uint32_t *version, char *why, size_t wlen);
const char *tp_cupti_result(CUptiResult r);
/* A CUPTI API version tprof reads: 24-28 (CUDA 12.6-12.9), 13xxxx. */
int tp_cupti_version_ok(uint32_t v);

/* callbacks.c */
void CUPTIAPI tp_cupti_on_callback(void *userdata, CUpti_CallbackDomain dom,
				   CUpti_CallbackId cbid, const void *data);
/* Enables the callbacks tprof needs and registers their names as API
 * tables; returns how many were enabled. */
unsigned tp_cupti_enable_callbacks(CUpti_SubscriberHandle sub);
/* tprof's own CUDA calls, whose records are left out. */
void tp_cupti_own_call(uint32_t corr);
int tp_cupti_is_own(uint32_t corr);
/* The name a callback id is recorded under, or NULL when not enabled. */
const char *tp_cupti_callback_name(int rt, uint32_t cbid);
/* state.c: threads inside a CUDA call CUPTI reported (callbacks.c counts
 * them); whether a graph was launched (then CUPTI is never finalized:
 * Kineto's PRs #748/#823, finalize with graphs alive crashes). */
extern unsigned tp_cupti_inside;
extern int tp_cupti_graphs;

/* collect.c: the detach after the last window, requested by the writer
 * and carried out by the next API exit callback where CUPTI allows it
 * (depth: the calling thread's nesting of CUDA calls). */
extern int tp_cupti_detach_wanted;
void tp_cupti_detach_here(unsigned depth);
/* A thread entered a CUDA call while a detach is wanted. */
void tp_cupti_note_enter(void);
/* finish.c: the writer's flush (final: the trace ends); the atexit
 * handler, registered after each CUDA module's own. */
void tp_cupti_flush(int final);
void tp_cupti_exit_check(void);
void tp_cupti_module_registered(void);
/* A module is about to be unloaded: records naming its kernels are
 * converted first (CUPTI's names are the module's). */
void tp_cupti_module_unloading(void);
/* inject.c: CUDA_INJECTION64_PATH names libtprof.so, so that the driver
 * starts CUPTI at cuInit (driver-only programs: JAX, Triton). */
void tp_cupti_inject_setup(void);

#define TP_CUPTI_RUNTIME_TABLE TP_TABLE_CUPTI_RUNTIME
#define TP_CUPTI_DRIVER_TABLE TP_TABLE_CUPTI_DRIVER

/* convert.c: writer thread only. Timestamps are the hooks' ticks when
 * tprof's timestamp callback is in force, else CUPTI's default (Unix
 * time in ns). */
struct tp_cupti_counts {
	uint64_t records, kernels, memcpys, memsets, syncs, memory, overhead;
	uint64_t zero_ts, unlinked, unknown;
	uint64_t shifted;	/* moved whole to start at their launch */
	uint64_t shifted_max_ns;	/* the most one of them was moved */
	uint64_t overlapped;	/* on a second lane of their track */
	uint64_t late;		/* older than their track remembers */
	uint64_t unclocked;	/* a time outside the trace's clock */
	uint64_t unplaced;	/* every lane taken, or out of memory */
	uint64_t truncated;	/* buffers whose records stopped mid-way */
};

void tp_cupti_convert_init(int raw_timestamps);
/* tprof's timestamp callback's clock: nanoseconds, a fixed linear
 * function of the hooks' ticks (set once, before registering it). */
void tp_cupti_ns_init(void);
uint64_t tp_cupti_ns_now(void);
/* The trace time of a record's timestamp (ns from the trace base). */
int64_t tp_cupti_trace_ns(const struct tp_clock_map *m, uint64_t t);
/* Without tprof's timestamp callback: CUPTI's clock to Unix ns, for the
 * next batch (clockmap.h). */
struct tp_cclock_line;
void tp_cupti_convert_line(const struct tp_cclock_line *l);
/* Times a record may have, in ns from the trace base; outside: not
 * placed, counted in unclocked. */
void tp_cupti_convert_window(int64_t lo_ns, int64_t hi_ns);
struct tp_cupti_counts *tp_cupti_counts_w(void);
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
