# The Python helper's C extension (pyext/): build/python/_tprof<suffix>,
# for the python3 on PATH (PYTHON=...), against its own headers (Debian:
# python3-dev). Which Python, its headers and its module suffix are asked
# when the extension is built, not when make starts, and kept in
# PYEXT_STAMP (rewritten only when they change, which rebuilds it).
# Without the headers nothing is built and scripts/python/tprof.py uses
# ctypes. Never linked to libtprof.so: it looks tprof.h's functions up
# when imported, so the one file serves a program with and without tprof.
PYTHON ?= python3
PYEXT_DIR := $(B)/python
PYEXT_STAMP := $(PYEXT_DIR)/python.stamp
PYEXT_BUILT := $(PYEXT_DIR)/pyext.built
PYEXT_SRC := $(wildcard pyext/*.c)
# Its own flags: no sanitizer (its runtime is not in python3), headers of
# Python's that -Wextra must take as they are.
PYEXT_CFLAGS := -O2 -g -std=gnu11 -Wall -Wextra -Werror -fPIC \
	-fvisibility=hidden -fno-strict-aliasing
# Prints "INCLUDE_DIR EXT_SUFFIX" for a CPython >= 3.9 whose Python.h is
# there, else nothing.
PYEXT_PROBE := $(PYTHON) -c 'import os, sys, sysconfig as s; \
	inc = s.get_paths()["include"]; \
	ok = sys.implementation.name == "cpython" and sys.version_info >= (3, 9) \
	     and os.path.exists(os.path.join(inc, "Python.h")); \
	print(inc, s.get_config_var("EXT_SUFFIX")) if ok else None' 2>/dev/null

$(PYEXT_STAMP): FORCE
	@mkdir -p $(dir $@)
	@v=$$($(PYEXT_PROBE)); \
	[ -f $@ ] && [ "$$(cat $@)" = "$$v" ] && exit 0; \
	echo "$$v" >$@; \
	[ -n "$$v" ] || echo "tprof: no CPython >= 3.9 headers for" \
		"'$(PYTHON)' (Debian: apt-get install python3-dev): the" \
		"Python helper uses ctypes, several times slower per range"

$(PYEXT_BUILT): $(PYEXT_SRC) $(wildcard pyext/*.h) $(PYEXT_STAMP)
	@rm -f $(PYEXT_DIR)/_tprof*.so
	@set -- $$(cat $(PYEXT_STAMP)); \
	if [ $$# = 2 ]; then \
		echo "$(CC) $(PYEXT_CFLAGS) -I$$1 -shared" \
			"-o $(PYEXT_DIR)/_tprof$$2 $(PYEXT_SRC) -ldl"; \
		$(CC) $(PYEXT_CFLAGS) -I"$$1" -shared \
			-o $(PYEXT_DIR)/_tprof$$2 $(PYEXT_SRC) -ldl || exit 1; \
	fi
	@touch $@

pyext: $(PYEXT_BUILT)

.PHONY: pyext
