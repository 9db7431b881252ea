/* The simulated machine: clocks, API call bookkeeping, devices, streams
 * and the GPU's timeline (part of libcuda.so.1). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sim.h"

/* The GPU's clock runs 20 ppm fast against the host's and is offset by
 * a second and a bit: a client that takes GPU times for host times is
 * visibly wrong, and CUPTI must convert (cupti_records.c). */
#define GPU_DRIFT_PPM 20
#define GPU_OFFSET_NS 1234567891ull
/* From the call to the op's start, when the stream is idle. */
#define LAUNCH_LATENCY_NS 4000

static const struct sim_tool *tool;
static uint32_t next_corr = 1;
static int inside_threads;
/* The thread inside cuptiFinalize, 0 when none. */
static long finalizing;
static int torn_down;
static int log_fd = -2;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* The calling thread's API calls, outermost first. */
#define MAX_DEPTH 16
static __thread struct sim_call *stack[MAX_DEPTH];
static __thread int depth;
static __thread uint64_t next_kernel_dur;
static __thread int next_programmatic;
static __thread int cur_dev;

SIM_EXPORT void sim_attach_tool(const struct sim_tool *t)
{
	tool = t;
}

SIM_EXPORT uint64_t sim_raw_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t raw_to_gpu(uint64_t r)
{
	return r + (uint64_t)((unsigned __int128)r * GPU_DRIFT_PPM / 1000000) +
	       GPU_OFFSET_NS;
}

SIM_EXPORT uint64_t sim_gpu_now(void)
{
	return raw_to_gpu(sim_raw_now());
}

/* The inverse of the mapping: the last raw ns whose GPU time is <= gpu. */
SIM_EXPORT uint64_t sim_gpu_to_raw(uint64_t gpu)
{
	uint64_t x = gpu - GPU_OFFSET_NS;
	uint64_t r = (uint64_t)((unsigned __int128)x * 1000000 /
				(1000000 + GPU_DRIFT_PPM));

	while (r && raw_to_gpu(r) > gpu)
		r--;
	while (raw_to_gpu(r + 1) <= gpu)
		r++;
	return r;
}

static uint64_t realtime_off, realtime_raw0;
static double realtime_ppm;
static pthread_once_t realtime_once = PTHREAD_ONCE_INIT;

/* CLOCK_REALTIME minus CLOCK_MONOTONIC_RAW, taken once from the tightest
 * of a few bracketed reads: CUPTI's own timestamps are a fixed linear map
 * of the GPU's clock, not one that jitters with each conversion. */
static void realtime_calibrate(void)
{
	struct timespec rt;
	uint64_t a, b, best = UINT64_MAX, real;
	int i;

	for (i = 0; i < 8; i++) {
		a = sim_raw_now();
		clock_gettime(CLOCK_REALTIME, &rt);
		b = sim_raw_now();
		if (b - a >= best)
			continue;
		best = b - a;
		real = (uint64_t)rt.tv_sec * 1000000000ull +
		       (uint64_t)rt.tv_nsec;
		realtime_off = real - (a + (b - a) / 2);
		realtime_raw0 = a;
	}
	/* SIM_REALTIME_PPM: CLOCK_REALTIME slewed by NTP against
	 * CLOCK_MONOTONIC_RAW at that rate (a few ppm on a machine whose
	 * frequency is corrected; ntpd slews up to 500 ppm while it
	 * corrects an offset), and CUPTI's default clock with it. */
	if (getenv("SIM_REALTIME_PPM"))
		realtime_ppm = atof(getenv("SIM_REALTIME_PPM"));
}

SIM_EXPORT uint64_t sim_gpu_to_realtime(uint64_t gpu)
{
	uint64_t raw;

	pthread_once(&realtime_once, realtime_calibrate);
	raw = sim_gpu_to_raw(gpu);
	return raw + realtime_off + (uint64_t)(int64_t)((double)(int64_t)
		(raw - realtime_raw0) * realtime_ppm / 1e6);
}

SIM_EXPORT long sim_tid(void)
{
	return syscall(SYS_gettid);
}

SIM_EXPORT void sim_log(const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n;

	if (log_fd == -2) {
		const char *p = getenv("SIM_LOG");

		log_fd = p ? open(p, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
				  0644) : -1;
	}
	if (log_fd < 0)
		return;
	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	if (write(log_fd, line, (size_t)n) < 0)
		return;
}

