/* CUPTI of the simulated machine, its activity side (libcupti.so.13,
 * with cupti.c): records of the ops the driver issues, the buffers the
 * client lends for them, their delivery, and the activity API (v1 and
 * CUPTI 13.3+'s per-subscriber v2). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cupti_int.h"

__thread struct tbuf *mine[MAX_SUBS];

/* ---- activity records ---- */

/* The records each version delivers (its cupti_activity.h's newest
 * structs): CUDA 13 Kernel10, Memcpy6, Synchronization2; CUPTI 12.8 and
 * 12.9 (API 26, 28) Kernel9, Memcpy6, Synchronization2; 12.6 (API 24)
 * Kernel9, Memcpy5, Synchronization (API 25 taken as 24). Each older
 * struct is the newer one's beginning (the CUDA 13 headers keep them in
 * cupti_activity_deprecated.h), so records are filled through the newer
 * one with the fields the older one has; only the size differs. */
_Static_assert(offsetof(CUpti_ActivityKernel10, isDeviceLaunched) ==
	       sizeof(CUpti_ActivityKernel9), "Kernel9 is Kernel10's head");
_Static_assert(offsetof(CUpti_ActivityMemcpy6, isDeviceLaunched) ==
	       offsetof(CUpti_ActivityMemcpy5, pad2),
	       "Memcpy5 is Memcpy6's head");
_Static_assert(offsetof(CUpti_ActivitySynchronization2, cudaEventSyncId) ==
	       sizeof(CUpti_ActivitySynchronization),
	       "Synchronization is Synchronization2's head");

static int old_records(void)
{
	return SIM_CUDA == 12 && version() < 26;
}

size_t record_size(CUpti_ActivityKind k)
{
	switch (k) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
	case CUPTI_ACTIVITY_KIND_KERNEL:
		return SIM_CUDA == 12 ? sizeof(CUpti_ActivityKernel9) :
					sizeof(CUpti_ActivityKernel10);
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		return old_records() ? sizeof(CUpti_ActivityMemcpy5) :
				       sizeof(CUpti_ActivityMemcpy6);
	case CUPTI_ACTIVITY_KIND_MEMSET:
		return sizeof(CUpti_ActivityMemset4);
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
		return old_records() ?
		       sizeof(CUpti_ActivitySynchronization) :
		       sizeof(CUpti_ActivitySynchronization2);
	case CUPTI_ACTIVITY_KIND_CONTEXT:
		return sizeof(CUpti_ActivityContext3);
	case CUPTI_ACTIVITY_KIND_DEVICE:
		return sizeof(CUpti_ActivityDevice5);
	default:
		return 0;
	}
}

static CUpti_ActivityKind kind_of(const struct subr *sb,
				  const struct sim_op *op)
{
	switch (op->kind) {
	case SIM_KERNEL:
		return sb->kind_on[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL] ?
		       CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL :
		       CUPTI_ACTIVITY_KIND_KERNEL;
	case SIM_MEMCPY:
		return CUPTI_ACTIVITY_KIND_MEMCPY;
	case SIM_MEMSET:
		return CUPTI_ACTIVITY_KIND_MEMSET;
	default:
		return CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
	}
}

/* The static part of an op's record, written when it is issued. */
static void fill_static(void *rec, CUpti_ActivityKind k,
			const struct sim_op *op)
{
	if (k == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ||
	    k == CUPTI_ACTIVITY_KIND_KERNEL) {
		CUpti_ActivityKernel10 *r = rec;

		r->kind = k;
		r->name = op->name;
		r->deviceId = op->device;
		r->contextId = op->context;
		r->streamId = op->stream;
		r->correlationId = op->corr;
		r->gridX = (int32_t)op->grid[0];
		r->gridY = (int32_t)op->grid[1];
		r->gridZ = (int32_t)op->grid[2];
		r->blockX = (int32_t)op->block[0];
		r->blockY = (int32_t)op->block[1];
		r->blockZ = (int32_t)op->block[2];
		r->dynamicSharedMemory = (int32_t)op->shmem;
		r->registersPerThread = 32;
		r->graphId = op->graph_id;
		r->graphNodeId = op->graph_node;
	} else if (k == CUPTI_ACTIVITY_KIND_MEMCPY) {
		CUpti_ActivityMemcpy6 *r = rec;

		r->kind = k;
		r->copyKind = (uint8_t)op->copy_kind;
		r->srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
		r->dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
		r->bytes = op->bytes;
		r->deviceId = op->device;
		r->contextId = op->context;
		r->streamId = op->stream;
		r->correlationId = op->corr;
	} else if (k == CUPTI_ACTIVITY_KIND_MEMSET) {
		CUpti_ActivityMemset4 *r = rec;

		r->kind = k;
		r->value = op->value;
		r->bytes = op->bytes;
		r->deviceId = op->device;
		r->contextId = op->context;
		r->streamId = op->stream;
		r->correlationId = op->corr;
		r->memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	} else {
		CUpti_ActivitySynchronization2 *r = rec;

		r->kind = k;
		r->type = (CUpti_ActivitySynchronizationType)op->sync_type;
		r->contextId = op->context;
		r->streamId = op->stream;
		r->correlationId = op->corr;
		r->cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
	}
}

