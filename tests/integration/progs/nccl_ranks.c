/* One rank of a job that hangs in NCCL, for test_hang.py: run NRANKS of
 * these against the stand-in NCCL in barrier mode (FAKE_NCCL_BARRIER).
 *
 *   nccl_ranks RANK NRANKS SCENARIO N
 *
 * Every rank joins communicator "hang-test" (ncclCommInitRank) and calls
 * ncclAllReduce N times (1024 floats). SCENARIO:
 *   ok       every rank makes every call;
 *   skip     rank 2 never makes the N-th call and sleeps instead;
 *   size     rank 3 makes the N-th call with 2048 floats;
 *   noinit   rank NRANKS-1 never joins the communicator and sleeps;
 *   group    each allreduce inside ncclGroupStart/ncclGroupEnd, and rank
 *            2 never makes the N-th group;
 *   split    the allreduces go to ncclCommSplit(world, color rank % 2,
 *            key rank / 2), and rank 3 never makes the N-th one (rank 1,
 *            its partner, hangs; ranks 0 and 2 finish).
 * A rank that sleeps does so for 60 s (the test ends it sooner), in
 * steps, as a program that takes signals must (a handled signal, such as
 * TPROF_DUMP_SIGNAL's, cuts a sleep short).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nccl.h>

static float buf[4096];

static void idle(void)
{
	int i;

	for (i = 0; i < 600; i++)
		usleep(100000);
}

__attribute__((noinline)) static ncclResult_t
train_step_allreduce(ncclComm_t comm, size_t count)
{
	return ncclAllReduce(buf, buf, count, ncclFloat32, ncclSum, comm,
			     NULL);
}

__attribute__((noinline)) static ncclResult_t
join_world(ncclComm_t *comm, int nranks, int rank)
{
	ncclUniqueId id;

	memset(&id, 0, sizeof(id));
	snprintf(id.internal, sizeof(id.internal), "hang-test");
	return ncclCommInitRank(comm, nranks, id, rank);
}

int main(int argc, char **argv)
{
	ncclComm_t comm;
	int rank, nranks, n, i;
	const char *sc;

	if (argc != 5)
		return 2;
	rank = atoi(argv[1]);
	nranks = atoi(argv[2]);
	sc = argv[3];
	n = atoi(argv[4]);
	if (!strcmp(sc, "noinit") && rank == nranks - 1) {
		printf("rank %d never joins\n", rank);
		fflush(stdout);
		idle();
		return 0;
	}
	if (join_world(&comm, nranks, rank) != ncclSuccess)
		return 3;
	if (!strcmp(sc, "split") &&
	    ncclCommSplit(comm, rank % 2, rank / 2, &comm, NULL) != ncclSuccess)
		return 3;
	for (i = 1; i <= n; i++) {
		size_t count = 1024;

		if (i == n && (((!strcmp(sc, "skip") || !strcmp(sc, "group")) &&
				rank == 2) ||
			       (!strcmp(sc, "split") && rank == 3))) {
			printf("rank %d skips allreduce %d\n", rank, i);
			fflush(stdout);
			idle();
			return 0;
		}
		if (i == n && !strcmp(sc, "size") && rank == 3)
			count = 2048;
		if (!strcmp(sc, "group") && ncclGroupStart() != ncclSuccess)
			return 4;
		if (train_step_allreduce(comm, count) != ncclSuccess)
			return 4;
		if (!strcmp(sc, "group") && ncclGroupEnd() != ncclSuccess)
			return 4;
	}
	printf("rank %d done\n", rank);
	ncclCommDestroy(comm);
	return 0;
}
