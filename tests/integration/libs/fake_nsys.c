/* A stand-in for nsys in the TPROF_NSYS test: the NVTX tool named by
 * NVTX_INJECTION64_PATH, and the cudaProfilerStart/Stop that tprof's own
 * calls reach (preloaded after libtprof.so). Each appends a line to
 * $FAKE_NSYS_LOG. */
#define NVTX_NO_IMPL
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>

static void logf_line(const char *what, const char *arg)
{
	const char *path = getenv("FAKE_NSYS_LOG");
	FILE *f = path ? fopen(path, "a") : NULL;

	if (!f)
		return;
	fprintf(f, "%s%s%s\n", what, arg ? " " : "", arg ? arg : "");
	fclose(f);
}

cudaError_t cudaProfilerStart(void)
{
	logf_line("cudaProfilerStart", NULL);
	return cudaSuccess;
}

cudaError_t cudaProfilerStop(void)
{
	logf_line("cudaProfilerStop", NULL);
	return cudaSuccess;
}

static nvtxRangeId_t next_id = 1;

static nvtxRangeId_t range_start(const char *s)
{
	logf_line("start", s);
	return next_id++;
}

static void range_end(nvtxRangeId_t id)
{
	char s[32];

	snprintf(s, sizeof(s), "%llu", (unsigned long long)id);
	logf_line("end", s);
}

int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get)
{
	const NvtxExportTableCallbacks *cb = get(NVTX_ETID_CALLBACKS);
	NvtxFunctionTable t = NULL;
	unsigned size = 0;

	if (!cb || !cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &t, &size))
		return 0;
	if (NVTX_CBID_CORE_RangeStartA < size)
		*t[NVTX_CBID_CORE_RangeStartA] = (NvtxFunctionPointer)range_start;
	if (NVTX_CBID_CORE_RangeEnd < size)
		*t[NVTX_CBID_CORE_RangeEnd] = (NvtxFunctionPointer)range_end;
	return 1;
}
