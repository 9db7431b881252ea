/* record/: the recording core: records, per-thread rings, threads,
 * drops, the clock, the rings file; on files/ .. util/. */
/* The rings file, the recording side (see ringfile.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "util/log.h"
#include "files/naming.h"
#include "files/owned_fd.h"
#include "ring_budget.h"
#include "ringfile.h"

enum { RF_UNTRIED, RF_ON, RF_OFF };

static struct {
	int mode;
	int fd;
	uint32_t lock;		/* creation (the header's lock: regions) */
	int said_region;	/* one warning for threads left in memory */
	struct tp_rf_hdr *h;
	char path[4200];
	char dir[4096];
	const char *off_why;	/* the configuration keeps rings in memory */
} F = { .fd = -1, .off_why = "tracing is not configured" };

void tp_rf_configure(const char *dir, const char *off_why)
{
	snprintf(F.dir, sizeof(F.dir), "%s", dir);
	F.off_why = off_why;
}

static void spin_lock(uint32_t *l)
{
	while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(l, __ATOMIC_RELAXED))
			__builtin_ia32_pause();
}

static void spin_unlock(uint32_t *l)
{
	__atomic_store_n(l, 0, __ATOMIC_RELEASE);
}

/* Why there is no file, or NULL when one may be made. */
static const char *not_wanted(void)
{
	struct rlimit rl;

	if (F.off_why)
		return F.off_why;
	if (tp_as_limited())
		return "an address-space limit (ulimit -v)";
	/* Growing the file past RLIMIT_FSIZE would raise SIGXFSZ. */
	if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		return "a file-size limit (ulimit -f)";
	return NULL;
}

/* The header and the notes, reserved on disk and mapped. */
static int create(void)
{
	const char *why = not_wanted();
	struct tp_rf_hdr *h;
	int fd, err;

	if (why) {
		tp_info("rings stay in memory (%s): a SIGKILL loses what is "
			"still in them", why);
		return -1;
	}
	fd = tp_create_own_file(F.dir, TP_RF_PREFIX, "", F.path,
				sizeof(F.path), NULL);
	if (fd < 0) {
		err = errno;
		goto fail;
	}
	err = posix_fallocate(fd, 0, TP_RF_REGIONS_OFF);
	if (err)
		goto fail_fd;
	h = mmap(NULL, TP_RF_REGIONS_OFF, PROT_READ | PROT_WRITE, MAP_SHARED,
		 fd, 0);
	if (h == MAP_FAILED) {
		err = errno;
		goto fail_fd;
	}
	memcpy(h->magic, TP_RF_MAGIC, sizeof(h->magic));
	h->version = TP_RF_VERSION;
	h->layout = TP_RF_LAYOUT;
	h->pid = (int32_t)getpid();
	F.fd = tp_fd_high(fd);
	F.h = h;
	return 0;
fail_fd:
	close(fd);
	unlink(F.path);
fail:
	tp_warn("cannot make the rings file in TPROF_OUTPUT_DIR='%s': %s; "
		"rings stay in memory and a SIGKILL loses what is still in "
		"them (%s)", F.dir, strerror(err), tp_fix_for(err));
	return -1;
}

static int ensure(void)
{
	int mode = __atomic_load_n(&F.mode, __ATOMIC_ACQUIRE);

	if (mode != RF_UNTRIED)
		return mode == RF_ON;
	spin_lock(&F.lock);
	if (F.mode == RF_UNTRIED)
		__atomic_store_n(&F.mode, create() == 0 ? RF_ON : RF_OFF,
				 __ATOMIC_RELEASE);
	spin_unlock(&F.lock);
	return F.mode == RF_ON;
}

int tp_rf_active(void)
{
	return __atomic_load_n(&F.mode, __ATOMIC_ACQUIRE) == RF_ON;
}

/* A free region, or a new one reserved at the end of the file: its
 * index, or -1 with errno. Header lock held. */
static int take_region(struct tp_rf_hdr *h, size_t bytes)
{
	unsigned i;
	int err;

	/* Atomic: a region taken under the lock turns USED outside it. */
	for (i = 0; i < h->n_regions; i++)
		if (__atomic_load_n(&h->state[i], __ATOMIC_ACQUIRE) ==
		    TP_RF_FREE)
			return (int)i;
	if (h->n_regions >= TP_RF_MAX_REGIONS) {
		errno = ENOSPC;
		return -1;
	}
	/* Reserved now: a store into a hole of a full disk is a SIGBUS. */
	err = posix_fallocate(F.fd, (off_t)(TP_RF_REGIONS_OFF +
					   (uint64_t)i * bytes), (off_t)bytes);
	if (err) {
		errno = err;
		return -1;
	}
	h->n_regions = i + 1;
	return (int)i;
}

static void say_in_memory(int err)
{
	if (__atomic_exchange_n(&F.said_region, 1, __ATOMIC_RELAXED))
		return;
	tp_warn("cannot reserve a thread's ring in %s: %s; it stays in "
		"memory, and a SIGKILL loses what is still in it (%s)",
		F.path, strerror(err), tp_fix_for(err));
}

struct tp_thread *tp_rf_thread_alloc(size_t ring_bytes)
{
	size_t n = tp_ring_slots_for(ring_bytes);
	size_t bytes = TP_RF_SLOTS_OFF + n * sizeof(struct tp_event);
	struct tp_rf_region *reg;
	struct tp_thread *t;
	char *p;
	int i;

