/* tprof convert: one Kineto JSON event (a DOM node) as a typed event. */
#ifndef TP_CLI_CONVERT_EVENT_H
#define TP_CLI_CONVERT_EVENT_H

#include "cli/read/json.h"
#include "encode/tev.h"

/* Kineto writes GPU work with pid = device index; pids below this are
 * devices, not processes (no profiled program runs as pid 0..255). */
#define TP_CONV_MAX_DEVICE 256

/* Fills ev (its args in w; strings point into the node). Returns 1 for an
 * event to write, 0 for one the typed model has no phase for (counted as
 * skipped), -1 for a malformed event. */
int tp_conv_event(const struct tp_json_node *n, struct tp_tev *ev,
		  struct tp_targs *w);

/* "12.345" (microseconds, as JSON writes ts/dur) as integer ns, exact to
 * the ns for up to three decimals; rounds further digits. */
int tp_conv_us_to_ns(const struct tp_json_node *n, int64_t *ns);

#endif
