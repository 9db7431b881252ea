/* hooks/osrt/: the blocking OS calls of the C library (TPROF_TRACE=osrt),
 * on hooks/ and sampling/. */
/* Reads, writes, sockets and opens. The kernel restarts these after a
 * handler with SA_RESTART (a socket with a timeout excepted), so they
 * need no guard. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdarg.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "osrt_hook.h"

#define L(x) ((long)(x))

#define IO_REC(id, fd, n) \
	tp_osrt_rec_fd(TP_OSRT_ID(id), t0, t1, (fd), (uint64_t)(n), \
		       (int64_t)ret, err)

OSRT_HOOK(ssize_t, read, 0, (int fd, void *b, size_t n), (fd, b, n),
	  tp_sys(SYS_read, fd, L(b), L(n), 0, 0, 0), OSRT_NOTHING,
	  IO_REC(READ, fd, n))
OSRT_HOOK(ssize_t, __read_chk, 0, (int fd, void *b, size_t n, size_t len),
	  (fd, b, n, len), tp_sys(SYS_read, fd, L(b), L(n), 0, 0, 0),
	  OSRT_NOTHING, IO_REC(READ, fd, n))
OSRT_HOOK(ssize_t, pread, 0, (int fd, void *b, size_t n, off_t off),
	  (fd, b, n, off), tp_sys(SYS_pread64, fd, L(b), L(n), L(off), 0, 0),
	  OSRT_NOTHING, IO_REC(PREAD, fd, n))
OSRT_HOOK(ssize_t, pread64, 0, (int fd, void *b, size_t n, off_t off),
	  (fd, b, n, off), tp_sys(SYS_pread64, fd, L(b), L(n), L(off), 0, 0),
	  OSRT_NOTHING, IO_REC(PREAD, fd, n))
OSRT_HOOK(ssize_t, readv, 0, (int fd, const struct iovec *v, int n),
	  (fd, v, n), tp_sys(SYS_readv, fd, L(v), n, 0, 0, 0), OSRT_NOTHING,
	  IO_REC(READV, fd, ret > 0 ? ret : 0))
OSRT_HOOK(ssize_t, write, 0, (int fd, const void *b, size_t n), (fd, b, n),
	  tp_sys(SYS_write, fd, L(b), L(n), 0, 0, 0), OSRT_NOTHING,
	  IO_REC(WRITE, fd, n))
OSRT_HOOK(ssize_t, pwrite, 0, (int fd, const void *b, size_t n, off_t off),
	  (fd, b, n, off), tp_sys(SYS_pwrite64, fd, L(b), L(n), L(off), 0, 0),
	  OSRT_NOTHING, IO_REC(PWRITE, fd, n))
OSRT_HOOK(ssize_t, pwrite64, 0,
	  (int fd, const void *b, size_t n, off_t off), (fd, b, n, off),
	  tp_sys(SYS_pwrite64, fd, L(b), L(n), L(off), 0, 0), OSRT_NOTHING,
	  IO_REC(PWRITE, fd, n))
OSRT_HOOK(ssize_t, writev, 0, (int fd, const struct iovec *v, int n),
	  (fd, v, n), tp_sys(SYS_writev, fd, L(v), n, 0, 0, 0), OSRT_NOTHING,
	  IO_REC(WRITEV, fd, ret > 0 ? ret : 0))

OSRT_HOOK(ssize_t, recv, 0, (int fd, void *b, size_t n, int fl),
	  (fd, b, n, fl), tp_sys(SYS_recvfrom, fd, L(b), L(n), fl, 0, 0),
	  OSRT_NOTHING, IO_REC(RECV, fd, n))
OSRT_HOOK(ssize_t, __recv_chk, 0,
	  (int fd, void *b, size_t n, size_t len, int fl), (fd, b, n, len, fl),
	  tp_sys(SYS_recvfrom, fd, L(b), L(n), fl, 0, 0), OSRT_NOTHING,
	  IO_REC(RECV, fd, n))
OSRT_HOOK(ssize_t, recvfrom, 0,
	  (int fd, void *b, size_t n, int fl, struct sockaddr *a,
	   socklen_t *al), (fd, b, n, fl, a, al),
	  tp_sys(SYS_recvfrom, fd, L(b), L(n), fl, L(a), L(al)), OSRT_NOTHING,
	  IO_REC(RECVFROM, fd, n))
OSRT_HOOK(ssize_t, recvmsg, 0, (int fd, struct msghdr *m, int fl),
	  (fd, m, fl), tp_sys(SYS_recvmsg, fd, L(m), fl, 0, 0, 0), OSRT_NOTHING,
	  IO_REC(RECVMSG, fd, ret > 0 ? ret : 0))
OSRT_HOOK(ssize_t, send, 0, (int fd, const void *b, size_t n, int fl),
	  (fd, b, n, fl), tp_sys(SYS_sendto, fd, L(b), L(n), fl, 0, 0),
	  OSRT_NOTHING, IO_REC(SEND, fd, n))
OSRT_HOOK(ssize_t, sendto, 0,
	  (int fd, const void *b, size_t n, int fl, const struct sockaddr *a,
	   socklen_t al), (fd, b, n, fl, a, al),
	  tp_sys(SYS_sendto, fd, L(b), L(n), fl, L(a), L(al)), OSRT_NOTHING,
	  IO_REC(SENDTO, fd, n))
OSRT_HOOK(ssize_t, sendmsg, 0, (int fd, const struct msghdr *m, int fl),
	  (fd, m, fl), tp_sys(SYS_sendmsg, fd, L(m), fl, 0, 0, 0), OSRT_NOTHING,
	  IO_REC(SENDMSG, fd, ret > 0 ? ret : 0))
OSRT_HOOK(int, accept, 0, (int fd, struct sockaddr *a, socklen_t *al),
	  (fd, a, al), tp_sys(SYS_accept, fd, L(a), L(al), 0, 0, 0),
	  OSRT_NOTHING, IO_REC(ACCEPT, fd, 0))
OSRT_HOOK(int, accept4, 0,
	  (int fd, struct sockaddr *a, socklen_t *al, int fl), (fd, a, al, fl),
	  tp_sys(SYS_accept4, fd, L(a), L(al), fl, 0, 0), OSRT_NOTHING,
	  IO_REC(ACCEPT, fd, 0))
OSRT_HOOK(int, connect, 0,
	  (int fd, const struct sockaddr *a, socklen_t al), (fd, a, al),
	  tp_sys(SYS_connect, fd, L(a), al, 0, 0, 0), OSRT_NOTHING,
	  IO_REC(CONNECT, fd, 0))

/* open's mode is there only with O_CREAT or O_TMPFILE; passing it
 * always is what the C library's own wrappers do. */
