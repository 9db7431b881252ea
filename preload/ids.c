/* preload/: the library's life in the process (constructor, signals, fork,
 * exec), the program's capture gates and tprof's C API; the top layer. */
/* A privileged program that drops root (a daemon switching to its user)
 * may no longer rename, or even remove, the trace it began as root in a
 * directory only root may write: the trace would be left as a .tmp. So
 * the trace so far is completed while the program is still root, and
 * recording goes on into a new file, which the new user may or may not be
 * allowed to create (then one error line, and nothing left behind). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <unistd.h>

void tp_lifecycle_split(void);
void tp_lifecycle_resume(void);

typedef int (*set1_fn)(uid_t);
typedef int (*set2_fn)(uid_t, uid_t);
typedef int (*set3_fn)(uid_t, uid_t, uid_t);

/* Only a drop from root: any other change keeps what root could do. */
static int drops_root(uid_t euid)
{
	return geteuid() == 0 && euid != (uid_t)-1 && euid != 0;
}

static int after(int rc, int split)
{
	int saved = errno;

	if (split)
		tp_lifecycle_resume();
	errno = saved;
	return rc;
}

static int split_if(int split)
{
	if (split)
		tp_lifecycle_split();
	return split;
}

__attribute__((visibility("default")))
int setuid(uid_t uid)
{
	set1_fn real = (set1_fn)dlsym(RTLD_NEXT, "setuid");
	int split;

	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	split = split_if(drops_root(uid));
	return after(real(uid), split);
}

__attribute__((visibility("default")))
int seteuid(uid_t euid)
{
	set1_fn real = (set1_fn)dlsym(RTLD_NEXT, "seteuid");
	int split;

	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	split = split_if(drops_root(euid));
	return after(real(euid), split);
}

__attribute__((visibility("default")))
int setreuid(uid_t ruid, uid_t euid)
{
	set2_fn real = (set2_fn)dlsym(RTLD_NEXT, "setreuid");
	int split;

	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	split = split_if(drops_root(euid));
	return after(real(ruid, euid), split);
}

__attribute__((visibility("default")))
int setresuid(uid_t ruid, uid_t euid, uid_t suid)
{
	set3_fn real = (set3_fn)dlsym(RTLD_NEXT, "setresuid");
	int split;

	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	split = split_if(drops_root(euid));
	return after(real(ruid, euid, suid), split);
}
