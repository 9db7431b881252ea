/* preload/: the library's life in the process (constructor, signals, fork,
 * exec), the program's capture gates and tprof's C API; the top layer. */
/* The program's side of the capture gates: cudaProfilerStart/Stop
 * (TPROF_CAPTURE=cudaProfilerApi), the TPROF_SIGNAL toggle, and
 * TPROF_NSYS, which hands nsys the windows tprof keeps. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <nvtx3/nvToolsExt.h>

#include "capture/capture.h"
#include "util/log.h"
#include "session/session.h"
#include "output/writer.h"
#include "capture_hooks.h"
#include "hooks/hook.h"

/* cudaProfilerStart/Stop: recorded as TP_HOOK records a call; the gate
 * opens before cudaProfilerStart, so the call itself is in the window,
 * and closes after cudaProfilerStop (and its record), for the same
 * reason. The gate moves whether or not the call is recorded. */
static inline __attribute__((always_inline)) int
profiler_enter(struct tp_call *k, int start)
{
	if (start)
		tp_capture_profiler_api(1);
	/* Set when recording; cleared so that the compiler sees it set on
	 * every path to the end (it cannot tell the end runs only then). */
	k->r.t = NULL;
	k->rec = tp_cudart_enter(k);
	return 1;
}

#define PROFILER_HOOK(name, id, start)                                   \
	TP_HOOK_SHAPE(cudaError_t, name, tp_libs_cudart,                 \
		      cudaErrorInitializationError, (void), (),          \
		      struct tp_call, profiler_enter(&tp_call, start),   \
		      if (tp_call.rec) tp_call.corr =                    \
			      tp_rec_call_end(&tp_call.r),               \
		      tp_call.rec ? tp_cudart_end(&tp_call, TP_CUDART_##id, \
						  (int32_t)ret)          \
				  : NULL,                                \
		      tp_cudart_kind(TP_CUDART_##id),                    \
		      if (!(start)) tp_capture_profiler_api(0), )

PROFILER_HOOK(cudaProfilerStart, PROFILER_START, 1)
PROFILER_HOOK(cudaProfilerStop, PROFILER_STOP, 0)

/* ---- TPROF_SIGNAL ---- */

static void on_toggle(int sig)
{
	(void)sig;
	tp_capture_signal();
	tp_writer_wake();
}

static void install_signal(int sig)
{
	struct sigaction old, sa;

	if (sigaction(sig, NULL, &old) == 0 &&
	    (old.sa_handler != SIG_DFL || (old.sa_flags & SA_SIGINFO))) {
		tp_warn("TPROF_SIGNAL=%s: the program already handles SIG%s, "
			"so it cannot toggle recording (choose the other of "
			"USR1 and USR2)", tp_signal_name(sig),
			tp_signal_name(sig));
		return;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_toggle;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(sig, &sa, NULL) < 0)
		tp_warn("TPROF_SIGNAL=%s: cannot install a handler: %s",
			tp_signal_name(sig), strerror(errno));
}

/* ---- TPROF_NSYS ---- */

static nvtxRangeId_t step_range;

/* nsys's capture range follows cudaProfilerStart/Stop: called with the
 * capture lock held, never through tprof's own hooks. */
static void nsys_window(int active)
{
	cudaError_t (*fn)(void);

	if (active ? !TP_REAL_OK(cudaProfilerStart, tp_libs_cudart)
		   : !TP_REAL_OK(cudaProfilerStop, tp_libs_cudart))
		return;
	fn = active ? TP_REAL(cudaProfilerStart) : TP_REAL(cudaProfilerStop);
	fn();
}

/* "step N" ranges for the tool NVTX reports to; none when that tool is
 * tprof itself (its ProfilerStep events say the same). */
static void nsys_step(long n, int begin)
{
	char name[48];

	if (!tp_nvtx_other_tool())
		return;
	if (!begin) {
		if (step_range)
			nvtxRangeEnd(step_range);
		step_range = 0;
		return;
	}
	snprintf(name, sizeof(name), "step %ld", n);
	step_range = nvtxRangeStartA(name);
}

static const struct tp_capture_hooks nsys_hooks = {
	.window = nsys_window,
	.step = nsys_step,
};

/* The capture state's own lines in the trace: the steps' track name and
 * the schedule in the tprof object. */
static const struct tp_writer_ext capture_ext = {
	.put_meta = tp_capture_put_meta,
	.put_stats = tp_capture_put_stats,
};

void tp_capture_setup(void)
{
	const struct tp_capture_config *c = &tp_sess.cfg.cap;

	tp_writer_add_ext(&capture_ext);
	tp_capture_init(c, tp_sess.cfg.sources);
	if (c->signal)
		install_signal(c->signal);
	if (c->nsys)
		tp_capture_set_hooks(&nsys_hooks);
	if (tp_capture_needs_poll())
		tp_writer_start();
}
