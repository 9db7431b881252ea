/* nvml/: the GPU health counters from NVML, sampled beside the trace; on
 * util/ .. cupti/. */
/* The few NVML types, constants and entry points tprof uses, declared
 * here from NVIDIA's nvml.h (the nvidia-nvml-dev 13.5.37 wheel; the
 * values have been the same since the calls were introduced) rather
 * than included: libnvidia-ml.so.1 is loaded at run time (load.c), never
 * linked, and building tprof needs no NVML header. Each declaration
 * names the part of nvml.h it follows. */
#ifndef TP_NVML_API_H
#define TP_NVML_API_H

/* nvmlReturn_t (nvml.h "nvmlReturn_t"): the values tprof tells apart. */
typedef int nvmlReturn_t;
#define NVML_SUCCESS 0
#define NVML_ERROR_UNINITIALIZED 1
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_ERROR_NO_PERMISSION 4
#define NVML_ERROR_NOT_FOUND 6
#define NVML_ERROR_TIMEOUT 10
#define NVML_ERROR_FUNCTION_NOT_FOUND 13
#define NVML_ERROR_GPU_IS_LOST 15

/* Opaque handles (nvml.h: "typedef struct nvmlDevice_st* nvmlDevice_t",
 * "typedef struct nvmlEventSet_st* nvmlEventSet_t"). */
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct nvmlEventSet_st *nvmlEventSet_t;

/* nvmlClockType_t */
#define NVML_CLOCK_SM 1
#define NVML_CLOCK_MEM 2
/* nvmlTemperatureSensors_t */
#define NVML_TEMPERATURE_GPU 0
/* nvmlPcieUtilCounter_t: KB/s over a 20 ms window */
#define NVML_PCIE_UTIL_TX_BYTES 0
#define NVML_PCIE_UTIL_RX_BYTES 1
/* nvmlMemoryErrorType_t, nvmlEccCounterType_t */
#define NVML_MEMORY_ERROR_TYPE_CORRECTED 0
#define NVML_MEMORY_ERROR_TYPE_UNCORRECTED 1
#define NVML_VOLATILE_ECC 0
/* Field values: NVLink data throughput in KiB, cumulative; a scopeId of
 * UINT_MAX sums every link. */
#define NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX 138
#define NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX 139
/* nvmlValueType_t */
#define NVML_VALUE_TYPE_UNSIGNED_INT 1
#define NVML_VALUE_TYPE_UNSIGNED_LONG 2
#define NVML_VALUE_TYPE_UNSIGNED_LONG_LONG 3
/* nvmlEventType: XID critical error; eventData holds the XID. */
#define nvmlEventTypeXidCriticalError 0x0000000000000008ULL
/* NVML_DEVICE_UUID_V2_BUFFER_SIZE */
#define TP_NVML_UUID_SIZE 96

/* nvmlUtilization_t */
typedef struct {
	unsigned int gpu;
	unsigned int memory;
} nvmlUtilization_t;

/* nvmlMemory_t (v1) */
typedef struct {
	unsigned long long total;
	unsigned long long free;
	unsigned long long used;
} nvmlMemory_t;

/* nvmlValue_t */
typedef union {
	double dVal;
	int siVal;
	unsigned int uiVal;
	unsigned long ulVal;
	unsigned long long ullVal;
	signed long long sllVal;
	unsigned short usVal;
} nvmlValue_t;

/* nvmlFieldValue_t */
typedef struct {
	unsigned int fieldId;
	unsigned int scopeId;
	long long timestamp;
	long long latencyUsec;
	int valueType;
	nvmlReturn_t nvmlReturn;
	nvmlValue_t value;
} nvmlFieldValue_t;

/* nvmlEventData_t */
typedef struct {
	nvmlDevice_t device;
	unsigned long long eventType;
	unsigned long long eventData;
	unsigned int gpuInstanceId;
	unsigned int computeInstanceId;
} nvmlEventData_t;

/* The clock event (throttle) reasons, nvml.h's nvmlClocksEventReason*
 * bits (nvmlClocksThrottleReason* on drivers before 530). */
#define TP_NVML_REASONS(X) \
	X(0x001, gpu_idle) \
	X(0x002, app_clocks) \
	X(0x004, sw_power_cap) \
	X(0x008, hw_slowdown) \
	X(0x010, sync_boost) \
	X(0x020, sw_thermal) \
	X(0x040, hw_thermal) \
	X(0x080, hw_power_brake) \
	X(0x100, display_clocks) \
	X(0x200, board_limit) \
	X(0x400, reliability)

#endif
