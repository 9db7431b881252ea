/* hooks/nccl/: the nccl hooks, on hooks/ (resolve.c: how the real
 * functions are found) and every library folder below it. */
/* What every NCCL hook shares and keeps: the library's names, each
 * thread's group state and cache of communicators' rank and size, the
 * communicators waiting for their group's end, and the note of a new
 * communicator for the trace's distributedInfo. Below both the
 * collective/group hooks (nccl_hooks.c) and the communicator hooks
 * (nccl_comm.c). */
#include <stddef.h>
#include <stdio.h>

#include "session/session.h"
#include "nccl_hooks.h"

const char *const tp_libs_nccl[] = { "libnccl.so.2", "libnccl.so", NULL };

__thread struct tp_nccl_tls tp_nccl_tls
	__attribute__((tls_model("initial-exec")));
uint32_t tp_nccl_gen;

static ncclResult_t (*real_ncclCommGetAsyncError)(ncclComm_t,
						  ncclResult_t *);
static ncclResult_t (*real_ncclCommUserRank)(const ncclComm_t, int *);
static ncclResult_t (*real_ncclCommCount)(const ncclComm_t, int *);

static int ask_nccl(ncclComm_t c, int *rank, int *size)
{
	ncclResult_t state = ncclInProgress;

	if (!TP_REAL_OK(ncclCommGetAsyncError, tp_libs_nccl) ||
	    !TP_REAL_OK(ncclCommUserRank, tp_libs_nccl) ||
	    !TP_REAL_OK(ncclCommCount, tp_libs_nccl))
		return 0;
	if (TP_REAL(ncclCommGetAsyncError)(c, &state) != ncclSuccess ||
	    state != ncclSuccess)
		return 0;
	return TP_REAL(ncclCommUserRank)(c, rank) == ncclSuccess &&
	       TP_REAL(ncclCommCount)(c, size) == ncclSuccess;
}

int tp_nccl_ask(uint64_t comm, int32_t *rank, int32_t *size)
{
	struct tp_nccl_tls *s = &tp_nccl_tls;
	/* Read before asking: a communicator freed meanwhile is not cached
	 * as current. */
	uint32_t gen = __atomic_load_n(&tp_nccl_gen, __ATOMIC_ACQUIRE);
	struct tp_thread *self = tp_self;
	struct tp_nccl_known *k;
	int r = -1, n = 0, ok;

	/* NCCL's getters are tprof's calls, not the program's. */
	tp_self = tp_thread_internal();
	ok = ask_nccl((ncclComm_t)(uintptr_t)comm, &r, &n);
	tp_self = self;
	if (!ok || n <= 0 || r < 0 || r >= n)
		return 0;
	k = &s->cache[s->next++ % TP_NCCL_CACHE];
	k->comm = comm;
	k->gen = gen;
	k->rank = r;
	k->size = n;
	*rank = r;
	*size = n;
	return 1;
}

void tp_nccl_forget(uint64_t comm)
{
	tp_collseq_forget(comm);
	struct tp_nccl_tls *s = &tp_nccl_tls;
	unsigned i, j;

	__atomic_add_fetch(&tp_nccl_gen, 1, __ATOMIC_RELEASE);
	for (i = j = 0; i < s->n_pending; i++)
		if (s->pending[i] != comm)
			s->pending[j++] = s->pending[i];
	s->n_pending = j;
}

void tp_nccl_pending_add(uint64_t comm)
{
	struct tp_nccl_tls *s = &tp_nccl_tls;
	unsigned i;

	/* Full: the oldest, whose group should have ended, gives way. */
	if (s->n_pending == TP_NCCL_PENDING) {
		for (i = 1; i < TP_NCCL_PENDING; i++)
			s->pending[i - 1] = s->pending[i];
		s->n_pending--;
	}
	s->pending[s->n_pending++] = comm;
}

/* Still unready ones (nonblocking) stay for the next group's end. */
void tp_nccl_pending_resolve(void)
{
	struct tp_nccl_tls *s = &tp_nccl_tls;
	unsigned i, j;
	int32_t rank, size;

	for (i = j = 0; i < s->n_pending; i++) {
		if (tp_nccl_comm_info(s->pending[i], &rank, &size))
			tp_nccl_note(rank, size);
		else
			s->pending[j++] = s->pending[i];
	}
	s->n_pending = j;
}

static ncclResult_t (*real_ncclGetVersion)(int *);

/* "2.27.3": the code is X*10000+Y*100+Z since NCCL 2.9, X*1000+Y*100+Z
 * before. Empty when NCCL does not say. */
static void version_str(char *buf, size_t len)
{
	int code = 0;

	buf[0] = '\0';
	if (!TP_REAL_OK(ncclGetVersion, tp_libs_nccl) ||
	    TP_REAL(ncclGetVersion)(&code) != ncclSuccess || code <= 0)
		return;
	if (code >= 10000)
		snprintf(buf, len, "%d.%d.%d", code / 10000, code / 100 % 100,
			 code % 100);
	else
		snprintf(buf, len, "%d.%d.%d", code / 1000, code / 100 % 10,
			 code % 100);
}

void tp_nccl_note(int rank, int size)
{
	char version[32];

	if (!tp_sess.active)
		return;
	version_str(version, sizeof(version));
	tp_session_note_nccl(rank, size, version);
}
