#!/bin/sh
# Runs the benchmark programs and prints one table.
#
# usage: bench.sh BENCH_BIN_DIR LIBTPROF
#
# The machine is shared and noisy: every figure is a median over many
# chunks and several processes, the three variants of the call benchmark
# run interleaved so that a slow spell hits them alike, and the table
# gives differences within this one run, never against a stored number.
# A missed target is flagged, never an error: `make bench` only fails
# when a program cannot run at all.
set -u

bin=$1
lib=$2

# Hooked calls: chunks of CHUNK calls on a ring of 2 chunks (RING_MB), so
# after FRESH=2 chunks the ring has wrapped and its pages are warm. The
# traced run pauses after each chunk for the writer to drain it: the ring
# never fills, and the chunks time the recording thread's own cost (the
# writer's is section 3's throughput).
CHUNK=262144
RING_MB=40
FRESH=2
WARM=4
PAUSE_MS=250
ROUNDS=5
# Ring append: one ring of RING_EVENTS slots per repetition.
RING_EVENTS=1048576
RING_REPS=7
# Writer: WRITER_EVENTS launch records per process, WRITER_RUNS processes.
WRITER_EVENTS=2000000
WRITER_RUNS=3

# Targets from the issue.
TARGET_ADDED_NS=15
TARGET_PAUSED_NS=3
TARGET_MEPS=2
TARGET_BYTES=25

# The variants decide LD_PRELOAD and TPROF_*; nothing inherited may.
for v in $(env | sed -n 's/^\(TPROF_[A-Za-z0-9_]*\)=.*/\1/p'); do
	unset "$v"
done
unset LD_PRELOAD

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tprof-bench.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM HUP

die() {
	echo "bench: $*" >&2
	exit 1
}

# The median of the numbers on stdin, one per line.
median() {
	sort -g | awk '{ v[NR] = $1 }
		END {
			if (!NR) { print "nan"; exit }
			m = int((NR + 1) / 2)
			print (NR % 2) ? v[m] : (v[m] + v[m + 1]) / 2
		}'
}

# Every value of KEY in the "key value" lines of the files given.
values() {
	key=$1
	shift
	cat "$@" | awk -v k="$key" '$1 == k { print $2 }'
}

calc() {
	awk "BEGIN { printf \"$1\", $2 }"
}

# Nothing, or "  MISSED" when the awk condition is false.
verdict() {
	awk "BEGIN { print ($1) ? \"\" : \"  MISSED\" }"
}

# --- 1. hooked calls -------------------------------------------------------

calls() {
	variant=$1
	round=$2
	out=$tmp/calls-$variant-$round.out
	case $variant in
	none)
		"$bin/bench_calls" $CHUNK $FRESH $WARM 0
		;;
	on)
		LD_PRELOAD=$lib TPROF_OUTPUT_DIR=$tmp/trace-$round \
		TPROF_BUFFER_MB=$RING_MB \
		"$bin/bench_calls" $CHUNK $FRESH $WARM $PAUSE_MS
		;;
	off)
		LD_PRELOAD=$lib TPROF_DISABLE=1 \
		"$bin/bench_calls" $CHUNK $FRESH $WARM 0
		;;
	paused)
		# Tracing on, but in a wait step of a schedule whose window
		# never comes: what every hooked call costs outside windows.
		LD_PRELOAD=$lib TPROF_OUTPUT_DIR=$tmp/trace-paused \
		TPROF_SKIP_FIRST=1000000000 TPROF_ACTIVE=1 \
		"$bin/bench_calls" $CHUNK $FRESH $WARM 0
		;;
	esac >"$out" 2>"${out%.out}.err" || {
		cat "${out%.out}.err" >&2
		die "bench_calls ($variant) failed"
	}
}

echo "bench: hooked calls, $ROUNDS rounds of 4 variants," \
	"$((FRESH + WARM)) chunks of $CHUNK calls each"
round=1
while [ $round -le $ROUNDS ]; do
	calls none $round
	calls on $round
	calls off $round
	calls paused $round
	round=$((round + 1))
done

ret=$(values ret "$tmp"/calls-*.out | sort -u | tr '\n' ' ')
echo "bench:   cudart returned: $ret(35 = cudaErrorInsufficientDriver)"
for v in none on off paused; do
	eval "warm_$v=\$(values warm \"\$tmp\"/calls-$v-*.out | median)"
	eval "fresh_$v=\$(values fresh \"\$tmp\"/calls-$v-*.out | median)"
done

# The trace's own account: "tprof: wrote F (N events, D dropped, K KiB)".
made=$(values calls "$tmp"/calls-on-*.out | awk '{ s += $1 } END { print s }')
cat "$tmp"/calls-on-*.err | sed -n \
	's/^tprof: wrote .* (\([0-9]*\) events, \([0-9]*\) dropped.*/\1 \2/p' \
	>"$tmp/written"