/* Timestamps, once the op has ended (0 while it runs). */
static void fill_times(struct subr *sb, void *rec, const struct sim_op *op,
		       int done)
{
	uint64_t s = done ? to_client(sb, op->start_gpu) : 0;
	uint64_t e = done ? to_client(sb, op->end_gpu) : 0;

	switch (((CUpti_Activity *)rec)->kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
	case CUPTI_ACTIVITY_KIND_KERNEL:
		if (clock_of(sb)->ts && bug_zero_ts())
			s = e = 0;
		((CUpti_ActivityKernel10 *)rec)->start = s;
		((CUpti_ActivityKernel10 *)rec)->end = e;
		break;
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		((CUpti_ActivityMemcpy6 *)rec)->start = s;
		((CUpti_ActivityMemcpy6 *)rec)->end = e;
		break;
	case CUPTI_ACTIVITY_KIND_MEMSET:
		((CUpti_ActivityMemset4 *)rec)->start = s;
		((CUpti_ActivityMemset4 *)rec)->end = e;
		break;
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
		((CUpti_ActivitySynchronization2 *)rec)->start = s;
		((CUpti_ActivitySynchronization2 *)rec)->end = e;
		break;
	default:
		break;
	}
}

static int op_done(const struct sim_op *op, uint64_t now)
{
	return !op || op->end_gpu <= now;
}

/* The calling thread's buffer of subscriber sb with room for size
 * bytes, asked of the client when needed; NULL when it declined (lock
 * held). */
static struct tbuf *room(struct subr *sb, size_t size)
{
	unsigned slot = (unsigned)(sb - S.sub);
	struct tbuf *b = mine[slot];
	uint8_t *data = NULL;
	size_t bsize = 0, max = 0;
	Sim_BufferCallbackRequestInfo info = { sizeof(info) };
	CUpti_BuffersCallbackRequestFunc req = sb->request;
	Sim_RequestFunc_v2 req2 = sb->request2;
	const char *was;

	if (b && !b->full && b->used + size <= b->size && b->n < MAX_RECS)
		return b;
	if (b)
		b->full = 1;
	mine[slot] = NULL;
	if (!req && !req2)
		return NULL;
	pthread_mutex_unlock(&S.lock);
	was = rule_callback("buffer request");
	if (req2)
		req2(&data, &bsize, &max, &info);
	else
		req(&data, &bsize, &max);
	rule_callback(was);
	pthread_mutex_lock(&S.lock);
	if ((!data || bsize < size) && bug_refused_crash()) {
		fprintf(stderr, "cupti-sim: a buffer request was refused: "
			"crash (CUPTI API %u; fixed in API 27)\n", version());
		sim_log("{\"ev\":\"abort\",\"why\":\"buffer refused\"}");
		abort();
	}
	if (!data || bsize < size)
		return NULL;
	b = calloc(1, sizeof(*b));
	b->ops = calloc(MAX_RECS, sizeof(*b->ops));
	b->offs = calloc(MAX_RECS, sizeof(*b->offs));
	if (!b || !b->ops || !b->offs)
		abort();
	b->data = data;
	b->size = bsize;
	b->tid = sim_tid();
	b->owner = sb;
	b->next = S.pending;
	S.pending = b;
	mine[slot] = b;
	return b;
}

/* A record for op (or a static one: op NULL, rec given) in subscriber
 * sb's buffer. */
