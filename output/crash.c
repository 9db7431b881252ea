/* output/: the background writer: drains the rings into the trace file,
 * with its metadata and trailer; on every folder above. */
/* The trigger "complete the trace now", safe from a signal handler: see
 * crash.h for why the writer does the work and the caller only waits. */
#include "session/ending.h"
#include "crash.h"
#include "flight.h"
#include "writer.h"

#include <signal.h>

/* A constant string: the flight recorder keeps the pointer. */
static const char *crash_name(int sig)
{
	switch (sig) {
	case SIGSEGV: return "SIGSEGV";
	case SIGBUS: return "SIGBUS";
	case SIGFPE: return "SIGFPE";
	case SIGILL: return "SIGILL";
	case SIGABRT: return "SIGABRT";
	default: return "signal";
	}
}

int tp_crash_dump(int sig, int stall_ms)
{
	tp_end_set(sig ? TP_END_SIGNAL : TP_END_EXIT, sig);
	/* A crash dumps the flight recorder's window; an _exit is a normal
	 * end, which writes it only with TPROF_FLIGHT_DUMP_AT_EXIT. */
	if (sig)
		tp_flight_trigger(crash_name(sig));
	return tp_writer_stop_from_signal(stall_ms);
}