	if (!ensure())
		return NULL;
	bytes = (bytes + 4095) & ~(size_t)4095;
	spin_lock(&F.h->lock);
	/* Every region has one size: the first thread's. */
	if (!F.h->region_bytes) {
		F.h->region_bytes = bytes;
		F.h->n_slots = n;
	}
	if (F.h->region_bytes != bytes) {
		spin_unlock(&F.h->lock);
		return NULL;
	}
	i = take_region(F.h, bytes);
	if (i < 0) {
		spin_unlock(&F.h->lock);
		say_in_memory(errno);
		return NULL;
	}
	__atomic_store_n(&F.h->state[i], TP_RF_TAKEN, __ATOMIC_RELAXED);
	spin_unlock(&F.h->lock);
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, F.fd,
		 (off_t)(TP_RF_REGIONS_OFF + (uint64_t)i * bytes));
	if (p == MAP_FAILED) {
		int err = errno;

		__atomic_store_n(&F.h->state[i], TP_RF_FREE, __ATOMIC_RELEASE);
		say_in_memory(err);
		return NULL;
	}
	/* A reused region holds the last thread's records: its page is
	 * zeroed (head 0) before the decoder may look at it. */
	memset(p, 0, TP_RF_SLOTS_OFF);
	reg = (struct tp_rf_region *)p;
	reg->index = (uint32_t)i;
	t = (struct tp_thread *)(p + TP_RF_THREAD_OFF);
	tp_ring_init_at(&t->ring, (struct tp_event *)(p + TP_RF_SLOTS_OFF), n);
	t->ring.hold = 1;
	__atomic_store_n(&F.h->state[i], TP_RF_USED, __ATOMIC_RELEASE);
	return t;
}

static struct tp_rf_region *region_of(struct tp_thread *t)
{
	return (struct tp_rf_region *)((char *)t - TP_RF_THREAD_OFF);
}

void tp_rf_thread_forget(struct tp_thread *t)
{
	munmap(region_of(t), TP_RF_SLOTS_OFF + t->ring.map_bytes);
}

void tp_rf_thread_free(struct tp_thread *t)
{
	uint32_t i = region_of(t)->index;

	if (F.h && i < TP_RF_MAX_REGIONS)
		__atomic_store_n(&F.h->state[i], TP_RF_FREE, __ATOMIC_RELEASE);
	tp_rf_thread_forget(t);
}

/* The child's mappings of the parent's regions went with
 * tp_rf_thread_forget; the header and descriptor go here. */
void tp_rf_after_fork(void)
{
	if (F.h)
		munmap(F.h, TP_RF_REGIONS_OFF);
	if (F.fd >= 0)
		close(F.fd);
	F.h = NULL;
	F.fd = -1;
	F.lock = 0;
	F.said_region = 0;
	F.mode = RF_UNTRIED;
}

void tp_rf_note(uint32_t type, uint64_t a, uint64_t b, const char *s)
{
	size_t slen = s ? strlen(s) + 1 : 0;
	size_t len = (sizeof(struct tp_rf_note) + slen + 7) & ~(size_t)7;
	struct tp_rf_note *n;
	uint64_t off;

	if (!tp_rf_active() || slen > 4096)
		return;
	off = __atomic_fetch_add(&F.h->log_used, len, __ATOMIC_RELAXED);
	if (off + len > TP_RF_LOG_BYTES) {
		__atomic_add_fetch(&F.h->log_lost, 1, __ATOMIC_RELAXED);
		return;
	}
	n = (struct tp_rf_note *)((char *)F.h + TP_RF_LOG_OFF + off);
	n->len = (uint32_t)len;
	n->a = a;
	n->b = b;
	if (slen)
		memcpy(n->s, s, slen);
	__atomic_store_n(&n->type, type, __ATOMIC_RELEASE);
}

void tp_rf_set_trace(const char *tmp_path)
{
	const char *base = strrchr(tmp_path, '/');

	if (!tp_rf_active())
		return;
	base = base ? base + 1 : tmp_path;
	snprintf(F.h->tmp_name, sizeof(F.h->tmp_name), "%s", base);
}

void tp_rf_set_clock(const struct tp_clock_map *m, int64_t base_ns)
{
	if (!tp_rf_active())
		return;
	F.h->map = *m;
	F.h->base_ns = base_ns;
	__atomic_store_n(&F.h->clock_ready, 1, __ATOMIC_RELEASE);
}

/* Only the writer calls these: gen is its own. */
uint64_t tp_rf_sync_begin(void)
{
	return tp_rf_active() ? F.h->gen + 1 : 0;
}

void tp_rf_sync_ring(struct tp_thread *t, uint64_t gen)
{
	region_of(t)->sync_pos[gen & 1] = t->ring.rd;
}

void tp_rf_sync_end(uint64_t gen, uint64_t tmp_len)
{
	if (!tp_rf_active())
		return;
	F.h->tmp_len[gen & 1] = tmp_len;
	__atomic_store_n(&F.h->gen, gen, __ATOMIC_RELEASE);
}

void tp_rf_remove(void)
{
	if (!tp_rf_active() || !F.path[0])
		return;
	unlink(F.path);
	F.path[0] = '\0';
}