traces=$(wc -l <"$tmp/written")
traced=$(awk '{ s += $1 } END { print s + 0 }' "$tmp/written")
dropped=$(awk '{ s += $2 } END { print s + 0 }' "$tmp/written")
echo "bench:   traced runs: $traced events written of $made calls," \
	"$dropped dropped ($traces of $ROUNDS traces complete)"
# Anything else the library said is worth seeing.
cat "$tmp"/calls-*.err | grep -v '^tprof: wrote ' |
	grep -v 'GPU activity is not recorded, CPU-side tracing goes on$' |
	grep -v 'no step was seen' | sed 's/^/bench:   /' |
	head -5
[ "$traced" = "$made" ] ||
	echo "bench:   WARNING: the traces do not hold every call made"
[ "$dropped" = 0 ] ||
	echo "bench:   WARNING: the ring filled: PAUSE_MS is too short for" \
		"the writer here, and calls that dropped were cheaper"
rm -rf "$tmp"/trace-*

# --- 2. ring append --------------------------------------------------------

echo "bench: ring append, $RING_REPS rings of $RING_EVENTS events"
"$bin/bench_ring" $RING_EVENTS $RING_REPS >"$tmp/ring" ||
	die "bench_ring failed"
ring_warm=$(values warm "$tmp/ring" | median)
ring_fresh=$(values fresh "$tmp/ring" | median)
ring_dropped=$(values dropped "$tmp/ring")
echo "bench:   dropped $ring_dropped"

# --- 3. writer -------------------------------------------------------------

echo "bench: writer, $WRITER_RUNS runs of $WRITER_EVENTS launch events"
i=1
while [ $i -le $WRITER_RUNS ]; do
	"$bin/bench_writer" "$tmp/writer-$i" $WRITER_EVENTS \
		>"$tmp/writer-$i.out" 2>"$tmp/writer-$i.err" || {
		cat "$tmp/writer-$i.err" >&2
		die "bench_writer failed"
	}
	awk '{ v[$1] = $2 } END {
		printf "meps %.6f\n", v["events"] / v["wall_ns"] * 1000
		printf "cpu_meps %.6f\n", v["events"] / v["cpu_ns"] * 1000
		printf "mbps %.6f\n", v["raw"] / v["wall_ns"] * 1000
		printf "bpe %.6f\n", v["file"] / v["events"]
		printf "rawpe %.6f\n", v["raw"] / v["events"]
	}' "$tmp/writer-$i.out" >>"$tmp/writer.sum"
	i=$((i + 1))
