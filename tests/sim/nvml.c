/* A stand-in libnvidia-ml.so.1 for the simulated machine (tests/sim/):
 * written from NVIDIA's nvml.h (the nvidia-nvml-dev 13.5.37 wheel; the
 * types below are declared from it, not included) and NVML's API
 * reference, not from tprof's code. It behaves as NVML does at its
 * worst:
 *
 * - every call but nvmlInit_v2 returns NVML_ERROR_UNINITIALIZED before
 *   it, and after the nvmlShutdown that drops the last reference ("A
 *   reference count of the number of initializations is maintained");
 * - devices are NVML's own, numbered in the reverse of CUDA's order
 *   (NVML numbers by PCI bus, CUDA by speed or CUDA_VISIBLE_DEVICES), so
 *   only their UUIDs match CUDA's (the simulated driver's
 *   sim_device_uuid);
 * - a query may be refused as consumer GPUs and containers refuse them:
 *   SIM_NVML_DENY="power:no_permission,ecc:not_supported,..." (families:
 *   clock_sm clock_mem power power_limit temperature utilization memory
 *   clock_events pcie nvlink ecc events init; answers: not_supported
 *   no_permission unknown gpu_lost);
 * - built with -DSIM_NVML_OLD it is a driver older than 530: no
 *   nvmlDeviceGetCurrentClocksEventReasons (only the Throttle name), no
 *   nvmlDeviceGetFieldValues, no nvmlEventSetWait_v2.
 *
 * Its values follow a script, SIM_NVML_SCRIPT: lines "T key=value ...",
 * T seconds after nvmlInit_v2, each value holding from then on (keys: sm
 * mem power limit temp gutil mutil used total reasons pcie_tx pcie_rx
 * nvl_tx nvl_rx ecc_c ecc_u, and xid=N: one XID event at T; "dev=N"
 * first restricts a line to CUDA device N). SIM_NVML_LOG=FILE gets one
 * line per value served: "KEY DEV VALUE" (DEV the CUDA device).
 *
 * nvmlInit_v2 is slow on a real node (it opens every GPU's device
 * files and may wait for the driver to load: hundreds of ms on an
 * 8-GPU machine without persistence mode); SIM_NVML_INIT_MS=N makes
 * the first one take N ms. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EXPORT __attribute__((visibility("default")))

/* nvml.h: nvmlReturn_t values */
typedef int nvmlReturn_t;
enum {
	NVML_SUCCESS = 0,
	NVML_ERROR_UNINITIALIZED = 1,
	NVML_ERROR_INVALID_ARGUMENT = 2,
	NVML_ERROR_NOT_SUPPORTED = 3,
	NVML_ERROR_NO_PERMISSION = 4,
	NVML_ERROR_NOT_FOUND = 6,
	NVML_ERROR_TIMEOUT = 10,
	NVML_ERROR_GPU_IS_LOST = 15,
	NVML_ERROR_UNKNOWN = 999,
};

/* nvml.h: nvmlClockType_t, nvmlPcieUtilCounter_t, nvmlMemoryErrorType_t,
 * nvmlEccCounterType_t, nvmlTemperatureSensors_t, nvmlValueType_t, the
 * NVLink throughput field ids, nvmlEventTypeXidCriticalError. */
enum { NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2 };
enum { NVML_PCIE_UTIL_TX_BYTES = 0, NVML_PCIE_UTIL_RX_BYTES = 1 };
enum { NVML_MEMORY_ERROR_TYPE_CORRECTED = 0,
       NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1 };
enum { NVML_VOLATILE_ECC = 0, NVML_AGGREGATE_ECC = 1 };
enum { NVML_TEMPERATURE_GPU = 0 };
enum { NVML_VALUE_TYPE_UNSIGNED_LONG_LONG = 3 };
#define NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX 138
#define NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX 139
#define nvmlEventTypeXidCriticalError 0x0000000000000008ULL

typedef struct nvml_dev *nvmlDevice_t;
typedef struct nvml_set *nvmlEventSet_t;

typedef struct {
	unsigned int gpu, memory;
} nvmlUtilization_t;

typedef struct {
	unsigned long long total, free, used;
} nvmlMemory_t;

