/* tprof report: finding the inputs and reading each into a summary. */
#ifndef TP_CLI_REPORT_INPUT_H
#define TP_CLI_REPORT_INPUT_H

#include <stddef.h>

#include "report_data.h"

struct rp_inputs {
	char **paths;
	size_t n, cap;
	int traces;	/* a rank's trace, not its summary, when it has both */
};

/* Prints "tprof: error: FILE: ..." on stderr; returns -1. */
int rp_fail(const char *file, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The files the arguments name (directories expanded). Errors are
 * printed; returns 0 or -1. */
int rp_find_inputs(char **args, size_t nargs, struct rp_inputs *in);
void rp_inputs_free(struct rp_inputs *in);

/* One input read and parsed; NULL with the reason in err (nothing
 * printed: inputs are read on several threads). */
struct rp_rank *rp_read_input(const char *path, char *err, size_t errlen);

/* Where --summaries DIR puts the summary computed from a trace. */
char *rp_summary_path(const char *dir, const char *trace);

#endif
