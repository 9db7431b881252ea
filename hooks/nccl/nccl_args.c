/* hooks/nccl/: the nccl hooks, on hooks/ (resolve.c: how the real
 * functions are found) and every library folder below it. */
/* How each recorded NCCL call's args are printed. Names come from tables
 * of nccl.h's enums, whose values NCCL keeps stable across versions. */
#include <stddef.h>

#include "hooks/lib_hook.h"
#include "nccl_apis.h"

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static const char *const results[] = {
	"ncclSuccess", "ncclUnhandledCudaError", "ncclSystemError",
	"ncclInternalError", "ncclInvalidArgument", "ncclInvalidUsage",
	"ncclRemoteError", "ncclInProgress",
};

static const struct {
	const char *name;
	unsigned bytes;
} dtypes[] = {
	{ "ncclInt8", 1 }, { "ncclUint8", 1 }, { "ncclInt32", 4 },
	{ "ncclUint32", 4 }, { "ncclInt64", 8 }, { "ncclUint64", 8 },
	{ "ncclFloat16", 2 }, { "ncclFloat32", 4 }, { "ncclFloat64", 8 },
	{ "ncclBfloat16", 2 }, { "ncclFloat8e4m3", 1 },
	{ "ncclFloat8e5m2", 1 },
};

static const char *const ops[] = {
	"ncclSum", "ncclProd", "ncclMax", "ncclMin", "ncclAvg",
};

static const unsigned char coll_what[] = {
#define X(id, name, fmt, what) what,
	TP_NCCL_APIS(X)
#undef X
};

static void put_status(struct tp_targs *w, const struct tp_event *e)
{
	if (!e->ret)
		return;
	if (e->ret > 0 && (unsigned)e->ret < N_OF(results))
		tp_targs_cstr(w, "status", results[e->ret]);
	else
		tp_targs_cstr(w, "status", "unknown");
}

static void put_group(struct tp_targs *w, uint32_t group)
{
	if (!group)
		return;
	tp_targs_uint(w, "group", group);
}

static void put_rank_size(struct tp_targs *w, int32_t rank, int32_t size)
{
	if (rank < 0 || size <= 0)
		return;
	tp_targs_int(w, "rank", rank);
	tp_targs_int(w, "size", size);
}

/* The buffer sizes: bytes, and the send or receive side's bytes x size
 * when it holds one block per rank. Left out when they would overflow. */
static void put_bytes(struct tp_targs *w, const struct tp_nccl_coll *c,
		      unsigned what)
{
	uint64_t bytes, all;

	if (__builtin_mul_overflow(c->count, dtypes[c->dtype].bytes, &bytes))
		return;
	tp_targs_uint(w, "bytes", bytes);
	if (c->size <= 0 ||
	    __builtin_mul_overflow(bytes, (uint64_t)c->size, &all))
		return;
	if (what & TP_NCCL_IN_X)
		tp_targs_uint(w, "in bytes", all);
	if (what & TP_NCCL_OUT_X)
		tp_targs_uint(w, "out bytes", all);
}

/* Ops made by ncclRedOpCreatePreMulSum are numbered from ncclNumOps. */
static void put_op(struct tp_targs *w, int32_t op)
{
	if (op >= 0 && (unsigned)op < N_OF(ops))
		tp_targs_cstr(w, "op", ops[op]);
	else if (op >= 0)
		tp_targs_cstr(w, "op", "custom");
	else
		tp_targs_int(w, "op", op);
}

