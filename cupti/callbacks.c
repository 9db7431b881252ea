/* cupti/: the CUPTI client: GPU activity, API callbacks, devices, GPU
 * tracks; on util/ .. output/. */
/* CUPTI's API callbacks, on the program's threads, inside CUDA calls.
 *
 * A call a preload hook is timing (t->in_hook) only hands over its
 * correlation id. A call no hook sees (static cudart, the driver API of
 * Triton and JAX, runtime entry points tprof does not hook) is timed here
 * from its enter to its exit callback, so it is recorded exactly once;
 * driver calls made inside a runtime call that is already recorded are
 * skipped for the same reason.
 */
#include <stdlib.h>
#include <string.h>

#include <cupti.h>

#include "record/api.h"
#include "stacks/stacks.h"
#include "record/thread.h"
#include "cupti.h"

/* Tables as large as an API table: callback ids added after the headers
 * tprof was built with (a newer CUPTI) still have a slot. */
#define RT_N (1u << TP_API_TABLE_SHIFT)
#define DRV_N (1u << TP_API_TABLE_SHIFT)
/* Every id of the headers tprof was built with is asked for; past them,
 * ids a newer CUPTI added are asked for until this many in a row have no
 * name. */
#define NAME_MISSES 32

static struct tp_api rt_apis[RT_N];
static struct tp_api drv_apis[DRV_N];
static unsigned char rt_kind[RT_N], drv_kind[DRV_N];
static unsigned char rt_graph[RT_N], drv_graph[DRV_N];

struct what {
	const char *word;	/* in the name, after the "cuda"/"cu" prefix */
	unsigned char kind;
};

/* What a call does, from words in its name: it puts work on the GPU
 * (a launch of a kernel, a graph or a host function), copies or sets
 * memory, allocates or frees it, or waits. These are the calls a trace
 * needs and whose callbacks are worth their cost; every id the loaded
 * CUPTI names is matched, so __cudaLaunchKernel_v13000 (CUDA 13's
 * <<<>>>), cudaLaunchKernelExC, cudaMemcpyWithAttributesAsync or a
 * call added later are covered without a list of names. */
static const struct what whats[] = {
	{ "Launch", TP_KIND_LAUNCH },
	{ "Memcpy", TP_KIND_MEMCPY }, { "Memset", TP_KIND_MEMCPY },
	{ "MemPrefetch", TP_KIND_MEMCPY },
	{ "Malloc", TP_KIND_ALLOC }, { "Free", TP_KIND_ALLOC },
	{ "HostAlloc", TP_KIND_ALLOC }, { "MemAlloc", TP_KIND_ALLOC },
	{ "Synchronize", TP_KIND_SYNC },
	{ "StreamWaitEvent", TP_KIND_OTHER }, { "EventRecord", TP_KIND_OTHER },
	{ NULL, 0 },
};

/* The name without leading underscores and the API's prefix:
 * "__cudaLaunchKernel_v13000" -> "LaunchKernel_v13000". */
static const char *verb(const char *name, int rt)
{
	const char *prefix = rt ? "cuda" : "cu";

	while (*name == '_')
		name++;
	if (!strncmp(name, prefix, strlen(prefix)))
		name += strlen(prefix);
	return name;
}

static const struct what *classify(const char *name, int rt)
{
	const char *v = verb(name, rt);
	const struct what *w;

	/* Getters and setters of launch or memory attributes, and graph
	 * building (cudaGraphAddMemcpyNode), do nothing on the GPU. */
	if (!strncmp(v, "Get", 3) || !strncmp(v, "Set", 3) ||
	    strstr(v, "Attribute") || strstr(v, "Occupancy") ||
	    (strstr(v, "Graph") && !strstr(v, "GraphLaunch")))
		return NULL;
	for (w = whats; w->word; w++)
		if (strstr(v, w->word))
			return w;
	return NULL;
}

