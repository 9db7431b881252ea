/* preload/: the library's life in the process (constructor, signals, fork,
 * exec), the program's capture gates and tprof's C API; the top layer. */
/* The public C API of tprof.h: what a program (or the Python helper,
 * through ctypes) calls to mark its steps and ranges. */
#include "capture/capture.h"
#include "hooks/nvtx/nvtx.h"

#include <tprof.h>

#define TP_EXPORT __attribute__((visibility("default")))

TP_EXPORT long tprof_step(void)
{
	return tp_capture_step();
}

TP_EXPORT void tprof_range_push(const char *name)
{
	tp_nvtx_tprof_push(name);
}

TP_EXPORT void tprof_range_pop(void)
{
	tp_nvtx_tprof_pop(NULL);
}

TP_EXPORT void tprof_range_pop_memory(int64_t at_entry, int64_t at_exit,
				      int64_t peak)
{
	struct tp_nvtx_mem m = { at_entry, at_exit, peak };

	tp_nvtx_tprof_pop(&m);
}

TP_EXPORT void tprof_mark(const char *name)
{
	tp_nvtx_tprof_mark(name);
}

TP_EXPORT void tprof_enable(void)
{
	tp_capture_user(1);
}

TP_EXPORT void tprof_disable(void)
{
	tp_capture_user(0);
}

TP_EXPORT int tprof_recording(void)
{
	return tp_capture_recording();
}
