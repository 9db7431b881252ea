/* config/: TPROF_* configuration, parsed and checked; on util/ only. */
/* The TPROF_* variables of capture/: the step schedule and the gates.
 * Parsed here, with the rest of the configuration, so that capture/ and
 * `tprof env-check` share them. */
#ifndef TP_CONFIG_CAPTURE_H
#define TP_CONFIG_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

#include "config_num.h"

/* When events are kept: the schedule over steps, and the gates that
 * open and close recording (see capture.h). */
struct tp_capture_config {
	int schedule;		/* TPROF_ACTIVE is set */
	unsigned skip_first;
	unsigned wait;
	unsigned warmup;
	unsigned active;
	unsigned repeat;	/* 0: until exit */
	char step_nvtx[256];	/* TPROF_STEP_NVTX, empty: none */
	uint64_t delay_ns;
	uint64_t duration_ns;	/* 0: until exit */
	int profiler_api;	/* TPROF_CAPTURE=cudaProfilerApi */
	int signal;		/* TPROF_SIGNAL, 0: none */
	int nsys;		/* TPROF_NSYS=1 */
};

/* 0, or -1 with a one-line message in err. */
int tp_config_parse_capture(struct tp_capture_config *c, tp_getenv_fn get,
			    char *err, size_t errlen);
/* "USR2" for SIGUSR2, for messages. */
const char *tp_signal_name(int sig);
/* Seconds ("5", "2.5") or a duration with a unit ("500ms"): 0, or -1. */
int tp_parse_seconds(const char *s, uint64_t *out);
/* USR1 or USR2 (SIG prefix allowed): 0, or -1. */
int tp_parse_signal(const char *s, int *out);

#endif
