/* pyext/: the Python helper's C extension, on libtprof.so's C API only
 * (looked up at import, never linked). */
/* Names as the library takes them (const char *), made of any Python
 * object exactly as tprof.py's _bytes makes them, and the errors it
 * swallows. */
#include "pyext.h"

int tp_py_swallow(void)
{
	if (!PyErr_ExceptionMatches(PyExc_Exception))
		return -1;
	PyErr_Clear();
	return 0;
}

static PyObject *encoded(PyObject *o, const char *errors)
{
	PyObject *b;

	if (!o)
		return NULL;
	b = PyUnicode_AsEncodedString(o, "utf-8", errors);
	Py_DECREF(o);
	return b;
}

PyObject *tp_py_name(PyObject *name, const char **text)
{
	PyObject *b;

	if (PyBytes_Check(name)) {
		Py_INCREF(name);
		*text = PyBytes_AS_STRING(name);
		return name;
	}
	if (PyUnicode_CheckExact(name)) {
		*text = PyUnicode_AsUTF8(name);	/* kept by the str */
		if (*text) {
			Py_INCREF(name);
			return name;
		}
		if (tp_py_swallow() < 0)	/* surrogates: as below */
			return NULL;
	}
	b = encoded(PyObject_Str(name), "surrogateescape");
	if (!b) {
		if (tp_py_swallow() < 0)
			return NULL;
		b = encoded(PyObject_Repr(name), "replace");
	}
	if (!b) {
		if (tp_py_swallow() < 0)
			return NULL;
		b = PyBytes_FromString("?");
		if (!b)
			return NULL;
	}
	*text = PyBytes_AS_STRING(b);
	return b;
}
