/* Process lifecycle cases, one per mode:
 *
 *   lifecycle loop [handler]   record until a signal arrives ("ready" on
 *                              stdout once recording); with "handler" the
 *                              program's own SIGTERM handler exits 7
 *   lifecycle fork             parent and child both record
 *   lifecycle exec             record, then exec "lifecycle exec2"
 *   lifecycle exit N           record, then exit(N) from a thread
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

static void nap_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static void on_term(int sig)
{
	static const char msg[] = "handled\n";

	(void)sig;
	if (write(STDOUT_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(8);
	exit(7);
}

static __attribute__((noreturn)) void loop(int handler)
{
	int i;

	if (handler)
		signal(SIGTERM, on_term);
	for (i = 0; i < 10; i++)
		cudaStreamSynchronize(0);
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		cudaStreamSynchronize(0);
		nap_ms(1);
	}
}

static volatile int stop_spinner;

/* Keeps recording while the main thread forks: the child must not
 * inherit a half-written ring or a held lock. */
static void *spinner(void *arg)
{
	(void)arg;
	while (!stop_spinner)
		cudaDeviceSynchronize();
	return NULL;
}

static int do_fork(void)
{
	pthread_t t;
	void *p;
	pid_t pid;
	int i, status = 0;

	for (i = 0; i < 5; i++)
		cudaMalloc(&p, 64);
	pthread_create(&t, NULL, spinner, NULL);
	nap_ms(20);
	pid = fork();
	if (pid == 0) {
		for (i = 0; i < 3; i++)
			cudaFree(NULL);
		printf("child %d\n", (int)getpid());
		exit(0);
	}
	waitpid(pid, &status, 0);
	stop_spinner = 1;
	pthread_join(t, NULL);
	for (i = 0; i < 2; i++)
		cudaMemset(NULL, 0, 8);
	printf("parent child-status %d\n", WEXITSTATUS(status));
	return WEXITSTATUS(status);
}

static int do_exec(const char *self)
{
	void *p;

	cudaMalloc(&p, 64);
	cudaMalloc(&p, 64);
	execl(self, self, "exec2", (char *)NULL);
	return 99;
}

static int do_exec2(void)
{
	int i;

	for (i = 0; i < 4; i++)
		cudaFree(NULL);
	printf("exec2 done\n");
	return 0;
}

static int exit_code;

static void *exiter(void *arg)
{
	(void)arg;
	cudaDeviceSynchronize();
	exit(exit_code);
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc < 2)
		return 2;
	if (!strcmp(argv[1], "loop"))
		loop(argc > 2 && !strcmp(argv[2], "handler"));
	if (!strcmp(argv[1], "fork"))
		return do_fork();
	if (!strcmp(argv[1], "exec"))
		return do_exec(argv[0]);
	if (!strcmp(argv[1], "exec2"))
		return do_exec2();
	if (!strcmp(argv[1], "exit") && argc > 2) {
		exit_code = atoi(argv[2]);
		pthread_create(&t, NULL, exiter, NULL);
		pthread_join(t, NULL);
	}
	return 2;
}
