/* The programs of the fault-injection tests (test_robust.py, and longer
 * in make test-stress), one per mode:
 *
 *   robust churn N CONC CALLS  N threads, CONC at a time, CALLS calls
 *                              each; prints "hwm_kb K" (peak RSS)
 *   robust burst N RATE        one call, 200 ms of sleep, then N calls
 *                              from one thread paced at RATE calls per
 *                              second; prints "calls N+1" and
 *                              "writer_wait_ns W" (the writer's time
 *                              waiting for a core during the N calls)
 *                              and "writer_majflt F" (its page faults
 *                              that read the disk meanwhile)
 *   robust fds N FILE          N calls, 300 ms, closes every descriptor from
 *                              3 up, opens its own file (argv[3]) and
 *                              dup2s it over every number up to 1100,
 *                              N more calls, writes one line to it
 *   robust term THREADS        THREADS busy recording threads; "ready" on
 *                              stdout, then waits for a signal
 *   robust dlterm LIB          a thread dlopen()s LIB (whose constructor
 *                              keeps calling, holding the loader lock);
 *                              "ready", then kernel launches, each of a
 *                              new host function address, until a signal
 *   robust exec K CALLS        CALLS calls, then exec()s itself with K-1
 *                              (execv and fexecve by turns) until K is 1:
 *                              a chain of K images in one pid
 *   robust execfail CALLS      CALLS calls, an execl of a missing path
 *                              (prints "errno ENOENT"), CALLS more calls
 *   robust aslimit T CALLS     one call, then T threads (default stacks)
 *                              that each make CALLS calls and stay alive
 *                              until all were created; prints "created C
 *                              failed F calls N vmpeak_kb K" (N: calls
 *                              issued in all)
 *   robust setuid N UID        N calls, drops root (setgid and setuid to
 *                              UID), N more calls
 *   robust forks N CALLS       forks N children at once, before its own
 *                              first call; each child and then the parent
 *                              make CALLS calls; the parent prints
 *                              "pid P" first and waits for all
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

static long calls_per_thread;

static void *caller(void *arg)
{
	long i;

	(void)arg;
	for (i = 0; i < calls_per_thread; i++)
		cudaStreamSynchronize(0);
	return NULL;
}

static long hwm_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %ld", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static int churn(long n, int conc, long calls)
{
	pthread_t th[256];
	long started = 0;
	int i;

	if (conc > 256)
		conc = 256;
	calls_per_thread = calls;
	cudaStreamSynchronize(0);	/* cudart's own setup, once */
	while (started < n) {
		int k = 0;

		for (i = 0; i < conc && started < n; i++, started++, k++)
			if (pthread_create(&th[i], NULL, caller, NULL))
				return 1;
		for (i = 0; i < k; i++)
			pthread_join(th[i], NULL);
	}
	printf("hwm_kb %ld\n", hwm_kb());
	return 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The task directory of the thread named tprof-writer, in path. */
static int writer_task(char *path, size_t size)
{
	char name[64];
	struct dirent *d;
	DIR *dir = opendir("/proc/self/task");
	FILE *f;
	int found = 0;

	if (!dir)
		return 0;
	while (!found && (d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, size, "/proc/self/task/%s/comm", d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (!fgets(name, sizeof(name), f))
			name[0] = 0;
		fclose(f);
		if (strncmp(name, "tprof-writer", 12))
			continue;
		snprintf(path, size, "/proc/self/task/%s/", d->d_name);
		found = 1;
	}
	closedir(dir);
	return found;
}

/* What kept the writer from running: its time runnable but waiting for
 * a core (the second field of its schedstat, ns) and its page faults
 * that read the disk (the tenth field after the comm of its stat: a
 * first run on a fresh machine pages zlib and the output path in, time
 * schedstat does not count). -1 each when not found. */
static void writer_waits(long long *wait, long long *majflt)
{
	char dir[300], path[340], buf[1024], *p;
	long long run;
	size_t len;
	FILE *f;
	int i;

	*wait = *majflt = -1;
	if (!writer_task(dir, sizeof(dir)))
		return;
	snprintf(path, sizeof(path), "%sschedstat", dir);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%lld %lld", &run, wait) != 2)
			*wait = -1;
		fclose(f);
	}
	snprintf(path, sizeof(path), "%sstat", dir);
	f = fopen(path, "r");
	if (!f)
		return;
	len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = 0;
	p = strrchr(buf, ')');		/* the comm may hold spaces */
	for (i = 0; p && i < 10; i++)	/* the space before field 3 + i */
		p = strchr(p + 1, ' ');
	if (p)
		*majflt = strtoll(p + 1, NULL, 10);
}

