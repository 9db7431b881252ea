/* util/: small leaf helpers: the one-line tprof: logger, FNV hash,
 * UTF-8 check; calls no other folder. */
/* One-line diagnostics on stderr, always prefixed "tprof: ".
 * Never stdout: the profiled program owns it. */
#ifndef TP_LOG_H
#define TP_LOG_H

enum tp_log_level {
	TP_LOG_QUIET,
	TP_LOG_WARN,
	TP_LOG_INFO,
	TP_LOG_DEBUG,
};

extern int tp_log_level;

void tp_log(int level, const char *kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Errors are printed even at "quiet": they explain why tracing is off. */
/* What the user should do about a failed file operation, by its errno:
 * a permission problem is never told to free space. */
const char *tp_fix_for(int err);

#define tp_error(...) tp_log(TP_LOG_QUIET, "error: ", __VA_ARGS__)
#define tp_warn(...)  tp_log(TP_LOG_WARN, "warning: ", __VA_ARGS__)
#define tp_info(...)  tp_log(TP_LOG_INFO, "", __VA_ARGS__)
#define tp_debug(...) tp_log(TP_LOG_DEBUG, "debug: ", __VA_ARGS__)

#endif
