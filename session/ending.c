/* session/: the run's session: configuration applied, the timeline
 * (ticks to trace time), metadata, how the run ended; on record/ and below. */
#include "ending.h"

static int cause;
static int cause_sig;

void tp_end_set(enum tp_end_cause c, int sig)
{
	int none = TP_END_NORMAL;

	if (__atomic_compare_exchange_n(&cause, &none, (int)c, 0,
					__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		__atomic_store_n(&cause_sig, sig, __ATOMIC_SEQ_CST);
}

enum tp_end_cause tp_end_cause(void)
{
	return (enum tp_end_cause)__atomic_load_n(&cause, __ATOMIC_SEQ_CST);
}

int tp_end_signal(void)
{
	return __atomic_load_n(&cause_sig, __ATOMIC_SEQ_CST);
}