/* Paced: call i is made at t0 + i / rate, so the offered rate is exact
 * whatever each call costs; but a thread preempted for more than a
 * millisecond starts again from the clock instead of catching up at full
 * speed, so the rate offered is never above RATE for long. */
static int burst(long n, double rate)
{
	struct timespec settle = { 0, 200000000L };
	uint64_t step = (uint64_t)(1e9 / rate), next, t;
	long long w0, w1, f0, f1;
	long i;

	/* The writer converts ticks once it has measured their rate (100 ms
	 * after start): the burst comes after that. */
	cudaStreamSynchronize(0);
	nanosleep(&settle, NULL);
	writer_waits(&w0, &f0);
	next = now_ns();
	for (i = 0; i < n; i++) {
		while ((t = now_ns()) < next)
			;
		next = (t > next + 1000000 ? t : next) + step;
		cudaStreamSynchronize(0);
	}
	writer_waits(&w1, &f1);
	printf("calls %ld\n", n + 1);
	printf("writer_wait_ns %lld\n", w0 < 0 || w1 < 0 ? -1 : w1 - w0);
	printf("writer_majflt %lld\n", f0 < 0 || f1 < 0 ? -1 : f1 - f0);
	return 0;
}

static int fds(long n, const char *path)
{
	static const char line[] = "the program's own line\n";
	struct rlimit rl;
	long i;
	int fd, top = 1100;

	struct timespec settle = { 0, 300000000L };

	for (i = 0; i < n; i++)
		cudaStreamSynchronize(0);
	/* After tprof has made its file: a program that closes descriptors
	 * it does not own while tprof opens or writes one can still race it
	 * (no check closes that window); one that does so later must find
	 * its files untouched and the trace complete. */
	nanosleep(&settle, NULL);
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)top)
		top = (int)rl.rlim_cur;
	for (fd = 3; fd < top; fd++)
		close(fd);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd != 3)
		return 2;
	for (i = 4; i < top; i++)
		dup2(fd, (int)i);
	for (i = 0; i < n; i++)
		cudaStreamSynchronize(0);
	if (write(fd, line, sizeof(line) - 1) != sizeof(line) - 1)
		return 3;
	return 0;
}

static void *spin(void *arg)
{
	(void)arg;
	for (;;)
		cudaStreamSynchronize(0);
	return NULL;
}

static int term(int threads)
{
	pthread_t t;
	int i;

	for (i = 0; i < threads; i++)
		if (pthread_create(&t, NULL, spin, NULL))
			return 1;
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}

static void *dlopen_main(void *lib)
{
	dlopen(lib, RTLD_NOW);
	return NULL;
}

static int dlterm(const char *lib)
{
	dim3 grid = { 1, 1, 1 }, block = { 1, 1, 1 };
	pthread_t t;
	unsigned long i;

	if (pthread_create(&t, NULL, dlopen_main, (void *)lib))
		return 1;
	usleep(100000);
	printf("ready\n");
	fflush(stdout);
	/* Addresses never named before: the writer must look each up. */
	for (i = 0;; i++) {
		cudaLaunchKernel((const char *)(uintptr_t)dlterm + i * 16,
				 grid, block, NULL, 0, 0);
		usleep(100);
	}
}

static void calls(long n)
{
	long i;

	for (i = 0; i < n; i++)
		cudaStreamSynchronize(0);
}