typedef union {
	double dVal;
	int siVal;
	unsigned int uiVal;
	unsigned long ulVal;
	unsigned long long ullVal;
	signed long long sllVal;
	unsigned short usVal;
} nvmlValue_t;

typedef struct {
	unsigned int fieldId, scopeId;
	long long timestamp, latencyUsec;
	int valueType;
	nvmlReturn_t nvmlReturn;
	nvmlValue_t value;
} nvmlFieldValue_t;

typedef struct {
	nvmlDevice_t device;
	unsigned long long eventType, eventData;
	unsigned int gpuInstanceId, computeInstanceId;
} nvmlEventData_t;

#define MAX_DEV 16
#define MAX_LINES 256

static const char *const keys[] = {
	"sm", "mem", "power", "limit", "temp", "gutil", "mutil", "used",
	"total", "reasons", "pcie_tx", "pcie_rx", "nvl_tx", "nvl_rx",
	"ecc_c", "ecc_u", "xid",
};
enum { K_SM, K_MEM, K_POWER, K_LIMIT, K_TEMP, K_GUTIL, K_MUTIL, K_USED,
       K_TOTAL, K_REASONS, K_PCIE_TX, K_PCIE_RX, K_NVL_TX, K_NVL_RX,
       K_ECC_C, K_ECC_U, K_XID, K_N };

/* Values before any script line: an idle H100 SXM. */
static const unsigned long long idle[K_N] = {
	[K_SM] = 1980, [K_MEM] = 2619, [K_POWER] = 72000, [K_LIMIT] = 700000,
	[K_TEMP] = 34, [K_TOTAL] = 85520809984ull, [K_USED] = 524288000ull,
};

struct line {
	double t;
	int dev;		/* -1: every device */
	int has[K_N];
	unsigned long long v[K_N];
};

struct nvml_dev {
	int cuda;		/* the CUDA ordinal with the same UUID */
	char uuid[96];
	unsigned next_xid_line;	/* script lines whose xid was delivered */
	int registered;
};

struct nvml_set {
	int unused;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int refs;
static struct timespec t0;
static struct nvml_dev devs[MAX_DEV];
static unsigned ndev;
static struct line script[MAX_LINES];
static unsigned nlines;
static FILE *logf;

static int live(void)
{
	int r;

	pthread_mutex_lock(&mu);
	r = refs > 0;
	pthread_mutex_unlock(&mu);
	return r;
}

static int handle_ok(nvmlDevice_t d)
{
	return d >= devs && d < devs + ndev;
}

/* SIM_NVML_DENY: the answer this family gets, NVML_SUCCESS if none. */
static nvmlReturn_t denied(const char *family)
{
	const char *e = getenv("SIM_NVML_DENY"), *p;
	size_t n = strlen(family);

	for (p = e; p && *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] != 0)) {
		if (strncmp(p, family, n) || p[n] != ':')
			continue;
		p += n + 1;
		if (!strncmp(p, "not_supported", 13))
			return NVML_ERROR_NOT_SUPPORTED;
		if (!strncmp(p, "no_permission", 13))
			return NVML_ERROR_NO_PERMISSION;
		if (!strncmp(p, "gpu_lost", 8))
			return NVML_ERROR_GPU_IS_LOST;
		return NVML_ERROR_UNKNOWN;
	}
	return NVML_SUCCESS;
}

static double since_init(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0.tv_sec) +
	       (double)(t.tv_nsec - t0.tv_nsec) / 1e9;
}

/* The value of key k on device d now: the last script line at or
 * before now that sets it. */
static unsigned long long value(const struct nvml_dev *d, int k)
{
	double now = since_init();
	unsigned long long v = idle[k];
	unsigned i;

	for (i = 0; i < nlines && script[i].t <= now; i++)
		if (script[i].has[k] && (script[i].dev < 0 ||
					 script[i].dev == d->cuda))
			v = script[i].v[k];
	return v;
}

static unsigned long long served(const struct nvml_dev *d, int k)
{
	unsigned long long v = value(d, k);

	if (logf) {
		pthread_mutex_lock(&mu);
		fprintf(logf, "%s %d %llu\n", keys[k], d->cuda, v);
		fflush(logf);
		pthread_mutex_unlock(&mu);
	}
	return v;
}

