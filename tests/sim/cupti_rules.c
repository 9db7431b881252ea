/* What CUPTI's headers forbid a client, enforced at its worst (part of
 * the simulated libcupti.so.13; README.md lists each rule with the text
 * it comes from). A real CUPTI may survive some of these, or crash only
 * sometimes; here each one ends the process at once, with a line on
 * stderr naming the rule and an "abort" event in the log.
 *
 *  - cuptiActivityFlushAll or cuptiFinalize from inside a resource
 *    callback or an activity buffer callback (request or completion):
 *    abort.
 *  - Any CUPTI call after cuptiFinalize re-initialises CUPTI (logged as
 *    {"ev":"cupti","call":"reinit"}), and aborts when CUDA graphs were
 *    launched in the process (PyTorch PR #112507: re-initialising CUPTI
 *    with graphs alive crashed). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>

#include "cupti_int.h"

/* The callback the calling thread is inside: NULL, "resource", "buffer
 * request", "buffer completion". */
static __thread const char *inside;
/* cuptiFinalize ran and nothing called CUPTI since; on a line of its own
 * (read at every call, written once). */
static int finalized __attribute__((aligned(64)));

const char *rule_callback(const char *what)
{
	const char *was = inside;

	inside = what;
	return was;
}

void rule_not_in_callback(const char *fn, const char *header)
{
	const char *in = inside;

	if (!in)
		return;
	fprintf(stderr, "cupti-sim: %s called from a %s callback: crash "
		"(%s)\n", fn, in, header);
	sim_log("{\"ev\":\"abort\",\"why\":\"%s in a %s callback\"}", fn, in);
	abort();
}

void rule_finalized(void)
{
	__atomic_store_n(&finalized, 1, __ATOMIC_RELEASE);
}

/* cupti_activity.h (cuptiFinalize) destroys "all the resources
 * associated with CUPTI in the current process"; CUPTI initializes
 * lazily at its first call (CUPTI's documentation, Initialization), so
 * a call after it starts CUPTI again. */
void rule_call(const char *fn)
{
	if (!__atomic_load_n(&finalized, __ATOMIC_ACQUIRE) ||
	    !__atomic_exchange_n(&finalized, 0, __ATOMIC_ACQ_REL))
		return;
	sim_log("{\"ev\":\"cupti\",\"call\":\"reinit\",\"by\":\"%s\","
		"\"graphs\":%d}", fn, sim_graphs_launched());
	if (!sim_graphs_launched())
		return;
	fprintf(stderr, "cupti-sim: %s after cuptiFinalize re-initialises "
		"CUPTI with CUDA graphs launched: crash (PyTorch PR #112507; "
		"no CUPTI call may follow cuptiFinalize)\n", fn);
	sim_log("{\"ev\":\"abort\",\"why\":\"reinit after finalize with "
		"graphs\",\"call\":\"%s\"}", fn);
	abort();
}