static int exec_chain(int k, const char *n)
{
	char next[16];
	char *argv[] = { "robust", "exec", next, (char *)n, NULL };
	int fd;

	calls(atol(n));
	if (k <= 1)
		return 0;
	snprintf(next, sizeof(next), "%d", k - 1);
	if (k % 2) {
		execv("/proc/self/exe", argv);
		return 4;
	}
	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 5;
	fexecve(fd, argv, environ);
	return 6;
}

static int exec_fail(long n)
{
	int rc;

	calls(n);
	rc = execl("/nonexistent/tprof-robust", "missing", (char *)NULL);
	printf("errno %s\n", rc == -1 && errno == ENOENT ? "ENOENT" : "?");
	fflush(stdout);
	calls(n);
	return 0;
}

/* The children fork before the parent's first call: each races its
 * parent to record first. */
static int forks(int n, long each)
{
	int i, status, bad = 0;

	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	for (i = 0; i < n; i++) {
		pid_t p = fork();

		if (p < 0)
			return 7;
		if (p == 0) {
			calls(each);
			exit(0);
		}
	}
	calls(each);
	for (i = 0; i < n; i++)
		if (wait(&status) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			bad++;
	return bad ? 8 : 0;
}

static int all_created;

static void *caller_waits(void *arg)
{
	struct timespec ms = { 0, 1000000 };

	caller(arg);
	while (!__atomic_load_n(&all_created, __ATOMIC_ACQUIRE))
		nanosleep(&ms, NULL);
	return NULL;
}

static long vm_peak_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPeak: %ld", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/* Under ulimit -v: every thread alive at once, so the address space the
 * program needs is its peak. */
static int as_limit(int n, long each)
{
	pthread_t th[1024];
	int i, created = 0, failed = 0;

	if (n > 1024)
		n = 1024;
	calls_per_thread = each;
	cudaStreamSynchronize(0);
	for (i = 0; i < n; i++) {
		if (pthread_create(&th[created], NULL, caller_waits, NULL))
			failed++;
		else
			created++;
	}
	__atomic_store_n(&all_created, 1, __ATOMIC_RELEASE);
	for (i = 0; i < created; i++)
		pthread_join(th[i], NULL);
	printf("created %d failed %d calls %ld vmpeak_kb %ld\n", created,
	       failed, 1 + created * each, vm_peak_kb());
	return 0;
}

static int drop_root(long n, int uid)
{
	calls(n);
	if (setgid((gid_t)uid) < 0 || setuid((uid_t)uid) < 0)
		return 9;
	calls(n);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 4 && !strcmp(argv[1], "aslimit"))
		return as_limit(atoi(argv[2]), atol(argv[3]));
	if (argc >= 4 && !strcmp(argv[1], "setuid"))
		return drop_root(atol(argv[2]), atoi(argv[3]));
	if (argc >= 4 && !strcmp(argv[1], "exec"))
		return exec_chain(atoi(argv[2]), argv[3]);
	if (argc >= 3 && !strcmp(argv[1], "execfail"))
		return exec_fail(atol(argv[2]));
	if (argc >= 4 && !strcmp(argv[1], "forks"))
		return forks(atoi(argv[2]), atol(argv[3]));
	if (argc >= 5 && !strcmp(argv[1], "churn"))
		return churn(atol(argv[2]), atoi(argv[3]), atol(argv[4]));
	if (argc >= 4 && !strcmp(argv[1], "burst"))
		return burst(atol(argv[2]), atof(argv[3]));
	if (argc >= 4 && !strcmp(argv[1], "fds"))
		return fds(atol(argv[2]), argv[3]);
	if (argc >= 3 && !strcmp(argv[1], "dlterm"))
		return dlterm(argv[2]);
	if (argc >= 3 && !strcmp(argv[1], "term"))
		return term(atoi(argv[2]));
	fprintf(stderr, "usage: robust churn|burst|fds|term ...\n");
	return 64;
}
