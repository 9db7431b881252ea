/* cupti/: the CUPTI client: GPU activity, API callbacks, devices, GPU
 * tracks; on trace/ .. output/. */
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

#include "trace/api.h"
#include "stacks/stacks.h"
#include "trace/thread.h"
#include "cupti.h"

#define RT_N CUPTI_RUNTIME_TRACE_CBID_SIZE
#define DRV_N CUPTI_DRIVER_TRACE_CBID_SIZE

_Static_assert(RT_N <= 1 << TP_API_TABLE_SHIFT, "runtime cbids fit a table");
_Static_assert(DRV_N <= 1 << TP_API_TABLE_SHIFT, "driver cbids fit a table");

static struct tp_api rt_apis[RT_N];
static struct tp_api drv_apis[DRV_N];
static unsigned char rt_kind[RT_N], drv_kind[DRV_N];

struct prefix {
	const char *p;
	unsigned char kind;
};

/* Calls that put work on the GPU, wait for it or change its memory: the
 * ones a trace needs and whose callbacks are worth their cost. */
static const struct prefix rt_prefixes[] = {
	{ "cudaLaunch", TP_KIND_LAUNCH }, { "cudaGraphLaunch", TP_KIND_LAUNCH },
	{ "cudaMemcpy", TP_KIND_MEMCPY }, { "cudaMemset", TP_KIND_MEMCPY },
	{ "cudaMemPrefetch", TP_KIND_MEMCPY },
	{ "cudaMalloc", TP_KIND_ALLOC }, { "cudaFree", TP_KIND_ALLOC },
	{ "cudaHostAlloc", TP_KIND_ALLOC },
	{ "cudaDeviceSynchronize", TP_KIND_SYNC },
	{ "cudaStreamSynchronize", TP_KIND_SYNC },
	{ "cudaEventSynchronize", TP_KIND_SYNC },
	{ "cudaStreamWaitEvent", TP_KIND_OTHER },
	{ "cudaEventRecord", TP_KIND_OTHER },
	{ NULL, 0 },
};

static const struct prefix drv_prefixes[] = {
	{ "cuLaunch", TP_KIND_LAUNCH }, { "cuGraphLaunch", TP_KIND_LAUNCH },
	{ "cuMemcpy", TP_KIND_MEMCPY }, { "cuMemset", TP_KIND_MEMCPY },
	{ "cuMemAlloc", TP_KIND_ALLOC }, { "cuMemFree", TP_KIND_ALLOC },
	{ "cuCtxSynchronize", TP_KIND_SYNC },
	{ "cuStreamSynchronize", TP_KIND_SYNC },
	{ "cuEventSynchronize", TP_KIND_SYNC },
	{ "cuStreamWaitEvent", TP_KIND_OTHER },
	{ "cuEventRecord", TP_KIND_OTHER },
	{ NULL, 0 },
};

static const struct prefix *match(const struct prefix *p, const char *name)
{
	for (; p->p; p++)
		if (!strncmp(name, p->p, strlen(p->p)))
			return p;
	return NULL;
}

/* cudaLaunchKernel_v7000 -> cudaLaunchKernel, the name the hooks use;
 * cudaLaunchKernel_ptsz_v7000 -> cudaLaunchKernel_ptsz. */
static char *shown_name(const char *name)
{
	char *s = strdup(name), *v;

	if (!s)
		return NULL;
	v = strrchr(s, '_');
	if (v && v[1] == 'v' && v[2] && strspn(v + 2, "0123456789") ==
	    strlen(v + 2))
		*v = '\0';
	return s;
}

static void name_callback(CUpti_CallbackDomain dom, uint32_t cbid,
			  const char *cupti_name)
{
	int rt = dom == CUPTI_CB_DOMAIN_RUNTIME_API;
	struct tp_api *api = rt ? rt_apis : drv_apis;
	unsigned char *kind = rt ? rt_kind : drv_kind;
	const struct prefix *p;

	if (cbid >= (rt ? RT_N : DRV_N) || api[cbid].name)
		return;
	p = match(rt ? rt_prefixes : drv_prefixes, cupti_name);
	api[cbid].name = shown_name(cupti_name);
	api[cbid].cat = rt ? "cuda_runtime" : "cuda_driver";
	kind[cbid] = p ? p->kind : TP_KIND_OTHER;
}

static unsigned enable_domain(CUpti_SubscriberHandle sub,
			      CUpti_CallbackDomain dom, unsigned n,
			      const struct prefix *prefixes)
{
	const char *name;
	unsigned cbid, on = 0;

	for (cbid = 1; cbid < n; cbid++) {
		name = NULL;
		if (tp_cupti.get_callback_name(dom, cbid, &name) !=
		    CUPTI_SUCCESS || !name || !match(prefixes, name))
			continue;
		name_callback(dom, cbid, name);
		if (tp_cupti.enable_callback(1, sub, dom, cbid) ==
		    CUPTI_SUCCESS)
			on++;
	}
	return on;
}

unsigned tp_cupti_enable_callbacks(CUpti_SubscriberHandle sub)
{
	unsigned on;

	on = enable_domain(sub, CUPTI_CB_DOMAIN_RUNTIME_API, RT_N,
			   rt_prefixes) +
	     enable_domain(sub, CUPTI_CB_DOMAIN_DRIVER_API, DRV_N,
			   drv_prefixes);
	tp_api_register(TP_CUPTI_RUNTIME_TABLE, rt_apis, RT_N);
	tp_api_register(TP_CUPTI_DRIVER_TABLE, drv_apis, DRV_N);
	return on;
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
		if (t->in_hook) {
			if (rt && !t->corr)
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

void CUPTIAPI tp_cupti_on_callback(void *userdata, CUpti_CallbackDomain dom,
				   CUpti_CallbackId cbid, const void *data)
{
	struct tp_thread *t;
	int rt = dom == CUPTI_CB_DOMAIN_RUNTIME_API;

	(void)userdata;
	if (!rt && dom != CUPTI_CB_DOMAIN_DRIVER_API)
		return;
	if (cbid >= (rt ? RT_N : DRV_N) || !data ||
	    !((const CUpti_CallbackData *)data)->correlationData)
		return;
	t = tp_self;
	if (!t)
		t = tp_thread_attach();
	if (!t || t->internal)
		return;
	on_api(t, rt, cbid, data);
}
