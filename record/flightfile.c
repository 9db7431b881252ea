/* record/: the recording core: records, per-thread rings, threads,
 * drops, the clock, the rings file; on files/ .. util/. */
/* The flight recorder's window on disk, the writing side (see
 * flightfile.h). Only the writer thread calls it. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "util/log.h"
#include "files/naming.h"
#include "files/owned_fd.h"
#include "ring_budget.h"
#include "flightfile.h"

#define GROW (1u << 20)		/* reserved on disk at a time */
#define ALIGN8(n) (((n) + 7) & ~(uint64_t)7)

/* A chunk in the ring, oldest first. */
struct slot {
	uint64_t seq, off, size;
};

static struct {
	int state;		/* 0 untried, 1 on, -1 off */
	int fd;
	char dir[4096];
	char path[4400];
	const char *name;	/* in path */
	uint64_t cap, flight_ns, reserved;
	int perfetto;
	struct tp_ff_hdr *h;
	char *data;
	uint64_t head;		/* where the next chunk goes */
	uint64_t seq;
	struct slot *s;		/* circular: n of them from s[first] */
	size_t n, first, max;
} F = { .fd = -1 };

void tp_ff_configure(const char *dir, uint64_t cap, uint64_t flight_ns,
		     int perfetto)
{
	snprintf(F.dir, sizeof(F.dir), "%s", dir);
	F.cap = cap & ~(uint64_t)7;
	F.flight_ns = flight_ns;
	F.perfetto = perfetto;
}

static void say_off(const char *why, int err)
{
	tp_warn("flight recorder: %s %s: %s; its window stays in memory "
		"only, and a SIGKILL loses it (%s)", why, F.path[0] ? F.path :
		F.dir, strerror(err), tp_fix_for(err));
}

/* The header reserved and mapped, the ring's address space too (its
 * pages reserved on disk as they are first used). */
static int create(void)
{
	struct rlimit rl;
	void *p;
	int err;

	if (tp_as_limited() || (getrlimit(RLIMIT_FSIZE, &rl) == 0 &&
				rl.rlim_cur != RLIM_INFINITY) || F.cap < GROW)
		return -1;	/* the limits say no: in memory, silently */
	F.fd = tp_create_own_file(F.dir, TP_FF_PREFIX, F.perfetto ?
				  ".pftrace" : "", F.path, sizeof(F.path),
				  &F.name);
	if (F.fd < 0) {
		say_off("cannot make its file in", errno);
		return -1;
	}
	F.fd = tp_fd_high(F.fd);
	err = posix_fallocate(F.fd, 0, TP_FF_DATA_OFF);
	p = err ? MAP_FAILED : mmap(NULL, TP_FF_DATA_OFF + F.cap,
				    PROT_READ | PROT_WRITE,
				    MAP_SHARED | MAP_NORESERVE, F.fd, 0);
	if (p == MAP_FAILED) {
		say_off("cannot map", err ? err : errno);
		close(F.fd);
		unlink(F.path);
		F.fd = -1;
		return -1;
	}
	F.h = p;
	F.data = (char *)p + TP_FF_DATA_OFF;
	memcpy(F.h->magic, TP_FF_MAGIC, sizeof(F.h->magic));
	F.h->version = TP_FF_VERSION;
	F.h->pid = (int32_t)getpid();
	F.h->cap = F.cap;
	F.h->flight_ns = F.flight_ns;
	F.h->first_seq = 1;
	F.h->format = F.perfetto ? 1 : 0;
	return 0;
}

static int ensure(void)
{
	if (!F.state)
		F.state = create() == 0 ? 1 : -1;
	return F.state > 0;
}

const char *tp_ff_name(void)
{
	return F.state > 0 ? F.name : "";
}

/* The ring's bytes up to end reserved on disk: a store into a hole of a
 * full disk would be a SIGBUS. */
static int reserve(uint64_t end)
{
	uint64_t want;
	int err;

	if (end <= F.reserved)
		return 0;
	want = (end + GROW - 1) / GROW * GROW;
	if (want > F.cap)
		want = F.cap;
	err = posix_fallocate(F.fd, (off_t)(TP_FF_DATA_OFF + F.reserved),
			      (off_t)(want - F.reserved));
	if (err) {
		errno = err;
		return -1;
	}
	F.reserved = want;
	return 0;
}

static void evict(void)
{
	struct slot *o = &F.s[F.first];

	F.first = (F.first + 1) % F.max;
	F.n--;
	/* The offset first, then the number: a reader starts at the
	 * offset and checks the number it finds there. */
	__atomic_store_n(&F.h->first_off, F.n ? F.s[F.first].off : F.head,
			 __ATOMIC_RELEASE);
	__atomic_store_n(&F.h->first_seq, o->seq + 1, __ATOMIC_RELEASE);
}

/* Room for size bytes at F.head, the oldest chunks let go for it; 0, or
 * -1 when it cannot be (larger than the ring). */
