/* pyext/: the Python helper's C extension, on libtprof.so's C API only
 * (looked up at import, never linked). */
/* The _tprof module: tprof.h's entry points looked up in the process's
 * global namespace when it is imported (libtprof.so preloaded, or not:
 * then every function is a cheap no-op), the names converted as
 * tprof.py's _bytes does (names.c), and tprof.range (range.c). scripts/python/
 * tprof.py imports it and falls back to ctypes when it cannot. */
#include "pyext.h"

#include <dlfcn.h>

struct tp_py_api tp_py;
PyObject *tp_py_mem_enter;
PyObject *tp_py_mem_exit;
PyObject *tp_py_update_wrapper;

/* All of tprof.h's functions, or none, as tprof.py's _find(). */
static void resolve(void)
{
	struct tp_py_api a;

	*(void **)&a.step = dlsym(RTLD_DEFAULT, "tprof_step");
	*(void **)&a.push = dlsym(RTLD_DEFAULT, "tprof_range_push");
	*(void **)&a.pop = dlsym(RTLD_DEFAULT, "tprof_range_pop");
	*(void **)&a.pop_memory = dlsym(RTLD_DEFAULT, "tprof_range_pop_memory");
	*(void **)&a.mark = dlsym(RTLD_DEFAULT, "tprof_mark");
	*(void **)&a.enable = dlsym(RTLD_DEFAULT, "tprof_enable");
	*(void **)&a.disable = dlsym(RTLD_DEFAULT, "tprof_disable");
	*(void **)&a.recording = dlsym(RTLD_DEFAULT, "tprof_recording");
	if (a.step && a.push && a.pop && a.pop_memory && a.mark && a.enable &&
	    a.disable && a.recording)
		tp_py = a;
}

static PyObject *py_available(PyObject *m, PyObject *unused)
{
	(void)m;
	(void)unused;
	return PyBool_FromLong(tp_py.step != NULL);
}

/* step, enable and disable take the library's capture lock: other
 * Python threads run meanwhile. */
static PyObject *py_step(PyObject *m, PyObject *unused)
{
	long n;

	(void)m;
	(void)unused;
	if (!tp_py.step)
		Py_RETURN_NONE;
	Py_BEGIN_ALLOW_THREADS
	n = tp_py.step();
	Py_END_ALLOW_THREADS
	return PyLong_FromLong(n);
}

static PyObject *py_mark(PyObject *m, PyObject *name)
{
	const char *text;
	PyObject *n;

	(void)m;
	if (!tp_py.mark)
		Py_RETURN_NONE;
	n = tp_py_name(name, &text);
	if (!n)
		return NULL;
	tp_py.mark(text);
	Py_DECREF(n);
	Py_RETURN_NONE;
}

static PyObject *py_enable(PyObject *m, PyObject *unused)
{
	(void)m;
	(void)unused;
	if (tp_py.enable) {
		Py_BEGIN_ALLOW_THREADS
		tp_py.enable();
		Py_END_ALLOW_THREADS
	}
	Py_RETURN_NONE;
}

static PyObject *py_disable(PyObject *m, PyObject *unused)
{
	(void)m;
	(void)unused;
	if (tp_py.disable) {
		Py_BEGIN_ALLOW_THREADS
		tp_py.disable();
		Py_END_ALLOW_THREADS
	}
	Py_RETURN_NONE;
}

static PyObject *py_recording(PyObject *m, PyObject *unused)
{
	(void)m;
	(void)unused;
	return PyBool_FromLong(tp_py.recording && tp_py.recording());
}

/* tprof.py's device memory readers, set once at its import. */
static PyObject *py_set_memory_hooks(PyObject *m, PyObject *args)
{
	PyObject *enter, *exit;

	(void)m;
	if (!PyArg_ParseTuple(args, "OO:_set_memory_hooks", &enter, &exit))
		return NULL;
	if (!PyCallable_Check(enter) || !PyCallable_Check(exit)) {
		PyErr_SetString(PyExc_TypeError, "the hooks must be callable");
		return NULL;
	}
	Py_INCREF(enter);
	Py_INCREF(exit);
	Py_XSETREF(tp_py_mem_enter, enter);
	Py_XSETREF(tp_py_mem_exit, exit);
	Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
	{ "available", py_available, METH_NOARGS,
	  "True when libtprof.so is preloaded into this process." },
	{ "step", py_step, METH_NOARGS,
	  "Ends the current step; returns the number of the step that begins "
	  "(None without tprof)." },
	{ "mark", py_mark, METH_O,
	  "An instant event named `name` on the calling thread." },
	{ "enable", py_enable, METH_NOARGS,
	  "Turns recording on again (within what the schedule allows)." },
	{ "disable", py_disable, METH_NOARGS, "Turns recording off." },
	{ "recording", py_recording, METH_NOARGS,
	  "True while events are being recorded." },
	{ "_set_memory_hooks", py_set_memory_hooks, METH_VARARGS,
	  "tprof.py's device memory readers: enter() -> None or (entry, peak);"
	  " exit(entry, peak) -> None or (entry, exit, peak)." },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef module = {
	PyModuleDef_HEAD_INIT,
	.m_name = "_tprof",
	.m_doc = "tprof's Python helper in C; use it through `import tprof`.",
	.m_size = -1,
	.m_methods = methods,
};

static int add_type(PyObject *m, const char *name, PyTypeObject *t)
{
	if (PyType_Ready(t) < 0)
		return -1;
	Py_INCREF(t);
	if (PyModule_AddObject(m, name, (PyObject *)t) < 0) {
		Py_DECREF(t);
		return -1;
	}
	return 0;
}

PyMODINIT_FUNC PyInit__tprof(void)
{
	PyObject *m, *ft;

	resolve();
	if (tp_py_ranges_init() < 0 || tp_py_range_init() < 0)
		return NULL;
	ft = PyImport_ImportModule("functools");
	if (!ft)
		return NULL;
	tp_py_update_wrapper = PyObject_GetAttrString(ft, "update_wrapper");
	Py_DECREF(ft);
	if (!tp_py_update_wrapper)
		return NULL;
	m = PyModule_Create(&module);
	if (!m)
		return NULL;
	if (add_type(m, "range", &tp_py_range_type) < 0 ||
	    add_type(m, "timed", &tp_py_timed_type) < 0 ||
	    PyModule_AddIntConstant(m, "ABI", 1) < 0) {
		Py_DECREF(m);
		return NULL;
	}
	return m;
}
