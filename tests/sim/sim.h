/* A CUDA 13 machine on the CPU: the private interface between the three
 * libraries of the simulation (see README.md).
 *
 * libcuda.so.1 (core.c, driver.c) holds the machine: devices, contexts,
 * streams, and a GPU that runs every op on its stream's timeline in real
 * time. libcudart.so.13 (runtime.c) is built on the driver, as the real
 * runtime is. libcupti.so.13 (cupti*.c) attaches to the driver through
 * sim_attach_tool(), as the real CUPTI hooks the driver privately, and
 * sees every API call (enter/exit) and every op issued.
 *
 * Written from NVIDIA's headers (cuda.h, cuda_runtime_api.h, cupti*.h,
 * crt/host_runtime.h) and the CUPTI documentation; nothing in it comes
 * from the profiler it tests.
 */
#ifndef SIM_H
#define SIM_H

#include <stdint.h>
#include <cupti.h>

#define SIM_EXPORT __attribute__((visibility("default")))
/* The CUDA major version simulated (sim.mk builds 13 and 12). */
#ifndef SIM_CUDA
#define SIM_CUDA 13
#endif
#define SIM_MAX_DEVICES 4
#define SIM_MAX_STREAMS 256

enum sim_op_kind { SIM_KERNEL, SIM_MEMCPY, SIM_MEMSET, SIM_SYNC };

/* One piece of GPU work, alive for the whole run (ops are never freed:
 * a record may point at one until it is delivered). */
struct sim_op {
	enum sim_op_kind kind;
	uint32_t device, context, stream, corr;
	uint64_t start_gpu, end_gpu;	/* the GPU's clock, ns */
	uint64_t bytes;
	int copy_kind;
	uint8_t value;
	const char *name;		/* kernels: the module's string */
	uint32_t grid[3], block[3], shmem;
	uint32_t graph_id;
	uint64_t graph_node;
	int sync_type;			/* CUpti_ActivitySynchronizationType */
	long tid;			/* thread that issued it */
};

/* What a tool (CUPTI) is told. */
struct sim_tool {
	/* An API call on this thread: domain, cbid, name, correlation id;
	 * site 0 enter, 1 exit. params: the *_params struct; ret: the
	 * return value at exit. data: the call's correlationData slot. */
	void (*api)(int site, CUpti_CallbackDomain dom, uint32_t cbid,
		    const char *name, const char *symbol, uint32_t corr,
		    void *params, void *ret, uint64_t *data, uint32_t ctx);
	/* An op was issued by the calling thread. */
	void (*op)(struct sim_op *op);
	/* CUDA tears down (the last module unregistered at exit). */
	void (*teardown)(void);
	/* A context was created. */
	void (*context)(uint32_t ctx, uint32_t device);
	/* A module is about to be unloaded (its kernel names go). */
	void (*module_unload)(void);
	/* The driver initializes (told only to a tool attached before). */
	void (*init)(void);
};

