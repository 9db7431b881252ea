/* stacks/: call stacks: capture (libunwind, Python perf trampolines),
 * symbolization, interning; on util/ .. session/. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "encode/json.h"
#include "record/ringfile.h"
#include "record/thread.h"
#include "symbols.h"
#include "symidx.h"

/* An insert-only open-addressing map, uint64 -> uintptr, under `lock`. */
struct map {
	uint64_t *keys;
	uintptr_t *vals;
	size_t cap;
	size_t n;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct map fn_names;	/* host stub -> registered device name */
static struct map handles;	/* cudaKernel_t -> host stub */
static struct map names;	/* address -> struct json_name */

struct json_name {
	uint64_t func;	/* the address it names (the cache's check) */
	size_t len;
	char s[];
};

/* The kernel names looked up last, read without the lock: the writer
 * asks for one per launch, and the lock's two atomics were most of the
 * lookup. A json_name is never freed or changed once in `names`, so a
 * slot holds a pointer published with a release store; a reader that
 * finds another function's name in it takes the locked way. */
#define NAME_CACHE 64
static struct json_name *name_cache[NAME_CACHE];

static unsigned name_slot(uint64_t func)
{
	return (unsigned)((func * 0x9e3779b97f4a7c15ull) >> 58) &
		(NAME_CACHE - 1);
}

static size_t slot(const struct map *m, uint64_t key)
{
	size_t i = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 17) & (m->cap - 1);

	while (m->keys[i] && m->keys[i] != key)
		i = (i + 1) & (m->cap - 1);
	return i;
}

static int map_get(const struct map *m, uint64_t key, uintptr_t *val)
{
	size_t i;

	if (!m->cap || !key)
		return 0;
	i = slot(m, key);
	if (!m->keys[i])
		return 0;
	*val = m->vals[i];
	return 1;
}

static int map_grow(struct map *m)
{
	struct map g = { 0 };
	size_t i;

	g.cap = m->cap ? m->cap * 2 : 256;
	g.keys = calloc(g.cap, sizeof(*g.keys));
	g.vals = calloc(g.cap, sizeof(*g.vals));
	if (!g.keys || !g.vals) {
		free(g.keys);
		free(g.vals);
		return -1;
	}
	for (i = 0; i < m->cap; i++) {
		if (!m->keys[i])
			continue;
		size_t j = slot(&g, m->keys[i]);

		g.keys[j] = m->keys[i];
		g.vals[j] = m->vals[i];
		g.n++;
	}
	free(m->keys);
	free(m->vals);
	*m = g;
	return 0;
}

static void map_put(struct map *m, uint64_t key, uintptr_t val)
{
	size_t i;

	if (!key)
		return;
	if ((m->n + 1) * 2 > m->cap && map_grow(m) < 0)
		return;
	i = slot(m, key);
	if (!m->keys[i])
		m->n++;
	m->keys[i] = key;
	m->vals[i] = val;
}

void tp_sym_note_function(const void *host_fn, const char *device_name)
{
	char *copy;

	if (!host_fn || !device_name)
		return;
	copy = strdup(device_name);
	if (!copy)
		return;
	pthread_mutex_lock(&lock);
	map_put(&fn_names, (uintptr_t)host_fn, (uintptr_t)copy);
	pthread_mutex_unlock(&lock);
	/* A launch record holds only the stub: the name goes to the rings
	 * file too, for tprof recover after a kill. */
	tp_rf_note(TP_RF_NOTE_FN, (uintptr_t)host_fn, 0, device_name);
}

void tp_sym_note_kernel_handle(const void *handle, const void *host_fn)
{
	if (!handle || !host_fn)
		return;
	pthread_mutex_lock(&lock);
	map_put(&handles, (uintptr_t)handle, (uintptr_t)host_fn);
	pthread_mutex_unlock(&lock);
	tp_rf_note(TP_RF_NOTE_HANDLE, (uintptr_t)handle, (uintptr_t)host_fn,
		   NULL);
}

/* Names registered before the rings file was made, into it (the writer,
 * once it exists). Notes are copied under the lock: the file's log takes
 * no lock of ours. */