/* ---- API calls ---- */

/* A thread that enters a CUDA call while cuptiFinalize tears CUPTI down
 * meets half-freed state: the crash cuptiFinalize's documentation
 * avoids by being called where no other thread is in CUDA. */
static void check_finalizing(const char *name)
{
	long f = __atomic_load_n(&finalizing, __ATOMIC_SEQ_CST);

	if (!f || f == sim_tid())
		return;
	fprintf(stderr, "cupti-sim: %s entered while cuptiFinalize runs on "
		"another thread: crash\n", name);
	sim_log("{\"ev\":\"abort\",\"why\":\"entered during finalize\","
		"\"call\":\"%s\"}", name);
	abort();
}

SIM_EXPORT void sim_set_finalizing(int on)
{
	__atomic_store_n(&finalizing, on ? sim_tid() : 0, __ATOMIC_SEQ_CST);
}

/* The context an API callback names: the current device's once made, else
 * none (an API call such as cuDriverGetVersion makes no context, and
 * does not initialize the driver). */
static uint32_t current_ctx(void)
{
	return sim_context_made(cur_dev) ? (uint32_t)cur_dev + 1 : 0;
}

SIM_EXPORT void sim_enter(struct sim_call *c, CUpti_CallbackDomain dom,
			  uint32_t cbid, const char *name, void *params)
{
	memset(c, 0, sizeof(*c));
	c->dom = dom;
	c->cbid = cbid;
	c->name = name;
	c->params = params;
	c->corr = __atomic_fetch_add(&next_corr, 1, __ATOMIC_RELAXED);
	c->enter_raw = sim_raw_now();
	check_finalizing(name);
	if (!depth++)
		__atomic_add_fetch(&inside_threads, 1, __ATOMIC_SEQ_CST);
	if (depth <= MAX_DEPTH)
		stack[depth - 1] = c;
	if (tool && !torn_down)
		tool->api(0, dom, cbid, name, c->symbol, c->corr, params,
			  NULL, &c->data, current_ctx());
}

SIM_EXPORT void sim_exit(struct sim_call *c, void *ret)
{
	if (tool && !torn_down)
		tool->api(1, c->dom, c->cbid, c->name, c->symbol, c->corr,
			  c->params, ret, &c->data, current_ctx());
	sim_log("{\"ev\":\"api\",\"domain\":%d,\"cbid\":%u,\"name\":\"%s\","
		"\"corr\":%u,\"tid\":%ld,\"depth\":%d,\"enter_raw\":%llu,"
		"\"exit_raw\":%llu}", (int)c->dom, c->cbid, c->name, c->corr,
		sim_tid(), depth, (unsigned long long)c->enter_raw,
		(unsigned long long)sim_raw_now());
	if (!--depth)
		__atomic_sub_fetch(&inside_threads, 1, __ATOMIC_SEQ_CST);
}

SIM_EXPORT uint32_t sim_launch_corr(void)
{
	return depth ? stack[0]->corr : 0;
}

/* Threads other than the caller inside a CUDA call now. */
SIM_EXPORT int sim_inside_others(void)
{
	return __atomic_load_n(&inside_threads, __ATOMIC_SEQ_CST) -
	       (depth > 0);
}

SIM_EXPORT int sim_torn_down(void)
{
	return torn_down;
}

/* The driver's initialization: at the first cuInit, or the first use of
 * a context (the runtime initializes the driver at its first call). A
 * tool attached by then is told (CUPTI emits DEVICE records there);
 * one loaded later is not. */
static int driver_init;

SIM_EXPORT void sim_driver_init(void)
{
	if (__atomic_exchange_n(&driver_init, 1, __ATOMIC_ACQ_REL))
		return;
	sim_log("{\"ev\":\"driver_init\",\"tool\":%d}", tool != NULL);
	if (tool && !torn_down && tool->init)
		tool->init();
}

SIM_EXPORT int sim_driver_initialized(void)
{
	return __atomic_load_n(&driver_init, __ATOMIC_ACQUIRE);
}

/* CUDA graphs launched in the process (PyTorch PR #112507: CUPTI
 * re-initialised after cuptiFinalize crashes once graphs exist). */
static int graphs;

SIM_EXPORT void sim_note_graph_launch(void)
{
	__atomic_store_n(&graphs, 1, __ATOMIC_RELEASE);
}

