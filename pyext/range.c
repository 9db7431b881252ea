/* pyext/: the Python helper's C extension, on libtprof.so's C API only
 * (looked up at import, never linked). */
/* tprof.range in C: `with tprof.range("name"):` and `@tprof.range("name")`.
 * A range object holds its name converted once (a str's cached UTF-8, or
 * bytes) and nothing per use: one object may be entered again inside
 * itself, on other threads, and reused for every iteration of a loop.
 * Enter is tprof_range_push, exit tprof_range_pop; the library pairs each
 * pop with the innermost push of the calling thread, by id, so the same
 * holds here as for NVTX's push/pop: exit always ends the thread's
 * innermost open range, exceptions included. */
#include "pyext.h"

#include <stddef.h>

typedef struct {
	PyObject_HEAD
	PyObject *name;		/* owns text: a str or bytes */
	const char *text;
	vectorcallfunc call;	/* range_call */
} range_obj;

const char *tp_py_range_text(PyObject *r)
{
	return ((range_obj *)r)->text;
}

static PyObject *range_call(PyObject *self, PyObject *const *args,
			    size_t nargsf, PyObject *kwnames);

static PyObject *range_make(PyTypeObject *type, PyObject *name)
{
	range_obj *r;
	PyObject *n;
	const char *text;

	n = tp_py_name(name, &text);
	if (!n)
		return NULL;
	r = PyObject_New(range_obj, type);
	if (!r) {
		Py_DECREF(n);
		return NULL;
	}
	r->name = n;
	r->text = text;
	r->call = range_call;
	return (PyObject *)r;
}

static PyObject *range_vectorcall(PyObject *type, PyObject *const *args,
				  size_t nargsf, PyObject *kwnames)
{
	Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
	Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;

	if (nargs + nkw != 1 ||
	    (nkw && !PyUnicode_Check(PyTuple_GET_ITEM(kwnames, 0))) ||
	    (nkw && PyUnicode_CompareWithASCIIString(
			    PyTuple_GET_ITEM(kwnames, 0), "name"))) {
		PyErr_SetString(PyExc_TypeError,
				"tprof.range() takes one argument, its name");
		return NULL;
	}
	return range_make((PyTypeObject *)type, args[0]);
}

static PyObject *range_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "name", NULL };
	PyObject *name;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "O:range", kwlist, &name))
		return NULL;
	return range_make(type, name);
}

static void range_dealloc(PyObject *self)
{
	Py_XDECREF(((range_obj *)self)->name);
	PyObject_Free(self);
}

static PyObject *range_repr(PyObject *self)
{
	return PyUnicode_FromFormat("<tprof.range %R>", ((range_obj *)self)->name);
}

/* The with statement looks __enter__ and __exit__ up on the type and
 * binds each to the object: for a method that is a new bound method
 * object per enter and per exit, which costs more than the range itself
 * (Python 3.11 to 3.13). So __enter__ is a descriptor that gives the
 * range itself, whose call with no arguments begins it, and __exit__ a
 * plain callable that needs no range: it ends the thread's innermost,
 * as tprof_range_pop does. Both also take the range first, as
 * type(cm).__enter__(cm) and type(cm).__exit__(cm, *exc) do
 * (contextlib.ExitStack). */
static PyObject *range_enter(PyObject *self)
{
	if (tp_py.push && tp_py_range_begin(((range_obj *)self)->text) < 0)
		return NULL;
	Py_INCREF(self);
	return self;
}

static PyObject *range_exit(void)
{
	if (tp_py.push && tp_py_range_end() < 0)
		return NULL;
	Py_RETURN_FALSE;
}

/* @tprof.range("name"): the function, each call inside this range. */
static PyObject *range_decorate(PyObject *self, PyObject *fn)
{
	PyObject *w, *r;

	if (!PyCallable_Check(fn)) {
		PyErr_SetString(PyExc_TypeError,
				"a tprof.range decorates a callable");
		return NULL;
	}
	w = tp_py_timed_new(self, fn);
	if (!w)
		return NULL;
	r = PyObject_CallFunctionObjArgs(tp_py_update_wrapper, w, fn, NULL);
	if (!r) {
		Py_DECREF(w);
		return NULL;
	}
	Py_DECREF(r);
	return w;
}

