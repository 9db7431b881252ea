/* hooks/osrt/: the blocking OS calls of the C library (TPROF_TRACE=osrt),
 * on hooks/ and sampling/. */
/* The real C library functions behind the osrt hooks.
 *
 * dlsym(RTLD_NEXT) first, as for every hook (another interposer after
 * tprof keeps its place). These hooks run in code tprof does not
 * control, though: early in the process, inside the loader's lookup
 * itself (a malloc replacement that locks a mutex while dlsym runs), in
 * tprof's own threads. A hook entered again on a thread that is already
 * looking one up does not call dlsym again: it takes the function
 * straight from the C library's own symbol table (its GNU hash, the
 * default version), which allocates nothing and calls no hooked
 * function, so the lookup cannot recurse.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <string.h>

#include "record/thread.h"
#include "osrt.h"

static __thread int resolving __attribute__((tls_model("initial-exec")));

struct want {
	const char *name;
	uint32_t hash;
	void *found;
};

static uint32_t gnu_hash(const char *s)
{
	uint32_t h = 5381;

	for (; *s; s++)
		h = h * 33 + (unsigned char)*s;
	return h;
}

/* A pointer of the dynamic section: relocated in place by the loader on
 * most architectures, an offset where it is not. */
static uintptr_t dyn_ptr(const struct dl_phdr_info *info, ElfW(Addr) p)
{
	return p < info->dlpi_addr ? info->dlpi_addr + p : p;
}

struct dyn {
	const ElfW(Sym) *sym;
	const char *str;
	const uint32_t *gnu;
	const ElfW(Half) *ver;
};

static int read_dyn(const struct dl_phdr_info *info, struct dyn *d)
{
	const ElfW(Dyn) *dyn = NULL;
	int i;

	memset(d, 0, sizeof(*d));
	for (i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(info->dlpi_addr +
						  info->dlpi_phdr[i].p_vaddr);
	for (; dyn && dyn->d_tag != DT_NULL; dyn++) {
		uintptr_t p = dyn_ptr(info, dyn->d_un.d_ptr);

		if (dyn->d_tag == DT_SYMTAB)
			d->sym = (const ElfW(Sym) *)p;
		else if (dyn->d_tag == DT_STRTAB)
			d->str = (const char *)p;
		else if (dyn->d_tag == DT_GNU_HASH)
			d->gnu = (const uint32_t *)p;
		else if (dyn->d_tag == DT_VERSYM)
			d->ver = (const ElfW(Half) *)p;
	}
	return d->sym && d->str && d->gnu ? 0 : -1;
}

/* The GNU hash lookup: buckets, then the chain of equal hashes; of the
 * symbols of that name, the default version (not hidden). */
static void *gnu_lookup(const struct dl_phdr_info *info, const struct dyn *d,
			const struct want *w)
{
	uint32_t nbuckets = d->gnu[0], symoffset = d->gnu[1];
	uint32_t bloom = d->gnu[2], i;
	const uint32_t *buckets = d->gnu + 4 + bloom * (sizeof(ElfW(Addr)) / 4);
	const uint32_t *chain = buckets + nbuckets;

	if (!nbuckets)
		return NULL;
	i = buckets[w->hash % nbuckets];
	if (i < symoffset)
		return NULL;
	for (;; i++) {
		uint32_t h = chain[i - symoffset];
		const ElfW(Sym) *s = &d->sym[i];

		if ((h | 1) == (w->hash | 1) && s->st_shndx != SHN_UNDEF &&
		    !strcmp(d->str + s->st_name, w->name) &&
		    (!d->ver || !(d->ver[i] & 0x8000)))
			return (void *)(info->dlpi_addr + s->st_value);
		if (h & 1)
			return NULL;
	}
}

static int in_libc(struct dl_phdr_info *info, size_t size, void *data)
{
	struct want *w = data;
	const char *n = info->dlpi_name, *base;
	struct dyn d;

	(void)size;
	if (!n || !*n)
		return 0;
	base = strrchr(n, '/');
	base = base ? base + 1 : n;
	if (strcmp(base, "libc.so.6") && strcmp(base, "libpthread.so.0"))
		return 0;
	if (read_dyn(info, &d) < 0)
		return 0;
	w->found = gnu_lookup(info, &d, w);
	return w->found != NULL;
}

static void *from_libc(const char *name)
{
	struct want w = { name, gnu_hash(name), NULL };

	dl_iterate_phdr(in_libc, &w);
	return w.found;
}

static const char *const names[] = {
#define X(name) #name,
	TP_OSRT_SYMS(X)
#undef X
};

void *tp_osrt_fn[TP_OSRT_S_N];
void *tp_osrt_fast[2][TP_OSRT_S_N];

void *tp_osrt_resolve(enum tp_osrt_sym sym)
{
	const char *name = names[sym];
	void **slot = &tp_osrt_fn[sym];
	struct tp_thread *self;
	void *p;

	if (resolving)
		return from_libc(name);
	resolving = 1;
	/* Nothing is recorded meanwhile (dlsym may call hooked code). */
	self = tp_self;
	tp_self = tp_thread_internal();
	p = dlsym(RTLD_NEXT, name);
	tp_self = self;
	if (!p)
		p = from_libc(name);
	resolving = 0;
	if (p)
		__atomic_store_n(slot, p, __ATOMIC_RELAXED);
	return p;
}

void tp_osrt_prime(void)
{
	unsigned i;

	for (i = 0; i < TP_OSRT_S_N; i++)
		if (!__atomic_load_n(&tp_osrt_fn[i], __ATOMIC_RELAXED))
			tp_osrt_resolve((enum tp_osrt_sym)i);
}

void tp_osrt_set_fast(unsigned sources)
{
	unsigned i;

	for (i = 0; i < TP_OSRT_S_N; i++) {
		void *fn = __atomic_load_n(&tp_osrt_fn[i], __ATOMIC_RELAXED);

		__atomic_store_n(&tp_osrt_fast[0][i], sources & TP_SRC_OSRT ?
				 NULL : fn, __ATOMIC_RELAXED);
		__atomic_store_n(&tp_osrt_fast[1][i], sources &
				 (TP_SRC_OSRT | TP_SRC_CPU) ? NULL : fn,
				 __ATOMIC_RELAXED);
	}
}