static void reserve(struct subr *sb, CUpti_ActivityKind k,
		    struct sim_op *op, const void *rec)
{
	size_t size = record_size(k);
	struct tbuf *b;

	pthread_mutex_lock(&S.lock);
	if (S.torn_down || !sb->kind_on[k] || (sb != DEF && !sb->used)) {
		pthread_mutex_unlock(&S.lock);
		return;
	}
	b = room(sb, size);
	if (!b) {
		sb->dropped++;
		pthread_mutex_unlock(&S.lock);
		sim_log("{\"ev\":\"dropped\",\"why\":\"no buffer\","
			"\"corr\":%u}", op ? op->corr : 0);
		return;
	}
	memset(b->data + b->used, 0, size);
	if (op)
		fill_static(b->data + b->used, k, op);
	else
		memcpy(b->data + b->used, rec, size);
	b->ops[b->n] = op;
	b->offs[b->n] = b->used;
	b->n++;
	b->used += size;
	pthread_mutex_unlock(&S.lock);
}

/* Every subscriber that enabled the op's kind gets a record of it. */
void on_op(struct sim_op *op)
{
	unsigned i;

	for (i = 0; i < MAX_SUBS; i++)
		reserve(&S.sub[i], kind_of(&S.sub[i], op), op, NULL);
}

/* A context's record, for subscriber only (NULL: every subscriber), if
 * it has the kind enabled now. SIM_NO_CONTEXT_RECORDS=1: none at
 * all, as for a CUDA 13.2 green context. */
static void context_record(uint32_t ctx, uint32_t dev, struct subr *only)
{
	const char *no = getenv("SIM_NO_CONTEXT_RECORDS");
	CUpti_ActivityContext3 r;
	unsigned i;

	if (no && *no == '1')
		return;
	memset(&r, 0, sizeof(r));
	r.kind = CUPTI_ACTIVITY_KIND_CONTEXT;
	r.contextId = ctx;
	r.deviceId = dev;
	r.nullStreamId = 7;
	for (i = 0; i < MAX_SUBS; i++)
		if (!only || only == &S.sub[i])
			reserve(&S.sub[i], CUPTI_ACTIVITY_KIND_CONTEXT, NULL,
				&r);
}

/* cupti_activity.h (cuptiActivityEnableAndDump): "Context and stream
 * records are emitted on context and stream creation": only to the
 * subscribers that had CONTEXT enabled when the context was made. */
void on_context(uint32_t ctx, uint32_t dev)
{
	context_record(ctx, dev, NULL);
}

/* A device's record with every field a client reads (an H100 SXM). */
static void device_record(struct subr *sb, int d)
{
	CUpti_ActivityDevice5 r;

	memset(&r, 0, sizeof(r));
	r.kind = CUPTI_ACTIVITY_KIND_DEVICE;
	r.id = (uint32_t)d;
	r.name = "NVIDIA H100 80GB HBM3";
	r.computeCapabilityMajor = 9;
	r.computeCapabilityMinor = 0;
	r.numMultiprocessors = 132;
	r.numThreadsPerWarp = 32;
	r.maxThreadsPerBlock = 1024;
	r.maxWarpsPerMultiprocessor = 64;
	r.maxBlocksPerMultiprocessor = 32;
	r.maxRegistersPerBlock = 65536;
	r.maxRegistersPerMultiprocessor = 65536;
	r.maxSharedMemoryPerBlock = 49152;
	r.maxSharedMemoryPerMultiprocessor = 233472;
	r.maxBlockDimX = r.maxBlockDimY = 1024;
	r.maxBlockDimZ = 64;
	r.maxGridDimX = 2147483647;
	r.maxGridDimY = r.maxGridDimZ = 65535;
	r.globalMemorySize = 85520809984ull;
	r.globalMemoryBandwidth = 3352000000ull;	/* KB/s */
	r.l2CacheSize = 52428800;
	r.coreClockRate = 1980000;			/* kHz */
	r.numMemcpyEngines = 5;
	r.constantMemorySize = 65536;
	sim_device_uuid(d, (unsigned char *)r.uuid.bytes);
	reserve(sb, CUPTI_ACTIVITY_KIND_DEVICE, NULL, &r);
}

