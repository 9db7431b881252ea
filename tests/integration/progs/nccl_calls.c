/* Calls every hooked NCCL entry point with known args and prints
 * "<function> <return code>" for each, in call order, so the test can
 * compare them with the trace.
 *
 *   nccl_calls real   NULL communicators and invalid args: what the real
 *                     libnccl answers on a machine without a GPU
 *   nccl_calls fake   the success paths, under tests/nccl's stand-in
 *                     libnccl.so.2 (LD_LIBRARY_PATH)
 *
 * Both end with one CUDA runtime call, so a trace is written even when
 * NCCL is not recorded.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>
#include <nccl.h>

#define S ((const void *)0x1000)
#define D ((void *)0x2000)
#define ST ((cudaStream_t)0x10)

#define CALL(f, ...) report(#f, f(__VA_ARGS__))

static void report(const char *name, ncclResult_t ret)
{
	printf("%s %d\n", name, (int)ret);
}

static void collectives(ncclComm_t c)
{
	CALL(ncclAllReduce, S, D, 1000, ncclFloat16, ncclSum, c, ST);
	CALL(ncclAllReduce, S, D, 7, ncclBfloat16, ncclAvg, c, ST);
	CALL(ncclAllGather, S, D, 256, ncclBfloat16, c, ST);
	CALL(ncclReduceScatter, S, D, 128, ncclFloat32, ncclMax, c, ST);
	CALL(ncclBroadcast, S, D, 64, ncclInt64, 3, c, ST);
	CALL(ncclBcast, D, 32, ncclUint8, 1, c, ST);
	CALL(ncclReduce, S, D, 10, ncclFloat64, ncclMin, 2, c, ST);
	CALL(ncclAlltoAll, S, D, 6, ncclInt32, c, ST);
	CALL(ncclGather, S, D, 5, ncclUint32, 1, c, ST);
	CALL(ncclScatter, S, D, 3, ncclFloat8e4m3, 0, c, ST);
	CALL(ncclSend, S, 100, ncclInt8, 5, c, ST);
	CALL(ncclRecv, D, 50, ncclUint64, 6, c, ST);
	CALL(ncclAllReduce, S, D, 4, ncclInt32, ncclProd, c, ST);
	CALL(ncclReduce, S, D, 9, ncclFloat8e5m2, ncclMax, 0, c, ST);
	CALL(ncclReduceScatter, S, D, 2, ncclInt64, ncclAvg, c, ST);
}

/* Two groups: the first with a nested group and three calls, the second
 * with ncclBcast alone (NCCL's own call of ncclBroadcast is not one). */
static void groups(ncclComm_t c)
{
	CALL(ncclGroupStart);
	CALL(ncclSend, S, 8, ncclFloat32, 1, c, ST);
	CALL(ncclRecv, D, 8, ncclFloat32, 1, c, ST);
	CALL(ncclGroupStart);
	CALL(ncclAllReduce, S, D, 16, ncclFloat32, ncclSum, c, ST);
	CALL(ncclGroupEnd);
	CALL(ncclGroupEnd);
	CALL(ncclGroupStart);
	CALL(ncclBcast, D, 4, ncclInt8, 0, c, ST);
	CALL(ncclGroupEnd);
}

/* ncclGroupSimulateEnd ends the group too: the next one is depth 1. */
static void simulated(ncclComm_t c)
{
	ncclSimInfo_t sim = NCCL_SIM_INFO_INITIALIZER;

	CALL(ncclGroupStart);
	CALL(ncclAllReduce, S, D, 16, ncclFloat32, ncclSum, c, ST);
	CALL(ncclGroupSimulateEnd, &sim);
	CALL(ncclGroupStart);
	CALL(ncclGroupEnd);
}

static void real(void)
{
	ncclComm_t c = NULL, comms[2] = { NULL, NULL };
	ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
	ncclUniqueId id;

	memset(&id, 0, sizeof(id));
	collectives(NULL);
	/* Unknown type, op past the built-in ones, a count whose bytes do
	 * not fit in 64 bits. */
	CALL(ncclAllReduce, S, D, 4, (ncclDataType_t)42,
	     (ncclRedOp_t)(ncclNumOps + 3), NULL, ST);
	CALL(ncclAllReduce, S, D, SIZE_MAX, ncclFloat64, ncclSum, NULL, ST);
	groups(NULL);
	CALL(ncclGroupEnd);	/* outside any group */
	simulated(NULL);
	CALL(ncclCommInitRank, &c, 4, id, 1);
	CALL(ncclCommInitRank, NULL, 4, id, 1);
	CALL(ncclCommInitRankConfig, &c, 2, id, 0, &cfg);
	CALL(ncclCommInitRankScalable, &c, 2, 1, 1, &id, NULL);
	CALL(ncclCommInitAll, comms, 2, NULL);
	CALL(ncclCommSplit, NULL, 3, 7, &c, NULL);
	/* Not ncclCommShrink: the real one dereferences a NULL comm. */
	CALL(ncclCommFinalize, NULL);
	CALL(ncclCommDestroy, NULL);
	CALL(ncclCommAbort, NULL);
}

