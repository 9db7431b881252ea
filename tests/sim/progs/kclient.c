/* The program's own profiler, as torch.profiler's Kineto uses CUPTI (a
 * library of the program, as libtorch is): no cuptiSubscribe unless
 * asked, process-wide buffer callbacks with buffers of its own guarded by
 * canaries, kinds enabled and disabled. With KINETO_LIKE_FIRST=1 it
 * starts in its constructor, which runs before a preloaded library's
 * (and with KINETO_LIKE_SUBSCRIBE=1 also subscribes there, alone).
 * With KINETO_LIKE_TS=1 it registers a timestamp callback of its own
 * first, as Kineto does (a clock of its own: CLOCK_MONOTONIC ns, 7e15
 * ahead, in no one else's unit). With KINETO_LIKE_DLSYM=1 it reaches
 * libcupti through a handle of its own (dlopen, dlsym), as XLA's profiler
 * does: none of its calls goes through symbols a preloaded library
 * interposes. */
#include <cupti.h>
#include <dlfcn.h>
#include <time.h>

static uint64_t CUPTIAPI my_clock(void);
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUF (1 << 16)
#define CANARY 0xC0FFEEC0FFEEULL
/* Kernel records received, by name. */
static struct {
	const char *name;
	int n;
} got[] = { { "_Z6beforePf", 0 }, { "_Z6duringPf", 0 }, { "_Z5afterPf", 0 } };
static int canaries_ok = 1, bufs, foreign, own_clock, bad_clock;
static CUpti_SubscriberHandle sub;

/* The CUPTI calls it makes: the linked symbols, or its own handle's. */
static struct {
	CUptiResult (*ts)(CUpti_TimestampCallbackFunc);
	CUptiResult (*reg)(CUpti_BuffersCallbackRequestFunc,
			   CUpti_BuffersCallbackCompleteFunc);
	CUptiResult (*enable)(CUpti_ActivityKind);
	CUptiResult (*disable)(CUpti_ActivityKind);
	CUptiResult (*subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc,
				 void *);
	CUptiResult (*domain)(uint32_t, CUpti_SubscriberHandle,
			      CUpti_CallbackDomain);
	CUptiResult (*flush)(uint32_t);
	CUptiResult (*next)(uint8_t *, size_t, CUpti_Activity **);
} C;

static void resolve(void)
{
	const char *m = getenv("KINETO_LIKE_DLSYM");
	void *h;

	C.ts = cuptiActivityRegisterTimestampCallback;
	C.reg = cuptiActivityRegisterCallbacks;
	C.enable = cuptiActivityEnable;
	C.disable = cuptiActivityDisable;
	C.subscribe = cuptiSubscribe;
	C.domain = cuptiEnableDomain;
	C.flush = cuptiActivityFlushAll;
	C.next = cuptiActivityGetNextRecord;
	if (!m || *m != '1')
		return;
	h = dlopen("libcupti.so.13", RTLD_NOW | RTLD_NOLOAD);
	if (!h)
		h = dlopen("libcupti.so.12", RTLD_NOW | RTLD_NOLOAD);
	if (!h)
		return;
	*(void **)&C.ts = dlsym(h, "cuptiActivityRegisterTimestampCallback");
	*(void **)&C.reg = dlsym(h, "cuptiActivityRegisterCallbacks");
	*(void **)&C.enable = dlsym(h, "cuptiActivityEnable");
	*(void **)&C.disable = dlsym(h, "cuptiActivityDisable");
	*(void **)&C.subscribe = dlsym(h, "cuptiSubscribe");
	*(void **)&C.domain = dlsym(h, "cuptiEnableDomain");
	*(void **)&C.flush = dlsym(h, "cuptiActivityFlushAll");
	*(void **)&C.next = dlsym(h, "cuptiActivityGetNextRecord");
}

static void CUPTIAPI request(uint8_t **b, size_t *size, size_t *max)
{
	uint64_t *p = malloc(BUF + 16);

	p[0] = CANARY;
	memcpy((uint8_t *)p + 8 + BUF, &p[0], 8);
	*b = (uint8_t *)(p + 1);
	*size = BUF;
	*max = 0;
	bufs++;
}

static void CUPTIAPI complete(CUcontext c, uint32_t s, uint8_t *b,
			      size_t size, size_t valid)
{
	uint64_t *p = (uint64_t *)b - 1, tail;
	CUpti_Activity *r = NULL;

	(void)c, (void)s;
	if (size != BUF) {	/* not one of ours: a real client crashes */
		foreign++;
		return;
	}
	memcpy(&tail, b + BUF, 8);
	if (p[0] != CANARY || tail != CANARY)
		canaries_ok = 0;
	while (C.next(b, valid, &r) == CUPTI_SUCCESS) {
		const char *name = ((CUpti_ActivityKernel10 *)r)->name;
		uint64_t start = ((CUpti_ActivityKernel10 *)r)->start;
		unsigned i;

		if (r->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || !name)
			continue;
		/* In its own clock: ended within the last minute. */
		if (own_clock && (start > my_clock() ||
				  my_clock() - start > 60000000000ull))
			bad_clock++;
		for (i = 0; i < sizeof(got) / sizeof(got[0]); i++)
			if (!strcmp(name, got[i].name))
				got[i].n++;
	}
	free(p);
}

/* When subscribed: runtime API callbacks, each call's correlationData
 * slot carrying a mark from its enter to its exit (Kineto keeps its
 * own data there); a mark changed in between is counted. */
static int cb_calls, cb_bad;

static void CUPTIAPI on_cb(void *u, CUpti_CallbackDomain d,
			   CUpti_CallbackId id, const void *data)
{
	const CUpti_CallbackData *c = data;
	uint64_t mark = 0x6b696e65746f0000ull | (c->correlationId & 0xffff);

	(void)u, (void)id;
	if (d != CUPTI_CB_DOMAIN_RUNTIME_API || !c->correlationData)
		return;
	if (c->callbackSite == CUPTI_API_ENTER) {
		*c->correlationData = mark;
		return;
	}
	cb_calls++;
	if (*c->correlationData != mark)
		cb_bad++;
}

static uint64_t CUPTIAPI my_clock(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return 7000000000000000ull + (uint64_t)t.tv_sec * 1000000000ull +
	       (uint64_t)t.tv_nsec;
}

void kclient_start(int subscribe)
{
	const char *ts = getenv("KINETO_LIKE_TS");

	resolve();
	if (ts && *ts == '1') {
		C.ts(my_clock);
		own_clock = 1;
	}
	C.reg(request, complete);
	C.enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	if (!subscribe)
		return;
	printf("subscribe %d\n", (int)C.subscribe(&sub, on_cb, NULL));
	C.domain(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API);
}

void kclient_stop(void)
{
	C.flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	C.disable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
}

void kclient_report(void)
{
	unsigned i;

	for (i = 0; i < sizeof(got) / sizeof(got[0]); i++)
		printf("got %s %d\n", got[i].name, got[i].n);
	printf("canaries_ok %d\nclient_buffers %d\nforeign_buffers %d\n",
	       canaries_ok, bufs, foreign);
	printf("bad_clock %d\ncb_calls %d\ncb_bad %d\n", bad_clock, cb_calls,
	       cb_bad);
}

__attribute__((constructor)) static void early(void)
{
	const char *m = getenv("KINETO_LIKE_FIRST");

	const char *sub = getenv("KINETO_LIKE_SUBSCRIBE");

	if (m && *m == '1')
		kclient_start(sub && *sub == '1');
}
