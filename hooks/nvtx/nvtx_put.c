/* hooks/nvtx/: the nvtx hooks, on hooks/ (resolve.c: how the real
 * functions are found) and every library folder below it. */
/* What the writer's NVTX events share (nvtx_emit.h): a record's name and
 * args, the args an event carries, and the event itself on its track. */
#include <stdio.h>
#include <string.h>

#include "session/session.h"
#include "record/thread.h"
#include "nvtx.h"
#include "nvtx_emit.h"

#define CAT_NAME "user_annotation"

static uint64_t truncated;	/* messages cut at TP_NVTX_MSG_MAX */

uint64_t tp_nvtx_truncated(void)
{
	return truncated;
}

struct tp_nvtx_args tp_nvtx_args_of(const struct tp_event *e)
{
	struct tp_nvtx_args x;

	memcpy(&x, &e->a, sizeof(x));
	return x;
}

const char *tp_nvtx_name_of(const struct tp_event *e)
{
	struct tp_nvtx_args x = tp_nvtx_args_of(e);
	const struct tp_nvtx_string *reg;

	if (x.truncated)
		truncated++;
	switch (x.msg) {
	case TP_NVTX_MSG_TEXT:
		return tp_event_ext(e);
	case TP_NVTX_MSG_REG:
		reg = (const void *)(uintptr_t)x.reg;
		return reg ? reg->s : "(unnamed)";
	}
	return "(unnamed)";
}

static void put_payload(struct tp_targs *w, const struct tp_nvtx_args *x)
{
	union { uint64_t u; double d; } v = { .u = x->payload };
	union { uint32_t u; float f; } f = { .u = (uint32_t)x->payload };

	switch (x->payload_type) {
	case NVTX_PAYLOAD_TYPE_UNSIGNED_INT64:
	case NVTX_PAYLOAD_TYPE_UNSIGNED_INT32:
		tp_targs_uint(w, "payload", x->payload);
		return;
	case NVTX_PAYLOAD_TYPE_INT64:
		tp_targs_int(w, "payload", (int64_t)x->payload);
		return;
	case NVTX_PAYLOAD_TYPE_INT32:
		tp_targs_int(w, "payload", (int32_t)(uint32_t)x->payload);
		return;
	case NVTX_PAYLOAD_TYPE_DOUBLE:
		tp_targs_double(w, "payload", v.d);
		return;
	case NVTX_PAYLOAD_TYPE_FLOAT:
		tp_targs_double(w, "payload", f.f);
		return;
	}
	tp_targs_ptr(w, "payload", x->payload);
}

/* The args of the event being written; color is the "#rrggbb" it
 * points to. */
static struct tp_targs A;
static char color[8];

/* mem: device memory around a range (tprof_range_pop_memory), or NULL. */
const struct tp_targs *tp_nvtx_put_args(const struct tp_nvtx_args *x,
					const char *flag,
					const struct tp_nvtx_mem *mem)
{
	const char *dom;
	const char *cat;

	tp_targs_reset(&A);
	if (!x)
		return &A;
	dom = tp_nvtx_domain_name(x->domain);
	if (dom)
		tp_targs_cstr(&A, "domain", dom);
	if (x->color_type == NVTX_COLOR_ARGB) {
		snprintf(color, sizeof(color), "#%06x", x->color & 0xffffffu);
		tp_targs_cstr(&A, "color", color);
	}
	if (x->category) {
		cat = tp_nvtx_category_name(x->domain, x->category);
		if (cat)
			tp_targs_cstr(&A, "category", cat);
		else
			tp_targs_uint(&A, "category", x->category);
	}
	if (x->payload_type)
		put_payload(&A, x);
	if (x->truncated)
		tp_targs_int(&A, "truncated", 1);
	if (flag)
		tp_targs_int(&A, flag, 1);
	if (mem) {
		tp_targs_int(&A, "mem_entry", mem->at_entry);
		tp_targs_int(&A, "mem_exit", mem->at_exit);
		tp_targs_int(&A, "mem_peak", mem->peak);
	}
	return &A;
}

/* An event of thread tid's with the args of tp_nvtx_put_args (range
 * ids start at 1: 0 is none). */
void tp_nvtx_put(struct tp_buf *b, pid_t tid, enum tp_tev_phase ph,
		 const char *name, uint64_t id, int64_t ts, int64_t dur)
{
	struct tp_tev ev;

	memset(&ev, 0, sizeof(ev));
	ev.track.kind = id ? TP_TEV_ASYNC : TP_TEV_THREAD;
	ev.track.pid = tp_sess.pid;
	ev.track.tid = tid;
	ev.track.id = id;
	ev.phase = ph;
	ev.cat = CAT_NAME;
	ev.catlen = sizeof(CAT_NAME) - 1;
	if (name) {
		ev.name = name;
		ev.namelen = strlen(name);
	}
	ev.ts_ns = ts;
	ev.dur_ns = dur;
	ev.args = A.a;
	ev.nargs = A.n;
	ev.args_always = 1;
	ev.static_keys = 1;	/* literals */
	tp_tev_put(b, &ev);
}
