/* Report inputs read on several threads: each trace (or summary) is
 * independent until the report joins them, and reading a trace is one
 * core's work (inflate, parse, fold), so ranks read side by side, as
 * HTA parses its ranks. Workers take the next input by an atomic
 * counter; each writes only its own slot, so the results, and the error
 * printed (the first in the inputs' order), do not depend on timing.
 *
 * The memory budget ($TPROF_CLI_MEM_BUDGET) is shared among the
 * threads: each trace read at once gets its part.
 *
 * Calls report_input.c (one input), trace_summary.c (the budget) and the
 * report's data helpers.
 */
#include "report_read.h"
#include "report_input.h"
#include "cli/read/trace_summary.h"
#include "summary/xsort.h"

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#define MAX_THREADS 16
#define ERR_LEN 512

struct job {
	char *const *paths;
	size_t n, next;
	struct rp_rank **ranks;
	char (*err)[ERR_LEN];
};

static void *worker(void *arg)
{
	struct job *j = arg;
	size_t i;

	while ((i = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED)) <
	       j->n)
		j->ranks[i] = rp_read_input(j->paths[i], j->err[i], ERR_LEN);
	return NULL;
}

/* As many threads as cores (at most MAX_THREADS), none beyond inputs. */
static size_t nthreads(size_t n)
{
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	size_t t = cores > 0 ? (size_t)cores : 1;

	if (t > MAX_THREADS)
		t = MAX_THREADS;
	return t < n ? t : n;
}

int rp_read_inputs(char *const *paths, size_t n, struct rp_rank **ranks)
{
	struct job j = { .paths = paths, .n = n, .ranks = ranks };
	pthread_t tid[MAX_THREADS];
	size_t i, t = nthreads(n), started = 0;
	char berr[128];
	size_t budget = tp_xsort_budget(berr, sizeof(berr));
	int ret = 0;

	if (!budget)
		return rp_fail(n ? paths[0] : "-", "%s", berr);
	tp_trace_summary_budget(budget / (t ? t : 1));

	j.err = calloc(n ? n : 1, sizeof(*j.err));
	if (!j.err)
		return rp_fail(n ? paths[0] : "-", "out of memory");
	/* this thread is one of the workers; a thread that cannot start
	 * leaves its share to the others */
	for (i = 1; i < t; i++)
		if (!pthread_create(&tid[started], NULL, worker, &j))
			started++;
	worker(&j);
	for (i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	for (i = 0; i < n && !ret; i++)
		if (!ranks[i])
			ret = rp_fail(paths[i], "%s", j.err[i]);
	if (ret)
		for (i = 0; i < n; i++) {
			rp_rank_free(ranks[i]);
			ranks[i] = NULL;
		}
	free(j.err);
	return ret;
}