static void fmt_coll(struct tp_targs *w, const struct tp_event *e)
{
	const struct tp_nccl_coll *c = (const struct tp_nccl_coll *)e->a.raw;
	unsigned what = coll_what[TP_NCCL_INDEX(e->api)];
	int known = c->dtype >= 0 && (unsigned)c->dtype < N_OF(dtypes);

	put_status(w, e);
	tp_targs_uint(w, "count", c->count);
	if (known)
		tp_targs_cstr(w, "dtype", dtypes[c->dtype].name);
	else
		tp_targs_int(w, "dtype", c->dtype);
	if (known)
		put_bytes(w, c, what);
	if (what & TP_NCCL_OP)
		put_op(w, c->op);
	if (what & TP_NCCL_ROOT)
		tp_targs_int(w, "root", c->root);
	if (what & TP_NCCL_PEER)
		tp_targs_int(w, "peer", c->root);
	put_rank_size(w, c->rank, c->size);
	tp_targs_ptr(w, "comm", c->comm);
	tp_targs_ptr(w, "stream", e->stream);
	put_group(w, c->group);
}

static void fmt_group(struct tp_targs *w, const struct tp_event *e)
{
	const struct tp_nccl_group *g = (const struct tp_nccl_group *)e->a.raw;

	put_status(w, e);
	if (!g->group)
		return;
	put_group(w, g->group);
	tp_targs_uint(w, "depth", g->depth);
	if (TP_NCCL_INDEX(e->api) != TP_NCCL_GROUP_START && g->depth == 1)
		tp_targs_uint(w, "calls", g->calls);
}

/* Init calls: nranks and rank as passed, the new communicator. */
static void fmt_init(struct tp_targs *w, const struct tp_event *e)
{
	const struct tp_nccl_comm *c = (const struct tp_nccl_comm *)e->a.raw;

	put_status(w, e);
	tp_targs_int(w, "nranks", c->size);
	tp_targs_int(w, "rank", c->rank);
	if (c->comm)
		tp_targs_ptr(w, "comm", c->comm);
	put_group(w, c->group);
}

static void fmt_init_all(struct tp_targs *w, const struct tp_event *e)
{
	const struct tp_nccl_comm *c = (const struct tp_nccl_comm *)e->a.raw;
	const uint64_t *comms = tp_event_ext(e);
	uint32_t i;

	put_status(w, e);
	tp_targs_int(w, "nranks", c->size);
	if (c->n_comms) {
		tp_targs_open(w, "comms", 0);
		for (i = 0; i < c->n_comms; i++)
			tp_targs_ptr(w, NULL, comms[i]);
		tp_targs_close(w);
	}
	put_group(w, c->group);
}

static void fmt_split(struct tp_targs *w, const struct tp_event *e)
{
	const struct tp_nccl_comm *c = (const struct tp_nccl_comm *)e->a.raw;
	const struct tp_nccl_new *n = tp_event_ext(e);

	put_status(w, e);
	tp_targs_ptr(w, "comm", c->comm);
	put_rank_size(w, c->rank, c->size);
	if (TP_NCCL_INDEX(e->api) == TP_NCCL_SPLIT) {
		tp_targs_int(w, "color", c->x);
		tp_targs_int(w, "key", c->y);
	} else {
		tp_targs_int(w, "excluded", c->x);
		tp_targs_int(w, "flags", c->y);
	}
	if (n->comm)
		tp_targs_ptr(w, "new comm", n->comm);
	if (n->comm && n->rank >= 0 && n->size > 0) {
		tp_targs_int(w, "new rank", n->rank);
		tp_targs_int(w, "new size", n->size);
	}
	put_group(w, c->group);
}

static void fmt_comm(struct tp_targs *w, const struct tp_event *e)
{
	const struct tp_nccl_comm *c = (const struct tp_nccl_comm *)e->a.raw;

	put_status(w, e);
	tp_targs_ptr(w, "comm", c->comm);
	put_rank_size(w, c->rank, c->size);
	put_group(w, c->group);
}

static const struct tp_api nccl_apis[] = {
#define X(id, nm, fmt, what) { .name = nm, .cat = "nccl", .args = fmt_##fmt },
	TP_NCCL_APIS(X)
#undef X
};

void tp_nccl_register(void)
{
	tp_api_register(TP_TABLE_NCCL, nccl_apis, TP_NCCL_N);
}