done
# The first trace must parse back to every event written: the figures are
# worthless if the output is not a complete trace.
file=$(ls "$tmp"/writer-1/*.trace.json.gz 2>/dev/null | head -1)
if [ -z "$file" ]; then
	echo "bench:   WARNING: the writer left no trace file"
else
	lines=$(gzip -dc "$file" | grep -c '"ph":"X"')
	echo "bench:   $(values events "$tmp/writer-1.out") events written," \
		"$lines in the file, $(values dropped "$tmp/writer-1.out")" \
		"dropped"
	echo "bench:   sample: $(gzip -dc "$file" | grep -m1 '"ph":"X"')"
fi
[ "$(values demangled "$tmp/writer-1.out")" = 1 ] ||
	echo "bench:   note: no libstdc++ to demangle with: kernel names" \
		"are mangled, shorter than a real trace's"
w_meps=$(values meps "$tmp/writer.sum" | median)
w_cpu_meps=$(values cpu_meps "$tmp/writer.sum" | median)
w_mbps=$(values mbps "$tmp/writer.sum" | median)
w_bpe=$(values bpe "$tmp/writer.sum" | median)
w_rawpe=$(values rawpe "$tmp/writer.sum" | median)
rm -rf "$tmp"/writer-*/

# --- 4. call stack capture ------------------------------------------------

echo "bench: call stack capture (TPROF_BACKTRACE), depth 32"
"$bin/bench_stack" 20000 >"$tmp/stack" || die "bench_stack failed (libunwind8 missing?)"
stack_ns=$(values capture_ns "$tmp/stack")

# --- 5. library calls ------------------------------------------------------

# A cuBLAS GEMM (NULL handle: cuBLAS returns at once) and an NVTX push/pop
# pair, LIB_CHUNKS chunks of LIB_CHUNK each, with and without the preload,
# interleaved. A GEMM record takes 2 slots, a pair 3: the first 2 chunks
# fill a LIB_RING_MB ring (262144 slots), so they pay its page faults and
# are left out, as section 1's first pass is.
LIB_CHUNK=65536
LIB_CHUNKS=6
LIB_ROUNDS=3
LIB_RING_MB=20
libcalls() {
	what=$1
	variant=$2
	round=$3
	out=$tmp/lib-$what-$variant-$round.out
	if [ "$variant" = on ]; then
		LD_PRELOAD=$lib TPROF_OUTPUT_DIR=$tmp/trace-lib \
		TPROF_BUFFER_MB=$LIB_RING_MB \
		"$bin/bench_libcalls" "$what" $LIB_CHUNK $LIB_CHUNKS $PAUSE_MS
	else
		"$bin/bench_libcalls" "$what" $LIB_CHUNK $LIB_CHUNKS 0
	fi >"$out" 2>"${out%.out}.err" || {
		cat "${out%.out}.err" >&2
		die "bench_libcalls ($what, $variant) failed"
	}
	sed -n '3,$s/^ns //p' "$out" >>"$tmp/lib-$what-$variant.ns"
}

echo "bench: library calls, $LIB_ROUNDS rounds, $LIB_CHUNKS chunks of" \
	"$LIB_CHUNK cuBLAS GEMMs / NVTX push-pop pairs"
round=1
while [ $round -le $LIB_ROUNDS ]; do
	for what in cublas nvtx; do
		libcalls $what none $round
		libcalls $what on $round
	done
	round=$((round + 1))
done
cat "$tmp"/lib-*-on-*.err | grep -v '^tprof: wrote .* 0 dropped' |
	grep -v 'GPU activity is not recorded, CPU-side tracing goes on$' |
	sed 's/^/bench:   /' | head -5
for what in cublas nvtx; do
	for v in none on; do
		eval "lib_${what}_$v=\$(median <\"\$tmp/lib-$what-$v.ns\")"
	done
done
rm -rf "$tmp"/trace-lib

# --- summary ---------------------------------------------------------------

added_on=$(calc %.1f "$warm_on - $warm_none")
added_fresh=$(calc %.1f "$fresh_on - $fresh_none")
added_off=$(calc %.1f "$warm_off - $warm_none")
added_paused=$(calc %.1f "$warm_paused - $warm_none")

echo
echo "tprof benchmarks (one run; ratios within this run)"
printf '  %-34s %6.1f ns\n' "hooked call, no preload" "$warm_none"
printf '  %-34s %6.1f ns   (%+.1f ns, target <= %s)%s\n' \
	"hooked call, tracing on" "$warm_on" "$added_on" $TARGET_ADDED_NS \
	"$(verdict "$added_on <= $TARGET_ADDED_NS")"
printf '  %-34s %6.1f ns   (%+.1f ns: ring pages faulted in)\n' \
	"hooked call, tracing on, 1st pass" "$fresh_on" "$added_fresh"
printf '  %-34s %6.1f ns   (%+.1f ns)\n' \
	"hooked call, TPROF_DISABLE=1" "$warm_off" "$added_off"
printf '  %-34s %6.1f ns   (%+.1f ns, target <= %s)%s\n' \
	"hooked call, outside any window" "$warm_paused" "$added_paused" \
	$TARGET_PAUSED_NS "$(verdict "$added_paused <= $TARGET_PAUSED_NS")"
printf '  %-34s %6.1f ns\n' "ring append alone" "$ring_warm"
printf '  %-34s %6.1f ns\n' "ring append alone, 1st pass" "$ring_fresh"
printf '  %-34s %6.2f M events/s  (%.0f MB/s JSON; target >= %s M)%s\n' \
	"writer throughput (1 core)" "$w_meps" "$w_mbps" $TARGET_MEPS \
	"$(verdict "$w_meps >= $TARGET_MEPS")"
printf '  %-34s %6.1f B   (target <= %s; %.0f B of JSON)%s\n' \
	"on-disk bytes per launch event" "$w_bpe" $TARGET_BYTES "$w_rawpe" \
	"$(verdict "$w_bpe <= $TARGET_BYTES")"
printf '  (writer CPU time alone: %.2f M events/s)\n' "$w_cpu_meps"
printf '  %-34s %6.0f ns   (libunwind + interning; only calls over the threshold)\n' \
	"one captured stack, depth 32" "$stack_ns"
printf '  %-34s %6.1f ns   (%+.1f ns over %.1f ns without tprof)\n' \
	"cuBLAS GEMM call, tracing on" "$lib_cublas_on" \
	"$(calc %.1f "$lib_cublas_on - $lib_cublas_none")" "$lib_cublas_none"
printf '  %-34s %6.1f ns   (%+.1f ns over %.1f ns without tprof)\n' \
	"NVTX push/pop pair, tracing on" "$lib_nvtx_on" \
	"$(calc %.1f "$lib_nvtx_on - $lib_nvtx_none")" "$lib_nvtx_none"
