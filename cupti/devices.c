/* cupti/: the CUPTI client: GPU activity, API callbacks, devices, GPU
 * tracks; on util/ .. output/. */
#include <stdio.h>
#include <string.h>

#include "devices.h"
#include "tracks.h"

#define CONTEXTS 256

static struct tp_device devices[TP_MAX_DEVICES];
static struct {
	uint32_t context, device;
	int used;
} contexts[CONTEXTS];

void tp_device_note(const CUpti_ActivityDevice5 *d)
{
	struct tp_device *v;

	if (d->id >= TP_MAX_DEVICES)
		return;
	v = &devices[d->id];
	v->d = *d;
	v->d.name = NULL;
	snprintf(v->name, sizeof(v->name), "%s", d->name ? d->name : "");
	v->known = 1;
}

const struct tp_device *tp_device_get(uint32_t id)
{
	if (id >= TP_MAX_DEVICES || !devices[id].known)
		return NULL;
	return &devices[id];
}

void tp_context_note(uint32_t context, uint32_t device)
{
	unsigned i = context & (CONTEXTS - 1), n;

	for (n = 0; n < CONTEXTS; n++, i = (i + 1) & (CONTEXTS - 1)) {
		if (contexts[i].used && contexts[i].context != context)
			continue;
		contexts[i].used = 1;
		contexts[i].context = context;
		contexts[i].device = device;
		return;
	}
}

uint32_t tp_context_device(uint32_t context)
{
	unsigned i = context & (CONTEXTS - 1), n;

	for (n = 0; n < CONTEXTS && contexts[i].used; n++) {
		if (contexts[i].context == context)
			return contexts[i].device;
		i = (i + 1) & (CONTEXTS - 1);
	}
	return 0;
}

int tp_device_used(uint32_t id)
{
	unsigned i;

	for (i = 0; i < CONTEXTS; i++)
		if (contexts[i].used && contexts[i].device == id)
			return 1;
	return 0;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* Blocks one SM can hold at once, as limited by the block count, warps,
 * registers and shared memory of the kernel. */
static uint64_t max_active_blocks(const CUpti_ActivityDevice5 *d,
				  const CUpti_ActivityKernel10 *k,
				  uint64_t warps_per_block)
{
	uint64_t threads = (uint64_t)warps_per_block * d->numThreadsPerWarp;
	uint64_t regs = (uint64_t)k->registersPerThread * threads;
	uint64_t shmem = (uint64_t)k->staticSharedMemory +
			 (uint64_t)k->dynamicSharedMemory;
	uint64_t n = d->maxBlocksPerMultiprocessor;

	n = min_u64(n, d->maxWarpsPerMultiprocessor / warps_per_block);
	if (regs)
		n = min_u64(n, d->maxRegistersPerMultiprocessor / regs);
	if (shmem)
		n = min_u64(n, d->maxSharedMemoryPerMultiprocessor / shmem);
	return n;
}

int tp_occupancy(const CUpti_ActivityKernel10 *k, struct tp_occupancy *o)
{
	const struct tp_device *v = tp_device_get(k->deviceId);
	const CUpti_ActivityDevice5 *d;
	uint64_t blocks, threads, wpb, active;
	double per_sm;

	o->blocks_per_sm_milli = o->warps_per_sm_milli = -1;
	o->occupancy_pct = -1;
	if (!v || !v->d.numMultiprocessors || !v->d.numThreadsPerWarp ||
	    !v->d.maxWarpsPerMultiprocessor)
		return -1;
	d = &v->d;
	blocks = (uint64_t)k->gridX * (uint64_t)k->gridY * (uint64_t)k->gridZ;
	threads = (uint64_t)k->blockX * (uint64_t)k->blockY *
		  (uint64_t)k->blockZ;
	if (!blocks || !threads)
		return -1;
	wpb = (threads + d->numThreadsPerWarp - 1) / d->numThreadsPerWarp;
	per_sm = (double)blocks / d->numMultiprocessors;
	o->blocks_per_sm_milli = (int64_t)(per_sm * 1000 + 0.5);
	o->warps_per_sm_milli = (int64_t)(per_sm * (double)wpb * 1000 + 0.5);
	/* Achieved is at most what the grid gives each SM, and at most
	 * what the limits let one SM hold. */
	active = max_active_blocks(d, k, wpb);
	if (per_sm > (double)active)
		per_sm = (double)active;
	o->occupancy_pct = (int)(100.0 * per_sm * (double)wpb /
				 d->maxWarpsPerMultiprocessor + 0.5);
	return 0;
}

static void put_u64(struct tp_buf *b, const char *key, uint64_t v)
{
	tp_buf_lit(b, ", \"");
	tp_buf_cstr(b, key);
	tp_buf_lit(b, "\": ");
	tp_json_u64(b, v);
}

/* Kineto's keys, so HTA and other readers of torch.profiler traces find
 * them, plus a few of CUPTI's own. */
static void put_device(struct tp_buf *b, const struct tp_device *v)
{
	const CUpti_ActivityDevice5 *d = &v->d;

	tp_buf_lit(b, "{\"id\": ");
	tp_json_u64(b, d->id);
	tp_buf_lit(b, ", \"name\": ");
	tp_json_str(b, v->name);
	put_u64(b, "totalGlobalMem", d->globalMemorySize);
	put_u64(b, "computeMajor", d->computeCapabilityMajor);
	put_u64(b, "computeMinor", d->computeCapabilityMinor);
	put_u64(b, "maxThreadsPerBlock", d->maxThreadsPerBlock);
	put_u64(b, "maxThreadsPerMultiprocessor",
		(uint64_t)d->maxWarpsPerMultiprocessor * d->numThreadsPerWarp);
	put_u64(b, "regsPerBlock", d->maxRegistersPerBlock);
	put_u64(b, "regsPerMultiprocessor", d->maxRegistersPerMultiprocessor);
	put_u64(b, "warpSize", d->numThreadsPerWarp);
	put_u64(b, "sharedMemPerBlock", d->maxSharedMemoryPerBlock);
	put_u64(b, "sharedMemPerMultiprocessor",
		d->maxSharedMemoryPerMultiprocessor);
	put_u64(b, "numSms", d->numMultiprocessors);
	put_u64(b, "maxBlocksPerMultiprocessor", d->maxBlocksPerMultiprocessor);
	put_u64(b, "l2CacheSize", d->l2CacheSize);
	put_u64(b, "memoryBandwidthKBps", d->globalMemoryBandwidth);
	put_u64(b, "coreClockRateKHz", d->coreClockRate);
	put_u64(b, "numMemcpyEngines", d->numMemcpyEngines);
	tp_buf_char(b, '}');
}

void tp_devices_put_json(struct tp_buf *b)
{
	unsigned i, n = 0;

	for (i = 0; i < TP_MAX_DEVICES; i++) {
		if (!devices[i].known)
			continue;
		tp_buf_cstr(b, n++ ? ",\n  " : "\n  ");
		put_device(b, &devices[i]);
	}
}

void tp_devices_reset(void)
{
	memset(devices, 0, sizeof(devices));
	memset(contexts, 0, sizeof(contexts));
}
