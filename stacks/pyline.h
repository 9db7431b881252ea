/* stacks/: call stacks: capture (libunwind, Python perf trampolines),
 * symbolization, interning; on util/ .. session/. */
/* The line where a Python function is defined, for the frames the perf
 * map names "py::QUALNAME:FILE": the map gives the function and its file,
 * not the line, so the file is read (once) and its def and class
 * statements named as the interpreter names them (Class.method,
 * outer.<locals>.inner). The line is the code object's first line: the
 * first decorator's when there are decorators, 1 for <module>.
 * Writer thread only.
 */
#ifndef TP_PYLINE_H
#define TP_PYLINE_H

#include <stddef.h>

/* The first line of qualname (qlen bytes) in file, or 0 when unknown
 * (no such file, a lambda, a comprehension). */
unsigned tp_pyline(const char *file, const char *qualname, size_t qlen);

/* Exposed for the unit test: the same on a file's text. */
unsigned tp_pyline_in(const char *text, size_t len, const char *qualname,
		      size_t qlen);

#endif
