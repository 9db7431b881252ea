/* hooks/nvtx/: the nvtx hooks, on hooks/ (resolve.c: how the real
 * functions are found) and every library folder below it. */
/* NVTX finds its tool through NVTX_INJECTION64_PATH, read once per DSO
 * at its first NVTX call: at load we point it at this library, unless it
 * names another tool already (then that tool gets the ranges, and we
 * say so). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "util/log.h"
#include "session/session.h"
#include "preload/capture_hooks.h"
#include "nvtx.h"

#define ENV "NVTX_INJECTION64_PATH"

static unsigned attached;
static const char *state = "not used: no NVTX call";

/* Attaches whenever called, even before our constructor ran (a library
 * constructor calling NVTX): whether anything is recorded is decided per
 * call by TPROF_TRACE and the schedule. */
__attribute__((visibility("default")))
int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get)
{
	const NvtxExportTableCallbacks *cb;

	if (!get)
		return 0;
	cb = get(NVTX_ETID_CALLBACKS);
	if (!cb || cb->struct_size < sizeof(*cb) || !cb->GetModuleFunctionTable)
		return 0;
	if (!tp_nvtx_install(cb))
		return 0;
	__atomic_add_fetch(&attached, 1, __ATOMIC_RELAXED);
	return 1;
}

unsigned tp_nvtx_attached(void)
{
	return __atomic_load_n(&attached, __ATOMIC_RELAXED);
}

const char *tp_nvtx_state(void)
{
	return tp_nvtx_attached() ? "on" : state;
}

static int self_path(char *out)
{
	Dl_info info;

	if (!dladdr((void *)InitializeInjectionNvtx2, &info) ||
	    !info.dli_fname || !realpath(info.dli_fname, out))
		return -1;
	return 0;
}

static int same_file(const char *a, const char *b)
{
	char ra[PATH_MAX];

	return realpath(a, ra) && !strcmp(ra, b);
}

int tp_nvtx_other_tool(void)
{
	static int other = -1;
	char self[PATH_MAX];
	const char *cur;

	if (other >= 0)
		return other;
	cur = getenv(ENV);
	other = cur && cur[0] && (self_path(self) < 0 || !same_file(cur, self));
	return other;
}

void tp_nvtx_setup(void)
{
	static char self[PATH_MAX];
	const char *cur = getenv(ENV);

	if (!(tp_sess.cfg.sources & TP_SRC_NVTX) &&
	    !tp_sess.cfg.cap.step_nvtx[0]) {
		state = "off: not in TPROF_TRACE";
		return;
	}
	if (self_path(self) < 0) {
		state = "off: cannot find libtprof.so's own path";
		tp_warn("cannot find the path of libtprof.so itself; NVTX "
			"ranges are not recorded (set " ENV " to the full "
			"path of libtprof.so)");
		return;
	}
	if (cur && cur[0]) {
		if (same_file(cur, self))
			return;
		state = "off: " ENV " names another tool";
		tp_warn(ENV " is already set to '%s' (another tool); NVTX "
			"ranges go to it and are not recorded (unset " ENV
			" to record them)", cur);
		return;
	}
	if (setenv(ENV, self, 0) < 0)
		state = "off: cannot set " ENV;
}
