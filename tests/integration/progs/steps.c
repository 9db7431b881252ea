/* Steps and capture gates under the preload. Each unit of work is one
 * cudaFree of a distinctive pointer (0x1000 * (unit + 1)), so the test
 * knows which units were kept from the "ptr" arg. The tprof API is
 * looked up with dlsym, as a program that must also run without tprof
 * does.
 *
 *   steps api N           N steps of one unit each, ended by tprof_step
 *   steps nvtx N NAME     ... ended by the pop of NVTX range NAME
 *   steps mark N NAME     ... by an NVTX mark NAME after the unit
 *   steps start N NAME    ... by nvtxRangeEnd of a start/end range NAME
 *   steps profapi N A B   no steps; cudaProfilerStart before unit A,
 *                         cudaProfilerStop after unit B
 *   steps signal N        units 0..N-1, raising SIGUSR2 before unit 2 and
 *                         after unit N-3
 *   steps timed N MS      a unit every MS milliseconds
 *   steps toggle N        tprof_disable before unit 1, enable before N-1
 *   steps none N          units without any step
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>

static long (*step_fn)(void);

static void unit(int i)
{
	cudaFree((void *)(long)(0x1000 * (i + 1)));
}

static void step(void)
{
	long n = step_fn ? step_fn() : -1;

	printf("step %ld\n", n);
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "api";
	int n = argc > 2 ? atoi(argv[2]) : 4, i;
	const char *name = argc > 3 ? argv[3] : "step";
	void (*toggle)(void);

	step_fn = (long (*)(void))dlsym(RTLD_DEFAULT, "tprof_step");
	for (i = 0; i < n; i++) {
		if (!strcmp(mode, "api")) {
			unit(i);
			step();
		} else if (!strcmp(mode, "nvtx")) {
			nvtxRangePushA(name);
			unit(i);
			nvtxRangePop();
		} else if (!strcmp(mode, "mark")) {
			unit(i);
			nvtxMarkA(name);
		} else if (!strcmp(mode, "start")) {
			nvtxRangeId_t id = nvtxRangeStartA(name);

			unit(i);
			nvtxRangeEnd(id);
		} else if (!strcmp(mode, "profapi")) {
			if (i == atoi(argv[3]))
				cudaProfilerStart();
			unit(i);
			if (i == atoi(argv[4]))
				cudaProfilerStop();
		} else if (!strcmp(mode, "signal")) {
			if (i == 2 || i == n - 2) {
				raise(SIGUSR2);
				sleep_ms(300);
			}
			unit(i);
		} else if (!strcmp(mode, "timed")) {
			unit(i);
			sleep_ms(atoi(argv[3]));
		} else if (!strcmp(mode, "toggle")) {
			if (i == 1 || i == n - 1) {
				toggle = (void (*)(void))dlsym(RTLD_DEFAULT,
					i == 1 ? "tprof_disable" : "tprof_enable");
				if (toggle)
					toggle();
			}
			unit(i);
		} else {
			unit(i);
		}
	}
	return 0;
}
