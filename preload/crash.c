/* preload/: the library's life in the process (constructor, signals, fork,
 * exec), the program's capture gates and tprof's C API; the top layer. */
/* Deaths that skip the normal exit path: a crash signal (SIGSEGV, SIGBUS,
 * SIGFPE, SIGILL, SIGABRT) or _exit/_Exit. The trace is completed and
 * renamed first (tp_crash_dump, output/crash.h), then the process dies
 * exactly as it would have without tprof: same signal, same core dump,
 * same exit code.
 *
 * The program's own handlers keep working without displacing ours: the
 * kernel always holds tprof's handler for these signals, and sigaction()
 * and signal() for them read and write the program's view instead (what
 * it would see without tprof). On a signal, a handler the program set is
 * called as the kernel would call it; only when the program's disposition
 * is the default action does tprof complete the trace, restore the
 * default and let the signal kill the process. A chaining handler
 * (Python's faulthandler restores the previous disposition and raises
 * again) so ends in the default action, and the trace is written once. A
 * program that installs handlers with the raw rt_sigaction system call
 * displaces tprof's: its process then dies like before, with the .tmp
 * file left for `tprof recover`. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "session/session.h"
#include "record/thread.h"
#include "output/crash.h"
#include "stacks/symbols.h"

/* The wait for the writer lasts while it makes progress; this bounds a
 * writer that makes none (stuck on a lock the crashed thread held). */
#define CRASH_STALL_MS 3000
#define EXIT_STALL_MS 10000

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
typedef void (*exit_fn)(int);
typedef sighandler_t (*signal_fn)(int, sighandler_t);

static const int crash_signals[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL,
				     SIGABRT };

/* Resolved at install: a handler calling signal() (lifecycle.c's does)
 * must not reach dlsym, which is not async-signal-safe. */
static signal_fn real_signal[3];
static const char *const signal_names[3] = { "signal", "bsd_signal",
					     "sysv_signal" };

static sigaction_fn real_sigaction;
static exit_fn real_exit, real_Exit;
/* Per signal: tprof's handler is in the kernel, and the disposition the
 * program believes it has. */
static int ours[NSIG];
static struct sigaction prog[NSIG];

static __attribute__((no_sanitize("thread"))) int is_crash_signal(int sig)
{
	return sig > 0 && sig < NSIG && ours[sig];
}

static __attribute__((no_sanitize("thread"))) int call_real_sigaction(int sig, const struct sigaction *act,
			       struct sigaction *old)
{
	if (!real_sigaction)
		real_sigaction = (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
	if (!real_sigaction) {
		errno = ENOSYS;
		return -1;
	}
	return real_sigaction(sig, act, old);
}

/* The kernel's default action, for good: the signal then kills. */
static void restore_default(int sig)
{
	struct sigaction dfl;

	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	ours[sig] = 0;
	call_real_sigaction(sig, &dfl, NULL);
}

/* The program's handler, with the mask and flags the kernel would have
 * applied: its sa_mask, and the signal itself unless SA_NODEFER. */
static void call_program(int sig, siginfo_t *si, void *uc,
			 const struct sigaction *p)
{
	sigset_t mask, old;
	unsigned i;

	pthread_sigmask(SIG_BLOCK, NULL, &mask);
	for (i = 1; i < NSIG; i++)
		if (sigismember(&p->sa_mask, (int)i) == 1)
			sigaddset(&mask, (int)i);
	if (p->sa_flags & SA_NODEFER)
		sigdelset(&mask, sig);
	if (p->sa_flags & SA_RESETHAND) {
		memset(&prog[sig], 0, sizeof(prog[sig]));
		prog[sig].sa_handler = SIG_DFL;
	}
	pthread_sigmask(SIG_SETMASK, &mask, &old);
	if (p->sa_flags & SA_SIGINFO)
		p->sa_sigaction(sig, si, uc);
	else
		p->sa_handler(sig);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static int is_handler(const struct sigaction *p)
{
	if (p->sa_flags & SA_SIGINFO)
		return p->sa_sigaction != NULL;
	return p->sa_handler != SIG_DFL && p->sa_handler != SIG_IGN;
}

/* Async-signal-safe throughout: the program's handler, or the dump (a
 * futex wait on the writer) and the default action. The signal is raised
 * again while blocked here, so it kills the process as soon as this
 * returns, with the context of the fault (the core dump shows where the
 * program crashed, not this handler). */
static void on_crash(int sig, siginfo_t *si, void *uc)
{
	struct sigaction p = prog[sig];
	int saved = errno;

	if (is_handler(&p)) {
		call_program(sig, si, uc, &p);
		errno = saved;
		return;
	}
	/* Ignored and sent by someone: nothing happens, as without tprof.
	 * A fault the kernel raised kills even when ignored. */
	if (!(p.sa_flags & SA_SIGINFO) && p.sa_handler == SIG_IGN &&
	    si && si->si_code <= 0) {
		errno = saved;
		return;
	}
	/* The process dies next: as for SIGTERM (lifecycle.c), threads
	 * that go on calling hooked functions wait in the hook meanwhile. */
	if (getpid() == tp_sess.pid) {
		tp_thread_set_parking(TP_PARK_ON);
		tp_crash_dump(sig, CRASH_STALL_MS);
		/* Held until the signal kills the process (as it returns from
		 * here): a call made now would be in no trace. */
		tp_thread_set_parking(TP_PARK_DYING);
	}
	restore_default(sig);
	raise(sig);
	errno = saved;
}

void tp_crash_install(void)
{
	struct sigaction sa, old;
	unsigned i;
	int sig;

	for (i = 0; i < 3; i++)
		real_signal[i] = (signal_fn)dlsym(RTLD_NEXT, signal_names[i]);
	real_exit = (exit_fn)dlsym(RTLD_NEXT, "_exit");
	real_Exit = (exit_fn)dlsym(RTLD_NEXT, "_Exit");
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_crash;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(crash_signals) / sizeof(crash_signals[0]); i++) {
		sig = crash_signals[i];
		if (call_real_sigaction(sig, NULL, &old) < 0)
			continue;
		prog[sig] = old;
		if (call_real_sigaction(sig, &sa, NULL) == 0)
			ours[sig] = 1;
	}
}

/* The program's view of a crash signal's disposition. */
__attribute__((visibility("default"), no_sanitize("thread")))
int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	struct sigaction prev;

