/* preload/: the library's life in the process (constructor, signals, fork,
 * exec), the program's capture gates and tprof's C API; the top layer. */
/* The library's life in the profiled process: load, fork, exec, signals,
 * exit. Whatever happens, the program's own behaviour (output, signal
 * handling, exit status) stays what it would be without tprof. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/log.h"
#include "session/session.h"
#include "stacks/sample.h"
#include "stacks/stacks.h"
#include "stacks/symbols.h"
#include "record/thread.h"
#include "output/writer.h"
#include "output/flight.h"
#include "record/collseq.h"
#include "record/inflight.h"
#include "cupti/cupti.h"
#include "nvml/gpumetrics.h"
#include "capture/capture.h"
#include "capture_hooks.h"
#include "crash.h"
#include "hooks/resolve.h"
#include "hooks/cudart/cudart_apis.h"
#include "hooks/lib_hook.h"
#include "hooks/nvtx/nvtx.h"
#include "hooks/nvtx/nvtx_emit.h"
#include "hooks/osrt/osrt.h"
#include "sampling/sampler.h"

/* The wait for the writer at exit or a signal lasts as long as it keeps
 * writing what was recorded; these bound only a writer that makes no
 * progress at all (stuck on a lock the dying program holds), so a SIGTERM
 * never turns into a hang. */
#define EXIT_WAIT_MS 10000
#define SIGNAL_WAIT_MS 3000
/* A stack threshold no call reaches (30 years). */
#define TP_NEVER_NS 1000000000000000000ull

static const int term_signals[] = { SIGTERM, SIGINT, SIGHUP };

/* The flight recorder dumps its window when the job is being stopped.
 * A crash handler calls tp_flight_trigger the same way,
 * with its signal's name, before it completes the trace. */
static const char *term_name(int sig)
{
	return sig == SIGTERM ? "SIGTERM" : sig == SIGINT ? "SIGINT" :
	       "SIGHUP";
}

static void on_term_signal(int sig)
{
	int saved = errno;

	/* The process ends with this signal: threads that go on calling
	 * hooked functions wait in the hook, leaving the cores to the
	 * writer (64 busy threads on 2 cores starved it for minutes). */
	tp_thread_set_parking(TP_PARK_ON);
	tp_flight_trigger(term_name(sig));
	tp_writer_stop_from_signal(SIGNAL_WAIT_MS);
	/* Held until the signal kills the process: a call made now would
	 * be in no trace and counted nowhere. */
	tp_thread_set_parking(TP_PARK_DYING);
	/* Re-raise with the default action so the exit status is what it
	 * would have been without tprof. */
	signal(sig, SIG_DFL);
	raise(sig);
	errno = saved;
}

/* Only where the disposition is the default: a handler the program
 * installs itself (before or after us) keeps working untouched. */
static void install_signal_handlers(void)
{
	struct sigaction old, sa;
	unsigned i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term_signal;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(term_signals) / sizeof(term_signals[0]); i++) {
		if (sigaction(term_signals[i], NULL, &old) < 0)
			continue;
		if (old.sa_handler != SIG_DFL || (old.sa_flags & SA_SIGINFO))
			continue;
		sigaction(term_signals[i], &sa, NULL);
	}
}

/* TPROF_DUMP_SIGNAL: a dump at the writer's next cycle; or, sent by
 * tprof to one thread, that thread's stack for the hang watchdog
 * (stacks/sample.h). */
static void on_dump_signal(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;

	(void)uc;
	if (!si || !tp_stack_sample_take(sig, si->si_code, si->si_pid))
		tp_writer_request_dump();
	errno = saved;
}