static void parse_line(char *s)
{
	struct line *l = &script[nlines];
	char *tok, *save = NULL, *eq;
	int k;

	memset(l, 0, sizeof(*l));
	l->dev = -1;
	tok = strtok_r(s, " \t", &save);
	if (!tok || nlines == MAX_LINES)
		return;
	l->t = strtod(tok, NULL);
	while ((tok = strtok_r(NULL, " \t", &save))) {
		if (!(eq = strchr(tok, '=')))
			continue;
		*eq = '\0';
		if (!strcmp(tok, "dev")) {
			l->dev = atoi(eq + 1);
			continue;
		}
		for (k = 0; k < K_N; k++)
			if (!strcmp(tok, keys[k])) {
				l->has[k] = 1;
				l->v[k] = strtoull(eq + 1, NULL, 0);
			}
	}
	nlines++;
}

/* SIM_NVML_SCRIPT: the text itself, lines split by newlines or ';'. */
static void load_script(void)
{
	const char *e = getenv("SIM_NVML_SCRIPT");
	char *copy, *line, *save = NULL;

	nlines = 0;
	if (!e || !(copy = strdup(e)))
		return;
	for (line = strtok_r(copy, "\n;", &save); line;
	     line = strtok_r(NULL, "\n;", &save))
		parse_line(line);
	free(copy);
}

/* The hardware is the simulated driver's: its devices and UUIDs. */
static void find_devices(void)
{
	int (*count)(void);
	void (*uuid)(int, unsigned char *);
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	unsigned char u[16];
	int n, i, k;

	ndev = 0;
	*(void **)&count = h ? dlsym(h, "sim_device_count") : NULL;
	*(void **)&uuid = h ? dlsym(h, "sim_device_uuid") : NULL;
	if (!count || !uuid)
		return;
	n = count();
	for (i = n - 1; i >= 0 && ndev < MAX_DEV; i--) {
		struct nvml_dev *d = &devs[ndev++];
		size_t o;

		memset(d, 0, sizeof(*d));
		d->cuda = i;
		uuid(i, u);
		o = (size_t)snprintf(d->uuid, sizeof(d->uuid), "GPU-");
		for (k = 0; k < 16; k++)
			o += (size_t)snprintf(d->uuid + o, sizeof(d->uuid) - o,
					      "%s%02x", k == 4 || k == 6 ||
					      k == 8 || k == 10 ? "-" : "",
					      u[k]);
	}
}

EXPORT nvmlReturn_t nvmlInit_v2(void)
{
	nvmlReturn_t rc = denied("init");
	const char *log = getenv("SIM_NVML_LOG");

	if (rc)
		return rc;
	pthread_mutex_lock(&mu);
	if (refs++ == 0) {
		const char *ms = getenv("SIM_NVML_INIT_MS");

		if (ms && atol(ms) > 0) {
			struct timespec d = { atol(ms) / 1000,
					      atol(ms) % 1000 * 1000000 };

			nanosleep(&d, NULL);
		}
		clock_gettime(CLOCK_MONOTONIC, &t0);
		load_script();
		find_devices();
		if (log && !logf)
			logf = fopen(log, "a");
	}
	pthread_mutex_unlock(&mu);
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlShutdown(void)
{
	pthread_mutex_lock(&mu);
	if (refs == 0) {
		pthread_mutex_unlock(&mu);
		return NVML_ERROR_UNINITIALIZED;
	}
	refs--;
	pthread_mutex_unlock(&mu);
	return NVML_SUCCESS;
}

EXPORT const char *nvmlErrorString(nvmlReturn_t r)
{
	return r == NVML_SUCCESS ? "Success" : "Error";
}

EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *n)
{
	if (!live())
		return NVML_ERROR_UNINITIALIZED;
	if (!n)
		return NVML_ERROR_INVALID_ARGUMENT;
	*n = ndev;
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i,
						  nvmlDevice_t *d)
{
	if (!live())
		return NVML_ERROR_UNINITIALIZED;
	if (!d || i >= ndev)
		return NVML_ERROR_INVALID_ARGUMENT;
	*d = &devs[i];
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid,
					      nvmlDevice_t *d)
{
	unsigned i;

	if (!live())
		return NVML_ERROR_UNINITIALIZED;
	if (!uuid || !d)
		return NVML_ERROR_INVALID_ARGUMENT;
	for (i = 0; i < ndev; i++)
		if (!strcmp(devs[i].uuid, uuid)) {
			*d = &devs[i];
			return NVML_SUCCESS;
		}
	return NVML_ERROR_NOT_FOUND;
}

EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *out,
				      unsigned int len)
{
	if (!live())
		return NVML_ERROR_UNINITIALIZED;
	if (!handle_ok(d) || !out || len < strlen(d->uuid) + 1)
		return NVML_ERROR_INVALID_ARGUMENT;
	strcpy(out, d->uuid);
	return NVML_SUCCESS;
}

/* The checks every device query makes first, then its family's answer. */
static nvmlReturn_t query(nvmlDevice_t d, const void *out, const char *fam)
{
	if (!live())
		return NVML_ERROR_UNINITIALIZED;
	if (!handle_ok(d) || !out)
		return NVML_ERROR_INVALID_ARGUMENT;
	return denied(fam);
}

EXPORT nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, int type,
					   unsigned int *mhz)
{
	nvmlReturn_t rc;

	if (type != NVML_CLOCK_SM && type != NVML_CLOCK_MEM)
		return live() ? NVML_ERROR_INVALID_ARGUMENT :
		       NVML_ERROR_UNINITIALIZED;
	rc = query(d, mhz, type == NVML_CLOCK_SM ? "clock_sm" : "clock_mem");
	if (rc)
		return rc;
	*mhz = (unsigned int)served(d, type == NVML_CLOCK_SM ? K_SM : K_MEM);
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned int *mw)
{
	nvmlReturn_t rc = query(d, mw, "power");

	if (rc)
		return rc;
	*mw = (unsigned int)served(d, K_POWER);
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t d,
						    unsigned int *mw)
{
	nvmlReturn_t rc = query(d, mw, "power_limit");

	if (rc)
		return rc;
	*mw = (unsigned int)served(d, K_LIMIT);
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor,
					     unsigned int *c)
{
	nvmlReturn_t rc = query(d, c, "temperature");

	if (rc)
		return rc;
	if (sensor != NVML_TEMPERATURE_GPU)
		return NVML_ERROR_INVALID_ARGUMENT;
	*c = (unsigned int)served(d, K_TEMP);
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d,
						  nvmlUtilization_t *u)
{
	nvmlReturn_t rc = query(d, u, "utilization");

	if (rc)
		return rc;
	u->gpu = (unsigned int)served(d, K_GUTIL);
	u->memory = (unsigned int)served(d, K_MUTIL);
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m)
{
	nvmlReturn_t rc = query(d, m, "memory");

	if (rc)
		return rc;
	m->used = served(d, K_USED);
	m->total = served(d, K_TOTAL);
	m->free = m->total > m->used ? m->total - m->used : 0;
	return NVML_SUCCESS;
}

static nvmlReturn_t reasons(nvmlDevice_t d, unsigned long long *r)
{
	nvmlReturn_t rc = query(d, r, "clock_events");

	if (rc)
		return rc;
	*r = served(d, K_REASONS);
	return NVML_SUCCESS;
}

#ifndef SIM_NVML_OLD
EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(
	nvmlDevice_t d, unsigned long long *r)
{
	return reasons(d, r);
}
#endif

EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(
	nvmlDevice_t d, unsigned long long *r)
{
	return reasons(d, r);
}

