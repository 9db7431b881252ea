/* Runs a command where one system call is forbidden, as Docker's default
 * seccomp profile forbids perf_event_open: a seccomp filter (inherited
 * across exec) makes it fail with EPERM, every other call untouched.
 *   forbid perf_event_open|timer_create COMMAND ARGS...
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	unsigned nr = argc > 1 && !strcmp(argv[1], "timer_create") ?
		      __NR_timer_create : __NR_perf_event_open;
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	if (argc < 3 || (strcmp(argv[1], "timer_create") &&
			 strcmp(argv[1], "perf_event_open"))) {
		fprintf(stderr, "usage: forbid perf_event_open|timer_create "
			"COMMAND ARGS...\n");
		return 2;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
		perror("forbid: seccomp");
		return 2;
	}
	execvp(argv[2], argv + 2);
	perror("forbid: exec");
	return 127;
}
