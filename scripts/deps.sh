#!/usr/bin/env bash
# Checks the build dependencies; installs the missing Debian packages when
# run as root, else prints the apt-get line to run and stops.
set -u
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
missing=()

have_header() {
	echo "#include <$1>" | ${CC:-cc} -E -x c - >/dev/null 2>&1
}

command -v ${CC:-cc} >/dev/null 2>&1 || missing+=(gcc)
command -v make >/dev/null 2>&1 || missing+=(make)
command -v ${CXX:-g++} >/dev/null 2>&1 || missing+=(g++)
command -v python3 >/dev/null 2>&1 || missing+=(python3)
have_header zlib.h || missing+=(zlib1g-dev)
# Loaded at run time for TPROF_BACKTRACE (and by its tests).
ldconfig -p 2>/dev/null | grep -q 'libunwind.so.8 ' || missing+=(libunwind8)
# Optional: ISA-L's deflate makes the trace writer about three times faster
# (docs/design/writer.md, "Compression"); without it tprof compresses
# with zlib.
optional=()
have_header isa-l/igzip_lib.h || optional+=(libisal-dev)
# Optional: Python's headers, for the Python helper's C extension
# (docs/design/python-ext.md); without them tprof.range goes through ctypes.
python3 -c 'import os, sysconfig as s
raise SystemExit(not os.path.exists(os.path.join(s.get_paths()["include"], "Python.h")))' \
	>/dev/null 2>&1 || optional+=(python3-dev)

root_apt=0
[ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1 && root_apt=1
if [ $root_apt -eq 1 ]; then
	missing+=("${optional[@]}")
elif [ ${#optional[@]} -gt 0 ]; then
	echo "tprof: note: optional headers missing (libisal-dev: the writer" \
		"uses zlib, slower; python3-dev: tprof.range uses ctypes," \
		"slower); for the faster ones: sudo apt-get install -y" \
		"${optional[*]}" >&2
fi

if [ ${#missing[@]} -gt 0 ]; then
	if [ $root_apt -eq 1 ]; then
		echo "tprof: installing ${missing[*]}" >&2
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/dev/null || {
			echo "tprof: error: apt-get install ${missing[*]} failed" >&2
			exit 1
		}
	else
		echo "tprof: error: missing build dependencies; run:" >&2
		echo "  sudo apt-get install -y ${missing[*]}" >&2
		exit 1
	fi
fi
if [ ! -f "$CUDA_HOME/include/cuda_runtime_api.h" ] || [ ! -x "$CUDA_HOME/bin/nvcc" ]; then
	echo "tprof: error: no CUDA toolkit at CUDA_HOME=$CUDA_HOME (need its headers, nvcc" >&2
	echo "  and libcudart); install the CUDA toolkit or set CUDA_HOME" >&2
	exit 1
fi
exit 0
