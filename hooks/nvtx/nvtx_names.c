/* hooks/nvtx/: the nvtx hooks, on hooks/ (resolve.c: how the real
 * functions are found) and every library folder below it. */
/* What NVTX registers by name: domains, strings, category names and
 * thread names. Registration is rare and takes a lock; the writer reads
 * the lists without one, as entries are immutable once published and
 * never freed (records keep pointers to them). */
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "session/session.h"
#include "util/utf8.h"
#include "nvtx.h"

struct category {
	struct category *next;
	uint64_t domain;
	uint32_t id;
	char name[];
};

struct thread_name {
	struct thread_name *next;
	pid_t tid;
	char name[];
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct tp_nvtx_domain *domains;
static struct tp_nvtx_string *strings;
static struct category *categories;
static struct thread_name *thread_names;

#define PUBLISH(head, e) __atomic_store_n(&(head), (e), __ATOMIC_RELEASE)
#define FIRST(head) __atomic_load_n(&(head), __ATOMIC_ACQUIRE)

/* A copy of s at offset hdr (its flexible member's), or NULL. */
static void *alloc_with(size_t hdr, const char *s)
{
	size_t len = strlen(s) + 1;
	char *p = malloc(hdr + len);

	if (p)
		memcpy(p + hdr, s, len);
	return p;
}

/* The same name gives the same handle, as NVTX promises. */
struct tp_nvtx_domain *tp_nvtx_domain_get(const char *name)
{
	struct tp_nvtx_domain *d;

	if (!name)
		return NULL;
	pthread_mutex_lock(&lock);
	for (d = domains; d; d = d->next)
		if (!strcmp(d->name, name))
			goto out;
	d = alloc_with(offsetof(struct tp_nvtx_domain, name), name);
	if (!d)
		goto out;
	d->next = domains;
	PUBLISH(domains, d);
out:
	pthread_mutex_unlock(&lock);
	return d;
}

const char *tp_nvtx_domain_name(uint64_t domain)
{
	return domain ? ((struct tp_nvtx_domain *)(uintptr_t)domain)->name :
			NULL;
}

struct tp_nvtx_string *tp_nvtx_string_get(uint64_t domain, const char *s)
{
	struct tp_nvtx_string *e;

	if (!s)
		return NULL;
	pthread_mutex_lock(&lock);
	for (e = strings; e; e = e->next)
		if (e->domain == domain && !strcmp(e->s, s))
			goto out;
	e = alloc_with(offsetof(struct tp_nvtx_string, s), s);
	if (!e)
		goto out;
	e->domain = domain;
	e->next = strings;
	PUBLISH(strings, e);
out:
	pthread_mutex_unlock(&lock);
	return e;
}

/* A later name for the same category wins: it is found first. */
void tp_nvtx_category_set(uint64_t domain, uint32_t id, const char *name)
{
	struct category *c;

	if (!name)
		return;
	c = alloc_with(offsetof(struct category, name), name);
	if (!c)
		return;
	c->domain = domain;
	c->id = id;
	pthread_mutex_lock(&lock);
	c->next = categories;
	PUBLISH(categories, c);
	pthread_mutex_unlock(&lock);
}

const char *tp_nvtx_category_name(uint64_t domain, uint32_t id)
{
	struct category *c;

	for (c = FIRST(categories); c; c = c->next)
		if (c->domain == domain && c->id == id)
			return c->name;
	return NULL;
}

void tp_nvtx_thread_set_name(uint32_t tid, const char *name)
{
	struct thread_name *t;

	if (!name)
		return;
	t = alloc_with(offsetof(struct thread_name, name), name);
	if (!t)
		return;
	t->tid = (pid_t)tid;
	pthread_mutex_lock(&lock);
	t->next = thread_names;
	PUBLISH(thread_names, t);
	pthread_mutex_unlock(&lock);
}

const char *tp_nvtx_thread_name(pid_t tid)
{
	struct thread_name *t;

	for (t = FIRST(thread_names); t; t = t->next)
		if (t->tid == tid)
			return t->name;
	return NULL;
}

void tp_nvtx_thread_names(void (*fn)(void *arg, pid_t tid, const char *name),
			  void *arg)
{
	struct thread_name *t, *u;

	for (t = FIRST(thread_names); t; t = t->next) {
		for (u = FIRST(thread_names); u != t; u = u->next)
			if (u->tid == t->tid)
				break;
		if (u == t)	/* the newest name of this thread */
			fn(arg, t->tid, t->name);
	}
}

/* wchar_t is UTF-32 here; anything not a code point becomes U+FFFD. */
size_t tp_nvtx_utf8(char *out, size_t len, const wchar_t *w)
{
	size_t o = 0;

	if (!len)
		return 0;
	for (; w && *w; w++) {
		uint32_t c = (uint32_t)*w;
		unsigned char b[4];
		size_t n;

		if (c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
			c = 0xfffd;
		n = tp_utf8_encode(c, b);
		if (o + n > len - 1)
			break;
		memcpy(out + o, b, n);
		o += n;
	}
	out[o] = '\0';
	return o;
}

uint64_t tp_nvtx_tprof_domain(void)
{
	static uint64_t d;
	uint64_t v = __atomic_load_n(&d, __ATOMIC_ACQUIRE);

	if (!v) {
		v = (uint64_t)(uintptr_t)tp_nvtx_domain_get("tprof");
		__atomic_store_n(&d, v, __ATOMIC_RELEASE);
	}
	return v;
}

int tp_nvtx_is_step(const char *name)
{
	return !strcmp(name, tp_sess.cfg.cap.step_nvtx);
}