/* cupti_activity.h (cuptiActivityEnableAndDump): "Device records are
 * emitted in CUPTI on CUDA driver initialization. Those records can only
 * be retrieved by the user if CUPTI is attached before CUDA
 * initialization." The driver tells this library at its initialization
 * only when the library was loaded (attached) before it. */
void on_driver_init(void)
{
	unsigned i;
	int d;

	S.driver_init_seen = 1;
	for (i = 0; i < MAX_SUBS; i++)
		for (d = 0; d < sim_device_count(); d++)
			device_record(&S.sub[i], d);
}

/* cuptiActivityEnableAndDump: the records of the devices and contexts
 * that exist now. Devices exist once the driver is initialized, whether
 * or not this library saw it. */
static void dump_existing(struct subr *sb, CUpti_ActivityKind k)
{
	int d;

	for (d = 0; d < sim_device_count(); d++) {
		if (k == CUPTI_ACTIVITY_KIND_DEVICE && sim_driver_initialized())
			device_record(sb, d);
		if (k == CUPTI_ACTIVITY_KIND_CONTEXT && sim_context_made(d))
			context_record((uint32_t)d + 1, (uint32_t)d, sb);
	}
}

/* ---- delivery ---- */

/* Takes the buffers to hand back off the pending list (lock held):
 * forced: all; else those whose records are complete, and only full
 * ones unless every: a flush (0) hands back partial ones too. */
static struct tbuf *take(int forced, int every)
{
	struct tbuf **pp = &S.pending, *b, *out = NULL, **tail = &out;
	uint64_t now = sim_gpu_now();
	unsigned i;

	while ((b = *pp)) {
		int ok = forced || b->full || every;

		for (i = 0; ok && !forced && i < b->n; i++)
			ok = op_done(b->ops[i], now);
		if (!ok) {
			pp = &b->next;
			continue;
		}
		*pp = b->next;
		b->next = NULL;
		*tail = b;
		tail = &b->next;
		for (i = 0; i < b->n; i++)
			if (b->ops[i])
				fill_times(b->owner, b->data + b->offs[i],
					   b->ops[i],
					   op_done(b->ops[i], now));
		/* A partial buffer handed back: its thread gets a new one. */
		b->full = 1;
	}
	return out;
}

static void hand_back(struct tbuf *list, const char *who)
{
	CUpti_BuffersCallbackCompleteFunc done;
	Sim_CompleteFunc_v2 done2;
	Sim_BufferCallbackCompleteInfo info;
	struct tbuf *b, *next;
	const char *was;

	for (b = list; b; b = next) {
		next = b->next;
		done = b->owner->complete;
		done2 = b->owner->complete2;
		sim_log("{\"ev\":\"delivered\",\"by\":\"%s\",\"thread\":%ld,"
			"\"records\":%u,\"bytes\":%zu,\"sub\":%d}", who,
			b->tid, b->n, b->used, (int)(b->owner - S.sub));
		memset(&info, 0, sizeof(info));
		info.structSize = sizeof(info);
		info.threadId = (uint64_t)b->tid;
		was = rule_callback("buffer completion");
		if (done2)
			done2(b->data, b->size, b->used, &info);
		else if (done)
			done(NULL, 0, b->data, b->size, b->used);
		rule_callback(was);
		/* The struct stays: its thread may still hold it (full). */
		free(b->ops);
		free(b->offs);
		b->ops = NULL;
		b->offs = NULL;
	}
}

static void *delivery_main(void *arg)
{
	struct timespec ms = { 0, 5000000 };
	struct tbuf *list;

	(void)arg;
	for (;;) {
		nanosleep(&ms, NULL);
		pthread_mutex_lock(&S.lock);
		sample();
		list = S.torn_down ? NULL : take(0, 0);
		pthread_mutex_unlock(&S.lock);
		hand_back(list, "cupti-thread");
	}
	return NULL;
}

