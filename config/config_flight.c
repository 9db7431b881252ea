/* config/: TPROF_* configuration, parsed and checked; on util/ only. */
#include <stdio.h>
#include <string.h>

#include "config_capture.h"
#include "config_flight.h"

/* A window or threshold under 100 ms is one the writer's 50 ms cycle
 * cannot honour: refused rather than silently stretched. */
#define MIN_NS 100000000ull

static int parse_window(const char *name, const char *v, uint64_t *out,
			const char *what, char *err, size_t errlen)
{
	if (!v)
		return 0;
	if (tp_parse_seconds(v, out) == 0 && *out >= MIN_NS)
		return 0;
	snprintf(err, errlen, "%s='%s' is not valid: expected seconds, at "
		 "least 0.1 (such as 30 or 2.5, or 500ms): %s", name, v, what);
	return -1;
}

static int parse_flag(const char *name, const char *v, int *out, char *err,
		      size_t errlen)
{
	if (v && strcmp(v, "0") && strcmp(v, "1")) {
		snprintf(err, errlen, "%s='%s' is not valid: expected 1 or 0",
			 name, v);
		return -1;
	}
	*out = v && !strcmp(v, "1");
	return 0;
}

int tp_config_parse_flight(struct tp_flight_config *c, tp_getenv_fn get,
			   char *err, size_t errlen)
{
	const char *v;
	long mb;

	c->flight_mb = TP_DEFAULT_FLIGHT_MB;
	if (parse_window("TPROF_FLIGHT", get("TPROF_FLIGHT"), &c->flight_ns,
			 "the last seconds kept in memory", err, errlen) < 0 ||
	    parse_window("TPROF_HANG", get("TPROF_HANG"), &c->hang_ns,
			 "a hooked call this long is a hang", err, errlen) < 0)
		return -1;
	v = get("TPROF_FLIGHT_MB");
	if (v) {
		if (tp_parse_uint(v, 1, TP_MAX_FLIGHT_MB, &mb) < 0) {
			snprintf(err, errlen, "TPROF_FLIGHT_MB='%s' is not "
				 "valid: expected a whole number of MiB from "
				 "1 to %d", v, TP_MAX_FLIGHT_MB);
			return -1;
		}
		c->flight_mb = (unsigned)mb;
	}
	if (parse_flag("TPROF_FLIGHT_DUMP_AT_EXIT",
		       get("TPROF_FLIGHT_DUMP_AT_EXIT"), &c->at_exit, err,
		       errlen) < 0)
		return -1;
	v = get("TPROF_DUMP_SIGNAL");
	if (v && tp_parse_signal(v, &c->dump_signal) < 0) {
		snprintf(err, errlen, "TPROF_DUMP_SIGNAL='%s' is not valid: "
			 "expected USR1 or USR2 (the signal that asks for a "
			 "dump)", v);
		return -1;
	}
	return 0;
}
