/* hooks/cudart/: the cudart hooks, on hooks/ (resolve.c: how the real
 * functions are found) and every library folder below it. */
/* How each recorded CUDA runtime call's args are printed. */
#include <stddef.h>

#include <cuda_runtime_api.h>

#include "stacks/symbols.h"
#include "cudart_apis.h"
#include "hooks/resolve.h"

typedef const char *(*error_name_fn)(cudaError_t);

static void put_ret(struct tp_targs *w, const struct tp_event *e)
{
	error_name_fn fn;
	const char *name = NULL;

	if (!e->ret)
		return;
	fn = (error_name_fn)tp_resolve_companion(TP_CUDART_ERROR_NAME);
	if (fn)
		name = fn((cudaError_t)e->ret);
	tp_targs_cstr(w, "error", name ? name : "unknown error");
}

static void put_stream(struct tp_targs *w, const struct tp_event *e)
{
	tp_targs_ptr(w, "stream", e->stream);
}

static void fmt_launch(struct tp_targs *w, const struct tp_event *e)
{
	const struct tp_launch_args *l = &e->a.launch;
	const char *name;
	size_t len;

	put_ret(w, e);
	name = tp_sym_kernel_json(l->func, &len);
	tp_targs_json(w, "kernel", name, len);
	tp_targs_uint3(w, "grid", l->grid);	/* [x,y,z] */
	tp_targs_uint3(w, "block", l->block);
	tp_targs_uint(w, "shared memory", l->shmem);
	put_stream(w, e);
}

static void fmt_graph(struct tp_targs *w, const struct tp_event *e)
{
	put_ret(w, e);
	tp_targs_ptr(w, "graph exec", e->a.ev.handle);
	put_stream(w, e);
}

static const char *const copy_kinds[] = {
	"HtoH", "HtoD", "DtoH", "DtoD", "Default",
};

static void fmt_copy(struct tp_targs *w, const struct tp_event *e)
{
	const struct tp_copy_args *c = &e->a.copy;

	put_ret(w, e);
	tp_targs_uint(w, "bytes", c->bytes);
	if (c->kind < sizeof(copy_kinds) / sizeof(copy_kinds[0]))
		tp_targs_cstr(w, "kind", copy_kinds[c->kind]);
	else
		tp_targs_uint(w, "kind", c->kind);
	if (c->height)
		tp_targs_uint(w, "height", c->height);
	tp_targs_ptr(w, "dst", c->dst);
	tp_targs_ptr(w, "src", c->src);
	put_stream(w, e);
}

static void fmt_peer(struct tp_targs *w, const struct tp_event *e)
{
	const struct tp_copy_args *c = &e->a.copy;

	put_ret(w, e);
	tp_targs_uint(w, "bytes", c->bytes);
	tp_targs_cstr(w, "kind", "PtoP");
	tp_targs_int(w, "dst device", c->dst_dev);
	tp_targs_int(w, "src device", c->src_dev);
	tp_targs_ptr(w, "dst", c->dst);
	tp_targs_ptr(w, "src", c->src);
	put_stream(w, e);
}

static void fmt_memset(struct tp_targs *w, const struct tp_event *e)
{
	put_ret(w, e);
	tp_targs_uint(w, "bytes", e->a.mem.bytes);
	tp_targs_int(w, "value", e->a.mem.value);
	tp_targs_ptr(w, "ptr", e->a.mem.ptr);
	put_stream(w, e);
}

static void fmt_alloc(struct tp_targs *w, const struct tp_event *e)
{
	put_ret(w, e);
	tp_targs_uint(w, "bytes", e->a.mem.bytes);
	tp_targs_ptr(w, "ptr", e->a.mem.ptr);
	if (e->a.mem.flags)
		tp_targs_uint(w, "flags", e->a.mem.flags);
	if (e->stream || e->api == TP_CUDART_MALLOC_ASYNC)
		put_stream(w, e);
}

static void fmt_free(struct tp_targs *w, const struct tp_event *e)
{
	put_ret(w, e);
	tp_targs_ptr(w, "ptr", e->a.mem.ptr);
	if (e->api == TP_CUDART_FREE_ASYNC ||
	    e->api == TP_CUDART_FREE_ASYNC_PTSZ)
		put_stream(w, e);
}

static void fmt_stream(struct tp_targs *w, const struct tp_event *e)
{
	put_ret(w, e);
	put_stream(w, e);
}

static void fmt_event(struct tp_targs *w, const struct tp_event *e)
{
	put_ret(w, e);
	tp_targs_ptr(w, "event", e->a.ev.handle);
	if (e->api != TP_CUDART_EVENT_SYNC)
		put_stream(w, e);
	if (e->a.ev.flags)
		tp_targs_uint(w, "flags", e->a.ev.flags);
}

static void fmt_none(struct tp_targs *w, const struct tp_event *e)
{
	put_ret(w, e);
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