void tp_sym_note_all_to_ringfile(void)
{
	size_t i;

	pthread_mutex_lock(&lock);
	for (i = 0; i < fn_names.cap; i++)
		if (fn_names.keys[i])
			tp_rf_note(TP_RF_NOTE_FN, fn_names.keys[i], 0,
				   (const char *)fn_names.vals[i]);
	for (i = 0; i < handles.cap; i++)
		if (handles.keys[i])
			tp_rf_note(TP_RF_NOTE_HANDLE, handles.keys[i],
				   handles.vals[i], NULL);
	pthread_mutex_unlock(&lock);
}

/* The decoder of a killed process's rings file runs in another process:
 * an address not registered there must not be looked up in this one's
 * ELF files (it would name some unrelated function). */
static int offline;

void tp_sym_set_offline(void)
{
	offline = 1;
}

/* The loaded object holding an address, as dladdr gives it, found with
 * dl_iterate_phdr instead: dladdr (and dlsym) take the loader lock that
 * dlopen holds while a new library's constructors run; dl_iterate_phdr
 * takes another, held only while the list of objects changes. A
 * constructor that calls a hooked function after SIGTERM waits in the
 * hook with the loader lock held, and a writer in dladdr then never
 * completed the trace (test_robust's "loader lock" check). */
struct obj {
	uintptr_t addr;
	uintptr_t bias;		/* symbol value + bias = address */
	uintptr_t start;	/* the first mapped page (dladdr's base) */
	char path[4096];	/* "" for the executable */
};

static int obj_holds(struct dl_phdr_info *info, size_t size, void *data)
{
	struct obj *o = data;
	uintptr_t start = UINTPTR_MAX;
	int i, hit = 0;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type != PT_LOAD)
			continue;
		if (lo < start)
			start = lo;
		if (o->addr >= lo && o->addr - lo < ph->p_memsz)
			hit = 1;
	}
	if (!hit)
		return 0;
	snprintf(o->path, sizeof(o->path), "%s",
		 info->dlpi_name ? info->dlpi_name : "");
	o->bias = info->dlpi_addr;
	o->start = start & ~(uintptr_t)4095;
	return 1;
}

static int obj_find(uintptr_t addr, struct obj *o)
{
	o->addr = addr;
	return dl_iterate_phdr(obj_holds, o) == 1;
}

/* The function symbol holding addr in the ELF file of the object that
 * contains it (exact: only one starting at addr), and the offset into it.
 * Host stubs are local symbols of the executable, absent from .dynsym
 * unless linked with -rdynamic, so .symtab is read from the file (once:
 * symidx.c keeps each file's symbols sorted). */
static char *elf_function(uintptr_t addr, int exact, uintptr_t *offset)
{
	const char *path;
	struct obj o;
	int dyn;

	if (!obj_find(addr, &o))
		return NULL;
	path = o.path[0] ? o.path : "/proc/self/exe";
	dyn = tp_symidx_is_dyn(path);
	if (dyn < 0)
		return NULL;
	return tp_symidx_function(path, addr - (dyn ? o.bias : 0), exact,
				  offset);
}

static char *elf_symbol(uintptr_t addr)
{
	uintptr_t off;

	return elf_function(addr, 1, &off);
}

typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);

static demangle_fn demangler;

/* Looked up until found: libstdc++ may be loaded after the first name (a
 * Python program imports torch late). Not while threads wait in the
 * hooks (the process ends: one may hold the loader lock dlsym needs). */
void tp_sym_find_demangler(void)
{
	if (!__atomic_load_n(&demangler, __ATOMIC_ACQUIRE) &&
	    !__atomic_load_n(&tp_parking, __ATOMIC_RELAXED))
		__atomic_store_n(&demangler, (demangle_fn)dlsym(RTLD_DEFAULT,
				 "__cxa_demangle"), __ATOMIC_RELEASE);
}

char *tp_sym_demangle(char *mangled)
{
	demangle_fn fn;
	char *out;
	int status = -1;

	if (strncmp(mangled, "_Z", 2))
		return mangled;
	tp_sym_find_demangler();
	fn = __atomic_load_n(&demangler, __ATOMIC_ACQUIRE);
	if (!fn)
		return mangled;
	out = fn(mangled, NULL, NULL, &status);
	if (status || !out) {
		free(out);
		return mangled;
	}
	free(mangled);
	return out;
}

/* The registered name of func (lock held); *host: the host function a
 * kernel handle stands for. */