static int make_room(uint64_t size)
{
	uint64_t lo;

	if (size > F.cap)
		return -1;
	for (;;) {
		if (!F.n)
			F.head = 0;
		lo = F.n ? F.s[F.first].off : 0;
		/* Wrapped: room up to the oldest. */
		if (F.n && F.head <= lo) {
			if (F.head + size <= lo)
				return 0;
			evict();
			continue;
		}
		if (F.head + size <= F.cap)
			return 0;
		if (F.n && lo < size) {	/* no room at 0 yet */
			evict();
			continue;
		}
		if (F.head + sizeof(uint32_t) <= F.cap)
			__atomic_store_n((uint32_t *)(F.data + F.head),
					 TP_FF_WRAP, __ATOMIC_RELEASE);
		F.head = 0;
		if (!F.n)
			return 0;
	}
}

static int grow_slots(void)
{
	size_t max = F.max ? 2 * F.max : 256, i;
	struct slot *s = malloc(max * sizeof(*s));

	if (!s)
		return -1;
	for (i = 0; i < F.n; i++)
		s[i] = F.s[(F.first + i) % F.max];
	free(F.s);
	F.s = s;
	F.first = 0;
	F.max = max;
	return 0;
}

uint64_t tp_ff_put(const void *z, uint32_t zlen, uint64_t len,
		   uint64_t events, int64_t end_ns)
{
	uint64_t size = ALIGN8(sizeof(struct tp_ff_chunk) + zlen);
	struct tp_ff_chunk *c;

	if (!ensure())
		return 0;
	if ((F.n == F.max && grow_slots() < 0) || make_room(size) < 0)
		return 0;
	if (reserve(F.head + size) < 0) {
		say_off("cannot reserve room in", errno);
		tp_ff_remove();
		return 0;
	}
	c = (struct tp_ff_chunk *)(F.data + F.head);
	c->zlen = zlen;
	c->seq = ++F.seq;
	c->len = len;
	c->events = events;
	c->end_ns = end_ns;
	memcpy(c + 1, z, zlen);
	__atomic_store_n(&c->magic, TP_FF_CHUNK, __ATOMIC_RELEASE);
	F.s[(F.first + F.n++) % F.max] = (struct slot){ F.seq, F.head, size };
	F.head += size;
	if (F.n == 1)
		__atomic_store_n(&F.h->first_off, F.s[F.first].off,
				 __ATOMIC_RELEASE);
	__atomic_store_n(&F.h->last_seq, F.seq, __ATOMIC_RELEASE);
	return F.seq;
}

void tp_ff_forget_until(uint64_t seq)
{
	while (F.state > 0 && F.n && F.s[F.first].seq <= seq)
		evict();
}

void tp_ff_set_head(const char *text, size_t len, int rank, int world,
		    const char *run, const char *name)
{
	if (!ensure() || len > TP_FF_DATA_OFF - TP_FF_HEAD_OFF)
		return;
	memcpy((char *)F.h + TP_FF_HEAD_OFF, text, len);
	F.h->rank = rank;
	F.h->world = world;
	snprintf(F.h->run, sizeof(F.h->run), "%s", run);
	snprintf(F.h->name, sizeof(F.h->name), "%s", name);
	__atomic_store_n(&F.h->head_len, len, __ATOMIC_RELEASE);
}

void tp_ff_set_dumps(uint64_t dumps)
{
	if (F.state > 0)
		F.h->dumps = dumps;
}

void tp_ff_set_base(int64_t base_ns)
{
	if (ensure())
		F.h->base_ns = base_ns;
}

/* Written past the ring with pwrite, not through the mapping: the log
 * only grows, and the kernel keeps what was written through a kill. */
int tp_ff_add_tracks(const void *p, size_t len)
{
	uint64_t at;
	ssize_t n;

	if (!len || !ensure())
		return 0;
	at = TP_FF_DATA_OFF + F.cap + F.h->tracks_len;
	while (len) {
		n = pwrite(F.fd, p, len, (off_t)at);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			say_off("cannot keep its tracks in", n < 0 ? errno :
				ENOSPC);
			tp_ff_remove();
			return -1;
		}
		/* Whole packets only count: the length moves once all of
		 * them are written. */
		p = (const char *)p + n;
		len -= (size_t)n;
		at += (uint64_t)n;
	}
	__atomic_store_n(&F.h->tracks_len, at - TP_FF_DATA_OFF - F.cap,
			 __ATOMIC_RELEASE);
	return 0;
}

static void unmap(void)
{
	if (F.h)
		munmap(F.h, TP_FF_DATA_OFF + F.cap);
	if (F.fd >= 0)
		close(F.fd);
	free(F.s);
	F.h = NULL;
	F.data = NULL;
	F.fd = -1;
	F.s = NULL;
	F.n = F.first = F.max = 0;
	F.head = F.reserved = 0;
}

void tp_ff_remove(void)
{
	if (F.state <= 0)
		return;
	unlink(F.path);
	unmap();
	F.state = -1;
}

/* A fork child: the parent's file is closed, never written. */
void tp_ff_after_fork(void)
{
	unmap();
	F.state = 0;
	F.seq = 0;
	F.path[0] = '\0';
	F.name = NULL;
}
