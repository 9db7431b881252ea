/* Reading report inputs on several threads (report_read.c). */
#ifndef TP_CLI_REPORT_READ_H
#define TP_CLI_REPORT_READ_H

#include <stddef.h>

#include "report_data.h"

/* Reads paths[0..n) into ranks[0..n), in parallel. Returns 0, or -1
 * after printing the first failing input's error (in the order of
 * paths) and freeing what was read. */
int rp_read_inputs(char *const *paths, size_t n, struct rp_rank **ranks);

#endif
