#!/bin/sh
# Instructions a tprof.range enter+exit costs from Python through the C
# extension, and tprof_range_push+pop called from C, counted by
# callgrind: the load-independent form of make bench's ns rows for
# tprof.range (a quiet machine's 150 ns is about what a shared one
# cannot show).
#
# usage: pyrange_instr.sh BENCH_BIN_DIR LIBTPROF
#
# Python: one interpreter per run, under callgrind whole (start and
# import included), with N1 and then N2 iterations of `with r: pass` on
# one reused tprof.range object, and the same two loops with `pass`
# alone, the main thread's instructions only (not tprof's writer), with
# PYTHONHASHSEED=0 (with random hashing the count moves by 8 %); the
# range's cost per enter+exit is the difference of the differences over
# N2 - N1, so the interpreter's start, the import and
# the loop's own instructions cancel. C: bench_libcalls tprof, counted
# inside its push/pop pair only. Prints "py N" and "c N" (instructions
# per enter+exit, per push+pop) and "impl c|ctypes" (the path Python
# took); exits 77 when valgrind is not installed.
set -u

bin=$1
lib=$2
N1=20000
N2=60000

command -v valgrind >/dev/null 2>&1 || exit 77
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tprof-pinstr.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

die() {
	echo "pyrange_instr: $*" >&2
	exit 1
}

here=$(cd "$(dirname "$0")" && pwd)
libdir=$(cd "$(dirname "$lib")" && pwd)
py=$(python3 -c 'import sys; print(sys.executable)')

# Instructions of one interpreter: BODY ("range" or "empty"), N loops.
count() {
	name=$1-$2
	cat >"$tmp/$name.py" <<EOF
import tprof
r = tprof.range("forward")
print("impl", tprof.implementation)
for _ in range($2):
    $( [ "$1" = range ] && echo "with r: pass" || echo "pass" )
EOF
	LD_PRELOAD=$libdir/$(basename "$lib") TPROF_OUTPUT_DIR=$tmp/t-$name \
	TPROF_SUMMARY=none PYTHONHASHSEED=0 \
	PYTHONPATH=$here/../scripts/python:$libdir/python \
	valgrind --tool=callgrind --separate-threads=yes \
		--callgrind-out-file="$tmp/$name.cg" \
		"$py" "$tmp/$name.py" >"$tmp/$name.out" 2>"$tmp/$name.err" ||
		die "python ($name) failed: $(grep -v '^==' "$tmp/$name.err" |
			tail -1)"
	sed -n 's/^summary: //p' "$tmp/$name.cg-01"
}

r1=$(count range $N1) || exit 1
r2=$(count range $N2) || exit 1
e1=$(count empty $N1) || exit 1
e2=$(count empty $N2) || exit 1
impl=$(sed -n 's/^impl //p' "$tmp/range-$N1.out")

LD_PRELOAD=$lib TPROF_OUTPUT_DIR=$tmp/t-c TPROF_SUMMARY=none \
valgrind --tool=callgrind --separate-threads=yes --collect-atstart=no \
	--toggle-collect=tprof_push_pop --callgrind-out-file="$tmp/c.cg" \
	"$bin/bench_libcalls" tprof $N1 1 0 >"$tmp/c.out" 2>"$tmp/c.err" ||
	die "bench_libcalls failed: $(grep -v '^==' "$tmp/c.err" | tail -1)"
c=$(sed -n 's/^summary: //p' "$tmp/c.cg-01")

awk -v r1="$r1" -v r2="$r2" -v e1="$e1" -v e2="$e2" -v c="$c" \
    -v n1=$N1 -v n2=$N2 -v impl="$impl" 'BEGIN {
	printf "py %.1f\nc %.1f\nimpl %s\n",
		((r2 - r1) - (e2 - e1)) / (n2 - n1), c / n1, impl
}'