static mode_t mode_of(int flags, va_list ap)
{
	if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE)
		return (mode_t)va_arg(ap, int);
	return 0;
}

/* The open family is variadic: its own shape, the same steps. */
#define OSRT_OPEN(name, dirparam, dirarg, dirfd)                          \
	TP_EXPORT int name(dirparam const char *p, int fl, ...)          \
	{                                                                \
		int (*fn)(dirparam const char *, int, ...) =             \
			(int (*)(dirparam const char *, int, ...))       \
			__atomic_load_n(&tp_osrt_fn[TP_OSRT_S_##name],   \
					__ATOMIC_RELAXED);               \
		uint64_t t0 = 0, t1;                                     \
		int on, err, ret;                                        \
		va_list ap;                                              \
		mode_t m;                                                \
                                                                         \
		va_start(ap, fl);                                        \
		m = mode_of(fl, ap);                                     \
		va_end(ap);                                              \
		if (__builtin_expect(!fn, 0))                            \
			fn = (int (*)(dirparam const char *, int, ...))  \
				tp_osrt_resolve(TP_OSRT_S_##name);       \
		on = tp_osrt_begin(&t0);                                 \
		ret = fn ? fn(dirarg p, fl, m) :                         \
			   (int)tp_sys(SYS_openat, dirfd, L(p), fl, m, 0, 0); \
		if (!on || !tp_osrt_over(t0, &t1))                       \
			return ret;                                      \
		err = errno;                                             \
		tp_osrt_rec_path(TP_OSRT_ID(OPEN), t0, t1, p,            \
				 (uint64_t)fl, ret, err);                \
		errno = err;                                             \
		return ret;                                              \
	}

#define NO_DIR
#define DIR_PARAM int d,
#define DIR_ARG d,

OSRT_OPEN(open, NO_DIR, NO_DIR, AT_FDCWD)
OSRT_OPEN(open64, NO_DIR, NO_DIR, AT_FDCWD)
OSRT_OPEN(openat, DIR_PARAM, DIR_ARG, d)
OSRT_OPEN(openat64, DIR_PARAM, DIR_ARG, d)
