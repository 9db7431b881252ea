/* output/: the background writer: drains the rings into the trace file,
 * with its metadata and trailer; on every folder above. */
/* The trigger "complete the trace now", safe from a signal handler: see
 * crash.h for why the writer does the work and the caller only waits. */
#include "trace/ending.h"
#include "crash.h"
#include "writer.h"

int tp_crash_dump(int sig, int stall_ms)
{
	tp_end_set(sig ? TP_END_SIGNAL : TP_END_EXIT, sig);
	return tp_writer_stop_from_signal(stall_ms);
}