/* core.c, exported from libcuda.so.1 for the other two libraries. */
SIM_EXPORT void sim_attach_tool(const struct sim_tool *t);
SIM_EXPORT uint64_t sim_gpu_now(void);
SIM_EXPORT uint64_t sim_raw_now(void);
SIM_EXPORT uint64_t sim_gpu_to_raw(uint64_t gpu);
SIM_EXPORT uint64_t sim_gpu_to_realtime(uint64_t gpu);
SIM_EXPORT int sim_inside_others(void);
SIM_EXPORT void sim_set_finalizing(int on);
SIM_EXPORT int sim_torn_down(void);
SIM_EXPORT void sim_log(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
SIM_EXPORT long sim_tid(void);
SIM_EXPORT void sim_driver_init(void);
SIM_EXPORT int sim_driver_initialized(void);
SIM_EXPORT int sim_context_made(int dev);
SIM_EXPORT void sim_note_graph_launch(void);
SIM_EXPORT int sim_graphs_launched(void);

/* An API call: enter assigns its correlation id and tells the tool. */
struct sim_call {
	CUpti_CallbackDomain dom;
	uint32_t cbid;
	const char *name;
	const char *symbol;
	uint32_t corr;
	uint64_t data;		/* correlationData */
	uint64_t enter_raw;
	void *params;
};

SIM_EXPORT void sim_enter(struct sim_call *c, CUpti_CallbackDomain dom,
			  uint32_t cbid, const char *name, void *params);
SIM_EXPORT void sim_exit(struct sim_call *c, void *ret);
/* The correlation id GPU work issued now belongs to: the outermost call
 * of this thread (a runtime call, or a driver call made alone). */
SIM_EXPORT uint32_t sim_launch_corr(void);

/* The machine. */
SIM_EXPORT int sim_current_device(void);
SIM_EXPORT void sim_set_device(int dev);
SIM_EXPORT int sim_device_count(void);
/* The device's UUID (cuDeviceGetUuid's 16 bytes; CUPTI's DEVICE record
 * and NVML, tests/sim/nvml.c, tell the same one). */
SIM_EXPORT void sim_device_uuid(int dev, unsigned char out[16]);
SIM_EXPORT uint32_t sim_context_id(int dev);
SIM_EXPORT uint32_t sim_stream_id(int dev, uintptr_t handle);
SIM_EXPORT uintptr_t sim_stream_create(int dev);
SIM_EXPORT struct sim_op *sim_issue(struct sim_op *proto, uintptr_t stream,
				    uint64_t dur_ns);
/* An op's start or end not known yet: it waits in its stream's queue. */
#define SIM_OPEN UINT64_MAX
/* A kernel that runs until *flag >= value (simNextKernelWaitsFor). */
SIM_EXPORT struct sim_op *sim_issue_waiting(struct sim_op *proto,
					    uintptr_t stream, uint64_t dur_ns,
					    const volatile uint32_t *flag,
					    uint32_t value);
SIM_EXPORT void simNextKernelWaitsFor(const volatile uint32_t *flag,
				      uint32_t value);
SIM_EXPORT int sim_take_kernel_wait(const volatile uint32_t **flag,
				    uint32_t *value);
/* The last op queued on the stream behind a waiting kernel, or NULL. */
SIM_EXPORT const struct sim_op *sim_stream_last(int dev, uintptr_t stream);
/* Work queued on the stream from now on waits until op has ended. */
SIM_EXPORT void sim_stream_after_op(int dev, uintptr_t stream,
				    const struct sim_op *op);
SIM_EXPORT void sim_wait_stream(int dev, uintptr_t stream);
SIM_EXPORT void sim_wait_device(int dev);
/* A CPU-side wait that took [start_gpu, now): its SYNCHRONIZATION record. */
SIM_EXPORT void sim_sync_done(int type, uintptr_t stream, uint64_t start_gpu);
/* The end of the stream's work, SIM_OPEN while some of it waits. */
SIM_EXPORT uint64_t sim_stream_tail(int dev, uintptr_t stream);
SIM_EXPORT void sim_stream_after(int dev, uintptr_t stream, uint64_t gpu);
/* The next kernel this thread launches may start before the one before
 * it on its stream ends (programmatic dependent launch). */
SIM_EXPORT void sim_next_programmatic(void);
/* The duration of the next kernel this thread launches (0: the rule). */
SIM_EXPORT void simNextKernelDuration(uint64_t ns);
SIM_EXPORT uint64_t sim_take_kernel_duration(const uint32_t grid[3],
					     const uint32_t block[3]);

/* Modules: kernel names live as long as their module. */
/* runtime: a fat binary registered by the runtime; the last one's
 * unregistering (from its atexit handler) tears CUDA down. */
SIM_EXPORT void *sim_module_new(int runtime);
SIM_EXPORT const char *sim_module_add(void *m, const void *key,
				      const char *name);
SIM_EXPORT const char *sim_module_find(const void *key);
SIM_EXPORT void sim_module_free(void *m);
SIM_EXPORT int sim_module_count(void);

#endif
