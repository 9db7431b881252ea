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
#include "trace/log.h"
#include "trace/session.h"
#include "trace/writer.h"
#include "capture_hooks.h"
#include "hook.h"

static cudaError_t (*real_cudaProfilerStart)(void);
static cudaError_t (*real_cudaProfilerStop)(void);

/* One recorded call of either, as TP_HOOK records it. */
static cudaError_t profiler_call(cudaError_t (*real)(void), uint16_t api)
{
	struct tp_event *e;
	struct tp_rec r;
	cudaError_t ret;
	uint32_t corr;

	if (!tp_rec_begin(&r, TP_SRC_CUDA))
		return real();
	tp_rec_call_begin(&r);
	ret = real();
	corr = tp_rec_call_end(&r);
	e = tp_rec_end(&r, api, (int32_t)ret);
	if (e) {
		e->corr = corr;
		tp_rec_commit(&r);
	}
	return ret;
}

/* The gate opens before the call, so the call itself is in the window,
 * and closes after cudaProfilerStop, for the same reason. */
__attribute__((visibility("default"))) cudaError_t cudaProfilerStart(void)
{
	if (!TP_REAL_OK(cudaProfilerStart, tp_libs_cudart))
		return cudaErrorInitializationError;
	tp_capture_profiler_api(1);
	return profiler_call(real_cudaProfilerStart, TP_CUDART_PROFILER_START);
}

__attribute__((visibility("default"))) cudaError_t cudaProfilerStop(void)
{
	cudaError_t ret;

	if (!TP_REAL_OK(cudaProfilerStop, tp_libs_cudart))
		return cudaErrorInitializationError;
	ret = profiler_call(real_cudaProfilerStop, TP_CUDART_PROFILER_STOP);
	tp_capture_profiler_api(0);
	return ret;
}

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
	fn = active ? real_cudaProfilerStart : real_cudaProfilerStop;
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

void tp_capture_setup(void)
{
	const struct tp_capture_config *c = &tp_sess.cfg.cap;

	tp_capture_init(c, tp_sess.cfg.sources);
	if (c->signal)
		install_signal(c->signal);
	if (c->nsys)
		tp_capture_set_hooks(&nsys_hooks);
	if (tp_capture_needs_poll())
		tp_writer_start();
}