SIM_EXPORT CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
	struct tbuf *list;
	uint64_t start = sim_raw_now();
	unsigned i;
	int registered = 0;

	rule_call("cuptiActivityFlushAll");
	rule_not_in_callback("cuptiActivityFlushAll", "cupti_activity.h "
			     "(cuptiActivityFlushAll): \"Do "
			     "not call this function from activity buffer "
			     "callbacks or any other non-API-trace callbacks, "
			     "including callbacks related to resource\"");
	pthread_mutex_lock(&S.lock);
	/* cupti_activity.h: CUPTI_ERROR_INVALID_OPERATION "if not preceded
	 * by a successful call to cuptiActivityRegisterCallbacks". */
	for (i = 0; i < MAX_SUBS; i++)
		registered |= S.sub[i].request || S.sub[i].request2;
	if (!registered) {
		pthread_mutex_unlock(&S.lock);
		sim_log("{\"ev\":\"cupti\",\"call\":\"flush_refused\"}");
		return CUPTI_ERROR_INVALID_OPERATION;
	}
	if (S.torn_down) {
		pthread_mutex_unlock(&S.lock);
		return CUPTI_SUCCESS;
	}
	sample();
	list = take(flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED, 1);
	pthread_mutex_unlock(&S.lock);
	/* SIM_FLUSH_FORCED_NS: a forced flush that takes that long (many
	 * buffers, a busy machine), other threads going on meanwhile. */
	if (flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED)
		sleep_ns(env_ns("SIM_FLUSH_FORCED_NS", 0));
	hand_back(list, flag ? "flush-forced" : "flush");
	sim_log("{\"ev\":\"cupti\",\"call\":\"%s\","
		"\"start_raw\":%llu,\"end_raw\":%llu}",
		flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED ? "flush_forced" :
							  "flush",
		(unsigned long long)start, (unsigned long long)sim_raw_now());
	return CUPTI_SUCCESS;
}

static void start_delivery(void)
{
	if (!S.delivery_started &&
	    pthread_create(&S.delivery, NULL, delivery_main, NULL) == 0)
		S.delivery_started = 1;
}

SIM_EXPORT CUptiResult cuptiActivityRegisterCallbacks(
	CUpti_BuffersCallbackRequestFunc req,
	CUpti_BuffersCallbackCompleteFunc done)
{
	rule_call("cuptiActivityRegisterCallbacks");
	sim_cupti_start();
	pthread_mutex_lock(&S.lock);
	DEF->request = req;
	DEF->complete = done;
	start_delivery();
	pthread_mutex_unlock(&S.lock);
	sim_log("{\"ev\":\"cupti\",\"call\":\"register_callbacks\"}");
	return CUPTI_SUCCESS;
}

static CUptiResult kind_on(struct subr *sb, CUpti_ActivityKind k)
{
	if ((unsigned)k >= MAX_KIND)
		return CUPTI_ERROR_INVALID_KIND;
	sb->kind_on[k] = 1;
	return record_size(k) || k == CUPTI_ACTIVITY_KIND_OVERHEAD ||
	       k == CUPTI_ACTIVITY_KIND_MEMCPY2 ||
	       k == CUPTI_ACTIVITY_KIND_MEMORY2 ? CUPTI_SUCCESS :
	       CUPTI_ERROR_NOT_COMPATIBLE;
}

static CUptiResult kind_off(struct subr *sb, CUpti_ActivityKind k)
{
	if ((unsigned)k >= MAX_KIND)
		return CUPTI_ERROR_INVALID_KIND;
	sb->kind_on[k] = 0;
	return CUPTI_SUCCESS;
}

SIM_EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind k)
{
	rule_call("cuptiActivityEnable");
	return kind_on(DEF, k);
}

/* Enabling DEVICE or CONTEXT gives records of the devices and contexts
 * made from then on; this call also those that exist (cupti_activity.h,
 * present in every CUPTI 12.6-13.x header). */
SIM_EXPORT CUptiResult cuptiActivityEnableAndDump(CUpti_ActivityKind k)
{
	CUptiResult r;

	rule_call("cuptiActivityEnableAndDump");
	r = kind_on(DEF, k);
	if (r == CUPTI_SUCCESS)
		dump_existing(DEF, k);
	sim_log("{\"ev\":\"cupti\",\"call\":\"enable_and_dump\",\"kind\":%d}",
		(int)k);
	return r;
}

SIM_EXPORT CUptiResult cuptiActivityEnableContext(CUcontext c,
						  CUpti_ActivityKind k)
{
	rule_call("cuptiActivityEnableContext");
	(void)c;
	return cuptiActivityEnable(k);
}

SIM_EXPORT CUptiResult cuptiActivityDisable(CUpti_ActivityKind k)
{
	rule_call("cuptiActivityDisable");
	return kind_off(DEF, k);
}

