/* stacks/: call stacks: capture (libunwind, Python perf trampolines),
 * symbolization, interning; on util/ .. session/. */
/* The function symbols of one ELF file, read once and sorted by address,
 * so that naming an address is a binary search instead of a pass over
 * the whole symbol table (CPU samples name thousands of addresses, some
 * in libraries of a million symbols).
 *
 * Addresses are the file's own (symbol values): the caller subtracts
 * the object's load bias. Writer thread only (a lock guards the cache
 * all the same).
 */
#ifndef TP_SYMIDX_H
#define TP_SYMIDX_H

#include <stdint.h>

/* The name of the function symbol of file `path` holding rel (exact: the
 * one starting at rel), malloc-ed, and rel's offset into it; NULL when
 * none does. Among symbols that qualify, the first in the file's order
 * (section, then symbol) wins, as a pass over the tables would find. */
char *tp_symidx_function(const char *path, uintptr_t rel, int exact,
			 uintptr_t *offset);
/* Whether the file is ET_DYN (its symbols are relative to the load
 * bias); -1 when it cannot be read. */
int tp_symidx_is_dyn(const char *path);

#endif