/* A thread of its own numbers its groups from 1. */
static void *other_thread(void *comm)
{
	CALL(ncclGroupStart);
	CALL(ncclAllReduce, S, D, 2, ncclFloat32, ncclSum, comm, ST);
	CALL(ncclGroupEnd);
	return NULL;
}

static void fake_comms(ncclComm_t c)
{
	ncclComm_t s1 = NULL, s2 = NULL, s3 = NULL, s4 = NULL, nb = NULL;
	ncclComm_t comms[3] = { NULL, NULL, NULL }, c2 = NULL;
	ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
	int excluded[1] = { 3 };
	ncclUniqueId id;
	pthread_t t;
	ncclRedOp_t op;
	float scale = 0.5f;

	memset(&id, 0, sizeof(id));
	CALL(ncclRedOpCreatePreMulSum, &op, &scale, ncclFloat32,
	     ncclScalarHostImmediate, c);
	CALL(ncclAllReduce, S, D, 8, ncclFloat32, op, c, ST);
	CALL(ncclCommSplit, c, 0, 1, &s1, NULL);
	/* Split inside a group: readable only after the group's end. */
	CALL(ncclGroupStart);
	CALL(ncclCommSplit, c, 1, 0, &s2, NULL);
	CALL(ncclGroupEnd);
	CALL(ncclAllReduce, S, D, 1, ncclFloat32, ncclSum, s2, ST);
	CALL(ncclCommSplit, c, NCCL_SPLIT_NOCOLOR, 0, &s3, NULL);
	CALL(ncclCommShrink, c, excluded, 1, &s4, NULL, 0);
	CALL(ncclAllReduce, S, D, 1, ncclFloat32, ncclSum, s4, ST);
	CALL(ncclCommInitAll, comms, 3, NULL);
	/* Nonblocking: ready at the next group's end. */
	cfg.blocking = 0;
	CALL(ncclCommInitRankConfig, &nb, 8, id, 5, &cfg);
	CALL(ncclAllReduce, S, D, 1, ncclFloat32, ncclSum, nb, ST);
	CALL(ncclGroupStart);
	CALL(ncclGroupEnd);
	CALL(ncclAllReduce, S, D, 1, ncclFloat32, ncclSum, nb, ST);
	printf("comm s1 %p\ncomm s2 %p\ncomm s4 %p\ncomm nb %p\n", (void *)s1,
	       (void *)s2, (void *)s4, (void *)nb);
	printf("comm all %p %p %p\n", (void *)comms[0], (void *)comms[1],
	       (void *)comms[2]);
	pthread_create(&t, NULL, other_thread, s1);
	pthread_join(t, NULL);
	CALL(ncclCommFinalize, c);
	CALL(ncclCommDestroy, c);
	/* The stand-in hands the freed address out again. */
	CALL(ncclCommInitRank, &c2, 16, id, 3);
	printf("reused %d\n", c2 == c);
	CALL(ncclAllReduce, S, D, 1, ncclFloat32, ncclSum, c2, ST);
	CALL(ncclCommAbort, c2);
	CALL(ncclCommDestroy, s1);
}

static void fake(void)
{
	int (*unready)(void) =
		(int (*)(void))dlsym(RTLD_DEFAULT, "fake_nccl_unready_asks");
	ncclComm_t c = NULL;
	ncclUniqueId id;
	int v = 0;

	memset(&id, 0, sizeof(id));
	ncclGetVersion(&v);
	printf("version %d\n", v);
	CALL(ncclCommInitRank, &c, 4, id, 1);
	printf("comm c %p\n", (void *)c);
	collectives(c);
	groups(c);
	simulated(c);
	fake_comms(c);
	printf("unready asks %d\n", unready ? unready() : -1);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "fake"))
		fake();
	else
		real();
	printf("cudaDeviceSynchronize %d\n", (int)cudaDeviceSynchronize());
	return 0;
}
