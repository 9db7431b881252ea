#!/bin/sh
# Instructions tprof adds to a hooked call, counted by callgrind: the
# stable view of the hook's cost, where wall-clock figures on a shared
# machine move by tens of percent. A change that makes the recording
# path an out-of-line call (+40 instructions per call, measured once) shows
# here at once, whatever the machine's load.
#
# usage: hook_instr.sh BENCH_BIN_DIR LIBTPROF
#
# Runs bench_calls (launch, copy, sync in turn) under callgrind three
# times, counting only inside its three_calls() on the calling thread:
# without tprof, with tprof on a ring that never fills (every call
# recorded), on a 1 MiB ring without a spill pool (most calls
# dropped: the drop path) and in the wait of a schedule whose window
# never comes (every call paused: what a call costs outside windows).
# Prints "none N", "recorded N", "dropped N", "paused N" (instructions
# per call, tprof's included) and "dropped_calls N" / "calls N"; then the osrt
# hooks' rows (bench/osrt_instr.sh: a hooked C library call with osrt
# off and on); exits 77 when valgrind is not installed.
set -u

bin=$1
lib=$2
CALLS_CHUNK=16384

command -v valgrind >/dev/null 2>&1 || exit 77
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tprof-instr.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# One run; prints "<instructions> <calls> <dropped>".
run() {
	out=$tmp/$1
	shift
	env "$@" valgrind --tool=callgrind --separate-threads=yes \
		--collect-atstart=no --toggle-collect=three_calls \
		--callgrind-out-file="$out.cg" \
		"$bin/bench_calls" $CALLS_CHUNK 4 4 0 >"$out.out" 2>"$out.err" ||
		return 1
	# The calling thread is the first; tprof's writer never enters
	# three_calls, so its file counts 0.
	ir=$(sed -n 's/^summary: //p' "$out.cg-01")
	calls=$(sed -n 's/^calls //p' "$out.out")
	dropped=$(sed -n 's/^tprof: wrote .* events, \([0-9]*\) dropped.*/\1/p' \
		"$out.err")
	echo "$ir $calls ${dropped:-0}"
}

none=$(run none) || exit 1
rec=$(run rec LD_PRELOAD="$lib" TPROF_OUTPUT_DIR="$tmp/t-rec" \
	TPROF_BUFFER_MB=32) || exit 1
drop=$(run drop LD_PRELOAD="$lib" TPROF_OUTPUT_DIR="$tmp/t-drop" \
	TPROF_BUFFER_MB=1 TPROF_SPILL_MB=0) || exit 1
paused=$(run paused LD_PRELOAD="$lib" TPROF_OUTPUT_DIR="$tmp/t-paused" \
	TPROF_SKIP_FIRST=1000000000 TPROF_ACTIVE=1) || exit 1

# Per call; the dropped figure solved from the mixed run: recorded calls
# at the recorded cost, the rest dropped.
echo "$none $rec $drop $paused" | awk '{
	none = $1 / $2; rec = $4 / $5
	if ($6 != 0 || $9 == 0) { print "bad"; exit 1 }
	drop = ($7 - ($8 - $9) * rec) / $9
	printf "none %.1f\nrecorded %.1f\ndropped %.1f\n", none, rec, drop
	printf "paused %.1f\n", $10 / $11
	printf "dropped_calls %d\ncalls %d\n", $9, $8
}'
sh "$(dirname "$0")/osrt_instr.sh" "$bin" "$lib"