/* Like the term signals, only where the disposition is the default. */
static void install_dump_signal(void)
{
	int sig = tp_sess.cfg.fl.dump_signal;
	struct sigaction old, sa;

	if (!sig || (!tp_sess.cfg.fl.flight_ns && !tp_sess.cfg.fl.hang_ns))
		return;
	if (sigaction(sig, NULL, &old) < 0)
		return;
	if (old.sa_handler != SIG_DFL || (old.sa_flags & SA_SIGINFO)) {
		tp_warn("TPROF_DUMP_SIGNAL=%s: the program handles SIG%s "
			"itself, so tprof leaves it alone and dumps only on "
			"a hang or a stop (choose the other signal)",
			tp_signal_name(sig), tp_signal_name(sig));
		return;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_dump_signal;
	sa.sa_flags = SA_RESTART | SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	if (sigaction(sig, &sa, NULL) == 0 && tp_sess.cfg.fl.hang_ns)
		tp_stack_sample_enable(sig);
}

static void atfork_prepare(void)
{
	tp_sym_atfork_prepare();
}

static void atfork_parent(void)
{
	tp_sym_atfork_parent();
}

/* The child has one thread and none of the parent's writer: start empty,
 * with its own rings and (on its first event) its own writer and file. */
static void atfork_child(void)
{
	tp_sym_atfork_child();
	tp_cupti_after_fork();
	tp_stacks_after_fork();
	tp_thread_reset_after_fork();
	tp_sampler_after_fork();
	tp_osrt_after_fork();
	tp_writer_after_fork_child();
	tp_session_after_fork();
	tp_capture_after_fork();
	tp_nvtx_stack_after_fork();
	tp_nvtx_async_after_fork();
	tp_gpumetrics_after_fork();
}

/* Thresholds are compared in ticks on the hot path: measure their rate
 * roughly now (2 ms, paid only when TPROF_BACKTRACE, TPROF_HANG or
 * osrt is on; the writer sets the blocking calls' threshold again once
 * it has measured the rate exactly). */
static double tick_rate(void)
{
	static double rate;
	struct tp_clock_point a, b;
	struct timespec ts = { 0, 2000000 };

	if (rate)
		return rate;
	rate = 1.0;
	if (tp_clock_use_tsc) {
		a = tp_clock_sample();
		nanosleep(&ts, NULL);
		b = tp_clock_sample();
		rate = (double)(b.ticks - a.ticks) / (double)(b.raw_ns - a.raw_ns);
	}
	return rate;
}

static void start_backtraces(void)
{
	const struct tp_config *c = &tp_sess.cfg;
	double rate = tick_rate();

	if (c->bt_on)
		tp_stacks_init(c->bt_threshold_ns, c->bt_all_kinds,
			       c->bt_depth, rate);
	else		/* TPROF_HANG alone: stacks at entry, none at end */
		tp_stacks_init(TP_NEVER_NS, 0, c->bt_depth ? c->bt_depth :
			       TP_DEFAULT_BT_DEPTH, rate);
}

__attribute__((constructor)) static void tp_load(void)
{
	tp_cudart_register();
	tp_cublas_register();
	tp_cudnn_register();
	tp_nccl_register();
	tp_nvtx_register();
	tp_osrt_register();
	/* The C library functions the osrt hooks stand in front of, found
	 * now, whatever is traced: the hooks forward to them always, and a
	 * first lookup later could come from the writer (dlsym takes the
	 * loader lock a thread in dlopen holds for as long as constructors
	 * run: a SIGTERM then would find the writer stuck) or from a signal
	 * handler (the sampler's libunwind takes a mutex). */
	tp_osrt_prime();
	if (tp_session_init() < 0) {
		tp_osrt_set_fast(0);
		return;
	}
	/* Until now every osrt hook took its slow path; from here those with
	 * nothing to do in this process forward at once. */
	tp_osrt_set_fast(tp_sess.cfg.sources);
	if (tp_sess.cfg.sources & TP_SRC_OSRT)
		tp_osrt_set_threshold((uint64_t)((double)tp_sess.cfg.osrt_min_ns *
						 tick_rate()));
	tp_thread_on_first_attach(tp_writer_start);
	tp_gpumetrics_setup();
	tp_nvtx_setup();
	if (tp_sess.cfg.bt_on || tp_sess.cfg.fl.hang_ns)
		start_backtraces();
	/* libunwind loaded now, not by the writer when sampling starts:
	 * dlopen takes the loader lock a thread in dlopen holds while a
	 * library's constructors run (and keeps, if it then waits in a
	 * hook after SIGTERM). */
	if (tp_sess.cfg.sources & TP_SRC_CPU)
		tp_stacks_setup(tp_sess.cfg.bt_depth, "TPROF_TRACE=cpu");
	tp_hang_on = tp_sess.cfg.fl.hang_ns != 0;
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
	install_signal_handlers();
	install_dump_signal();
	tp_crash_install();
	tp_capture_setup();
	tp_cupti_inject_setup();
	if (tp_cupti_program_has_gpu_code())
		tp_cupti_start();
}

/* The sources recording when the trace was completed, for a resume. */
static unsigned recording_before_exec;

/* Completes the trace before the process image goes away (exit, exec).
 * A vfork child shares our memory but ran no atfork handler: its exec
 * must leave the parent's writer alone. */
void tp_lifecycle_finish(void)
{
	if (getpid() != tp_sess.pid)
		return;
	tp_capture_exit_notes(tp_resolve_used());
	/* Other threads wait in the hooks while the trace is completed
	 * (exit from any thread): a call they made meanwhile would be in
	 * no trace and counted nowhere. Let go once it is complete: the
	 * program's later exit handlers may wait for them. */
	tp_sym_find_demangler();
	tp_thread_set_parking(TP_PARK_ON);
	recording_before_exec = __atomic_exchange_n(&tp_recording, 0,
						    __ATOMIC_ACQ_REL);
	tp_writer_stop(EXIT_WAIT_MS);
	tp_thread_set_parking(TP_PARK_OFF);
	tp_writer_note_unrecorded();
}

/* The trace so far is completed now and recording goes on into a new
 * file (tp_lifecycle_resume): before a privilege drop (ids.c). */
void tp_lifecycle_split(void)
{
	if (getpid() != tp_sess.pid || !tp_sess.active)
		return;
	recording_before_exec = __atomic_exchange_n(&tp_recording, 0,
						    __ATOMIC_ACQ_REL);
	tp_writer_stop(EXIT_WAIT_MS);
}

/* The exec failed and the program goes on in this image: record again,
 * from where the stop left off, into a file of its own (the completed
 * one stays as it is). */
void tp_lifecycle_resume(void)
{
	if (getpid() != tp_sess.pid || !tp_sess.active)
		return;
	if (tp_writer_restart() < 0)
		return;
	__atomic_store_n(&tp_recording, recording_before_exec,
			 __ATOMIC_RELEASE);
}

__attribute__((destructor)) static void tp_unload(void)
{
	tp_lifecycle_finish();
}
