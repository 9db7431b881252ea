/* nvml/: the GPU health counters from NVML, sampled beside the trace; on
 * util/ .. cupti/. */
/* GPU health counters (TPROF_TRACE word gpumetrics, on by default): for
 * each GPU the process uses (the devices CUPTI reported, with a context
 * made on them), one sampling thread reads NVML's clocks, power,
 * temperature, utilisation, memory, clock event reasons, PCIe and
 * NVLink throughput, ECC and XID counts at TPROF_GPU_METRICS_HZ; the
 * writer writes them as counter tracks and into the summary's
 * "gpu_health". libnvidia-ml.so.1 is loaded at run time; without it, or
 * with calls it refuses, the rest goes on and the trace says what was
 * unavailable (tprof.gpu_metrics). See docs/design/gpu-metrics.md. */
#ifndef TP_GPUMETRICS_H
#define TP_GPUMETRICS_H

/* Registers the writer's hooks when the configuration asks for it. The
 * thread itself starts on the writer thread, once a device is used. */
void tp_gpumetrics_setup(void);
/* In a fork child: the parent's sampler does not exist here. */
void tp_gpumetrics_after_fork(void);

#endif