SIM_EXPORT CUptiResult cuptiActivityGetNextRecord(uint8_t *buf, size_t valid,
						  CUpti_Activity **rec)
{
	size_t off = 0, size;

	rule_call("cuptiActivityGetNextRecord");
	if (*rec) {
		off = (size_t)((uint8_t *)*rec - buf);
		size = record_size((*rec)->kind);
		if (!size)
			return CUPTI_ERROR_INVALID_KIND;
		off += size;
	}
	if (off >= valid)
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	*rec = (CUpti_Activity *)(buf + off);
	return record_size((*rec)->kind) ? CUPTI_SUCCESS :
					   CUPTI_ERROR_INVALID_KIND;
}

static CUptiResult dropped_of(struct subr *sb, size_t *dropped)
{
	if (!dropped)
		return CUPTI_ERROR_INVALID_PARAMETER;
	pthread_mutex_lock(&S.lock);
	*dropped = sb->dropped;
	sb->dropped = 0;
	pthread_mutex_unlock(&S.lock);
	return CUPTI_SUCCESS;
}

SIM_EXPORT CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext c,
							 uint32_t stream,
							 size_t *dropped)
{
	rule_call("cuptiActivityGetNumDroppedRecords");
	(void)c, (void)stream;
	return dropped_of(DEF, dropped);
}

SIM_EXPORT CUptiResult cuptiActivitySetAttribute(CUpti_ActivityAttribute a,
						 size_t *size, void *value)
{
	size_t v = 0;

	rule_call("cuptiActivitySetAttribute");
	if (!size || !value || (unsigned)a >= SIM_MAX_ATTR)
		return CUPTI_ERROR_INVALID_PARAMETER;
	memcpy(&v, value, *size < sizeof(v) ? *size : sizeof(v));
	S.attr[a] = v;
	S.attr_set[a] = 1;
	sim_log("{\"ev\":\"cupti\",\"call\":\"set_attribute\",\"attr\":%d,"
		"\"value\":%zu}", (int)a, v);
	return CUPTI_SUCCESS;
}

SIM_EXPORT CUptiResult cuptiActivityGetAttribute(CUpti_ActivityAttribute a,
						 size_t *size, void *value)
{
	rule_call("cuptiActivityGetAttribute");
	if (!size || !value || (unsigned)a >= SIM_MAX_ATTR)
		return CUPTI_ERROR_INVALID_PARAMETER;
	memcpy(value, &S.attr[a], *size < sizeof(size_t) ? *size :
							  sizeof(size_t));
	return CUPTI_SUCCESS;
}

/* ---- the v2 activity API (CUPTI 13.3+, per subscriber) ---- */

/* A v2 call's subscriber: NULL before 13.3 (the entry points return
 * CUPTI_ERROR_NOT_SUPPORTED there) or for a handle that is not one. */
static struct subr *v2(CUpti_SubscriberHandle h, CUptiResult *r)
{
	struct subr *sb = version() >= 130300 ? subr_of(h) : NULL;

	*r = version() < 130300 ? CUPTI_ERROR_NOT_SUPPORTED :
				  CUPTI_ERROR_INVALID_PARAMETER;
	return sb;
}

SIM_EXPORT CUptiResult cuptiActivityRegisterCallbacks_v2(
	CUpti_SubscriberHandle h, Sim_RequestFunc_v2 req,
	Sim_CompleteFunc_v2 done)
{
	CUptiResult r;
	struct subr *sb = v2(h, &r);

	rule_call("cuptiActivityRegisterCallbacks_v2");
	if (!sb)
		return r;
	if (!req || !done)
		return CUPTI_ERROR_INVALID_PARAMETER;
	pthread_mutex_lock(&S.lock);
	sb->request2 = req;
	sb->complete2 = done;
	start_delivery();
	pthread_mutex_unlock(&S.lock);
	sim_log("{\"ev\":\"cupti\",\"call\":\"register_callbacks_v2\","
		"\"sub\":%d}", (int)(sb - S.sub));
	return CUPTI_SUCCESS;
}

/* pActivityConfig (CUpti_ActivityConfig) may be NULL; field selection
 * is not modelled. */
SIM_EXPORT CUptiResult cuptiActivityEnable_v2(CUpti_SubscriberHandle h,
					      CUpti_ActivityKind k,
					      void *config)
{
	CUptiResult r;
	struct subr *sb = v2(h, &r);

	rule_call("cuptiActivityEnable_v2");
	(void)config;
	return sb ? kind_on(sb, k) : r;
}

