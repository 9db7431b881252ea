/* session/: the run's session: configuration applied, the timeline
 * (ticks to trace time), metadata, how the run ended; on record/ and below. */
/* What ended the process, when it was not a normal exit: set once by the
 * first trigger (output/crash.c), read by the trailer ("ended_by").
 * Async-signal-safe: atomics only. */
#ifndef TP_ENDING_H
#define TP_ENDING_H

enum tp_end_cause {
	TP_END_NORMAL = 0,
	TP_END_SIGNAL,		/* a fatal signal: tp_end_signal() */
	TP_END_EXIT,		/* _exit / _Exit: no atexit handlers ran */
};

/* The first call names the cause; later ones change nothing. */
void tp_end_set(enum tp_end_cause cause, int sig);
enum tp_end_cause tp_end_cause(void);
int tp_end_signal(void);

#endif
