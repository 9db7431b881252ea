/* pyext/: the Python helper's C extension, on libtprof.so's C API only
 * (looked up at import, never linked). */
/* A range's begin and end on the calling thread: tprof_range_push and
 * tprof_range_pop (or tprof_range_pop_memory), with the device memory
 * tprof.py reads from torch when torch is imported. What a range leaves
 * between its begin and its end is kept here, per thread, never in the
 * range object, so that one object serves every thread and every depth. */
#include "pyext.h"

/* The device memory of the ranges open on this thread that recorded it,
 * by depth: the library ends the innermost range on each pop, so the
 * memory measured at a begin goes with the end at the same depth. Deeper
 * than MEM_MAX ranges with memory, a range is recorded without it. Plain
 * C data (no Python objects), so a thread that ends inside a range
 * leaves nothing to free. */
#define MEM_MAX 64

struct mem_at {
	uint32_t depth;
	int64_t entry, peak;
};

static __thread uint32_t depth;
static __thread uint32_t n_mem;
static __thread struct mem_at mem[MEM_MAX];

static PyObject *s_torch;	/* "torch", interned */

/* Whether torch is imported: only then is tprof.py asked for memory,
 * the way its _cuda() never imports torch. */
static int torch_imported(void)
{
	PyObject *mods = PyImport_GetModuleDict();

	if (!tp_py_mem_enter || !mods)
		return 0;
	if (PyDict_GetItemWithError(mods, s_torch))
		return 1;
	if (PyErr_Occurred())
		PyErr_Clear();
	return 0;
}

static int int64_of(PyObject *o, int64_t *v)
{
	long long x = PyLong_AsLongLong(o);

	if (x == -1 && PyErr_Occurred())
		return -1;
	*v = x;
	return 0;
}

/* The memory at a begin, kept at this depth when torch's CUDA is up. */
static int mem_begin(void)
{
	PyObject *r = PyObject_CallNoArgs(tp_py_mem_enter);
	struct mem_at m = { .depth = depth };

	if (!r)
		return tp_py_swallow();
	if (PyTuple_Check(r) && PyTuple_GET_SIZE(r) == 2 &&
	    !int64_of(PyTuple_GET_ITEM(r, 0), &m.entry) &&
	    !int64_of(PyTuple_GET_ITEM(r, 1), &m.peak) && n_mem < MEM_MAX)
		mem[n_mem++] = m;
	Py_DECREF(r);
	return PyErr_Occurred() ? tp_py_swallow() : 0;
}

int tp_py_range_begin(const char *name)
{
	if (torch_imported() && mem_begin() < 0)
		return -1;
	depth++;
	tp_py.push(name);
	return 0;
}

/* The exception being raised while a range ends (a decorated function
 * that raised), kept across the call into tprof.py. */
struct saved {
	PyObject *type, *value, *tb;
};

static void err_save(struct saved *s)
{
#if PY_VERSION_HEX >= 0x030C0000
	s->type = s->tb = NULL;
	s->value = PyErr_GetRaisedException();
#else
	PyErr_Fetch(&s->type, &s->value, &s->tb);
#endif
}

static void err_restore(struct saved *s)
{
#if PY_VERSION_HEX >= 0x030C0000
	PyErr_SetRaisedException(s->value);
#else
	PyErr_Restore(s->type, s->value, s->tb);
#endif
}

static void err_drop(struct saved *s)
{
	Py_XDECREF(s->type);
	Py_XDECREF(s->value);
	Py_XDECREF(s->tb);
}

/* The end of a range that recorded memory at entry: tprof.py reads it
 * at exit; without an answer the range ends plain. */
static int mem_end(const struct mem_at *m)
{
	struct saved err;
	int64_t e, x, p;
	int rc = 0, done = 0;
	PyObject *r;

	err_save(&err);
	r = PyObject_CallFunction(tp_py_mem_exit, "LL", (long long)m->entry,
				  (long long)m->peak);
	if (r && PyTuple_Check(r) && PyTuple_GET_SIZE(r) == 3 &&
	    !int64_of(PyTuple_GET_ITEM(r, 0), &e) &&
	    !int64_of(PyTuple_GET_ITEM(r, 1), &x) &&
	    !int64_of(PyTuple_GET_ITEM(r, 2), &p)) {
		tp_py.pop_memory(e, x, p);
		done = 1;
	}
	Py_XDECREF(r);
	if (PyErr_Occurred())
		rc = tp_py_swallow();
	if (!done)
		tp_py.pop();	/* ended either way, even on KeyboardInterrupt */
	if (rc < 0) {		/* that error wins, as in Python */
		err_drop(&err);
		return -1;
	}
	err_restore(&err);
	return 0;
}

int tp_py_range_end(void)
{
	if (depth)
		depth--;
	if (n_mem && mem[n_mem - 1].depth == depth) {
		struct mem_at m = mem[--n_mem];

		return mem_end(&m);
	}
	tp_py.pop();
	return 0;
}

int tp_py_ranges_init(void)
{
	s_torch = PyUnicode_InternFromString("torch");
	return s_torch ? 0 : -1;
}
