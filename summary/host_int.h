/* summary/: the summary aggregator: per-name statistics, histograms, steps,
 * groups, memory, and its JSON/markdown output; on util/ .. session/ and
 * stacks/. */
/* Inside the host side (host.h): host.c (the tables), host_sweep.c (what
 * the GPU sweep says was idle), host_out.c (the "host_activity" member and the
 * markdown), each calling only the ones before it. */
#ifndef TP_HOST_INT_H
#define TP_HOST_INT_H

#include <stddef.h>
#include <stdint.h>

#include "gpu_intern.h"
#include "host.h"

#define HOST_MAX_DEPTH 256	/* frames of a stack kept */
#define HOST_MAX_BLOCKING 1024	/* (call, file) pairs kept */
#define HOST_TCACHE 4096	/* stack texts remembered */
#define HOST_OPEN_MAX 65536	/* blocking calls held for later gaps */

struct host_fn {
	int python;		/* "py::QUALNAME:FILE[:LINE]" */
	/* host_out.c's, per output */
	int64_t self_ns[2], total_ns[2], py_ns[2];
	uint32_t mark;
};

struct host_stk {
	uint64_t hash;
	uint32_t *fns;		/* function ids, innermost first */
	unsigned n;
	int64_t all_ns, idle_ns;
	uint64_t all_n, idle_n;
	uint64_t pend_n;	/* samples waiting for the sweep's verdict */
};

struct host_blk {
	char *name, *target;
	int64_t tid;
	uint64_t calls, idle_calls;
	int64_t all_ns, idle_ns;
};

struct host_tcache {
	uint64_t a, b;
	uint32_t id;		/* stack id + 1, 0: empty */
};

/* A blocking call that may still overlap a gap to come. */
struct host_open {
	int64_t ts, end;
	uint32_t key;
	int counted;		/* already counted among the idle calls */
};

struct tp_host {
	struct tp_intern names;	/* function names, by id */
	struct host_fn *fn;
	size_t capfn;
	struct host_stk *stk;
	size_t nstk, capstk;
	uint32_t *stk_slots;	/* stack id + 1, open addressing */
	size_t nslots;
	struct host_tcache tcache[HOST_TCACHE];
	struct host_blk *blk;
	size_t nblk, capblk;
	/* the sweep's: samples since the GPU's last busy end, by stack */
	int64_t *pend;
	size_t cappend;
	uint32_t *touched;
	size_t ntouched, captouched;
	struct host_open *open;
	size_t nopen, capopen;
	uint64_t open_dropped;
	/* counts */
	uint64_t samples, idle_samples, unread;
	int64_t sampled_ns, idle_ns;
	uint64_t blocking;
	int64_t blocking_ns, blocking_other_ns, idle_blocking_ns;
	char *mechanism;
	unsigned hz;
	/* threads that made CUDA calls: the blocking calls shown are theirs
	 * (the threads that feed the GPU), when there are any */
	int64_t *feeders;
	size_t nfeeders, capfeeders;
};

/* host.c: whether a blocking call of thread tid is shown. */
int tp_host_feeds(const struct tp_host *h, int64_t tid);

#endif
