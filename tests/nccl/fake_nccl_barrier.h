/* The stand-in NCCL's meeting of ranks (FAKE_NCCL_BARRIER): see
 * fake_nccl.c's opening comment. */
#ifndef FAKE_NCCL_BARRIER_H
#define FAKE_NCCL_BARRIER_H

/* Whether FAKE_NCCL_BARRIER is set. */
int fb_on(void);
/* Blocks until all nranks ranks met under key with the same what. */
void fb_meet(const char *key, int rank, int nranks, const char *what);
/* The n-th collective on the communicator key (this process its rank
 * of nranks): a kernel named after call on stream that runs until every
 * rank entered its n-th with the same what; returns at once. */
void fb_launch(const char *key, int rank, int nranks, unsigned n,
	       const char *call, const char *what, void *stream);

#endif
