/* stacks/: call stacks: capture (libunwind, Python perf trampolines),
 * symbolization, interning; on util/ .. session/. */
/* Kernel names from host addresses, resolved by the writer thread only.
 *
 * Sources, best first: the device function name cudart registers for each
 * host stub (__cudaRegisterFunction), the ELF symbol tables of the object
 * holding the address, dladdr. cudaKernel_t handles (the first argument of
 * __cudaLaunchKernel) are mapped back to their host stub through
 * __cudaGetKernel. C++ names are demangled with the process's own
 * __cxa_demangle when there is one.
 */
#ifndef TP_SYMBOLS_H
#define TP_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

void tp_sym_note_function(const void *host_fn, const char *device_name);
void tp_sym_note_kernel_handle(const void *handle, const void *host_fn);
/* Every name noted so far, into the rings file (record/ringfile.h). */
void tp_sym_note_all_to_ringfile(void);
/* Names only from notes, never from this process's ELF files (the rings
 * decoder, for another process's addresses). */
void tp_sym_set_offline(void);
/* The name of func (a host stub or a kernel handle) as a quoted, escaped
 * JSON string of *len bytes, resolved once and cached: the writer copies
 * it into every launch event. Never NULL; valid for the process's life. */
const char *tp_sym_kernel_json(uint64_t func, size_t *len);
char *tp_sym_frame(uintptr_t ip);
/* The same for a sampled instruction pointer (ret 0: looked up where it
 * is, not at a call before it). */
char *tp_sym_frame_at(uintptr_t ip, int ret);
void tp_sym_atfork_prepare(void);
void tp_sym_atfork_parent(void);
void tp_sym_atfork_child(void);

/* Finds libstdc++'s demangler if it is loaded and not found yet: before
 * the threads are held at an exit, while a lookup is still safe. */
void tp_sym_find_demangler(void);
/* A C++ name demangled (takes the malloc-ed name, returns a malloc-ed
 * one); other names come back unchanged. */
char *tp_sym_demangle(char *mangled);

#endif
