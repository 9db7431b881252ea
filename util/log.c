/* util/: small leaf helpers: the one-line tprof: logger, FNV hash,
 * UTF-8 check; calls no other folder. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "log.h"

int tp_log_level = TP_LOG_WARN;

/* Formatted into one buffer and written with one write(2), so lines from
 * several processes of a job do not interleave mid-line. */
void tp_log(int level, const char *kind, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	if (level > tp_log_level)
		return;
	n = snprintf(buf, sizeof(buf), "tprof: %s", kind);
	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 2)
		n = (int)sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(STDERR_FILENO, buf, (size_t)n) < 0)
		return;
}

const char *tp_fix_for(int err)
{
	switch (err) {
	case ENOSPC:
	case EDQUOT:
	case EFBIG:
		return "free space or choose another TPROF_OUTPUT_DIR";
	case EACCES:
	case EPERM:
		return "a permission problem: this process, or the user it "
		       "switched to, may not write there; choose a "
		       "TPROF_OUTPUT_DIR it may write";
	case EROFS:
		return "the file system is read-only: choose another "
		       "TPROF_OUTPUT_DIR";
	case EBADF:
		return "the program closed or replaced tprof's descriptor "
		       "and the file could not be reopened";
	default:
		return "choose another TPROF_OUTPUT_DIR";
	}
}
