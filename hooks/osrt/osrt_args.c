/* hooks/osrt/: the blocking OS calls of the C library (TPROF_TRACE=osrt),
 * on hooks/ and sampling/. */
/* How a recorded blocking call is printed (the writer thread): its
 * args by kind (osrt.h), the errno name when it failed. */
#define _GNU_SOURCE
#include <string.h>

#include "osrt.h"

/* The path copied into the record's extension, or NULL. */
static const char *path_of(const struct tp_event *e, size_t *len)
{
	const char *s = tp_event_ext(e);
	size_t room = (size_t)(e->flags & TP_EV_EXT_MASK) * TP_EV_SLOT_BYTES;

	if (!room)
		return NULL;
	*len = strnlen(s, room);
	return *len < room ? s : NULL;
}

/* The call's result is the event's "ret" (the writer's); a failed
 * call's errno by name. */
static void put_common(struct tp_targs *w, const struct tp_event *e)
{
	int64_t ret = (int64_t)e->a.raw[2];

	if (ret < 0 && e->a.raw[3])
		tp_targs_cstr(w, "errno", strerrorname_np((int)e->a.raw[3]) ?
			      strerrorname_np((int)e->a.raw[3]) : "?");
}

static void put_path(struct tp_targs *w, const struct tp_event *e)
{
	size_t len;
	const char *p = path_of(e, &len);

	if (p)
		tp_targs_str(w, "path", p, len);
}

static void fmt_io(struct tp_targs *w, const struct tp_event *e)
{
	tp_targs_int(w, "fd", (int64_t)e->a.raw[0]);
	put_path(w, e);
	tp_targs_uint(w, "bytes", e->a.raw[1]);
	put_common(w, e);
}

static void fmt_fd(struct tp_targs *w, const struct tp_event *e)
{
	tp_targs_int(w, "fd", (int64_t)e->a.raw[0]);
	put_path(w, e);
	put_common(w, e);
}

static void fmt_open(struct tp_targs *w, const struct tp_event *e)
{
	put_path(w, e);
	tp_targs_uint(w, "flags", e->a.raw[1]);
	put_common(w, e);
}

/* A timeout of "forever" is left out. */
static void put_timeout(struct tp_targs *w, uint64_t ns)
{
	if (ns != UINT64_MAX)
		tp_targs_uint(w, "timeout_ns", ns);
}

static void fmt_poll(struct tp_targs *w, const struct tp_event *e)
{
	tp_targs_uint(w, "nfds", e->a.raw[0]);
	put_timeout(w, e->a.raw[1]);
	put_common(w, e);
}

static void fmt_sync(struct tp_targs *w, const struct tp_event *e)
{
	tp_targs_ptr(w, "object", e->a.raw[0]);
	put_common(w, e);
}

static void fmt_sleep(struct tp_targs *w, const struct tp_event *e)
{
	put_timeout(w, e->a.raw[1]);
	put_common(w, e);
}

static void fmt_wait(struct tp_targs *w, const struct tp_event *e)
{
	tp_targs_int(w, "pid", (int64_t)e->a.raw[0]);
	put_common(w, e);
}

static void fmt_sig(struct tp_targs *w, const struct tp_event *e)
{
	put_timeout(w, e->a.raw[1]);
	put_common(w, e);
}

#define FMT_IO fmt_io
#define FMT_FD fmt_fd
#define FMT_OPEN fmt_open
#define FMT_POLL fmt_poll
#define FMT_SYNC fmt_sync
#define FMT_SLEEP fmt_sleep
#define FMT_WAIT fmt_wait
#define FMT_SIG fmt_sig

static const struct tp_api apis[] = {
#define X(id, name, kind) [TP_OSRT_##id] = { name, "osrt", FMT_##kind, NULL },
	TP_OSRT_APIS(X)
#undef X
};

void tp_osrt_register(void)
{
	tp_api_register(TP_TABLE_OSRT, apis, TP_OSRT_N);
}
