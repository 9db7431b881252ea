/* output/: the background writer: drains the rings into the trace file,
 * with its metadata and trailer; on every folder above. */
/* The trigger "complete the trace now", safe from a signal handler: see
 * crash.h for why the writer does the work and the caller only waits. */
#include <signal.h>

#include "crash.h"
#include "writer.h"

static int cause;
static int cause_sig;

int tp_crash_dump(int sig, int stall_ms)
{
	int none = TP_END_NORMAL;

	/* The first trigger names the cause; later ones only wait. */
	if (__atomic_compare_exchange_n(&cause, &none,
					sig ? TP_END_SIGNAL : TP_END_EXIT, 0,
					__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		__atomic_store_n(&cause_sig, sig, __ATOMIC_SEQ_CST);
	return tp_writer_stop_from_signal(stall_ms);
}

enum tp_crash_cause tp_crash_cause(void)
{
	return (enum tp_crash_cause)__atomic_load_n(&cause, __ATOMIC_SEQ_CST);
}

int tp_crash_signal(void)
{
	return __atomic_load_n(&cause_sig, __ATOMIC_SEQ_CST);
}
