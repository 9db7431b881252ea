/* preload/: the library's life in the process (constructor, signals, fork,
 * exec), the program's capture gates and tprof's C API; the top layer. */
/* exec replaces the process image without running destructors: complete
 * the trace first. The environment (LD_PRELOAD, TPROF_*, TPROF_RUN_ID)
 * carries tprof into the new program, which writes a file of its own
 * (files/naming.h). An exec that fails returns to the program: recording
 * resumes, into a new file. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <unistd.h>

#include "record/thread.h"

void tp_lifecycle_finish(void);
void tp_lifecycle_resume(void);

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execv_fn)(const char *, char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);
typedef int (*execveat_fn)(int, const char *, char *const[], char *const[],
			   int);

static void *next(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

/* Only an exec that failed returns; errno is the exec's. */
static int resumed(int rc)
{
	int saved = errno;

	tp_lifecycle_resume();
	errno = saved;
	return rc;
}

__attribute__((visibility("default")))
int execve(const char *path, char *const argv[], char *const envp[])
{
	execve_fn real = (execve_fn)next("execve");

	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	tp_lifecycle_finish();
	return resumed(real(path, argv, envp));
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
	return resumed(real(path, argv));
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
	return resumed(real(file, argv));
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
	return resumed(real(file, argv, envp));
}

__attribute__((visibility("default")))
int fexecve(int fd, char *const argv[], char *const envp[])
{
	fexecve_fn real = (fexecve_fn)next("fexecve");

	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	tp_lifecycle_finish();
	return resumed(real(fd, argv, envp));
}

/* glibc 2.34 and later export it; an older one has no symbol to find. */
__attribute__((visibility("default")))
int execveat(int dirfd, const char *path, char *const argv[],
	     char *const envp[], int flags)
{
	execveat_fn real = (execveat_fn)next("execveat");

	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	tp_lifecycle_finish();
	return resumed(real(dirfd, path, argv, envp, flags));
}

/* The execl family calls execve inside libc, past our hook: gather the
 * arguments and go through the hooked execv* above. */
#define MAX_EXECL_ARGS 4096

static int collect(const char *arg0, va_list ap, char **argv, char ***envp)
{
	int n = 0;

	argv[n++] = (char *)arg0;
	while (arg0 && n < MAX_EXECL_ARGS) {
		argv[n] = va_arg(ap, char *);
		if (!argv[n++])
			break;
	}
	if (n == MAX_EXECL_ARGS) {
		errno = E2BIG;
		return -1;
	}
	if (envp)
		*envp = va_arg(ap, char **);
	return 0;
}

/* va_start must run in the variadic function itself. */
#define COLLECT(arg, argv, envp, rc)                                     \
	do {                                                             \
		va_list ap;                                              \
									 \
		va_start(ap, arg);                                       \
		rc = collect(arg, ap, argv, envp);                       \
		va_end(ap);                                              \
	} while (0)

__attribute__((visibility("default")))
int execl(const char *path, const char *arg, ...)
{
	char *argv[MAX_EXECL_ARGS];
	int rc;

	COLLECT(arg, argv, NULL, rc);
	return rc < 0 ? rc : execv(path, argv);
}

__attribute__((visibility("default")))
int execlp(const char *file, const char *arg, ...)
{
	char *argv[MAX_EXECL_ARGS];
	int rc;

	COLLECT(arg, argv, NULL, rc);
	return rc < 0 ? rc : execvp(file, argv);
}

__attribute__((visibility("default")))
int execle(const char *path, const char *arg, ...)
{
	char *argv[MAX_EXECL_ARGS];
	char **envp = NULL;
	int rc;

	COLLECT(arg, argv, &envp, rc);
	return rc < 0 ? rc : execve(path, argv, envp);
}