SIM_EXPORT int sim_graphs_launched(void)
{
	return __atomic_load_n(&graphs, __ATOMIC_ACQUIRE);
}

/* ---- devices, contexts, streams ---- */

/* Work queued behind a kernel that waits (simNextKernelWaitsFor): its
 * op, or a marker with no op (a wait for another stream's event). */
struct pend {
	struct sim_op *op;
	uint64_t issued;		/* GPU time of the call */
	uint64_t dur;
	uint64_t not_before;		/* an event waited for, GPU clock */
	const volatile uint32_t *flag;	/* runs until *flag >= value */
	uint32_t value;
	const struct sim_op *dep;	/* a marker: until dep has ended */
	struct pend *next;
};

struct stream {
	int dev;
	uintptr_t handle;
	uint32_t id;
	uint64_t tail;	/* end of its last op ended, GPU clock */
	/* its last op, for a programmatic dependent launch after it */
	uint64_t last_start, last_end;
	int last_kernel;
	struct pend *q, **qt;	/* work not yet ended, in order */
	struct sim_op *queued;	/* the last op queued in q */
};

static struct pend *pend_new(struct sim_op *op, uint64_t now, uint64_t dur);
static void enqueue(struct stream *s, struct pend *p);

static struct stream streams[SIM_MAX_STREAMS];
static unsigned n_streams;
static uint32_t next_stream_id = 13;
static int ctx_made[SIM_MAX_DEVICES];

SIM_EXPORT int sim_device_count(void)
{
	const char *e = getenv("SIM_DEVICES");
	int n = e ? atoi(e) : 1;

	return n < 1 ? 1 : n > SIM_MAX_DEVICES ? SIM_MAX_DEVICES : n;
}

/* Made up, fixed per device: version 4 (random) UUIDs look like this. */
SIM_EXPORT void sim_device_uuid(int dev, unsigned char out[16])
{
	static const unsigned char base[16] = {
		0x5e, 0x11, 0x0a, 0x7d, 0x3c, 0x42, 0x4b, 0x1a,
		0x9b, 0x27, 0x61, 0xd0, 0x8e, 0x55, 0x20, 0x00,
	};

	memcpy(out, base, 16);
	out[15] = (unsigned char)dev;
}

SIM_EXPORT int sim_current_device(void)
{
	return cur_dev;
}

SIM_EXPORT void sim_set_device(int dev)
{
	cur_dev = dev;
}

/* The primary context of dev, made at first use (a CONTEXT record). */
SIM_EXPORT int sim_context_made(int dev)
{
	return __atomic_load_n(&ctx_made[dev], __ATOMIC_ACQUIRE);
}

SIM_EXPORT uint32_t sim_context_id(int dev)
{
	int made;

	pthread_mutex_lock(&lock);
	made = ctx_made[dev];
	ctx_made[dev] = 1;
	pthread_mutex_unlock(&lock);
	if (!made)
		sim_driver_init();
	if (!made) {
		sim_log("{\"ev\":\"context\",\"context\":%d,\"device\":%d}",
			dev + 1, dev);
		if (tool && !torn_down)
			tool->context((uint32_t)dev + 1, (uint32_t)dev);
	}
	return (uint32_t)dev + 1;
}

/* Handle 0: the legacy default stream (id 7 on each device, as CUPTI
 * numbers it); 2: the thread's per-thread default stream. */
static struct stream *stream_of(int dev, uintptr_t handle)
{
	unsigned i;

	if (handle == 2)
		handle = 0x100000000ull | (uintptr_t)sim_tid();
	for (i = 0; i < n_streams; i++)
		if (streams[i].handle == handle && streams[i].dev == dev)
			return &streams[i];
	if (n_streams == SIM_MAX_STREAMS)
		return &streams[0];
	streams[n_streams].dev = dev;
	streams[n_streams].handle = handle;
	streams[n_streams].id = handle ? next_stream_id++ : 7;
	return &streams[n_streams++];
}

SIM_EXPORT uint32_t sim_stream_id(int dev, uintptr_t handle)
{
	uint32_t id;

	pthread_mutex_lock(&lock);
	id = stream_of(dev, handle)->id;
	pthread_mutex_unlock(&lock);
	return id;
}