/* cudaLaunchKernel_v7000 -> cudaLaunchKernel, the name the hooks use;
 * cudaLaunchKernel_ptsz_v7000 -> cudaLaunchKernel_ptsz;
 * __cudaLaunchKernel_v13000 -> cudaLaunchKernel (as the hook names
 * the launch <<<>>> compiles to). */
static char *shown_name(const char *name)
{
	char *s, *v;

	while (name[0] == '_' && name[1] == '_')
		name += 2;
	s = strdup(name);
	if (!s)
		return NULL;
	v = strrchr(s, '_');
	if (v && v[1] == 'v' && v[2] && strspn(v + 2, "0123456789") ==
	    strlen(v + 2))
		*v = '\0';
	return s;
}

static void name_callback(int rt, uint32_t cbid, const char *cupti_name,
			  const struct what *w)
{
	struct tp_api *api = rt ? rt_apis : drv_apis;

	if (api[cbid].name)
		return;
	api[cbid].name = shown_name(cupti_name);
	api[cbid].cat = rt ? "cuda_runtime" : "cuda_driver";
	(rt ? rt_kind : drv_kind)[cbid] = w->kind;
	(rt ? rt_graph : drv_graph)[cbid] = strstr(cupti_name, "GraphLaunch") != NULL;
}

static unsigned enable_domain(CUpti_SubscriberHandle sub,
			      CUpti_CallbackDomain dom, unsigned n)
{
	int rt = dom == CUPTI_CB_DOMAIN_RUNTIME_API;
	unsigned known = rt ? CUPTI_RUNTIME_TRACE_CBID_SIZE :
			      CUPTI_DRIVER_TRACE_CBID_SIZE;
	const struct what *w;
	unsigned cbid, on = 0, misses = 0;
	const char *name;

	for (cbid = 1; cbid < n && (cbid < known || misses < NAME_MISSES);
	     cbid++) {
		name = NULL;
		if (tp_cupti.get_callback_name(dom, cbid, &name) !=
		    CUPTI_SUCCESS || !name) {
			misses++;
			continue;
		}
		misses = 0;
		w = classify(name, rt);
		if (!w)
			continue;
		name_callback(rt, cbid, name, w);
		if (tp_cupti.enable_callback(1, sub, dom, cbid) ==
		    CUPTI_SUCCESS)
			on++;
	}
	return on;
}

/* ---- modules unloaded ----
 *
 * Kernel names die with their module: records naming them are flushed
 * and converted before it goes (finish.c). That flush is made in the
 * enter callback of the call that unloads, an API callback: never in
 * CUPTI's RESOURCE callback for the unload (MODULE_UNLOAD_STARTING),
 * where cupti_activity.h forbids cuptiActivityFlushAll ("Do not call
 * this function from activity buffer callbacks or any other
 * non-API-trace callbacks, including callbacks related to resource").
 * The calls that unload: the driver's cuModuleUnload and cuLibraryUnload
 * (what a JIT, a static runtime in cuBLAS, cuDNN or NCCL at its exit,
 * and the shared runtime underneath, call), the runtime's
 * cudaLibraryUnload, and CUDA 13's __cudaUnregisterFatBinary (a runtime
 * API call from 13.0: the runtime's own unload at exit). */
static const struct {
	int rt;
	const char *name;	/* without the version suffix */
} unloads[] = {
	{ 0, "cuModuleUnload" }, { 0, "cuLibraryUnload" },
	{ 1, "cudaLibraryUnload" }, { 1, "__cudaUnregisterFatBinary" },
};
static unsigned char rt_unload[RT_N], drv_unload[DRV_N];

static int unload_name(int rt, const char *name)
{
	size_t n;
	unsigned i;

	for (i = 0; i < sizeof(unloads) / sizeof(unloads[0]); i++) {
		n = strlen(unloads[i].name);
		if (unloads[i].rt == rt && !strncmp(name, unloads[i].name, n) &&
		    (!name[n] || (name[n] == '_' && name[n + 1] == 'v')))
			return 1;
	}
	return 0;
}

