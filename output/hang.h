/* output/: the background writer: drains the rings into the trace file,
 * with its metadata and trailer; on every folder above. */
/* The hang watchdog (TPROF_HANG), run by the writer at each cycle: a
 * hooked call that has not returned for TPROF_HANG seconds is a hang, and
 * the process's state is dumped to <dir>/hangs/<stem>.hang.json: every
 * thread inside a hooked call (the call, its args, how long, the stack
 * taken at its entry) and every communicator's collective sequence
 * numbers. `tprof report` reads these dumps across ranks. */
#ifndef TP_HANG_H
#define TP_HANG_H

struct tp_buf;

/* 1 when a call passed the threshold since the last check (each call is
 * reported once), else 0. */
int tp_hang_check(void);
/* 1 when another rank asked for every rank's dump (it saw a hang) since
 * the last check; only a process that used a communicator answers. */
int tp_hang_peer_check(void);
/* Writes the dump; reason: "hang" (then the other ranks are asked for
 * theirs), "peer", "signal"; trace: the path of the flight recorder's
 * dump made with it, or NULL. Prints one line. */
void tp_hang_write(const char *reason, const char *trace);
/* The process ends (the trace's final stop): its communicators' last
 * state, reason what ended it ("exit", "_exit", "SIGTERM", "SIGSEGV",
 * ...), when it used one. */
void tp_hang_final(void);
/* The calls threads are inside now, as X events of category "unfinished"
 * (from their entry to now, args "unfinished": 1, "stuck", the stack),
 * for a trace that ends or a dump; returns how many. */
unsigned tp_hang_put_open_calls(struct tp_buf *b);

#endif
