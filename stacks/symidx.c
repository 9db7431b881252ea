/* stacks/: call stacks: capture (libunwind, Python perf trampolines),
 * symbolization, interning; on util/ .. session/. */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symidx.h"

struct sym {
	uint64_t value;
	uint64_t size;
	uint64_t name;		/* offset of the name in the mapped file */
	uint32_t order;		/* position in the file's tables */
};

struct index {
	struct index *next;
	char *path;
	const char *map;	/* the file, mapped while the index lives */
	size_t len;
	int dyn;
	struct sym *syms;	/* by value, then order */
	size_t n;
};

static struct index *cache;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static int by_value(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* Appends the function symbols of one table. */
static int add_table(struct index *ix, const ElfW(Shdr) *sh, unsigned sec,
		     size_t *cap)
{
	const ElfW(Sym) *sym = (const ElfW(Sym) *)(ix->map + sh[sec].sh_offset);
	uint64_t strtab = sh[sh[sec].sh_link].sh_offset;
	size_t n = sh[sec].sh_size / sizeof(*sym), j;

	for (j = 0; j < n; j++) {
		if (!sym[j].st_name || ELF64_ST_TYPE(sym[j].st_info) != STT_FUNC)
			continue;
		if (strtab + sym[j].st_name >= ix->len)
			continue;
		if (ix->n == *cap) {
			size_t c = *cap ? *cap * 2 : 1024;
			struct sym *v = realloc(ix->syms, c * sizeof(*v));

			if (!v)
				return -1;
			ix->syms = v;
			*cap = c;
		}
		ix->syms[ix->n].value = sym[j].st_value;
		ix->syms[ix->n].size = sym[j].st_size;
		ix->syms[ix->n].name = strtab + sym[j].st_name;
		ix->syms[ix->n].order = (uint32_t)(ix->n);
		ix->n++;
	}
	return 0;
}

/* Reads the symbol tables (.symtab and .dynsym, in section order) of
 * the mapped file into ix. */
static int build(struct index *ix)
{
	const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)ix->map;
	const ElfW(Shdr) *sh;
	size_t cap = 0;
	unsigned i;

	if (ix->len < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_shoff + (size_t)eh->e_shnum * sizeof(*sh) > ix->len)
		return -1;
	ix->dyn = eh->e_type == ET_DYN;
	sh = (const ElfW(Shdr) *)(ix->map + eh->e_shoff);
	for (i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type != SHT_SYMTAB && sh[i].sh_type != SHT_DYNSYM)
			continue;
		if (sh[i].sh_link >= eh->e_shnum ||
		    sh[i].sh_offset + sh[i].sh_size > ix->len ||
		    sh[sh[i].sh_link].sh_offset > ix->len)
			continue;
		if (add_table(ix, sh, i, &cap) < 0)
			return -1;
	}
	qsort(ix->syms, ix->n, sizeof(*ix->syms), by_value);
	return 0;
}

static struct index *load(const char *path)
{
	struct index *ix = calloc(1, sizeof(*ix));
	struct stat st;
	void *map;
	int fd;

	if (!ix)
		return NULL;
	ix->path = strdup(path);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (!ix->path || fd < 0)
		goto fail;
	if (fstat(fd, &st) < 0 || st.st_size <= 0)
		goto fail;
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED)
		goto fail;
	close(fd);
	fd = -1;
	ix->map = map;
	ix->len = (size_t)st.st_size;
	if (build(ix) < 0)
		goto fail;
	return ix;
fail:
	if (fd >= 0)
		close(fd);
	if (ix->map)
		munmap((void *)ix->map, ix->len);
	free(ix->syms);
	free(ix->path);
	free(ix);
	return NULL;
}

/* Under lock. A file that cannot be read is looked at again next time:
 * cheap, and rare. */
static struct index *find_index(const char *path)
{
	struct index *ix;

	for (ix = cache; ix; ix = ix->next)
		if (!strcmp(ix->path, path))
			return ix;
	ix = load(path);
	if (!ix)
		return NULL;
	ix->next = cache;
	cache = ix;
	return ix;
}

/* The first symbol whose value is above rel. */
static size_t upper(const struct index *ix, uint64_t rel)
{
	size_t lo = 0, hi = ix->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ix->syms[mid].value <= rel)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* How far back a symbol starting before the nearest one may still hold
 * an address (a function with a label symbol inside it). */
#define LOOK_BACK 64

static const struct sym *lookup(const struct index *ix, uint64_t rel,
				int exact)
{
	const struct sym *best = NULL;
	size_t i = upper(ix, rel), k;

	for (k = 0; i > 0 && k < LOOK_BACK; k++) {
		const struct sym *s = &ix->syms[--i];
		int hit = exact ? s->value == rel :
			  rel < s->value + s->size;

		if (exact && s->value != rel)
			break;
		if (hit && (!best || s->order < best->order))
			best = s;
	}
	return best;
}

char *tp_symidx_function(const char *path, uintptr_t rel, int exact,
			 uintptr_t *offset)
{
	const struct sym *s;
	struct index *ix;
	char *name = NULL;

	pthread_mutex_lock(&lock);
	ix = find_index(path);
	s = ix ? lookup(ix, rel, exact) : NULL;
	if (s) {
		name = strndup(ix->map + s->name, ix->len - s->name);
		*offset = rel - s->value;
	}
	pthread_mutex_unlock(&lock);
	return name;
}

int tp_symidx_is_dyn(const char *path)
{
	struct index *ix;
	int dyn;

	pthread_mutex_lock(&lock);
	ix = find_index(path);
	dyn = ix ? ix->dyn : -1;
	pthread_mutex_unlock(&lock);
	return dyn;
}
