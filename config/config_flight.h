/* config/: TPROF_* configuration, parsed and checked; on util/ only. */
/* The TPROF_* variables of the flight recorder and the hang watchdog
 * (output/flight.c, output/hang.c): parsed here with the rest of the
 * configuration, so that `tprof env-check` shares them. */
#ifndef TP_CONFIG_FLIGHT_H
#define TP_CONFIG_FLIGHT_H

#include <stddef.h>
#include <stdint.h>

#include "config_num.h"

#define TP_DEFAULT_FLIGHT_MB 256
#define TP_MAX_FLIGHT_MB 65536

struct tp_flight_config {
	uint64_t flight_ns;	/* TPROF_FLIGHT: the window kept, 0: off */
	unsigned flight_mb;	/* TPROF_FLIGHT_MB: cap on the window */
	int at_exit;		/* TPROF_FLIGHT_DUMP_AT_EXIT=1 */
	uint64_t hang_ns;	/* TPROF_HANG: a call this long is a hang */
	int dump_signal;	/* TPROF_DUMP_SIGNAL, 0: none */
};

/* 0, or -1 with a one-line message in err. */
int tp_config_parse_flight(struct tp_flight_config *c, tp_getenv_fn get,
			   char *err, size_t errlen);

#endif