/* By name, as the loaded CUPTI gives them (ids differ across versions). */
static unsigned enable_unloads(CUpti_SubscriberHandle sub)
{
	CUpti_CallbackDomain doms[2] = { CUPTI_CB_DOMAIN_RUNTIME_API,
					 CUPTI_CB_DOMAIN_DRIVER_API };
	unsigned d, cbid, on = 0, n;
	const char *name;

	for (d = 0; d < 2; d++) {
		int rt = doms[d] == CUPTI_CB_DOMAIN_RUNTIME_API;

		n = rt ? CUPTI_RUNTIME_TRACE_CBID_SIZE :
			 CUPTI_DRIVER_TRACE_CBID_SIZE;
		for (cbid = 1; cbid < n + NAME_MISSES &&
			       cbid < (rt ? RT_N : DRV_N); cbid++) {
			name = NULL;
			if (tp_cupti.get_callback_name(doms[d], cbid, &name) !=
			    CUPTI_SUCCESS || !name || !unload_name(rt, name))
				continue;
			(rt ? rt_unload : drv_unload)[cbid] = 1;
			if (tp_cupti.enable_callback(1, sub, doms[d], cbid) ==
			    CUPTI_SUCCESS)
				on++;
		}
	}
	return on;
}

/* The outermost unload of this thread (the runtime's unload makes the
 * driver's) flushes, once. */
static __thread unsigned unloading;

static void on_unload(int rt, CUpti_CallbackId cbid, int site)
{
	if (!(rt ? rt_unload : drv_unload)[cbid])
		return;
	if (site == CUPTI_API_ENTER && !unloading++)
		tp_cupti_module_unloading();
	else if (site == CUPTI_API_EXIT && unloading)
		unloading--;
}

unsigned tp_cupti_enable_callbacks(CUpti_SubscriberHandle sub)
{
	unsigned on;

	on = enable_domain(sub, CUPTI_CB_DOMAIN_RUNTIME_API, RT_N) +
	     enable_domain(sub, CUPTI_CB_DOMAIN_DRIVER_API, DRV_N) +
	     enable_unloads(sub);
	tp_api_register(TP_CUPTI_RUNTIME_TABLE, rt_apis, RT_N);
	tp_api_register(TP_CUPTI_DRIVER_TABLE, drv_apis, DRV_N);
	return on;
}

const char *tp_cupti_callback_name(int rt, uint32_t cbid)
{
	if (cbid >= (rt ? RT_N : DRV_N))
		return NULL;
	return (rt ? rt_apis : drv_apis)[cbid].name;
}

static void record(struct tp_thread *t, uint16_t api, unsigned kind,
		   uint64_t t0, const CUpti_CallbackData *d)
{
	struct tp_rec r = { .t = t, .t0 = t0 };
	struct tp_event *e;
	int32_t ret = d->functionReturnValue ?
		*(const int32_t *)d->functionReturnValue : 0;

	e = tp_rec_end(&r, api, ret);
	if (!e)
		return;
	e->corr = d->correlationId;
	tp_stack_maybe(e, kind);
	tp_rec_commit(&r);
}

/* correlationData carries the enter time to the exit callback of the same
 * call; 0 there means the call is not ours to record. */
