/* NVTX calls for test_nvtx.py, through the real NVTX v3 header-only
 * implementation (which loads the injection named by
 * NVTX_INJECTION64_PATH). Prints the levels push/pop return, one per line,
 * for the test to compare with NVTX's contract. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>

#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>

static nvtxRangeId_t crossing;

static void *ender(void *arg)
{
	(void)arg;
	nvtxRangeEnd(crossing);
	return NULL;
}

static void *worker(void *arg)
{
	(void)arg;
	nvtxRangePushA("worker range");
	nvtxRangePop();
	return NULL;
}

static nvtxEventAttributes_t attrs(const char *msg)
{
	nvtxEventAttributes_t a;

	memset(&a, 0, sizeof(a));
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.messageType = NVTX_MESSAGE_TYPE_ASCII;
	a.message.ascii = msg;
	return a;
}

static void basic(void)
{
	nvtxEventAttributes_t a = attrs("ex range");
	void *p = NULL;

	printf("push outer %d\n", nvtxRangePushA("outer"));
	printf("push inner %d\n", nvtxRangePushA("inner \"quoted\"\n"));
	cudaMalloc(&p, 256);
	printf("pop inner %d\n", nvtxRangePop());
	cudaFree(p);
	nvtxNameCategoryA(5, "cat five");
	a.colorType = NVTX_COLOR_ARGB;
	a.color = 0xff12ab34;
	a.category = 5;
	a.payloadType = NVTX_PAYLOAD_TYPE_INT64;
	a.payload.llValue = -42;
	nvtxRangePushEx(&a);
	a = attrs("ex double");
	a.payloadType = NVTX_PAYLOAD_TYPE_DOUBLE;
	a.payload.dValue = 2.5;
	a.category = 9;
	nvtxMarkEx(&a);
	nvtxRangePop();
	nvtxMarkA("a mark");
	nvtxRangePushW(L"wide \u00e9\u4e2d");
	nvtxRangePop();
	printf("pop outer %d\n", nvtxRangePop());
	printf("pop extra %d\n", nvtxRangePop());
	printf("pop extra %d\n", nvtxRangePop());
}

static void domains(void)
{
	nvtxDomainHandle_t d = nvtxDomainCreateA("my domain");
	nvtxDomainHandle_t e = nvtxDomainCreateA("other");
	nvtxEventAttributes_t a = attrs("in domain");
	nvtxStringHandle_t reg = nvtxDomainRegisterStringA(d, "registered");

	printf("same domain %d\n", nvtxDomainCreateA("my domain") == d);
	nvtxDomainRangePushEx(d, &a);
	a = attrs(NULL);
	a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
	a.message.registered = reg;
	nvtxDomainRangePushEx(d, &a);
	nvtxDomainRangePop(d);
	nvtxDomainNameCategoryA(d, 7, "domain cat");
	a.category = 7;
	nvtxDomainMarkEx(d, &a);
	nvtxDomainRangePop(d);
	/* interleaved: d opens, e opens inside, d closes first */
	a = attrs("d outer");
	nvtxDomainRangePushEx(d, &a);
	a = attrs("e inner");
	nvtxDomainRangePushEx(e, &a);
	nvtxDomainRangePop(d);
	nvtxDomainRangePop(e);
	a = attrs("d async");
	nvtxDomainRangeEnd(d, nvtxDomainRangeStartEx(d, &a));
}

static void threads(void)
{
	pthread_t t;

	nvtxNameOsThreadA((uint32_t)gettid(), "renamed main");
	crossing = nvtxRangeStartA("crossing");
	pthread_create(&t, NULL, ender, NULL);
	pthread_join(t, NULL);
	pthread_create(&t, NULL, worker, NULL);
	pthread_join(t, NULL);
}

static void long_message(void)
{
	static char big[3000];

	memset(big, 'x', sizeof(big) - 1);
	nvtxRangePushA(big);
	nvtxRangePop();
}

static void many(int n)
{
	int i;

	for (i = 0; i < n; i++) {
		nvtxRangePushA("loop");
		nvtxRangePop();
	}
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "all";

	if (!strcmp(mode, "all") || !strcmp(mode, "basic"))
		basic();
	if (!strcmp(mode, "all") || !strcmp(mode, "domains"))
		domains();
	if (!strcmp(mode, "all") || !strcmp(mode, "threads"))
		threads();
	if (!strcmp(mode, "all") || !strcmp(mode, "long"))
		long_message();
	if (!strcmp(mode, "many"))
		many(argc > 2 ? atoi(argv[2]) : 1000);
	if (!strcmp(mode, "all"))
		nvtxRangePushA("never popped");
	return 0;
}
