/* exec replaces the process image without running destructors: complete
 * the trace first. The environment (LD_PRELOAD, TPROF_*, TPROF_RUN_ID)
 * carries tprof into the new program. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <unistd.h>

#include "../trace/thread.h"

void tp_lifecycle_finish(void);

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execv_fn)(const char *, char *const[]);

static void *next(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

/* If exec fails the program goes on, untraced: its file is complete. */
__attribute__((visibility("default")))
int execve(const char *path, char *const argv[], char *const envp[])
{
	execve_fn real = (execve_fn)next("execve");

	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	tp_lifecycle_finish();
	return real(path, argv, envp);
}

__attribute__((visibility("default")))
int execv(const char *path, char *const argv[])
{
	execv_fn real = (execv_fn)next("execv");

	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	tp_lifecycle_finish();
	return real(path, argv);
}

__attribute__((visibility("default")))
int execvp(const char *file, char *const argv[])
{
	execv_fn real = (execv_fn)next("execvp");

	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	tp_lifecycle_finish();
	return real(file, argv);
}

__attribute__((visibility("default")))
int execvpe(const char *file, char *const argv[], char *const envp[])
{
	execve_fn real = (execve_fn)next("execvpe");

	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	tp_lifecycle_finish();
	return real(file, argv, envp);
}
