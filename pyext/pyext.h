/* pyext/: the Python helper's C extension (_tprof), built against the
 * running python3's headers and loaded by scripts/python/tprof.py; never
 * linked to libtprof.so, whose entry points it looks up at import. */
#ifndef TP_PYEXT_H
#define TP_PYEXT_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

/* tprof.h's entry points, found with dlsym(RTLD_DEFAULT) when the module
 * is imported: all of them, or none (libtprof.so is not preloaded, and
 * every call is a no-op), as tprof.py's ctypes lookup decides. */
struct tp_py_api {
	long (*step)(void);
	void (*push)(const char *name);
	void (*pop)(void);
	void (*pop_memory)(int64_t at_entry, int64_t at_exit, int64_t peak);
	void (*mark)(const char *name);
	void (*enable)(void);
	void (*disable)(void);
	int (*recording)(void);
};

extern struct tp_py_api tp_py;

/* A Python error tprof.py would have swallowed (an Exception) is
 * cleared: 0; any other (KeyboardInterrupt, SystemExit) stays: -1. */
int tp_py_swallow(void);

/* A range's name as the library takes it: a str whose UTF-8 the str
 * caches, or bytes (what tprof.py's _bytes makes of anything else). A new
 * reference, or NULL with an exception that is not an Exception. */
PyObject *tp_py_name(PyObject *name, const char **text);

/* The range type (range.c) and the wrapper a range decorates a function
 * with (timed.c). */
extern PyTypeObject tp_py_range_type;
extern PyTypeObject tp_py_timed_type;

/* A range's begin and end on the calling thread, with device memory when
 * torch's CUDA is up (the hooks tprof.py set) (thread_ranges.c). The end
 * keeps the exception being raised, if any. -1 only with a Python error
 * from the memory hooks that is not an Exception. */
int tp_py_range_begin(const char *name);
int tp_py_range_end(void);
int tp_py_ranges_init(void);

/* The range type's name, and the type made ready with its __enter__ and
 * __exit__ (range.c). */
const char *tp_py_range_text(PyObject *range);
int tp_py_range_init(void);

PyObject *tp_py_timed_new(PyObject *range, PyObject *fn);

/* tprof.py's device memory hooks (module.c): mem_enter() -> None or
 * (entry, peak); mem_exit(entry, peak) -> None or (entry, exit, peak). */
extern PyObject *tp_py_mem_enter;
extern PyObject *tp_py_mem_exit;
extern PyObject *tp_py_update_wrapper;

#endif