SIM_EXPORT uintptr_t sim_stream_create(int dev)
{
	static uintptr_t next = 0x5000;
	uintptr_t h;

	pthread_mutex_lock(&lock);
	h = next += 0x10;
	stream_of(dev, h);
	pthread_mutex_unlock(&lock);
	return h;
}

SIM_EXPORT uint64_t sim_stream_tail(int dev, uintptr_t handle)
{
	uint64_t t;

	struct stream *s;

	pthread_mutex_lock(&lock);
	s = stream_of(dev, handle);
	t = s->q ? SIM_OPEN : s->tail;
	pthread_mutex_unlock(&lock);
	return t;
}

SIM_EXPORT void sim_stream_after(int dev, uintptr_t handle, uint64_t gpu)
{
	struct stream *s;

	struct pend *p;

	pthread_mutex_lock(&lock);
	s = stream_of(dev, handle);
	if (s->q) {
		p = pend_new(NULL, sim_gpu_now(), 0);
		p->not_before = gpu;
		enqueue(s, p);
	} else if (s->tail < gpu) {
		s->tail = gpu;
	}
	pthread_mutex_unlock(&lock);
}

/* ---- the GPU ---- */

SIM_EXPORT void simNextKernelDuration(uint64_t ns)
{
	next_kernel_dur = ns;
}

/* The program's choice, else a rule of the launch's shape. */
SIM_EXPORT uint64_t sim_take_kernel_duration(const uint32_t grid[3],
					     const uint32_t block[3])
{
	uint64_t d = next_kernel_dur;

	next_kernel_dur = 0;
	if (d)
		return d;
	return 1000 + 10ull * grid[0] * grid[1] * grid[2] +
	       block[0] / 32 * 100;
}

SIM_EXPORT void sim_next_programmatic(void)
{
	next_programmatic = 1;
}

/* When the op may start on its stream: once the stream is free; a kernel
 * launched with programmatic stream serialization once the kernel before
 * it triggers the launch (cudaTriggerProgrammaticLaunchCompletion), taken
 * to be half-way through it, so that it runs inside its predecessor or
 * past its end (cuda.h, CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_
 * SERIALIZATION: the grid's execution overlaps the previous kernel's). */
static uint64_t stream_ready(const struct stream *s, const struct sim_op *op,
			     int programmatic)
{
	if (programmatic && op->kind == SIM_KERNEL && s->last_kernel)
		return s->last_start + (s->last_end - s->last_start) / 2;
	return s->tail;
}

static __thread const volatile uint32_t *next_wait_flag;
static __thread uint32_t next_wait_value;

/* The next kernel this thread launches runs until *flag >= value (and at
 * least its duration): a kernel that spins on memory a peer or a proxy
 * thread writes, as NCCL's do. Work queued after it on its stream waits
 * for it. */
SIM_EXPORT void simNextKernelWaitsFor(const volatile uint32_t *flag,
				      uint32_t value)
{
	next_wait_flag = flag;
	next_wait_value = value;
}

SIM_EXPORT int sim_take_kernel_wait(const volatile uint32_t **flag,
				    uint32_t *value)
{
	*flag = next_wait_flag;
	*value = next_wait_value;
	next_wait_flag = NULL;
	return *flag != NULL;
}

static void log_op(const struct sim_op *op, uint64_t dur_ns)
{
	sim_log("{\"ev\":\"op\",\"kind\":\"%s\",\"name\":\"%s\",\"device\":%u,"
		"\"context\":%u,\"stream\":%u,\"corr\":%u,\"tid\":%ld,"
		"\"start_raw\":%llu,\"end_raw\":%llu,\"start_gpu\":%llu,"
		"\"end_gpu\":%llu,\"dur\":%llu,\"bytes\":%llu,\"graph\":%u}",
		op->kind == SIM_KERNEL ? "kernel" : op->kind == SIM_MEMCPY ?
		"memcpy" : "memset", op->name ? op->name : "",
		op->device, op->context, op->stream, op->corr, op->tid,
		(unsigned long long)sim_gpu_to_raw(op->start_gpu),
		(unsigned long long)sim_gpu_to_raw(op->end_gpu),
		(unsigned long long)op->start_gpu,
		(unsigned long long)op->end_gpu, (unsigned long long)dur_ns,
		(unsigned long long)op->bytes, op->graph_id);
}

