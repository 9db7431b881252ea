/* summary/: the summary aggregator: per-name statistics, histograms, steps,
 * groups, memory, and its JSON/markdown output; on util/ .. session/ and
 * stacks/. */
/* An external sort of fixed-size records within a memory budget
 * (xsort.c), for the CLI's exact analyses of traces of any size (tprof
 * check's nesting sweep and flows, tprof report's GPU sweep): records
 * are collected in a buffer that grows up to the budget; when it is
 * full it is sorted and written as a run to an unlinked temporary file,
 * and the runs are merged k ways at the end. A trace whose records fit
 * is sorted in memory and touches no file. The order must be total (the
 * callers break ties with the arrival index), so the result is the same
 * whatever the budget.
 */
#ifndef TP_XSORT_H
#define TP_XSORT_H

#include <stddef.h>
#include <stdint.h>

/* The default budget of the CLI's sort buffers, all of them together. */
#define TP_XSORT_BUDGET (64u << 20)
/* The environment variable that sets it (bytes, or with K, M, G). */
#define TP_XSORT_ENV "TPROF_CLI_MEM_BUDGET"

typedef int (*tp_xsort_cmp)(const void *a, const void *b);

struct tp_xsort;

/* budget: bytes of memory it may use: half for the records it holds,
 * half for the in-memory sort's scratch copy (at least two records). */
struct tp_xsort *tp_xsort_new(size_t rec_size, tp_xsort_cmp cmp,
			      size_t budget);
/* Copies one record in; -1 on failure (see tp_xsort_error). */
int tp_xsort_add(struct tp_xsort *s, const void *rec);
/* No more records: sorts (and merges) them; -1 on failure. */
int tp_xsort_finish(struct tp_xsort *s);
/* The next record in order, valid until the next call; NULL at the end
 * or on failure (tp_xsort_error says which). */
const void *tp_xsort_next(struct tp_xsort *s);
/* NULL, or what failed, as a sentence with the fix. */
const char *tp_xsort_error(const struct tp_xsort *s);
uint64_t tp_xsort_count(const struct tp_xsort *s);
/* Bytes written to the temporary file (0: sorted in memory). */
uint64_t tp_xsort_spilled(const struct tp_xsort *s);
void tp_xsort_free(struct tp_xsort *s);

/* The budget from $TPROF_CLI_MEM_BUDGET, else TP_XSORT_BUDGET; 0 and a
 * message in err when the variable is set but not a size. */
size_t tp_xsort_budget(char *err, size_t errlen);

#endif