static void on_api(struct tp_thread *t, int rt, CUpti_CallbackId cbid,
		   const CUpti_CallbackData *d)
{
	unsigned table = rt ? TP_CUPTI_RUNTIME_TABLE : TP_CUPTI_DRIVER_TABLE;
	const struct tp_api *apis = rt ? rt_apis : drv_apis;

	if (d->callbackSite == CUPTI_API_ENTER) {
		*d->correlationData = 0;
		/* The hooked call's id: its runtime callback's, else its
		 * first driver callback's. A libcudart newer than the
		 * loaded CUPTI (a pip cudart 12.8 beside a toolkit CUPTI
		 * 12.6) reports calls CUPTI has no id for, __cudaLaunchKernel
		 * among them: CUPTI then sees only the driver call inside,
		 * and the GPU work carries that call's id. */
		if (t->in_hook) {
			if (!t->corr)
				t->corr = d->correlationId;
			return;
		}
		/* Inside a call recorded here already: its own work. */
		if (t->cb_depth || !apis[cbid].name)
			return;
		if (!(__atomic_load_n(&tp_recording, __ATOMIC_RELAXED) &
		      TP_SRC_CUDA))
			return;
		t->cb_depth++;
		*d->correlationData = tp_ticks() | 1;
		return;
	}
	if (!*d->correlationData)
		return;
	t->cb_depth--;
	record(t, (uint16_t)(table << TP_API_TABLE_SHIFT | cbid),
	       rt ? rt_kind[cbid] : drv_kind[cbid], *d->correlationData, d);
}

/* Threads inside a CUDA call that CUPTI reports to us (their enter
 * callback seen, their exit not yet), for the detach at the end of the
 * last window: it runs only when the detaching thread is the one inside. */
static __thread unsigned in_cuda __attribute__((tls_model("initial-exec")));

/* tprof's own CUDA calls (the devices' synchronization at exit): their
 * records are not the program's. */
static uint32_t own[16];
static unsigned n_own;

void tp_cupti_own_call(uint32_t corr)
{
	unsigned i = __atomic_fetch_add(&n_own, 1, __ATOMIC_RELAXED);

	__atomic_store_n(&own[i % 16], corr, __ATOMIC_RELEASE);
}

int tp_cupti_is_own(uint32_t corr)
{
	unsigned i;

	for (i = 0; corr && i < 16; i++)
		if (__atomic_load_n(&own[i], __ATOMIC_ACQUIRE) == corr)
			return 1;
	return 0;
}

static void count_enter(int rt, CUpti_CallbackId cbid)
{
	if (!in_cuda++)
		__atomic_add_fetch(&tp_cupti_inside, 1, __ATOMIC_SEQ_CST);
	if (__builtin_expect(__atomic_load_n(&tp_cupti_detach_wanted,
					     __ATOMIC_RELAXED), 0))
		tp_cupti_note_enter();
	if ((rt ? rt_graph : drv_graph)[cbid])
		__atomic_store_n(&tp_cupti_graphs, 1, __ATOMIC_RELAXED);
}

static void count_exit(void)
{
	/* An exit whose enter came before tprof subscribed: not counted. */
	if (in_cuda && !--in_cuda)
		__atomic_sub_fetch(&tp_cupti_inside, 1, __ATOMIC_SEQ_CST);
}

void CUPTIAPI tp_cupti_on_callback(void *userdata, CUpti_CallbackDomain dom,
				   CUpti_CallbackId cbid, const void *data)
{
	const CUpti_CallbackData *d = data;
	struct tp_thread *t;
	int rt = dom == CUPTI_CB_DOMAIN_RUNTIME_API;

	(void)userdata;
	if (!rt && dom != CUPTI_CB_DOMAIN_DRIVER_API)
		return;
	if (cbid >= (rt ? RT_N : DRV_N) || !d)
		return;
	if (d->callbackSite == CUPTI_API_ENTER)
		count_enter(rt, cbid);
	on_unload(rt, cbid, d->callbackSite);
	t = tp_self;
	if (!t)
		t = tp_thread_attach();
	if (t && !t->internal && d->correlationData)
		on_api(t, rt, cbid, d);
	else if (t && t->internal && !t->unmapped &&
		 d->callbackSite == CUPTI_API_ENTER)
		tp_cupti_own_call(d->correlationId);
	if (d->callbackSite != CUPTI_API_EXIT)
		return;
	tp_cupti_exit_check();
	/* Still counted inside: CUPTI's recommended place to detach. */
	if (__builtin_expect(__atomic_load_n(&tp_cupti_detach_wanted,
					     __ATOMIC_RELAXED), 0))
		tp_cupti_detach_here(in_cuda);
	count_exit();
}