	if (!is_crash_signal(sig))
		return call_real_sigaction(sig, act, old);
	prev = prog[sig];
	if (act)
		prog[sig] = *act;
	if (old)
		*old = prev;
	return 0;
}

/* The signal() family sets dispositions inside libc, past the sigaction
 * above: for a crash signal, the same through the program's view, with
 * the flags libc would use; any other signal goes to libc untouched. */
static sighandler_t set_handler(int sig, sighandler_t handler, int flags,
				int block_self)
{
	struct sigaction act, old;

	memset(&act, 0, sizeof(act));
	act.sa_handler = handler;
	act.sa_flags = flags;
	sigemptyset(&act.sa_mask);
	if (block_self)
		sigaddset(&act.sa_mask, sig);
	if (sigaction(sig, &act, &old) < 0)
		return SIG_ERR;
	/* sa_handler and sa_sigaction share storage: either way, the
	 * pointer the program set. */
	return old.sa_handler;
}

static sighandler_t next_signal(unsigned which, int sig, sighandler_t handler)
{
	signal_fn real = real_signal[which];

	if (!real)
		real = (signal_fn)dlsym(RTLD_NEXT, signal_names[which]);
	if (!real) {
		errno = ENOSYS;
		return SIG_ERR;
	}
	return real(sig, handler);
}

/* BSD semantics: SA_RESTART, the signal blocked in its handler. */
__attribute__((visibility("default")))
sighandler_t signal(int sig, sighandler_t handler)
{
	if (!is_crash_signal(sig))
		return next_signal(0, sig, handler);
	return set_handler(sig, handler, SA_RESTART, 1);
}

__attribute__((visibility("default")))
sighandler_t bsd_signal(int sig, sighandler_t handler)
{
	if (!is_crash_signal(sig))
		return next_signal(1, sig, handler);
	return set_handler(sig, handler, SA_RESTART, 1);
}

/* System V semantics: reset to the default on delivery, not blocked. */
__attribute__((visibility("default")))
sighandler_t sysv_signal(int sig, sighandler_t handler)
{
	if (!is_crash_signal(sig))
		return next_signal(2, sig, handler);
	return set_handler(sig, handler, SA_RESETHAND | SA_NODEFER, 0);
}

/* _exit skips atexit and destructors: complete the trace first, the
 * other threads held in the hooks meanwhile and until the process ends,
 * as for a crash (from any thread: the others go on calling otherwise,
 * and what they call would be in no trace). A vfork child shares our
 * memory and must leave the parent's writer alone. */
static void before_exit(void)
{
	if (getpid() != tp_sess.pid)
		return;
	tp_sym_find_demangler();
	tp_thread_set_parking(TP_PARK_ON);
	tp_crash_dump(0, EXIT_STALL_MS);
	tp_thread_set_parking(TP_PARK_DYING);
}

__attribute__((visibility("default"), noreturn))
void _exit(int status)
{
	before_exit();
	if (real_exit)
		real_exit(status);
	syscall(SYS_exit_group, status);
	__builtin_unreachable();
}

__attribute__((visibility("default"), noreturn))
void _Exit(int status)
{
	before_exit();
	if (real_Exit)
		real_Exit(status);
	syscall(SYS_exit_group, status);
	__builtin_unreachable();
}
