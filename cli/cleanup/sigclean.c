/* Files removed on a fatal signal (sigclean.h). The handler only reads
 * fixed arrays and calls unlink, signal and raise, all async-signal-safe;
 * a slot's path is written before it is marked in use. */
#include "sigclean.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

#define SLOTS 4
#define PATH_BYTES 4096

static char paths[SLOTS][PATH_BYTES];
static volatile sig_atomic_t used[SLOTS];

static void on_signal(int sig)
{
	int i;

	for (i = 0; i < SLOTS; i++)
		if (used[i])
			unlink(paths[i]);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void install(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGXFSZ };
	static int done;
	size_t i;

	if (done)
		return;
	done = 1;
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (signal(sigs[i], on_signal) == SIG_IGN)
			/* a write past RLIMIT_FSIZE must fail with EFBIG,
			 * not kill us, when the shell ignores SIGXFSZ */
			signal(sigs[i], SIG_IGN);
}

int tp_sigclean_add(const char *path)
{
	int i;

	if (!path || strlen(path) >= PATH_BYTES)
		return -1;
	for (i = 0; i < SLOTS; i++) {
		if (used[i])
			continue;
		strcpy(paths[i], path);
		install();
		used[i] = 1;
		return i;
	}
	return -1;
}

void tp_sigclean_drop(int slot)
{
	if (slot >= 0 && slot < SLOTS)
		used[slot] = 0;
}