EXPORT nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t d, int counter,
						unsigned int *kbps)
{
	nvmlReturn_t rc = query(d, kbps, "pcie");

	if (rc)
		return rc;
	if (counter != NVML_PCIE_UTIL_TX_BYTES &&
	    counter != NVML_PCIE_UTIL_RX_BYTES)
		return NVML_ERROR_INVALID_ARGUMENT;
	*kbps = (unsigned int)served(d, counter == NVML_PCIE_UTIL_TX_BYTES ?
				     K_PCIE_TX : K_PCIE_RX);
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t d, int type,
						int counter,
						unsigned long long *n)
{
	nvmlReturn_t rc = query(d, n, "ecc");

	if (rc)
		return rc;
	if ((type != NVML_MEMORY_ERROR_TYPE_CORRECTED &&
	     type != NVML_MEMORY_ERROR_TYPE_UNCORRECTED) ||
	    (counter != NVML_VOLATILE_ECC && counter != NVML_AGGREGATE_ECC))
		return NVML_ERROR_INVALID_ARGUMENT;
	*n = served(d, type == NVML_MEMORY_ERROR_TYPE_CORRECTED ? K_ECC_C :
		    K_ECC_U);
	return NVML_SUCCESS;
}

#ifndef SIM_NVML_OLD
/* "NVML_SUCCESS if any values in values were populated. Note that you
 * must check the nvmlReturn field of each value." */
EXPORT nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t d, int n,
					     nvmlFieldValue_t *v)
{
	nvmlReturn_t deny;
	int i;

	if (!live())
		return NVML_ERROR_UNINITIALIZED;
	if (!handle_ok(d) || !v || n < 0)
		return NVML_ERROR_INVALID_ARGUMENT;
	deny = denied("nvlink");
	for (i = 0; i < n; i++) {
		unsigned id = v[i].fieldId;

		v[i].nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
		if (id != NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX &&
		    id != NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX)
			continue;
		if (deny) {
			v[i].nvmlReturn = deny;
			continue;
		}
		v[i].valueType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
		v[i].value.ullVal = served(d, id ==
			NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX ? K_NVL_TX :
			K_NVL_RX);
		v[i].nvmlReturn = NVML_SUCCESS;
	}
	return NVML_SUCCESS;
}
#endif

static struct nvml_set the_set;

EXPORT nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *s)
{
	if (!live())
		return NVML_ERROR_UNINITIALIZED;
	if (!s)
		return NVML_ERROR_INVALID_ARGUMENT;
	*s = &the_set;
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t d,
					     unsigned long long types,
					     nvmlEventSet_t s)
{
	nvmlReturn_t rc = query(d, s, "events");

	if (rc)
		return rc;
	if (types & nvmlEventTypeXidCriticalError)
		d->registered = 1;
	return NVML_SUCCESS;
}

/* The next XID of the script that is due on a registered device. */
static int next_xid(nvmlEventData_t *e)
{
	double now = since_init();
	unsigned i, k;

	for (k = 0; k < ndev; k++) {
		struct nvml_dev *d = &devs[k];

		for (i = d->next_xid_line; i < nlines && script[i].t <= now;
		     i++) {
			d->next_xid_line = i + 1;
			if (!d->registered || !script[i].has[K_XID] ||
			    (script[i].dev >= 0 && script[i].dev != d->cuda))
				continue;
			memset(e, 0, sizeof(*e));
			e->device = d;
			e->eventType = nvmlEventTypeXidCriticalError;
			e->eventData = script[i].v[K_XID];
			e->gpuInstanceId = e->computeInstanceId = 0xFFFFFFFFu;
			return 1;
		}
	}
	return 0;
}

/* A driver older than 530 has only nvmlEventSetWait, the same call. */
#ifndef SIM_NVML_OLD
EXPORT nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t s, nvmlEventData_t *e,
					unsigned int ms)
#else
EXPORT nvmlReturn_t nvmlEventSetWait(nvmlEventSet_t s, nvmlEventData_t *e,
				     unsigned int ms)
#endif
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000 };

	if (!live())
		return NVML_ERROR_UNINITIALIZED;
	if (s != &the_set || !e)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (next_xid(e))
		return NVML_SUCCESS;
	nanosleep(&ts, NULL);
	return next_xid(e) ? NVML_SUCCESS : NVML_ERROR_TIMEOUT;
}

EXPORT nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t s)
{
	if (!live())
		return NVML_ERROR_UNINITIALIZED;
	return s == &the_set ? NVML_SUCCESS : NVML_ERROR_INVALID_ARGUMENT;
}
