/* nvml/: the GPU health counters from NVML, sampled beside the trace; on
 * util/ .. cupti/. */
/* Loading NVML without linking it: libnvidia-ml.so.1, the driver's, as
 * the loader finds it (LD_LIBRARY_PATH, the cache). Each entry point is
 * looked up on its own: an NVML older than one of them (or a stand-in
 * that lacks it) costs that counter only. Runs on the sampling thread,
 * so a slow nvmlInit never delays the program or the writer. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "gpumetrics_int.h"

#define SYM(f, field, name) \
	(*(void **)&(f)->field = dlsym(h, name))

const char *tp_nvml_rc_words(int rc)
{
	static __thread char other[40];

	switch (rc) {
	case TP_GM_NO_SYMBOL:
		return "not in this NVML (no such function)";
	case NVML_ERROR_UNINITIALIZED:
		return "NVML not initialized";
	case NVML_ERROR_INVALID_ARGUMENT:
		return "invalid argument";
	case NVML_ERROR_NOT_SUPPORTED:
		return "not supported";
	case NVML_ERROR_NO_PERMISSION:
		return "no permission";
	case NVML_ERROR_NOT_FOUND:
		return "not found";
	case NVML_ERROR_TIMEOUT:
		return "timeout";
	case NVML_ERROR_FUNCTION_NOT_FOUND:
		return "not in this driver (function not found)";
	case NVML_ERROR_GPU_IS_LOST:
		return "GPU is lost";
	}
	snprintf(other, sizeof(other), "NVML error %d", rc);
	return other;
}

static void resolve(struct tp_nvml_fns *f, void *h)
{
	SYM(f, init_v2, "nvmlInit_v2");
	SYM(f, shutdown, "nvmlShutdown");
	SYM(f, by_uuid, "nvmlDeviceGetHandleByUUID");
	SYM(f, clock, "nvmlDeviceGetClockInfo");
	SYM(f, power, "nvmlDeviceGetPowerUsage");
	SYM(f, limit, "nvmlDeviceGetEnforcedPowerLimit");
	SYM(f, temp, "nvmlDeviceGetTemperature");
	SYM(f, util, "nvmlDeviceGetUtilizationRates");
	SYM(f, mem, "nvmlDeviceGetMemoryInfo");
	/* renamed in driver 530; the old name stays for older drivers */
	SYM(f, reasons, "nvmlDeviceGetCurrentClocksEventReasons");
	if (!f->reasons)
		SYM(f, reasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
	SYM(f, pcie, "nvmlDeviceGetPcieThroughput");
	SYM(f, ecc, "nvmlDeviceGetTotalEccErrors");
	SYM(f, fields, "nvmlDeviceGetFieldValues");
	SYM(f, set_create, "nvmlEventSetCreate");
	SYM(f, register_events, "nvmlDeviceRegisterEvents");
	SYM(f, set_wait, "nvmlEventSetWait_v2");
	SYM(f, set_free, "nvmlEventSetFree");
}

int tp_nvml_open(struct tp_nvml_fns *f, char *why, size_t len)
{
	const char *err;
	void *h;
	int rc;

	memset(f, 0, sizeof(*f));
	h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		err = dlerror();
		snprintf(why, len, "no NVML: %s", err ? err :
			 "libnvidia-ml.so.1 not found");
		return -1;
	}
	resolve(f, h);
	if (!f->init_v2) {
		snprintf(why, len, "no NVML: libnvidia-ml.so.1 has no "
			 "nvmlInit_v2 (an NVML too old)");
		return -1;
	}
	rc = f->init_v2();
	if (rc != NVML_SUCCESS) {
		snprintf(why, len, "no NVML: nvmlInit_v2 failed: %s",
			 tp_nvml_rc_words(rc));
		return -1;
	}
	/* The handle stays open: NVML's threads, if any, live in it. */
	return 0;
}
