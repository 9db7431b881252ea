/* preload/: the hooks and the library's life in the process (constructor,
 * signals, fork, exec); the top layer. */
/* How each recorded CUDA runtime call's args are printed. */
#include <stddef.h>

#include <cuda_runtime_api.h>

#include "stacks/symbols.h"
#include "cudart_apis.h"
#include "resolve.h"

static const char *(*real_cudaGetErrorName)(cudaError_t);

static void put_ret(struct tp_buf *b, const struct tp_event *e)
{
	const char *name = NULL;

	if (!e->ret)
		return;
	if (TP_REAL_OK(cudaGetErrorName, tp_libs_cudart))
		name = TP_REAL(cudaGetErrorName)((cudaError_t)e->ret);
	tp_json_key(b, "error");
	if (name)
		tp_json_str(b, name);
	else
		tp_buf_lit(b, "\"unknown error\"");
}

static void put_stream(struct tp_buf *b, const struct tp_event *e)
{
	tp_json_key(b, "stream");
	tp_json_hex(b, e->stream);
}

/* [x,y,z]; the caller writes the key. */
static void put_dim3(struct tp_buf *b, const uint32_t *d)
{
	tp_buf_char(b, '[');
	tp_json_u64(b, d[0]);
	tp_buf_char(b, ',');
	tp_json_u64(b, d[1]);
	tp_buf_char(b, ',');
	tp_json_u64(b, d[2]);
	tp_buf_char(b, ']');
}

static void fmt_launch(struct tp_buf *b, const struct tp_event *e)
{
	const struct tp_launch_args *l = &e->a.launch;
	const char *name;
	size_t len;

	put_ret(b, e);
	name = tp_sym_kernel_json(l->func, &len);
	tp_buf_lit(b, ",\"kernel\":");
	tp_buf_put(b, name, len);
	tp_json_key(b, "grid");
	put_dim3(b, l->grid);
	tp_json_key(b, "block");
	put_dim3(b, l->block);
	tp_json_key(b, "shared memory");
	tp_json_u64(b, l->shmem);
	put_stream(b, e);
}

static void fmt_graph(struct tp_buf *b, const struct tp_event *e)
{
	put_ret(b, e);
	tp_json_key(b, "graph exec");
	tp_json_hex(b, e->a.ev.handle);
	put_stream(b, e);
}

static const char *const copy_kinds[] = {
	"HtoH", "HtoD", "DtoH", "DtoD", "Default",
};

static void fmt_copy(struct tp_buf *b, const struct tp_event *e)
{
	const struct tp_copy_args *c = &e->a.copy;

	put_ret(b, e);
	tp_json_key(b, "bytes");
	tp_json_u64(b, c->bytes);
	tp_json_key(b, "kind");
	if (c->kind < sizeof(copy_kinds) / sizeof(copy_kinds[0]))
		tp_json_str(b, copy_kinds[c->kind]);
	else
		tp_json_u64(b, c->kind);
	if (c->height) {
		tp_json_key(b, "height");
		tp_json_u64(b, c->height);
	}
	tp_json_key(b, "dst");
	tp_json_hex(b, c->dst);
	tp_json_key(b, "src");
	tp_json_hex(b, c->src);
	put_stream(b, e);
}

static void fmt_peer(struct tp_buf *b, const struct tp_event *e)
{
	const struct tp_copy_args *c = &e->a.copy;

	put_ret(b, e);
	tp_json_key(b, "bytes");
	tp_json_u64(b, c->bytes);
	tp_buf_lit(b, ",\"kind\":\"PtoP\",\"dst device\":");
	tp_json_i64(b, c->dst_dev);
	tp_json_key(b, "src device");
	tp_json_i64(b, c->src_dev);
	tp_json_key(b, "dst");
	tp_json_hex(b, c->dst);
	tp_json_key(b, "src");
	tp_json_hex(b, c->src);
	put_stream(b, e);
}

static void fmt_memset(struct tp_buf *b, const struct tp_event *e)
{
	put_ret(b, e);
	tp_json_key(b, "bytes");
	tp_json_u64(b, e->a.mem.bytes);
	tp_json_key(b, "value");
	tp_json_i64(b, e->a.mem.value);
	tp_json_key(b, "ptr");
	tp_json_hex(b, e->a.mem.ptr);
	put_stream(b, e);
}

static void fmt_alloc(struct tp_buf *b, const struct tp_event *e)
{
	put_ret(b, e);
	tp_json_key(b, "bytes");
	tp_json_u64(b, e->a.mem.bytes);
	tp_json_key(b, "ptr");
	tp_json_hex(b, e->a.mem.ptr);
	if (e->a.mem.flags) {
		tp_json_key(b, "flags");
		tp_json_u64(b, e->a.mem.flags);
	}
	if (e->stream || e->api == TP_CUDART_MALLOC_ASYNC)
		put_stream(b, e);
}

static void fmt_free(struct tp_buf *b, const struct tp_event *e)
{
	put_ret(b, e);
	tp_json_key(b, "ptr");
	tp_json_hex(b, e->a.mem.ptr);
	if (e->api == TP_CUDART_FREE_ASYNC ||
	    e->api == TP_CUDART_FREE_ASYNC_PTSZ)
		put_stream(b, e);
}

static void fmt_stream(struct tp_buf *b, const struct tp_event *e)
{
	put_ret(b, e);
	put_stream(b, e);
}

static void fmt_event(struct tp_buf *b, const struct tp_event *e)
{
	put_ret(b, e);
	tp_json_key(b, "event");
	tp_json_hex(b, e->a.ev.handle);
	if (e->api != TP_CUDART_EVENT_SYNC)
		put_stream(b, e);
	if (e->a.ev.flags) {
		tp_json_key(b, "flags");
		tp_json_u64(b, e->a.ev.flags);
	}
}

static void fmt_none(struct tp_buf *b, const struct tp_event *e)
{
	put_ret(b, e);
}

static const struct tp_api cudart_apis[] = {
#define X(id, nm, fmt, kind) { .name = nm, .cat = "cuda_runtime", .args = fmt_##fmt },
	TP_CUDART_APIS(X)
#undef X
};

void tp_cudart_register(void)
{
	tp_api_register(TP_CUDART_TABLE, cudart_apis, TP_CUDART_N);
}
