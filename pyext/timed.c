/* pyext/: the Python helper's C extension, on libtprof.so's C API only
 * (looked up at import, never linked). */
/* The function a range decorates (@tprof.range("name"), @tprof.timed):
 * each call runs inside the range, its arguments passed through as they
 * came (vectorcall), its result or exception returned as it was. It binds
 * to an instance as a plain function does, carries functools.wraps'
 * attributes in its own __dict__, and is weakly referenced, pickled and
 * copied as a function is. */
#include "pyext.h"

#include <stddef.h>

typedef struct {
	PyObject_HEAD
	PyObject *range;
	PyObject *fn;
	PyObject *dict;
	PyObject *weaklist;
	vectorcallfunc vectorcall;
} timed_obj;

static PyObject *timed_vectorcall(PyObject *self, PyObject *const *args,
				  size_t nargsf, PyObject *kwnames)
{
	timed_obj *t = (timed_obj *)self;
	PyObject *res;

	if (!tp_py.push)
		return PyObject_Vectorcall(t->fn, args, nargsf, kwnames);
	if (tp_py_range_begin(tp_py_range_text(t->range)) < 0)
		return NULL;
	res = PyObject_Vectorcall(t->fn, args, nargsf, kwnames);
	if (tp_py_range_end() < 0) {
		Py_XDECREF(res);
		return NULL;
	}
	return res;
}

PyObject *tp_py_timed_new(PyObject *range, PyObject *fn)
{
	timed_obj *t = PyObject_GC_New(timed_obj, &tp_py_timed_type);

	if (!t)
		return NULL;
	Py_INCREF(range);
	Py_INCREF(fn);
	t->range = range;
	t->fn = fn;
	t->dict = NULL;
	t->weaklist = NULL;
	t->vectorcall = timed_vectorcall;
	PyObject_GC_Track(t);
	return (PyObject *)t;
}

static int timed_traverse(PyObject *self, visitproc visit, void *arg)
{
	timed_obj *t = (timed_obj *)self;

	Py_VISIT(t->range);
	Py_VISIT(t->fn);
	Py_VISIT(t->dict);
	return 0;
}

static int timed_clear(PyObject *self)
{
	timed_obj *t = (timed_obj *)self;

	Py_CLEAR(t->range);
	Py_CLEAR(t->fn);
	Py_CLEAR(t->dict);
	return 0;
}

static void timed_dealloc(PyObject *self)
{
	PyObject_GC_UnTrack(self);
	if (((timed_obj *)self)->weaklist)
		PyObject_ClearWeakRefs(self);
	timed_clear(self);
	PyObject_GC_Del(self);
}

/* Bound to an instance, as a function is: obj.method(...) calls the
 * wrapper with obj first. */
static PyObject *timed_get(PyObject *self, PyObject *obj, PyObject *type)
{
	(void)type;
	if (!obj || obj == Py_None) {
		Py_INCREF(self);
		return self;
	}
	return PyMethod_New(self, obj);
}

static PyObject *timed_repr(PyObject *self)
{
	timed_obj *t = (timed_obj *)self;

	return PyUnicode_FromFormat("<tprof.range %R of %R>", t->range, t->fn);
}

/* Pickled (and copied) as a function is: by its name in its module,
 * which names this wrapper (multiprocessing sends decorated functions). */
static PyObject *timed_reduce(PyObject *self, PyObject *unused)
{
	(void)unused;
	return PyObject_GetAttrString(self, "__qualname__");
}

static PyMethodDef timed_methods[] = {
	{ "__reduce__", timed_reduce, METH_NOARGS,
	  "The wrapper's name: pickled by reference, as a function is." },
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef timed_getset[] = {
	{ "__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL,
	  NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

PyTypeObject tp_py_timed_type = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "tprof.timed",
	.tp_basicsize = sizeof(timed_obj),
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC |
		    Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR,
	.tp_doc = "A function whose every call is a tprof range.",
	.tp_vectorcall_offset = offsetof(timed_obj, vectorcall),
	.tp_call = PyVectorcall_Call,
	.tp_dictoffset = offsetof(timed_obj, dict),
	.tp_weaklistoffset = offsetof(timed_obj, weaklist),
	.tp_methods = timed_methods,
	.tp_getset = timed_getset,
	.tp_descr_get = timed_get,
	.tp_traverse = timed_traverse,
	.tp_clear = timed_clear,
	.tp_dealloc = timed_dealloc,
	.tp_repr = timed_repr,
};