SIM_EXPORT CUptiResult cuptiActivityDisable_v2(CUpti_SubscriberHandle h,
					       CUpti_ActivityKind k,
					       void *config)
{
	CUptiResult r;
	struct subr *sb = v2(h, &r);

	rule_call("cuptiActivityDisable_v2");
	(void)config;
	return sb ? kind_off(sb, k) : r;
}

SIM_EXPORT CUptiResult cuptiActivityGetNextRecord_v2(CUpti_SubscriberHandle h,
						     uint8_t *buf,
						     size_t valid,
						     CUpti_Activity **rec)
{
	CUptiResult r;

	rule_call("cuptiActivityGetNextRecord_v2");
	if (!v2(h, &r))
		return r;
	if (!buf || !rec)
		return CUPTI_ERROR_INVALID_PARAMETER;
	return cuptiActivityGetNextRecord(buf, valid, rec);
}

SIM_EXPORT CUptiResult cuptiActivityGetNumDroppedRecords_v2(
	CUpti_SubscriberHandle h, CUcontext c, uint32_t stream,
	size_t *dropped)
{
	CUptiResult r;
	struct subr *sb = v2(h, &r);

	rule_call("cuptiActivityGetNumDroppedRecords_v2");
	(void)c, (void)stream;
	return sb ? dropped_of(sb, dropped) : r;
}

/* TIMESTAMP_CALLBACK (22) only from 13.4; MULTIPLE_SUBSCRIBER_STATE is
 * read-only; the rest as cuptiActivitySetAttribute. */
SIM_EXPORT CUptiResult cuptiActivitySetAttribute_v2(CUpti_SubscriberHandle h,
						    CUpti_ActivityAttribute a,
						    size_t *size, void *value)
{
	CUpti_TimestampCallbackFunc f;
	CUptiResult r;
	struct subr *sb = v2(h, &r);

	rule_call("cuptiActivitySetAttribute_v2");
	if (!sb)
		return r;
	if (!size || !value || a == SIM_ATTR_MULTIPLE_SUBSCRIBER_STATE)
		return CUPTI_ERROR_INVALID_PARAMETER;
	if (a != SIM_ATTR_TIMESTAMP_CALLBACK)
		return cuptiActivitySetAttribute(a, size, value);
	if (version() < 130400 || *size != sizeof(f))
		return CUPTI_ERROR_INVALID_PARAMETER;
	memcpy(&f, value, sizeof(f));
	set_clock(sb, f);
	return CUPTI_SUCCESS;
}

SIM_EXPORT CUptiResult cuptiActivityGetAttribute_v2(CUpti_SubscriberHandle h,
						    CUpti_ActivityAttribute a,
						    size_t *size, void *value)
{
	CUptiResult r;
	uint8_t st;

	rule_call("cuptiActivityGetAttribute_v2");
	if (!v2(h, &r))
		return r;
	if (!size || !value)
		return CUPTI_ERROR_INVALID_PARAMETER;
	if (a != SIM_ATTR_MULTIPLE_SUBSCRIBER_STATE)
		return cuptiActivityGetAttribute(a, size, value);
	if (*size < 1)
		return CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT;
	st = (uint8_t)S.multi;
	memcpy(value, &st, 1);
	*size = 1;
	return CUPTI_SUCCESS;
}

/* 13.3: cuptiGetTimestamp's (the process-wide callback); 13.4+: the
 * subscriber's own. */
SIM_EXPORT CUptiResult cuptiGetTimestamp_v2(CUpti_SubscriberHandle h,
					    uint64_t *t)
{
	CUptiResult r;
	struct subr *sb = v2(h, &r);

	rule_call("cuptiGetTimestamp_v2");
	if (!sb)
		return r;
	if (!t)
		return CUPTI_ERROR_INVALID_PARAMETER;
	sim_preempt(0);
	*t = now_of(sb);
	sim_preempt(1);
	return CUPTI_SUCCESS;
}

SIM_EXPORT CUptiResult cuptiGetContextId(CUcontext c, uint32_t *id)
{
	rule_call("cuptiGetContextId");
	*id = (uint32_t)((uintptr_t)c - 0x1000 + 1);
	return CUPTI_SUCCESS;
}