/* The GPU works through each queue in order (lock held): an op starts
 * once the one before it ended and its launch reached the GPU; a waiting
 * kernel ends once its flag is set, a marker once its event's op ended.
 * An op's start is stored before its end, and its end last (CUPTI reads
 * them without the lock: an end of SIM_OPEN is an op still running). */
static int advance(struct stream *s, uint64_t now)
{
	struct pend *p;
	uint64_t start, end;

	while ((p = s->q)) {
		start = p->issued + LAUNCH_LATENCY_NS;
		if (start < s->tail)
			start = s->tail;
		if (start < p->not_before)
			start = p->not_before;
		if (p->flag && __atomic_load_n(p->flag, __ATOMIC_ACQUIRE) <
		    p->value) {
			if (p->op && p->op->start_gpu == SIM_OPEN)
				__atomic_store_n(&p->op->start_gpu, start,
						 __ATOMIC_RELEASE);
			return 1;
		}
		end = start + p->dur;
		if (p->flag && end < now)
			end = now;
		if (p->dep) {
			end = __atomic_load_n(&p->dep->end_gpu,
					      __ATOMIC_ACQUIRE);
			if (end == SIM_OPEN)
				return 1;
			if (end < start)
				end = start;
		}
		if (p->op) {
			if (p->op->start_gpu == SIM_OPEN)
				__atomic_store_n(&p->op->start_gpu, start,
						 __ATOMIC_RELEASE);
			else
				start = p->op->start_gpu;
			__atomic_store_n(&p->op->end_gpu, end,
					 __ATOMIC_RELEASE);
			log_op(p->op, end - start);
			s->last_start = start;
			s->last_end = end;
			s->last_kernel = p->op->kind == SIM_KERNEL;
		}
		s->tail = end;
		s->q = p->next;
		if (!s->q) {
			s->qt = &s->q;
			s->queued = NULL;
		}
		free(p);
	}
	return 0;
}

static pthread_cond_t engine_cv = PTHREAD_COND_INITIALIZER;
static int engine_on;

/* The GPU's own progress: every queue looked at each millisecond while
 * any holds work (the GPU spins on memory; its timing here is coarse). */
static void *engine(void *arg)
{
	struct timespec ms = { 0, 1000000 };
	unsigned i;
	int busy;

	(void)arg;
	pthread_mutex_lock(&lock);
	for (;;) {
		busy = 0;
		for (i = 0; i < n_streams; i++)
			if (streams[i].q)
				busy |= advance(&streams[i], sim_gpu_now());
		if (!busy) {
			pthread_cond_wait(&engine_cv, &lock);
			continue;
		}
		pthread_mutex_unlock(&lock);
		nanosleep(&ms, NULL);
		pthread_mutex_lock(&lock);
	}
	return NULL;
}

