#!/bin/sh
# Instructions an osrt hook adds to a call of a hooked C library function
# (callgrind): bench_host's uncontended pthread_mutex_lock/unlock pairs,
# counted only inside its lock_calls() on the calling thread, without
# tprof, with tprof loaded but osrt not traced (the hook's fast path:
# every process pays it), and with osrt traced, each call far under the
# threshold (timed, not recorded).
#
# usage: osrt_instr.sh BENCH_BIN_DIR LIBTPROF
# Prints "osrt_none N", "osrt_off N", "osrt_on N": instructions per pair
# (bench_host keeps a second thread alive in every run, so the C library
# takes its multi-threaded paths with and without tprof's writer thread:
# the differences are the hook's). Exits 77 when valgrind is not
# installed.
set -u

bin=$1
lib=$2
N=100000	# lock_calls runs N / 10 warm-up pairs, then N

command -v valgrind >/dev/null 2>&1 || exit 77
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tprof-osrt-instr.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# One run; prints the instructions per pair.
run() {
	out=$tmp/$1
	shift
	env "$@" TPROF_SUMMARY=none valgrind --tool=callgrind \
		--separate-threads=yes --collect-atstart=no \
		--toggle-collect=lock_calls --callgrind-out-file="$out.cg" \
		"$bin/bench_host" lock $N >/dev/null 2>"$out.err" || return 1
	ir=$(sed -n 's/^summary: //p' "$out.cg-01")
	[ -n "$ir" ] || return 1
	awk -v ir="$ir" -v n=$N 'BEGIN { printf "%.1f\n", ir / (n + n / 10) }'
}

none=$(run none) || exit 1
off=$(run off LD_PRELOAD="$lib" TPROF_OUTPUT_DIR="$tmp/t-off" \
	TPROF_TRACE=cuda) || exit 1
on=$(run on LD_PRELOAD="$lib" TPROF_OUTPUT_DIR="$tmp/t-on" \
	TPROF_TRACE=cuda,osrt) || exit 1
printf 'osrt_none %s\nosrt_off %s\nosrt_on %s\n' "$none" "$off" "$on"
