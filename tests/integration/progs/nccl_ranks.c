/* One rank of a data-parallel job that hangs in NCCL, for test_hang.py:
 * run NRANKS of these against the stand-in NCCL in barrier mode
 * (FAKE_NCCL_BARRIER) on the simulated GPU, where a collective only
 * enqueues and its kernel waits on the GPU for the other ranks.
 *
 *   nccl_ranks RANK NRANKS SCENARIO STEPS
 *
 * Every rank joins communicator "hang-test" (ncclCommInitRank, which
 * blocks until all joined), makes a stream, and runs STEPS steps: two
 * gradient buckets allreduced on the stream, A (1024 floats) and B
 * (1536 floats), then cudaStreamSynchronize, where a rank waits for
 * them. Step s's buckets are collectives #2s-1 and #2s. SCENARIO:
 *   ok      every rank makes every call;
 *   skip    rank 2 skips bucket A of the last step (a branch taken on
 *           one rank): its #2S-1 is bucket B;
 *   size    rank 3 makes bucket A of the last step with 2048 floats;
 *   op      rank 1 makes bucket A of the last step with ncclMax;
 *   host    rank 2 is stuck in host code (its data loader) before the
 *           last step;
 *   exit    rank 2 has one batch fewer: it leaves the loop before the
 *           last step and exits 0;
 *   abort   rank 2 aborts before the last step (a failed assert);
 *   kill    rank 2 is SIGKILLed before the last step (the OOM killer);
 *   event   as skip, each step waiting with cudaEventRecord and
 *           cudaEventSynchronize;
 *   device  as host, each step waiting with cudaDeviceSynchronize;
 *   group   each step's buckets inside ncclGroupStart/ncclGroupEnd, and
 *           rank 2 stuck in host code before the last step;
 *   split   the buckets go to ncclCommSplit(world, color rank % 2,
 *           key rank / 2), and rank 3 is stuck in host code before the
 *           last step (rank 1, its partner, hangs; ranks 0 and 2
 *           finish);
 *   noinit  rank NRANKS-1 never joins the communicator.
 * A rank stuck in host code sleeps for 60 s (the test ends it sooner) in
 * steps, as a program that takes signals must (a handled signal, such
 * as TPROF_DUMP_SIGNAL's, cuts a sleep short). It says so on stdout
 * first.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda_runtime_api.h>
#include <nccl.h>

#define A 1024
#define B 1536

static float buf[4096];
static const char *sc;
static int rank, nranks, steps;
static cudaStream_t stream;
static cudaEvent_t done;

static int is(const char *s)
{
	return !strcmp(sc, s);
}

__attribute__((noinline)) static void data_loader_stuck(void)
{
	int i;

	printf("rank %d is stuck in host code\n", rank);
	fflush(stdout);
	for (i = 0; i < 600; i++)
		usleep(100000);
}

__attribute__((noinline)) static ncclResult_t
train_step_allreduce(ncclComm_t comm, size_t count, ncclRedOp_t op)
{
	return ncclAllReduce(buf, buf, count, ncclFloat32, op, comm, stream);
}

__attribute__((noinline)) static cudaError_t wait_step(void)
{
	if (is("event")) {
		cudaEventRecord(done, stream);
		return cudaEventSynchronize(done);
	}
	if (is("device"))
		return cudaDeviceSynchronize();
	return cudaStreamSynchronize(stream);
}

__attribute__((noinline)) static ncclResult_t
join_world(ncclComm_t *comm)
{
	ncclUniqueId id;

	memset(&id, 0, sizeof(id));
	snprintf(id.internal, sizeof(id.internal), "hang-test");
	return ncclCommInitRank(comm, nranks, id, rank);
}

/* The last step's odd rank, per scenario. */
static int odd(void)
{
	if (is("skip") || is("host") || is("exit") || is("event") ||
	    is("device") || is("group") || is("abort") || is("kill"))
		return rank == 2;
	if (is("size") || is("split"))
		return rank == 3;
	if (is("op"))
		return rank == 1;
	return 0;
}

static int step(ncclComm_t comm, int last)
{
	size_t a = A;
	ncclRedOp_t op = ncclSum;

	if (last && odd() && (is("host") || is("device") || is("group") ||
			      is("split"))) {
		data_loader_stuck();
		exit(0);
	}
	if (last && odd() && is("size"))
		a = 2048;
	if (last && odd() && is("op"))
		op = ncclMax;
	if (is("group") && ncclGroupStart() != ncclSuccess)
		return 4;
	if (!(last && odd() && (is("skip") || is("event")))) {
		if (train_step_allreduce(comm, a, op) != ncclSuccess)
			return 4;
	} else {
		printf("rank %d skips bucket A\n", rank);
		fflush(stdout);
	}
	if (train_step_allreduce(comm, B, ncclSum) != ncclSuccess)
		return 4;
	if (is("group") && ncclGroupEnd() != ncclSuccess)
		return 4;
	return wait_step() == cudaSuccess ? 0 : 5;
}

int main(int argc, char **argv)
{
	ncclComm_t comm;
	int i, rc;

	if (argc != 5)
		return 2;
	rank = atoi(argv[1]);
	nranks = atoi(argv[2]);
	sc = argv[3];
	steps = atoi(argv[4]);
	if (is("noinit") && rank == nranks - 1) {
		printf("rank %d never joins\n", rank);
		fflush(stdout);
		data_loader_stuck();
		return 0;
	}
	if (join_world(&comm) != ncclSuccess)
		return 3;
	if (cudaStreamCreate(&stream) != cudaSuccess ||
	    cudaEventCreate(&done) != cudaSuccess)
		return 3;
	if (is("split") &&
	    ncclCommSplit(comm, rank % 2, rank / 2, &comm, NULL) != ncclSuccess)
		return 3;
	for (i = 1; i <= steps; i++) {
		if (i == steps && odd() && is("exit")) {
			printf("rank %d leaves the loop\n", rank);
			fflush(stdout);
			return 0;
		}
		if (i == steps && odd() && is("abort"))
			abort();
		if (i == steps && odd() && is("kill"))
			kill(getpid(), SIGKILL);
		rc = step(comm, i == steps);
		if (rc)
			return rc;
	}
	printf("rank %d done\n", rank);
	ncclCommDestroy(comm);
	return 0;
}