/* range(): its __enter__ (what the descriptor below gives the with
 * statement); range(fn): the decorated function. */
static PyObject *range_call(PyObject *self, PyObject *const *args,
			    size_t nargsf, PyObject *kwnames)
{
	Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);

	if (!kwnames && nargs == 0)
		return range_enter(self);
	if (!kwnames && nargs == 1)
		return range_decorate(self, args[0]);
	PyErr_SetString(PyExc_TypeError,
			"a tprof.range decorates one function");
	return NULL;
}

typedef struct {
	PyObject_HEAD
	vectorcallfunc vectorcall;
} slot_obj;

static PyObject *enter_get(PyObject *self, PyObject *obj, PyObject *type)
{
	(void)type;
	if (!obj)
		obj = self;	/* tprof.range.__enter__ */
	Py_INCREF(obj);
	return obj;
}

static PyObject *enter_call(PyObject *self, PyObject *const *args,
			    size_t nargsf, PyObject *kwnames)
{
	(void)self;
	if (kwnames || PyVectorcall_NARGS(nargsf) != 1 ||
	    !PyObject_TypeCheck(args[0], &tp_py_range_type)) {
		PyErr_SetString(PyExc_TypeError,
				"tprof.range.__enter__ takes a tprof.range");
		return NULL;
	}
	return range_enter(args[0]);
}

/* __exit__(exc_type, exc, tb), or (range, exc_type, exc, tb): ends the
 * range; never swallows the exception. */
static PyObject *exit_call(PyObject *self, PyObject *const *args,
			   size_t nargsf, PyObject *kwnames)
{
	Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);

	(void)self;
	if (kwnames || (nargs != 3 && nargs != 4) ||
	    (nargs == 4 && !PyObject_TypeCheck(args[0], &tp_py_range_type))) {
		PyErr_SetString(PyExc_TypeError, "tprof.range.__exit__ takes "
				"(exc_type, exc, tb)");
		return NULL;
	}
	return range_exit();
}

static PyTypeObject enter_type = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "tprof._range_enter",
	.tp_basicsize = sizeof(slot_obj),
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
	.tp_doc = "Begins the range on the calling thread; returns the range.",
	.tp_vectorcall_offset = offsetof(slot_obj, vectorcall),
	.tp_call = PyVectorcall_Call,
	.tp_descr_get = enter_get,
};

static PyTypeObject exit_type = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "tprof._range_exit",
	.tp_basicsize = sizeof(slot_obj),
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
	.tp_doc = "Ends the calling thread's innermost range; exceptions "
		  "propagate.",
	.tp_vectorcall_offset = offsetof(slot_obj, vectorcall),
	.tp_call = PyVectorcall_Call,
};

PyTypeObject tp_py_range_type = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "tprof.range",
	.tp_basicsize = sizeof(range_obj),
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
	.tp_doc = "A range on the calling thread: `with tprof.range(\"name\"): "
		  "...`, or `@tprof.range(\"name\")` on a function.\n"
		  "Exceptions inside the block propagate; the range is closed "
		  "either way. One object may be reused, nested in itself and "
		  "shared by threads.",
	.tp_new = range_new,
	.tp_vectorcall = range_vectorcall,
	.tp_vectorcall_offset = offsetof(range_obj, call),
	.tp_call = PyVectorcall_Call,
	.tp_dealloc = range_dealloc,
	.tp_repr = range_repr,
};

static int add_slot(PyTypeObject *slot_type, const char *name,
		    vectorcallfunc fn)
{
	slot_obj *o;
	int rc;

	if (PyType_Ready(slot_type) < 0)
		return -1;
	o = PyObject_New(slot_obj, slot_type);
	if (!o)
		return -1;
	o->vectorcall = fn;
	rc = PyDict_SetItemString(tp_py_range_type.tp_dict, name,
				  (PyObject *)o);
	Py_DECREF(o);
	return rc;
}

/* The type, ready, with its __enter__ and __exit__. */
int tp_py_range_init(void)
{
	if (PyType_Ready(&tp_py_range_type) < 0 ||
	    add_slot(&enter_type, "__enter__", enter_call) < 0 ||
	    add_slot(&exit_type, "__exit__", exit_call) < 0)
		return -1;
	PyType_Modified(&tp_py_range_type);
	return 0;
}
