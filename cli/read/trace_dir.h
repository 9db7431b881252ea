/* The traces of a directory, as `merge` and `check` take them
 * (trace_dir.c). */
#ifndef TP_CLI_TRACE_DIR_H
#define TP_CLI_TRACE_DIR_H

#include <stddef.h>

struct tp_trace_dir {
	char **paths;		/* "DIR/NAME", by name */
	size_t n;
};

/* The regular files of dir named *.trace.json[.gz] or *.pftrace[.gz],
 * and its other *.json[.gz] (not *.summary.json) that hold a trace
 * (trace_sniff.h); not its subdirectories. 0 (none found is not an
 * error), or -1 with errno set (opendir's, or ENOMEM). */
int tp_trace_dir_list(const char *dir, struct tp_trace_dir *out);

void tp_trace_dir_free(struct tp_trace_dir *d);

/* What a directory with no trace holds not, for the one line that says
 * so: "no traces (...) in this directory". */
#define TP_TRACE_DIR_WHAT "*.trace.json[.gz], *.pftrace[.gz], or other " \
	"*.json[.gz] holding one"

#endif
