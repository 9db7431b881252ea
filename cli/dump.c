/* tprof dump PID...: sends each process the signal its TPROF_DUMP_SIGNAL
 * names, after checking that libtprof.so is loaded in it and that it runs
 * the flight recorder or the hang watchdog: a signal sent to a process
 * without tprof's handler would kill it (the default action of SIGUSR1
 * and SIGUSR2). Uses trace/ (the variable's parser) only. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "cli/usage/usage.h"
#include "config/config_capture.h"
#include "dump.h"

/* The whole of /proc/PID/<what> (NUL-separated for environ). */
static char *slurp(long pid, const char *what, size_t *len)
{
	char path[64], *p = NULL;
	size_t cap = 0, n = 0, got;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/%s", pid, what);
	f = fopen(path, "re");
	if (!f)
		return NULL;
	for (;;) {
		if (n + 4096 + 1 > cap) {
			char *q = realloc(p, cap = 2 * cap + 8192);

			if (!q) {
				free(p);
				fclose(f);
				return NULL;
			}
			p = q;
		}
		got = fread(p + n, 1, 4096, f);
		if (!got)
			break;
		n += got;
	}
	fclose(f);
	p[n] = '\0';
	*len = n;
	return p;
}

static const char *env_of(const char *env, size_t len, const char *name)
{
	size_t nl = strlen(name), i = 0;

	while (i < len) {
		const char *e = env + i;

		if (!strncmp(e, name, nl) && e[nl] == '=')
			return e + nl + 1;
		i += strlen(e) + 1;
	}
	return NULL;
}

static int dump_one(long pid)
{
	char *maps = NULL, *env = NULL;
	const char *v;
	size_t ml, el;
	int sig, ret = 1;

	maps = slurp(pid, "maps", &ml);
	env = slurp(pid, "environ", &el);
	if (!maps || !env) {
		fprintf(stderr, "tprof: error: cannot read process %ld: %s "
			"(give the pid of a running process of yours)\n", pid,
			strerror(errno));
		goto out;
	}
	if (!strstr(maps, "libtprof.so")) {
		fprintf(stderr, "tprof: error: process %ld has no libtprof.so "
			"loaded: nothing to dump (start it under tprof-run or "
			"LD_PRELOAD=libtprof.so)\n", pid);
		goto out;
	}
	v = env_of(env, el, "TPROF_DUMP_SIGNAL");
	if (!v || tp_parse_signal(v, &sig) < 0) {
		fprintf(stderr, "tprof: error: process %ld was not started "
			"with TPROF_DUMP_SIGNAL=USR1|USR2, so it has no dump "
			"handler and the signal would kill it (start it with "
			"tprof-run --dump-signal USR2)\n", pid);
		goto out;
	}
	if (!env_of(env, el, "TPROF_FLIGHT") && !env_of(env, el, "TPROF_HANG")) {
		fprintf(stderr, "tprof: error: process %ld runs neither the "
			"flight recorder (TPROF_FLIGHT) nor the hang watchdog "
			"(TPROF_HANG): it has nothing to dump\n", pid);
		goto out;
	}
	if (kill((pid_t)pid, sig) < 0) {
		fprintf(stderr, "tprof: error: cannot signal process %ld: "
			"%s\n", pid, strerror(errno));
		goto out;
	}
	fprintf(stderr, "tprof: asked process %ld for a dump (SIG%s); it "
		"writes it within 50 ms and says where on its stderr\n", pid,
		tp_signal_name(sig));
	ret = 0;
out:
	free(maps);
	free(env);
	return ret;
}

static const char help_text[] =
	"usage: tprof dump PID...\n"
	"\n"
	"Ask each running process for a dump of its flight recorder window\n"
	"(tprof-run --flight) or of its hang watchdog's state (--hang): sends\n"
	"it the signal its TPROF_DUMP_SIGNAL names (tprof-run --dump-signal),\n"
	"after checking that it has libtprof.so loaded and that handler, as\n"
	"the signal would kill a process without them. The process writes\n"
	"the dump within 50 ms and says where on its stderr.\n"
	"\n"
	"  -h, --help  show this help\n"
	"\n"
	"Exit status: 0 every process was asked, 1 one could not be, 2 usage\n"
	"error.\n";

int tp_cmd_dump(int argc, char **argv)
{
	static const struct tp_cmd_args args = {
		.name = "dump", .help = help_text,
		.missing = "no process given: give the PID of a process "
			   "started under tprof-run",
	};
	int i, n, ret = tp_cmd_args(&args, argc, argv, &n);
	char *end;
	long pid;

	if (ret >= 0)
		return ret;
	for (i = 1; i <= n; i++) {
		pid = strtol(argv[i], &end, 10);
		if (*end || end == argv[i] || pid <= 0)
			return tp_usage_error("dump", "'%s' is not a process id",
					      argv[i]);
	}
	for (i = 1, ret = 0; i <= n; i++)
		if (dump_one(strtol(argv[i], NULL, 10)))
			ret = 1;
	return ret;
}