static char *registered(uintptr_t func, uintptr_t *host)
{
	uintptr_t v;

	if (map_get(&handles, func, &v))
		func = v;
	*host = func;
	return map_get(&fn_names, func, &v) ? strdup((const char *)v) : NULL;
}

/* Without the lock: the demangler's first lookup calls into the dynamic
 * loader (dlsym), whose lock a thread inside dlopen holds while it
 * registers a new module's kernels, which takes ours. */
static char *resolve(uintptr_t func, char *name)
{
	char buf[32];

	if (!name && !offline)
		name = elf_symbol(func);
	if (!name) {
		snprintf(buf, sizeof(buf), "kernel@0x%lx", (unsigned long)func);
		name = strdup(buf);
	}
	return name ? tp_sym_demangle(name) : NULL;
}

static struct json_name *to_json(uint64_t func, const char *name)
{
	struct tp_buf b = { 0 };
	struct json_name *j;

	tp_json_str(&b, name);
	if (b.oom)
		goto out;
	j = malloc(sizeof(*j) + b.len + 1);
	if (!j)
		goto out;
	j->func = func;
	j->len = b.len;
	memcpy(j->s, b.p, b.len);
	j->s[b.len] = '\0';
	tp_buf_free(&b);
	return j;
out:
	tp_buf_free(&b);
	return NULL;
}

const char *tp_sym_kernel_json(uint64_t func, size_t *len)
{
	static const char unknown[] = "\"unknown kernel\"";
	struct json_name *j = NULL;
	uintptr_t v, host;
	char *name;

	*len = sizeof(unknown) - 1;
	if (!func)
		return unknown;
	j = __atomic_load_n(&name_cache[name_slot(func)], __ATOMIC_ACQUIRE);
	if (j && j->func == func)
		goto out;
	j = NULL;
	pthread_mutex_lock(&lock);
	if (map_get(&names, func, &v)) {
		j = (struct json_name *)v;
		__atomic_store_n(&name_cache[name_slot(func)], j,
				 __ATOMIC_RELEASE);
		pthread_mutex_unlock(&lock);
		goto out;
	}
	name = registered((uintptr_t)func, &host);
	pthread_mutex_unlock(&lock);
	name = resolve(host, name);
	if (name)
		j = to_json(func, name);
	free(name);
	if (!j)
		goto out;
	pthread_mutex_lock(&lock);
	if (map_get(&names, func, &v)) {	/* another thread was first */
		free(j);
		j = (struct json_name *)v;
	} else {
		map_put(&names, func, (uintptr_t)j);
	}
	__atomic_store_n(&name_cache[name_slot(func)], j, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&lock);
out:
	if (!j)
		return unknown;
	*len = j->len;
	return j->s;
}

void tp_sym_atfork_prepare(void)
{
	pthread_mutex_lock(&lock);
}

void tp_sym_atfork_parent(void)
{
	pthread_mutex_unlock(&lock);
}

void tp_sym_atfork_child(void)
{
	pthread_mutex_unlock(&lock);
}

/* "function+0xoff (library)", or "library+0xoff" when the object has no
 * symbol for it (stripped), or NULL when no loaded object holds ip. A
 * return address (ret) is looked up at the call before it; a sampled
 * instruction pointer where it is. */
char *tp_sym_frame_at(uintptr_t ip, int ret)
{
	uintptr_t at = ret ? ip - 1 : ip, off = 0;
	const char *lib, *slash;
	struct obj o;
	char *fn, *out = NULL;

	if (!obj_find(at, &o))
		return NULL;
	/* The executable has no name in the list: dladdr gave argv[0]. */
	lib = o.path[0] ? o.path : program_invocation_name;
	slash = strrchr(lib, '/');
	lib = slash ? slash + 1 : lib;
	fn = elf_function(at, 0, &off);
	if (fn) {
		fn = tp_sym_demangle(fn);
		if (asprintf(&out, "%s+0x%lx (%s)", fn,
			     (unsigned long)(off + (ip - at)), lib) < 0)
			out = NULL;
		free(fn);
		return out;
	}
	if (asprintf(&out, "%s+0x%lx", lib,
		     (unsigned long)(ip - o.start)) < 0)
		out = NULL;
	return out;
}

char *tp_sym_frame(uintptr_t ip)
{
	return tp_sym_frame_at(ip, 1);
}
