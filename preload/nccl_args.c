/* preload/: the hooks and the library's life in the process (constructor,
 * signals, fork, exec); the top layer. */
/* How each recorded NCCL call's args are printed. Names come from tables
 * of nccl.h's enums, whose values NCCL keeps stable across versions. */
#include <stddef.h>

#include "lib_hook.h"
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

static void put_status(struct tp_buf *b, const struct tp_event *e)
{
	if (!e->ret)
		return;
	tp_json_key(b, "status");
	if (e->ret > 0 && (unsigned)e->ret < N_OF(results))
		tp_json_str(b, results[e->ret]);
	else
		tp_buf_lit(b, "\"unknown\"");
}

static void put_group(struct tp_buf *b, uint32_t group)
{
	if (!group)
		return;
	tp_json_key(b, "group");
	tp_json_u64(b, group);
}

static void put_rank_size(struct tp_buf *b, int32_t rank, int32_t size)
{
	if (rank < 0 || size <= 0)
		return;
	tp_json_key(b, "rank");
	tp_json_i64(b, rank);
	tp_json_key(b, "size");
	tp_json_i64(b, size);
}

/* The buffer sizes: bytes, and the send or receive side's bytes x size
 * when it holds one block per rank. Left out when they would overflow. */
static void put_bytes(struct tp_buf *b, const struct tp_nccl_coll *c,
		      unsigned what)
{
	uint64_t bytes, all;

	if (__builtin_mul_overflow(c->count, dtypes[c->dtype].bytes, &bytes))
		return;
	tp_json_key(b, "bytes");
	tp_json_u64(b, bytes);
	if (c->size <= 0 ||
	    __builtin_mul_overflow(bytes, (uint64_t)c->size, &all))
		return;
	if (what & TP_NCCL_IN_X) {
		tp_json_key(b, "in bytes");
		tp_json_u64(b, all);
	}
	if (what & TP_NCCL_OUT_X) {
		tp_json_key(b, "out bytes");
		tp_json_u64(b, all);
	}
}

/* Ops made by ncclRedOpCreatePreMulSum are numbered from ncclNumOps. */
static void put_op(struct tp_buf *b, int32_t op)
{
	tp_json_key(b, "op");
	if (op >= 0 && (unsigned)op < N_OF(ops))
		tp_json_str(b, ops[op]);
	else if (op >= 0)
		tp_buf_lit(b, "\"custom\"");
	else
		tp_json_i64(b, op);
}

static void fmt_coll(struct tp_buf *b, const struct tp_event *e)
{
	const struct tp_nccl_coll *c = (const struct tp_nccl_coll *)e->a.raw;
	unsigned what = coll_what[TP_NCCL_INDEX(e->api)];
	int known = c->dtype >= 0 && (unsigned)c->dtype < N_OF(dtypes);

	put_status(b, e);
	tp_json_key(b, "count");
	tp_json_u64(b, c->count);
	tp_json_key(b, "dtype");
	if (known)
		tp_json_str(b, dtypes[c->dtype].name);
	else
		tp_json_i64(b, c->dtype);
	if (known)
		put_bytes(b, c, what);
	if (what & TP_NCCL_OP)
		put_op(b, c->op);
	if (what & TP_NCCL_ROOT) {
		tp_json_key(b, "root");
		tp_json_i64(b, c->root);
	}
	if (what & TP_NCCL_PEER) {
		tp_json_key(b, "peer");
		tp_json_i64(b, c->root);
	}
	put_rank_size(b, c->rank, c->size);
	tp_json_key(b, "comm");
	tp_json_hex(b, c->comm);
	tp_json_key(b, "stream");
	tp_json_hex(b, e->stream);
	put_group(b, c->group);
}

static void fmt_group(struct tp_buf *b, const struct tp_event *e)
{
	const struct tp_nccl_group *g = (const struct tp_nccl_group *)e->a.raw;

	put_status(b, e);
	if (!g->group)
		return;
	put_group(b, g->group);
	tp_json_key(b, "depth");
	tp_json_u64(b, g->depth);
	if (TP_NCCL_INDEX(e->api) != TP_NCCL_GROUP_START && g->depth == 1) {
		tp_json_key(b, "calls");
		tp_json_u64(b, g->calls);
	}
}

/* Init calls: nranks and rank as passed, the new communicator. */
static void fmt_init(struct tp_buf *b, const struct tp_event *e)
{
	const struct tp_nccl_comm *c = (const struct tp_nccl_comm *)e->a.raw;

	put_status(b, e);
	tp_json_key(b, "nranks");
	tp_json_i64(b, c->size);
	tp_json_key(b, "rank");
	tp_json_i64(b, c->rank);
	if (c->comm) {
		tp_json_key(b, "comm");
		tp_json_hex(b, c->comm);
	}
	put_group(b, c->group);
}

static void fmt_init_all(struct tp_buf *b, const struct tp_event *e)
{
	const struct tp_nccl_comm *c = (const struct tp_nccl_comm *)e->a.raw;
	const uint64_t *comms = tp_event_ext(e);
	uint32_t i;

	put_status(b, e);
	tp_json_key(b, "nranks");
	tp_json_i64(b, c->size);
	if (c->n_comms) {
		tp_json_key(b, "comms");
		for (i = 0; i < c->n_comms; i++) {
			tp_buf_char(b, i ? ',' : '[');
			tp_json_hex(b, comms[i]);
		}
		tp_buf_char(b, ']');
	}
	put_group(b, c->group);
}

static void fmt_split(struct tp_buf *b, const struct tp_event *e)
{
	const struct tp_nccl_comm *c = (const struct tp_nccl_comm *)e->a.raw;
	const struct tp_nccl_new *n = tp_event_ext(e);

	put_status(b, e);
	tp_json_key(b, "comm");
	tp_json_hex(b, c->comm);
	put_rank_size(b, c->rank, c->size);
	if (TP_NCCL_INDEX(e->api) == TP_NCCL_SPLIT) {
		tp_json_key(b, "color");
		tp_json_i64(b, c->x);
		tp_json_key(b, "key");
		tp_json_i64(b, c->y);
	} else {
		tp_json_key(b, "excluded");
		tp_json_i64(b, c->x);
		tp_json_key(b, "flags");
		tp_json_i64(b, c->y);
	}
	if (n->comm) {
		tp_json_key(b, "new comm");
		tp_json_hex(b, n->comm);
	}
	if (n->comm && n->rank >= 0 && n->size > 0) {
		tp_json_key(b, "new rank");
		tp_json_i64(b, n->rank);
		tp_json_key(b, "new size");
		tp_json_i64(b, n->size);
	}
	put_group(b, c->group);
}

static void fmt_comm(struct tp_buf *b, const struct tp_event *e)
{
	const struct tp_nccl_comm *c = (const struct tp_nccl_comm *)e->a.raw;

	put_status(b, e);
	tp_json_key(b, "comm");
	tp_json_hex(b, c->comm);
	put_rank_size(b, c->rank, c->size);
	put_group(b, c->group);
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