/* Lock held: p goes at the end of s's queue. */
static void enqueue(struct stream *s, struct pend *p)
{
	pthread_t t;

	if (!s->qt)
		s->qt = &s->q;
	p->next = NULL;
	*s->qt = p;
	s->qt = &p->next;
	if (p->op || p->dep)
		s->queued = p->op ? p->op : (struct sim_op *)p->dep;
	if (!engine_on) {
		sigset_t all, old;

		/* Signals stay with the program's threads. */
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		engine_on = pthread_create(&t, NULL, engine, NULL) == 0;
		if (engine_on)
			pthread_detach(t);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	advance(s, sim_gpu_now());
	pthread_cond_signal(&engine_cv);
}

static struct pend *pend_new(struct sim_op *op, uint64_t now, uint64_t dur)
{
	struct pend *p = calloc(1, sizeof(*p));

	if (!p)
		abort();
	p->op = op;
	p->issued = now;
	p->dur = dur;
	return p;
}

/* The op starts once its stream lets it and the launch has reached the
 * GPU, and runs for dur_ns in real time; behind a waiting kernel, once
 * that one ended. */
static struct sim_op *issue(struct sim_op *proto, uintptr_t handle,
			    uint64_t dur_ns, const volatile uint32_t *flag,
			    uint32_t value)
{
	struct sim_op *op = malloc(sizeof(*op));
	struct stream *s;
	struct pend *p;
	uint64_t now = sim_gpu_now(), ready;
	int programmatic = next_programmatic;

	if (!op)
		abort();
	*op = *proto;
	op->device = (uint32_t)cur_dev;
	op->context = sim_context_id(cur_dev);
	op->corr = sim_launch_corr();
	op->tid = sim_tid();
	next_programmatic = 0;
	pthread_mutex_lock(&lock);
	s = stream_of(cur_dev, handle);
	op->stream = s->id;
	if (s->q || flag) {
		op->start_gpu = op->end_gpu = SIM_OPEN;
		p = pend_new(op, now, dur_ns);
		p->flag = flag;
		p->value = value;
		enqueue(s, p);
		pthread_mutex_unlock(&lock);
		goto out;
	}
	ready = stream_ready(s, op, programmatic);
	op->start_gpu = now + LAUNCH_LATENCY_NS > ready ?
			now + LAUNCH_LATENCY_NS : ready;
	op->end_gpu = op->start_gpu + dur_ns;
	if (s->tail < op->end_gpu)
		s->tail = op->end_gpu;
	s->last_start = op->start_gpu;
	s->last_end = op->end_gpu;
	s->last_kernel = op->kind == SIM_KERNEL;
	pthread_mutex_unlock(&lock);
	log_op(op, dur_ns);
out:
	if (tool && !torn_down)
		tool->op(op);
	return op;
}

SIM_EXPORT struct sim_op *sim_issue(struct sim_op *proto, uintptr_t handle,
				    uint64_t dur_ns)
{
	return issue(proto, handle, dur_ns, NULL, 0);
}

SIM_EXPORT struct sim_op *sim_issue_waiting(struct sim_op *proto,
					    uintptr_t handle, uint64_t dur_ns,
					    const volatile uint32_t *flag,
					    uint32_t value)
{
	return issue(proto, handle, dur_ns, flag, value);
}

SIM_EXPORT void sim_sync_done(int type, uintptr_t handle, uint64_t start_gpu)
{
	struct sim_op *op = calloc(1, sizeof(*op));

	if (!op)
		abort();
	op->kind = SIM_SYNC;
	op->sync_type = type;
	op->device = (uint32_t)cur_dev;
	op->context = sim_context_id(cur_dev);
	op->corr = sim_launch_corr();
	op->tid = sim_tid();
	op->stream = handle == (uintptr_t)-1 ? (uint32_t)-1 :
		     sim_stream_id(cur_dev, handle);
	op->start_gpu = start_gpu;
	op->end_gpu = sim_gpu_now();
	sim_log("{\"ev\":\"op\",\"kind\":\"sync\",\"type\":%d,\"device\":%u,"
		"\"context\":%u,\"stream\":%d,\"corr\":%u,\"tid\":%ld,"
		"\"start_raw\":%llu,\"end_raw\":%llu,\"dur\":%llu}", type,
		op->device, op->context, (int)op->stream, op->corr, op->tid,
		(unsigned long long)sim_gpu_to_raw(op->start_gpu),
		(unsigned long long)sim_gpu_to_raw(op->end_gpu),
		(unsigned long long)(op->end_gpu - op->start_gpu));
	if (tool && !torn_down)
		tool->op(op);
}

static void sleep_until_gpu(uint64_t gpu)
{
	uint64_t now;
	struct timespec ts;

	while ((now = sim_gpu_now()) < gpu) {
		ts.tv_sec = 0;
		ts.tv_nsec = (long)(gpu - now > 1000000 ? 1000000 : gpu - now);
		nanosleep(&ts, NULL);
	}
}

/* Until no queue of dev (or only handle's, when one) holds work: the
 * work behind a waiting kernel ends when it does. */
static uint64_t wait_queues(int dev, const uintptr_t *handle)
{
	struct timespec ms = { 0, 1000000 };
	uint64_t last;
	unsigned i;
	int busy;

	for (;;) {
		busy = 0;
		last = 0;
		pthread_mutex_lock(&lock);
		for (i = 0; i < n_streams; i++) {
			if (streams[i].dev != dev || (handle &&
			    streams[i].handle != *handle))
				continue;
			busy |= streams[i].q != NULL;
			if (streams[i].tail > last)
				last = streams[i].tail;
		}
		pthread_mutex_unlock(&lock);
		if (!busy)
			return last;
		nanosleep(&ms, NULL);
	}
}

SIM_EXPORT void sim_wait_stream(int dev, uintptr_t handle)
{
	uintptr_t h;

	pthread_mutex_lock(&lock);
	h = stream_of(dev, handle)->handle;
	pthread_mutex_unlock(&lock);
	sleep_until_gpu(wait_queues(dev, &h));
}

SIM_EXPORT void sim_wait_device(int dev)
{
	sleep_until_gpu(wait_queues(dev, NULL));
}

/* The op an event recorded on the stream now waits for, when the stream
 * holds queued work (else NULL: sim_stream_tail is the time). */
SIM_EXPORT const struct sim_op *sim_stream_last(int dev, uintptr_t handle)
{
	const struct sim_op *op;

	pthread_mutex_lock(&lock);
	op = stream_of(dev, handle)->queued;
	pthread_mutex_unlock(&lock);
	return op;
}

/* Work queued on the stream from now on waits until op has ended. */
SIM_EXPORT void sim_stream_after_op(int dev, uintptr_t handle,
				    const struct sim_op *op)
{
	struct pend *p = pend_new(NULL, sim_gpu_now(), 0);

	p->dep = op;
	pthread_mutex_lock(&lock);
	enqueue(stream_of(dev, handle), p);
	pthread_mutex_unlock(&lock);
}

/* ---- modules ---- */

struct kname {
	const void *key;
	char *name;
	struct kname *next;
};

struct module {
	struct kname *names;
	struct module *next;
	int runtime;
};

static struct module *modules;
static int n_modules, n_runtime;
/* Names of unloaded modules, reused for the next ones: a stale pointer
 * to a name then shows another kernel's name, as after a real unload. */
static char *spare[64];
static unsigned n_spare;

SIM_EXPORT void *sim_module_new(int runtime)
{
	struct module *m = calloc(1, sizeof(*m));

	if (!m)
		abort();
	pthread_mutex_lock(&lock);
	m->next = modules;
	m->runtime = runtime;
	modules = m;
	n_modules++;
	n_runtime += runtime;
	pthread_mutex_unlock(&lock);
	return m;
}

static char *name_copy(const char *name)
{
	size_t len = strlen(name) + 1;
	char *p = n_spare ? spare[--n_spare] : NULL;

	if (!p || malloc_usable_size(p) < len) {
		free(p);
		p = malloc(len < 256 ? 256 : len);
		if (!p)
			abort();
	}
	memcpy(p, name, len);
	return p;
}

SIM_EXPORT const char *sim_module_add(void *mp, const void *key,
				      const char *name)
{
	struct module *m = mp;
	struct kname *k = malloc(sizeof(*k));

	if (!k)
		abort();
	pthread_mutex_lock(&lock);
	k->key = key;
	k->name = name_copy(name);
	k->next = m->names;
	m->names = k;
	pthread_mutex_unlock(&lock);
	return k->name;
}

SIM_EXPORT const char *sim_module_find(const void *key)
{
	struct module *m;
	struct kname *k;
	const char *name = NULL;

	pthread_mutex_lock(&lock);
	for (m = modules; m && !name; m = m->next)
		for (k = m->names; k; k = k->next)
			if (k->key == key) {
				name = k->name;
				break;
			}
	pthread_mutex_unlock(&lock);
	return name;
}

SIM_EXPORT int sim_module_count(void)
{
	return n_modules;
}

/* Unloading: the names go (overwritten, then reused); the last module of
 * the process tears CUDA down, after which nothing reaches a tool. */
SIM_EXPORT void sim_module_free(void *mp)
{
	struct module *m = mp, **pp;
	struct kname *k, *next;
	int last, runtime = m->runtime;

	if (tool && !torn_down && tool->module_unload)
		tool->module_unload();

	pthread_mutex_lock(&lock);
	for (pp = &modules; *pp; pp = &(*pp)->next)
		if (*pp == m) {
			*pp = m->next;
			break;
		}
	for (k = m->names; k; k = next) {
		next = k->next;
		memset(k->name, 'X', 8);
		if (n_spare < 64)
			spare[n_spare++] = k->name;
		else
			free(k->name);
		free(k);
	}
	free(m);
	n_modules--;
	last = runtime && --n_runtime == 0;
	pthread_mutex_unlock(&lock);
	if (!last)
		return;
	sim_log("{\"ev\":\"teardown\",\"raw\":%llu}",
		(unsigned long long)sim_raw_now());
	if (tool && !torn_down)
		tool->teardown();
	torn_down = 1;
}
