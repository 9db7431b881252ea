/* Programs with known host behaviour, for the CPU sampling and blocking
 * call tests. Each makes one CUDA call first (the process is traced from
 * its first one) and prints what it saw itself, for the test to compare:
 *
 *   host_calls pipe     a thread reads a pipe one byte at a time, 100,000
 *                       reads; the writer sends 10 bursts of 10,000
 *                       bytes, each 50 ms after the pipe was emptied, so
 *                       exactly 10 reads block about 50 ms. Prints the
 *                       reads, the slow ones (40 ms or more), and the
 *                       reads it saw take 1 to 40 ms (a loaded
 *                       machine's scheduling).
 *   host_calls sigprof  the program profiles itself: its own SIGPROF
 *                       handler, setitimer(ITIMER_PROF, 1 ms), 0.3 s of
 *                       CPU. Prints how many SIGPROFs it got, whether its
 *                       handler is still the one installed, and its
 *                       timer's interval at the end.
 *   host_calls eintr    four threads, each spending CPU right before
 *                       calls a signal handler would make fail with
 *                       EINTR whatever SA_RESTART says (nanosleep,
 *                       usleep, poll, epoll_wait, select, sigtimedwait)
 *                       or that restart with it (read, waitpid-like
 *                       waits on a pipe); prints the EINTRs seen.
 *   host_calls burn S   S seconds of CPU in one function (burn).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/select.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

static double mono(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static double cpu(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static volatile double sink;

__attribute__((noinline)) static void spin_us(unsigned us)
{
	double end = cpu() + us / 1e6, x = 0;

	while (cpu() < end)
		for (int i = 0; i < 200; i++)
			x += i;
	sink = x;
}

/* pipe */
static int fds[2];

/* Each burst 50 ms after the reader emptied the pipe: every read that
 * waits for one waits 50 ms, less the moment between its last byte and
 * its next read. */
static void *writer(void *arg)
{
	static char burst[10000];
	struct timespec ms50 = { 0, 50000000 }, us500 = { 0, 500000 };
	int i, left;

	(void)arg;
	memset(burst, 'x', sizeof(burst));
	for (i = 0; i < 10; i++) {
		while (ioctl(fds[0], FIONREAD, &left) == 0 && left > 0)
			nanosleep(&us500, NULL);
		nanosleep(&ms50, NULL);
		if (write(fds[1], burst, sizeof(burst)) != sizeof(burst))
			exit(3);
	}
	return NULL;
}

__attribute__((noinline)) static int run_pipe(void)
{
	int reads = 0, slow = 0, between = 0;
	pthread_t w;
	char c;

	if (pipe(fds) < 0 || pthread_create(&w, NULL, writer, NULL))
		return 2;
	while (reads < 100000) {
		double t0 = mono(), d;

		if (read(fds[0], &c, 1) != 1)
			return 4;
		d = mono() - t0;
		reads++;
		if (d >= 0.040)
			slow++;
		else if (d >= 0.001)
			between++;
	}
	pthread_join(w, NULL);
	printf("reads %d slow %d between %d\n", reads, slow, between);
	return 0;
}

/* sigprof */
static volatile int profs;

static void on_prof(int sig)
{
	(void)sig;
	profs++;
}

static int run_sigprof(void)
{
	struct itimerval it = { { 0, 1000 }, { 0, 1000 } }, cur;
	struct sigaction sa, now;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_prof;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGPROF, &sa, NULL);
	setitimer(ITIMER_PROF, &it, NULL);
	spin_us(300000);
	/* a loaded machine's ticks may all have fallen while others ran */
	for (int i = 0; i < 20 && !profs; i++)
		spin_us(100000);
	getitimer(ITIMER_PROF, &cur);
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_PROF, &it, NULL);
	sigaction(SIGPROF, NULL, &now);
	printf("sigprof %d handler %s timer %ld\n", profs,
	       now.sa_handler == on_prof ? "ours" : "replaced",
	       (long)cur.it_interval.tv_usec);
	return 0;
}

/* eintr: each call right after CPU work, so a sample falls due at its
 * entry as often as can be. */
static int eintrs, calls;
static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;

static void note(int rc, int err)
{
	pthread_mutex_lock(&count_lock);
	calls++;
	if (rc < 0 && err == EINTR)
		eintrs++;
	pthread_mutex_unlock(&count_lock);
}

static void *eintr_worker(void *arg)
{
	long id = (long)arg;
	struct timespec ns = { 0, 200000 }, zero = { 0, 0 };
	int ep = epoll_create1(0), p[2], i, rc;
	struct pollfd pf;
	sigset_t usr;
	char c;

	if (ep < 0 || pipe(p) < 0)
		exit(5);
	pf.fd = p[0];
	pf.events = POLLIN;
	sigemptyset(&usr);
	sigaddset(&usr, SIGUSR1);
	for (i = 0; i < 200; i++) {
		struct timeval tv = { 0, 200 };
		fd_set r;

		spin_us(300);
		switch ((i + id) % 7) {
		case 0:
			rc = nanosleep(&ns, NULL);
			break;
		case 1:
			rc = usleep(200);
			break;
		case 2:
			rc = poll(&pf, 1, 1);
			break;
		case 3:
			{
				struct epoll_event ev;

				rc = epoll_wait(ep, &ev, 1, 1);
			}
			break;
		case 4:
			FD_ZERO(&r);
			FD_SET(p[0], &r);
			rc = select(p[0] + 1, &r, NULL, NULL, &tv);
			break;
		case 5:
			rc = sigtimedwait(&usr, NULL, &zero);
			if (rc < 0 && errno == EAGAIN)
				rc = 0;
			break;
		default:
			/* a read that blocks until the write below */
			if (write(p[1], "x", 1) != 1)
				exit(6);
			rc = (int)read(p[0], &c, 1);
			break;
		}
		note(rc, errno);
	}
	close(ep);
	close(p[0]);
	close(p[1]);
	return NULL;
}

static int run_eintr(void)
{
	pthread_t t[4];
	sigset_t usr;
	long i;

	/* SIGUSR1 is what sigtimedwait waits for: blocked, as it must be */
	sigemptyset(&usr);
	sigaddset(&usr, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr, NULL);
	for (i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, eintr_worker, (void *)i))
			return 2;
	for (i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	printf("eintr %d calls %d\n", eintrs, calls);
	return 0;
}

__attribute__((noinline)) static void burn(double s)
{
	spin_us((unsigned)(s * 1e6));
}

int main(int argc, char **argv)
{
	char buf[64] = { 0 };
	const char *mode = argc > 1 ? argv[1] : "";

	/* The process is traced from its first CUDA call (no GPU here: it
	 * fails, and is recorded). */
	cudaMemcpy(buf, buf + 32, 16, cudaMemcpyHostToDevice);
	if (!strcmp(mode, "pipe"))
		return run_pipe();
	if (!strcmp(mode, "sigprof"))
		return run_sigprof();
	if (!strcmp(mode, "eintr"))
		return run_eintr();
	if (!strcmp(mode, "burn")) {
		burn(argc > 2 ? atof(argv[2]) : 0.5);
		printf("burn done\n");
		return 0;
	}
	fprintf(stderr, "usage: host_calls pipe|sigprof|eintr|burn S\n");
	return 2;
}
