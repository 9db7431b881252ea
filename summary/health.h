/* summary/: the summary aggregator: per-name statistics, histograms, steps,
 * groups, memory, and its JSON/markdown output; on util/ .. session/ and
 * stacks/. */
/* The GPU health counters (NVML, nvml/) folded per device into the
 * summary's "gpu_health" member: min, mean and max of each counter over
 * its samples, the share of samples under each clock event (throttle)
 * reason, and what could not be read. Fed the same way by the library
 * (the samples as it writes them) and by `tprof report` over a trace
 * (its "GPU ..." counter events and its tprof.gpu_metrics trailer), so
 * both give the same figures. The samples are taken at a fixed rate, so
 * each stands for the same time: a mean over samples is a mean over
 * time, a share of samples a share of time. */
#ifndef TP_SUM_HEALTH_H
#define TP_SUM_HEALTH_H

#include <stddef.h>
#include <stdint.h>

#include "encode/json.h"

struct tp_sum;
struct tp_health;

/* The counter events' names and keys this member reads: the event named
 * TP_HEALTH_EVENTS_PREFIX..., each numeric arg a counter. Clock event
 * reasons are the args of TP_HEALTH_REASONS_EVENT, 1 while active. */
#define TP_HEALTH_EVENTS_PREFIX "GPU "
#define TP_HEALTH_REASONS_EVENT "GPU clock events"

/* One sample of one counter (an arg of a "GPU ..." counter event). */
void tp_health_sample(struct tp_health **h, int64_t device,
		      const char *event, const char *key, size_t keylen,
		      double v);
/* The sampler's state ("sampled", or why nothing was), its rate. */
void tp_health_state(struct tp_health **h, const char *state,
		     size_t len, int64_t hz);
/* A device's NVML identity. */
void tp_health_device(struct tp_health **h, int64_t device,
		      const char *uuid, size_t len);
/* A counter the device could not give, and why ("not supported"). */
void tp_health_unavailable(struct tp_health **h, int64_t device,
			   const char *metric, size_t mlen, const char *why,
			   size_t wlen);
/* ",\n\"gpu_health\": {...}" when anything was fed. */
void tp_health_write_json(const struct tp_health *h, struct tp_buf *b);
void tp_health_free(struct tp_health *h);

#endif
