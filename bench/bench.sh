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
# Rings file vs rings in memory: RF_ROUNDS alternating pairs of traced
# runs (the VM is noisy: best and median both shown).
RF_ROUNDS=12
# The rings file's call against the in-memory rings' call, same run:
# at most 10 % more (about 2 ns on a 19 ns call).
TARGET_RF_RATIO=1.10
# Ring append: one ring of RING_EVENTS slots per repetition.
RING_EVENTS=1048576
RING_REPS=7
# Writer: WRITER_EVENTS launch records per process, WRITER_RUNS processes.
WRITER_EVENTS=2000000
ENC_EVENTS=${ENC_EVENTS:-1000000}
ENC_RUNS=${ENC_RUNS:-3}
WRITER_RUNS=3

# Instructions tprof may add to a hooked call (callgrind, bench/hook_instr.sh):
# the only stored figures, since instruction counts do not move with the
# machine's load; kept in bench/instr_budgets, which make bench-instr and
# make test check (bench/instr_check.sh). A dropped call must also stay
# below a recorded one.
INSTR_RECORDED_MAX=$(sed -n 's/^hook_recorded[ 	]*\([0-9.]*\).*/\1/p' \
	"$(dirname "$0")/instr_budgets")
INSTR_DROPPED_MAX=$(sed -n 's/^hook_dropped[ 	]*\([0-9.]*\).*/\1/p' \
	"$(dirname "$0")/instr_budgets")
# An osrt-hooked C library call (bench/osrt_instr.sh): osrt not traced,
# the fast path's load, test, branch and jump; traced, the call under the
# threshold (bench/instr_budgets).
INSTR_OSRT_OFF_MAX=$(sed -n 's/^osrt_off[ 	]*\([0-9.]*\).*/\1/p' \
	"$(dirname "$0")/instr_budgets")
INSTR_OSRT_ON_MAX=$(sed -n 's/^osrt_on[ 	]*\([0-9.]*\).*/\1/p' \
	"$(dirname "$0")/instr_budgets")
# Any other budget by its name in bench/instr_budgets.
budget() {
	sed -n "s/^$1[ 	]\{1,\}\([0-9.]*\).*/\1/p" \
		"$(dirname "$0")/instr_budgets"
}

# Every target is a ratio within this run, an instruction count
# (bench/instr_budgets) or a size: wall-clock figures move by tens of
# percent with the load of a shared machine, so the ns, M events/s and
# MB/s rows are printed with the load but judged by the instruction
# rows that stand for them (the hooked call's +15 ns by hook_recorded,
# the writer's 2 M events/s by writer_*, report, check and merge's
# 100 MB/s by cli_*, tprof.range's 150 ns by pyrange_py).
TARGET_BYTES=25

# The variants decide LD_PRELOAD and TPROF_*; nothing inherited may.
for v in $(env | sed -n 's/^\(TPROF_[A-Za-z0-9_]*\)=.*/\1/p'); do
	unset "$v"
done
unset LD_PRELOAD

# The machine's load when the run starts and when its table is printed:
# the table's header gives both, as every wall-clock row depends on it.
load_now() {
	cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?"
}
load_start=$(load_now)
cpus=$(nproc 2>/dev/null || echo "?")
cpu_model=$(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo 2>/dev/null |
	head -1)

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
	flight)
		# The flight recorder: the same recording, the window kept in
		# memory and nothing written at the normal exit.
		LD_PRELOAD=$lib TPROF_OUTPUT_DIR=$tmp/trace-flight-$round \
		TPROF_BUFFER_MB=$RING_MB TPROF_FLIGHT=30 \
		"$bin/bench_calls" $CHUNK $FRESH $WARM $PAUSE_MS
		;;
	hang)
		# The hang watchdog: each call published in its thread's
		# inflight slot, with the stack at entry for the copy and the
		# sync (2 of the 3 calls).
		LD_PRELOAD=$lib TPROF_OUTPUT_DIR=$tmp/trace-hang-$round \
		TPROF_BUFFER_MB=$RING_MB TPROF_HANG=300 \
		"$bin/bench_calls" $CHUNK $FRESH $WARM $PAUSE_MS
		;;
	memring)
		# As "on" (whose rings are in the rings file, the default),
		# with the rings in memory only.
		LD_PRELOAD=$lib TPROF_OUTPUT_DIR=$tmp/trace-mem-$round \
		TPROF_BUFFER_MB=$RING_MB TPROF_RING_FILE=0 \
		"$bin/bench_calls" $CHUNK $FRESH $WARM $PAUSE_MS
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

echo "bench: hooked calls, $ROUNDS rounds of 6 variants," \
	"$((FRESH + WARM)) chunks of $CHUNK calls each"
round=1
while [ $round -le $ROUNDS ]; do
	calls none $round
	calls on $round
	calls off $round
	calls paused $round
	calls flight $round
	calls hang $round
	round=$((round + 1))
done

ret=$(values ret "$tmp"/calls-*.out | sort -u | tr '\n' ' ')
echo "bench:   cudart returned: $ret(35 = cudaErrorInsufficientDriver)"
for v in none on off paused flight hang; do
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

# --- 1b. rings file vs rings in memory --------------------------------------

echo "bench: rings file vs rings in memory, $RF_ROUNDS alternating pairs"
# calls() sets round: a loop variable of its own.
pair=1
while [ $pair -le $RF_ROUNDS ]; do
	calls on rf$pair
	calls memring rf$pair
	pair=$((pair + 1))
done
rf_file_med=$(values warm "$tmp"/calls-on-rf*.out | median)
rf_mem_med=$(values warm "$tmp"/calls-memring-rf*.out | median)
rf_file_best=$(values warm "$tmp"/calls-on-rf*.out | sort -g | head -1)
rf_mem_best=$(values warm "$tmp"/calls-memring-rf*.out | sort -g | head -1)
# Paired: each pair's difference (rings file - in memory) of its runs'
# medians, then the median of those, in wall time and in the calling
# thread's CPU time (without the time it waited for a core: the machine's
# load cancels within a pair better than across pairs).
rf_pairs() {
	p=1
	while [ $p -le $RF_ROUNDS ]; do
		a=$(values "$1" "$tmp"/calls-on-rf$p.out | median)
		b=$(values "$1" "$tmp"/calls-memring-rf$p.out | median)
		calc '%.3f\n' "$a - $b"
		p=$((p + 1))
	done
}
rf_paired=$(rf_pairs warm | median)
rf_paired_cpu=$(rf_pairs warm_cpu | median)
rf_faults=$(values warm_faults "$tmp"/calls-on-rf*.out "$tmp"/calls-memring-rf*.out |
	awk '{ s += $1 } END { print s + 0 }')
rm -rf "$tmp"/trace-*

# --- 2. ring append --------------------------------------------------------

echo "bench: ring append, $RING_REPS rings of $RING_EVENTS events"
"$bin/bench_ring" $RING_EVENTS $RING_REPS >"$tmp/ring" ||
	die "bench_ring failed"
ring_warm=$(values warm "$tmp/ring" | median)
ring_fresh=$(values fresh "$tmp/ring" | median)
ring_dropped=$(values dropped "$tmp/ring")
echo "bench:   dropped $ring_dropped (the third passes', on full rings)"

# --- 2b. instructions per hooked call ---------------------------------------
echo "bench: instructions per hooked call (callgrind, bench/hook_instr.sh)"
instr_ok=1
"$(dirname "$0")/hook_instr.sh" "$bin" "$lib" >"$tmp/instr" 2>&1 || {
	rc=$?
	instr_ok=0
	[ $rc = 77 ] && echo "bench:   skipped: valgrind is not installed" ||
		echo "bench:   WARNING: hook_instr.sh failed: $(head -1 "$tmp/instr")"
}
# The tprof command per byte of JSON, and tprof.range from Python and C.
cinstr_ok=0
pinstr_ok=0
if [ $instr_ok = 1 ]; then
	echo "bench: instructions of check, report, merge (bench/cli_instr.sh)" \
		"and of tprof.range (bench/pyrange_instr.sh)"
	cinstr_ok=1
	sh "$(dirname "$0")/cli_instr.sh" "$bin" "$(dirname "$lib")/tprof" \
		>"$tmp/cinstr" 2>&1 || {
		cinstr_ok=0
		echo "bench:   WARNING: cli_instr.sh failed: $(head -1 "$tmp/cinstr")"
	}
	pinstr_ok=1
	sh "$(dirname "$0")/pyrange_instr.sh" "$bin" "$lib" >"$tmp/pinstr" 2>&1 || {
		pinstr_ok=0
		echo "bench:   WARNING: pyrange_instr.sh failed: $(head -1 "$tmp/pinstr")"
	}
fi

# --- 3. writer -------------------------------------------------------------

# Its instructions per event first (callgrind, bench/writer_instr.sh): the
# figures that hold whatever the load; the budgets are bench/instr_budgets.
echo "bench: writer instructions per event (callgrind, bench/writer_instr.sh)"
winstr_ok=1
"$(dirname "$0")/writer_instr.sh" "$bin" >"$tmp/winstr" 2>&1 || {
	rc=$?
	winstr_ok=0
	[ $rc = 77 ] && echo "bench:   skipped: valgrind is not installed" ||
		echo "bench:   WARNING: writer_instr.sh failed: $(head -1 "$tmp/winstr")"
}

echo "bench: writer, $WRITER_RUNS runs of $WRITER_EVENTS launch events," \
	"with the compressor it finds and with zlib only"
# One writer process: codec "" (what it finds) or "zlib", or "pf" (what
# it finds, TPROF_FORMAT=perfetto), or "pf6" (perfetto at
# TPROF_GZIP_LEVEL=6, zlib); its figures are added to writer<codec>.sum.
writer_run() {
	local out="$tmp/writer$1-$2" codec=$1 format=json level=1

	case $1 in
	pf) codec= format=perfetto ;;
	pf6) codec= format=perfetto level=6 ;;
	esac
	TPROF_FORMAT=$format TPROF_GZIP_LEVEL=$level \
		"$bin/bench_writer" "$out" $WRITER_EVENTS $codec \
		>"$out.out" 2>"$out.err" || {
		cat "$out.err" >&2
		die "bench_writer $1 failed"
	}
	awk '{ v[$1] = $2 } END {
		printf "meps %.6f\n", v["events"] / v["wall_ns"] * 1000
		printf "cpu_meps %.6f\n", v["events"] / v["cpu_ns"] * 1000
		printf "mbps %.6f\n", v["raw"] / v["wall_ns"] * 1000
		printf "bpe %.6f\n", v["file"] / v["events"]
		printf "rawpe %.6f\n", v["raw"] / v["events"]
	}' "$out.out" >>"$tmp/writer$1.sum"
}
i=1
while [ $i -le $WRITER_RUNS ]; do
	writer_run "" $i	# alternated, so that drift hits all alike
	writer_run zlib $i
	writer_run pf $i
	i=$((i + 1))
done
writer_run pf6 1	# one run: its size, and what it costs
[ -n "$(ls "$tmp"/writerpf-1/*.pftrace.gz 2>/dev/null)" ] ||
	echo "bench:   WARNING: the writer (perfetto) left no trace file"
# The first trace of each must parse back to every event written: the
# figures are worthless if the output is not a complete trace.
for codec in "" zlib; do
	file=$(ls "$tmp"/writer$codec-1/*.trace.json.gz 2>/dev/null | head -1)
	if [ -z "$file" ]; then
		echo "bench:   WARNING: the writer ($codec) left no trace file"
		continue
	fi
	lines=$(gzip -dc "$file" | grep -c '"ph":"X"')
	echo "bench:   $(values compressor "$tmp/writer$codec-1.out"):" \
		"$(values events "$tmp/writer$codec-1.out") events written," \
		"$lines in the file, $(values dropped "$tmp/writer$codec-1.out")" \
		"dropped"
done
echo "bench:   sample: $(gzip -dc "$file" | grep -m1 '"ph":"X"')"
[ "$(values demangled "$tmp/writer-1.out")" = 1 ] ||
	echo "bench:   note: no libstdc++ to demangle with: kernel names" \
		"are mangled, shorter than a real trace's"
w_codec=$(values compressor "$tmp/writer-1.out")
w_meps=$(values meps "$tmp/writer.sum" | median)
w_cpu_meps=$(values cpu_meps "$tmp/writer.sum" | median)
w_mbps=$(values mbps "$tmp/writer.sum" | median)
w_bpe=$(values bpe "$tmp/writer.sum" | median)
w_rawpe=$(values rawpe "$tmp/writer.sum" | median)
wz_meps=$(values meps "$tmp/writerzlib.sum" | median)
wz_mbps=$(values mbps "$tmp/writerzlib.sum" | median)
wz_bpe=$(values bpe "$tmp/writerzlib.sum" | median)
wp_meps=$(values meps "$tmp/writerpf.sum" | median)
wp_cpu_meps=$(values cpu_meps "$tmp/writerpf.sum" | median)
wp_bpe=$(values bpe "$tmp/writerpf.sum" | median)
wp_rawpe=$(values rawpe "$tmp/writerpf.sum" | median)
wp6_cpu_meps=$(values cpu_meps "$tmp/writerpf6.sum" | median)
wp6_bpe=$(values bpe "$tmp/writerpf6.sum" | median)
rm -rf "$tmp"/writer-*/ "$tmp"/writerzlib-*/ "$tmp"/writerpf-*/ \
	"$tmp"/writerpf6-*/

# --- 3b. drops vs offered load ----------------------------------------------

# One thread records cudaStreamSynchronize calls at the default settings
# (a 16 MiB ring, 131,072 slots, and the 128 MiB spill pool), the writer
# woken by the ring's fill mark. The trace's own account gives what was
# dropped. First a burst of DROP_BURST calls as fast as the thread goes:
# the writer's busy time until it has written them gives its own
# throughput on these records in this run (events per second of its
# CPU), and every other load is offered as a ratio of it: sustained
# paced rates (DROP_RATIOS, DROP_SECONDS each) and chunks of DROP_CHUNK
# calls DROP_GAP_MS apart. Beside each: the writer's rate, its CPU share
# and its time runnable but waiting for a core (schedstat), and the load
# average when it ran: drops where it waited are the machine's, not
# tprof's. The burst again without a spill pool shows what the ring alone
# keeps.
DROP_BURST=1000000
DROP_RATIOS="0.25 0.5 0.75 1.0 1.5 3.0"
DROP_SECONDS=1
DROP_CHUNK=16384
DROP_GAP_MS=20
DROP_CHUNKS=50
loadavg() {
	cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo "?"
}
drops_run() {
	name=$1
	shift
	out=$tmp/drops-$name.out
	echo "load $(loadavg)" >"$out"
	LD_PRELOAD=$lib TPROF_OUTPUT_DIR=$tmp/trace-drops env $DROP_ENV \
		"$bin/bench_drops" "$@" >>"$out" 2>"${out%.out}.err" || {
		cat "${out%.out}.err" >&2
		die "bench_drops $* failed"
	}
	sed -n 's/^tprof: wrote .* (\([0-9]*\) events, \([0-9]*\) dropped.*/written \1\ndropped \2/p' \
		"${out%.out}.err" >>"$out"
	[ "$(values written "$out")" ] ||
		echo "bench:   WARNING: no trace for $name:" \
			"$(head -1 "${out%.out}.err")"
	rm -rf "$tmp"/trace-drops
}
echo "bench: drops vs offered load, one thread, default ring and spill pool"
DROP_ENV=
drops_run burst 0 $DROP_BURST
# The writer's throughput on these records: events per second of its
# run time (-1 when its schedstat could not be read: then 1 M/s).
d_tput=$(awk '{ v[$1] = $2 } END {
	if (v["writer_busy_ns"] > 0 && v["written"] > 0)
		printf "%.0f", v["written"] / v["writer_busy_ns"] * 1e9
	else
		print 1000000
}' "$tmp/drops-burst.out")
DROP_ENV=TPROF_SPILL_MB=0
drops_run burst-nospill 0 $DROP_BURST
DROP_ENV=
for ratio in $DROP_RATIOS; do
	rate=$(calc %.0f "$ratio * $d_tput")
	drops_run "r$ratio" $rate $(calc %.0f "$rate * $DROP_SECONDS")
done
drops_run chunks 0 $((DROP_CHUNK * DROP_CHUNKS)) $DROP_CHUNK $DROP_GAP_MS
# The cost of one dropped event against a recorded one, at the ring (the
# recording thread's own work, no cudart around it).
ring_full=$(values full "$tmp/ring" | median)
# --- 3b. the typed-model encoders ------------------------------------------------

# The same launch events as bench_writer's through the JSON and Perfetto
# encoders of encode/tev.h, each gzipped the writer's way; the targets are
# the issue's: Perfetto on disk <= half the JSON's, raw <= 40 B, encoder
# throughput >= the JSON encoder's.
echo "bench: typed-model encoders (bench_enc), $ENC_EVENTS launch events"
i=1
while [ $i -le $ENC_RUNS ]; do
	mkdir -p "$tmp/enc-$i"
	"$bin/bench_enc" "$tmp/enc-$i" $ENC_EVENTS >"$tmp/enc-$i.out" ||
		die "bench_enc failed"
	awk '{ v[$1] = $2 } END {
		n = v["events"]
		printf "jbpe %.6f\npbpe %.6f\njraw %.6f\npraw %.6f\n",
			v["json_file"] / n, v["perfetto_file"] / n,
			v["json_raw"] / n, v["perfetto_raw"] / n
		printf "jmeps %.6f\npmeps %.6f\n",
			n / v["json_enc_ns"] * 1000, n / v["perfetto_enc_ns"] * 1000
		printf "jtmeps %.6f\nptmeps %.6f\n",
			n / v["json_total_ns"] * 1000, n / v["perfetto_total_ns"] * 1000
	}' "$tmp/enc-$i.out" >>"$tmp/enc.sum"
	rm -rf "$tmp/enc-$i"
	i=$((i + 1))
done
enc_codec=$(values perfetto_codec "$tmp/enc-1.out")
for k in jbpe pbpe jraw praw jmeps pmeps jtmeps ptmeps; do
	eval "enc_$k=\$(values $k \"\$tmp/enc.sum\" | median)"
done

# --- 4. call stack capture ------------------------------------------------

echo "bench: call stack capture (TPROF_BACKTRACE), depth 32"
"$bin/bench_stack" 20000 >"$tmp/stack" || die "bench_stack failed (libunwind8 missing?)"
stack_ns=$(values capture_ns "$tmp/stack")
stack_jit_ns=$(values capture_jit_ns "$tmp/stack")

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
	# the first 2 chunks left out
	awk '$1 == "ns" && ++k > 2 { print $2 }' "$out" \
		>>"$tmp/lib-$what-$variant.ns"
	awk '$1 == "cpu" && ++k > 2 { print $2 }' "$out" \
		>>"$tmp/lib-$what-$variant.cpu"
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

# --- 5b. tprof.range from Python ----------------------------------------

# bench/bench_pyrange.py: PY_CHUNKS chunks of PY_CHUNK enter+exit pairs of
# tprof.range, with the C extension (ext), with the ctypes path
# (TPROF_PYTHON_EXT=0), and with the extension but no tprof (off),
# interleaved with tprof_range_push/pop called from C (bench_libcalls
# tprof) in each of PY_ROUNDS rounds; the thread's CPU time per pair, the
# first chunk left out (the ring's page faults). Same ring and pauses as
# section 5: nothing drops.
PY_CHUNK=32768
PY_CHUNKS=4
PY_ROUNDS=3
TARGET_PY_NS=150
TARGET_PY_RATIO=2
pypath="$(dirname "$0")/../scripts/python:$(dirname "$lib")/python"
# The interpreter itself (not a pyenv shim, a shell script that would run
# under the preload too), the library by its absolute path.
py_exe=$(python3 -c 'import sys; print(sys.executable)')
py_lib=$(cd "$(dirname "$lib")" && pwd)/$(basename "$lib")
pyrange() {
	variant=$1
	round=$2
	out=$tmp/py-$variant-$round.out
	case $variant in
	ext) LD_PRELOAD=$py_lib TPROF_OUTPUT_DIR=$tmp/trace-py TPROF_SUMMARY=none \
		TPROF_BUFFER_MB=$LIB_RING_MB PYTHONPATH=$pypath \
		"$py_exe" "$(dirname "$0")/bench_pyrange.py" $PY_CHUNK \
		$PY_CHUNKS $PAUSE_MS ;;
	ctypes) LD_PRELOAD=$py_lib TPROF_OUTPUT_DIR=$tmp/trace-py TPROF_SUMMARY=none \
		TPROF_BUFFER_MB=$LIB_RING_MB PYTHONPATH=$pypath \
		TPROF_PYTHON_EXT=0 \
		"$py_exe" "$(dirname "$0")/bench_pyrange.py" $PY_CHUNK \
		$PY_CHUNKS $PAUSE_MS ;;
	off) PYTHONPATH=$pypath \
		"$py_exe" "$(dirname "$0")/bench_pyrange.py" $PY_CHUNK \
		$PY_CHUNKS 0 ;;
	esac >"$out" 2>"${out%.out}.err" || {
		cat "${out%.out}.err" >&2
		die "bench_pyrange.py ($variant) failed"
	}
	for k in reuse new timed; do
		awk -v k=$k '$1 == k && ++n > 1 { print $2 }' "$out" \
			>>"$tmp/py-$variant-$k.ns"
	done
	rm -rf "$tmp"/trace-py
}

echo "bench: tprof.range from Python, $PY_ROUNDS rounds, $PY_CHUNKS chunks" \
	"of $PY_CHUNK ranges (C extension, ctypes, no tprof; C for the floor)"
py_load=$(loadavg)
# libcalls sets round: a loop variable of its own.
pround=1
while [ $pround -le $PY_ROUNDS ]; do
	libcalls tprof on py$pround
	pyrange ext $pround
	pyrange ctypes $pround
	pyrange off $pround
	pround=$((pround + 1))
done
py_load="$py_load to $(loadavg)"
py_impl=$(values impl "$tmp"/py-ext-*.out | sort -u | tr '\n' ' ')
py_impl_ct=$(values impl "$tmp"/py-ctypes-*.out | sort -u | tr '\n' ' ')
[ "$py_impl" = "c " ] || echo "bench:   WARNING: the extension was not" \
	"used (impl: $py_impl): make pyext, python3-dev"
[ "$py_impl_ct" = "ctypes " ] ||
	echo "bench:   WARNING: TPROF_PYTHON_EXT=0 ran $py_impl_ct"
cat "$tmp"/py-*.err | grep -v '^tprof: wrote .* 0 dropped' |
	grep -v 'GPU activity is not recorded, CPU-side tracing goes on$' |
	sed 's/^/bench:   /' | head -5
for v in ext ctypes off; do
	for k in reuse new timed; do
		eval "py_${v}_$k=\$(median <\"\$tmp/py-$v-$k.ns\")"
	done
done
py_c=$(median <"$tmp/lib-tprof-on.cpu")

# --- 6. tprof merge -------------------------------------------------------

# MERGE_RANKS traces of MERGE_EVENTS launch events each (about 25 MB of
# JSON per rank), merged MERGE_RUNS times into one gzipped trace; the
# figure is uncompressed input JSON per second of wall time, inflate and
# deflate included, on one core.
MERGE_RANKS=8
MERGE_EVENTS=70000
MERGE_RUNS=3
TARGET_MERGE_MBPS=100
cli=$(dirname "$lib")/tprof

echo "bench: tprof merge, $MERGE_RANKS ranks of $MERGE_EVENTS launch events"
r=0
while [ $r -lt $MERGE_RANKS ]; do
	RANK=$r WORLD_SIZE=$MERGE_RANKS \
		"$bin/bench_writer" "$tmp/merge-in" $MERGE_EVENTS \
		>"$tmp/merge-w$r.out" 2>"$tmp/merge-w$r.err" || {
		cat "$tmp/merge-w$r.err" >&2
		die "bench_writer (merge input, rank $r) failed"
	}
	r=$((r + 1))
done
merge_raw=$(values raw "$tmp"/merge-w*.out | awk '{ s += $1 } END { print s }')
merge_gz=$(cat "$tmp"/merge-in/*.trace.json.gz | wc -c)
i=1
while [ $i -le $MERGE_RUNS ]; do
	t0=$(date +%s%N)
	"$cli" merge "$tmp/merge-in" -o "$tmp/merged.trace.json.gz" \
		2>"$tmp/merge.err" || {
		cat "$tmp/merge.err" >&2
		die "tprof merge failed"
	}
	t1=$(date +%s%N)
	echo "$merge_raw $t0 $t1" |
		awk '{ printf "%.6f\n", $1 / ($3 - $2) * 1000 }' >>"$tmp/merge.mbps"
	i=$((i + 1))
done
echo "bench:   $(cat "$tmp/merge.err")"
echo "bench:   $(awk -v r="$merge_raw" -v g="$merge_gz" 'BEGIN {
	printf "input: %.1f MB of JSON in %.1f MB of gzip", r / 1e6, g / 1e6 }')"
# The figure is worthless if the output is not a valid trace.
"$cli" check "$tmp/merged.trace.json.gz" | sed 's/^/bench:   check: /' |
	head -3
merge_mbps=$(median <"$tmp/merge.mbps")
rm -rf "$tmp"/merge-in "$tmp"/merged.trace.json.gz

# --- 6b. GPU: launches on the simulated machine, record conversion -------

# A <<<>>> launch on the simulated CUDA 13 machine (tests/sim/), without
# tprof, with its hooks only (TPROF_TRACE=cuda), and with CUPTI on
# (hooks + API callbacks + activity records); interleaved rounds, the
# median chunk. The simulation's own launch costs most of the first.
SIM_LIB=$(dirname "$lib")/tests/sim/lib
sim_launch() {
	case $1 in
	none) LD_LIBRARY_PATH=$SIM_LIB "$bin/bench_sim_launch" 20000 4 ;;
	hooks) LD_LIBRARY_PATH=$SIM_LIB LD_PRELOAD=$lib TPROF_TRACE=cuda \
		TPROF_OUTPUT_DIR=$tmp/sim-$2 TPROF_SUMMARY=none \
		"$bin/bench_sim_launch" 20000 4 ;;
	cupti) LD_LIBRARY_PATH=$SIM_LIB LD_PRELOAD=$lib TPROF_TRACE=cuda,gpu \
		TPROF_OUTPUT_DIR=$tmp/sim-$2 TPROF_SUMMARY=none \
		"$bin/bench_sim_launch" 20000 4 ;;
	esac >>"$tmp/sim-$1.out" 2>>"$tmp/sim-$1.err" ||
		die "bench_sim_launch ($1) failed"
}
echo "bench: launches on the simulated CUDA 13 machine, $ROUNDS rounds"
round=1
while [ $round -le $ROUNDS ]; do
	for v in none hooks cupti; do
		sim_launch $v $round
	done
	round=$((round + 1))
done
for v in none hooks cupti; do
	eval "sim_$v=\$(values launch \"\$tmp/sim-$v.out\" | median)"
done
grep -h "lost" "$tmp/sim-cupti.err" | head -1 | sed 's/^/bench:   /'
rm -rf "$tmp"/sim-[0-9]*
echo "bench: GPU record conversion, 2000000 kernel and copy records"
"$bin/bench_gpu" 2000000 >"$tmp/gpu" || die "bench_gpu failed"
gpu_mrps=$(awk '/^records/ { n = $2 } /^wall_ns/ { w = $2 }
	END { printf "%.6f", n / w * 1000 }' "$tmp/gpu")
gpu_bpr=$(awk '/^records/ { n = $2 } /^bytes/ { b = $2 }
	END { printf "%.1f", b / n }' "$tmp/gpu")

# The GPU health sampler's own cost: its thread's CPU time over its life
# (the trailer's sampler_cpu_ns / sampler_wall_ns), as a share of one
# core, against the stand-in NVML (tests/sim/nvml.c: its calls cost less
# than a real NVML's ioctls), at the default 10 Hz and at 100 Hz.
gm_share() {
	LD_LIBRARY_PATH=$SIM_LIB:$(dirname "$lib")/tests/sim/nvml \
		LD_PRELOAD=$lib TPROF_GPU_METRICS_HZ=$1 \
		TPROF_OUTPUT_DIR=$tmp/gm-$1 TPROF_SUMMARY=none \
		"$(dirname "$lib")/tests/sim/bin/paced" 1000 2000 \
		>/dev/null 2>"$tmp/gm-$1.err" || die "paced (gpu metrics) failed"
	python3 -c 'import gzip, json, sys
g = json.load(gzip.open(sys.argv[1]))["tprof"]["gpu_metrics"]
print("%.4f %d" % (100.0 * g["sampler_cpu_ns"] / g["sampler_wall_ns"],
                   g["samples"]))' "$tmp"/gm-$1/*.trace.json.gz ||
		die "no gpu_metrics in the trace"
}
echo "bench: GPU health sampler, paced 1000 ops x 2 ms under the stand-in NVML"
set -- $(gm_share 10)
gm10=$1 gm10_n=$2
set -- $(gm_share 100)
gm100=$1 gm100_n=$2
rm -rf "$tmp"/gm-*

# --- 6c. Perfetto's importer: the Perfetto trace against the JSON ---------

# Only with a trace_processor_shell (TRACE_PROCESSOR=PATH; Perfetto
# v58.2 is the one the target is set for): the CPU time it takes to
# import bench_calls' trace in each format, the same workload, rounds
# interleaved (bench/tp_import.sh). Target: Perfetto's at least 3x
# faster than JSON's.
TARGET_TP_RATIO=3
tp_ok=0
if [ -n "${TRACE_PROCESSOR:-}" ] && [ -x "$TRACE_PROCESSOR" ]; then
	echo "bench: trace_processor import, JSON vs Perfetto ($TRACE_PROCESSOR)"
	if sh "$(dirname "$0")/tp_import.sh" "$bin" "$lib" "$TRACE_PROCESSOR" \
		${TP_CALLS:-1048576} ${TP_ROUNDS:-3} >"$tmp/tp" 2>"$tmp/tp.err"
	then
		tp_ok=1
	else
		echo "bench:   WARNING: tp_import.sh failed: $(tail -2 "$tmp/tp.err")"
	fi
fi

# --- summary ---------------------------------------------------------------

added_on=$(calc %.1f "$warm_on - $warm_none")
added_fresh=$(calc %.1f "$fresh_on - $fresh_none")
added_off=$(calc %.1f "$warm_off - $warm_none")
added_paused=$(calc %.1f "$warm_paused - $warm_none")
added_flight=$(calc %.1f "$warm_flight - $warm_none")
added_hang=$(calc %.1f "$warm_hang - $warm_none")

echo
echo "tprof benchmarks (one run; ratios within this run; instruction counts" \
	"against bench/instr_budgets)"
echo "  machine: ${cpu_model:-?}, $cpus CPUs; load average (1, 5, 15 min)" \
	"at start $load_start, at the table $(load_now)"
printf '  %-34s %6.1f ns\n' "hooked call, no preload" "$warm_none"
printf '  %-34s %6.1f ns   (%+.1f ns, %.2fx; judged by its instructions below)\n' \
	"hooked call, tracing on" "$warm_on" "$added_on" \
	"$(calc %.4f "$warm_on / $warm_none")"
printf '  %-34s %6.1f ns   (%+.1f ns: ring pages faulted in)\n' \
	"hooked call, tracing on, 1st pass" "$fresh_on" "$added_fresh"
printf '  %-34s %6.1f ns   (%+.1f ns)\n' \
	"hooked call, TPROF_DISABLE=1" "$warm_off" "$added_off"
printf '  %-34s %6.1f ns   (%+.1f ns; judged by its instructions below)\n' \
	"hooked call, outside any window" "$warm_paused" "$added_paused"
printf '  %-34s %6.1f ns   (%+.1f ns; nothing written at exit)\n' \
	"hooked call, TPROF_FLIGHT=30" "$warm_flight" "$added_flight"
printf '  %-34s %6.1f ns   (%+.1f ns; 2 of 3 calls take a stack at entry)\n' \
	"hooked call, TPROF_HANG=300" "$warm_hang" "$added_hang"
rf_added=$(calc %.1f "$rf_file_med - $rf_mem_med")
rf_ratio=$(calc %.4f "$rf_file_med / $rf_mem_med")
printf '  %-34s %6.2fx    (%.1f ns vs %.1f in memory, %+.1f ns; best %.1f vs %.1f; target <= %s)%s\n' \
	"hooked call, rings file / memory" "$rf_ratio" "$rf_file_med" \
	"$rf_mem_med" "$rf_added" "$rf_file_best" "$rf_mem_best" \
	$TARGET_RF_RATIO "$(verdict "$rf_ratio <= $TARGET_RF_RATIO")"
rf_pratio=$(calc %.4f "1 + $rf_paired / $rf_mem_med")
rf_pratio_cpu=$(calc %.4f "1 + $rf_paired_cpu / $rf_mem_med")
printf '  %-34s %6.2fx    (%+.1f ns; thread CPU time %+.1f ns, %.2fx; page faults in warm chunks: %s; target <= %s)%s\n' \
	"hooked call, rings file (paired)" "$rf_pratio" "$rf_paired" \
	"$rf_paired_cpu" "$rf_pratio_cpu" "$rf_faults" $TARGET_RF_RATIO \
	"$(verdict "$rf_pratio <= $TARGET_RF_RATIO && $rf_pratio_cpu <= $TARGET_RF_RATIO")"
if [ $instr_ok = 1 ]; then
	i_none=$(values none "$tmp/instr")
	i_rec=$(values recorded "$tmp/instr")
	i_drop=$(values dropped "$tmp/instr")
	i_rec_add=$(calc %.1f "$i_rec - $i_none")
	i_drop_add=$(calc %.1f "$i_drop - $i_none")
	printf '  %-34s %+6.1f instr (%.1f with tprof, %.1f without; budget <= +%s)%s\n' \
		"hooked call, recorded (callgrind)" "$i_rec_add" "$i_rec" \
		"$i_none" $INSTR_RECORDED_MAX \
		"$(verdict "$i_rec_add <= $INSTR_RECORDED_MAX")"
	printf '  %-34s %+6.1f instr (%+.1f vs a recorded one; budget <= +%s and below it)%s\n' \
		"hooked call, dropped (callgrind)" "$i_drop_add" \
		"$(calc %.1f "$i_drop_add - $i_rec_add")" $INSTR_DROPPED_MAX \
		"$(verdict "$i_drop_add <= $INSTR_DROPPED_MAX && $i_drop_add < $i_rec_add")"
	i_paused_add=$(calc %.1f "$(values paused "$tmp/instr") - $i_none")
	printf '  %-34s %+6.1f instr (budget <= +%s)%s\n' \
		"hooked call, outside any window (callgrind)" "$i_paused_add" \
		"$(budget hook_paused)" \
		"$(verdict "$i_paused_add <= $(budget hook_paused)")"
	o_none=$(values osrt_none "$tmp/instr")
	o_off=$(calc %.1f "$(values osrt_off "$tmp/instr") - $o_none")
	o_on=$(calc %.1f "$(values osrt_on "$tmp/instr") - $o_none")
	printf '  %-34s %+6.1f instr (pthread_mutex_lock and unlock: %.1f without tprof; budget <= +%s)%s\n' \
		"osrt hook, osrt off (callgrind)" "$o_off" "$o_none" \
		$INSTR_OSRT_OFF_MAX "$(verdict "$o_off <= $INSTR_OSRT_OFF_MAX")"
	printf '  %-34s %+6.1f instr (timed, not recorded: the clock read twice; budget <= +%s)%s\n' \
		"osrt hook, on, under threshold" "$o_on" $INSTR_OSRT_ON_MAX \
		"$(verdict "$o_on <= $INSTR_OSRT_ON_MAX")"
fi
if [ $winstr_ok = 1 ]; then
	for n in json_isal json_zlib perfetto_isal perfetto_zlib; do
		line=$(grep "^$n " "$tmp/winstr") || continue
		set -- $line
		wb=$(sed -n "s/^writer_$n[ 	]*\([0-9.]*\).*/\1/p" \
			"$(dirname "$0")/instr_budgets")
		printf '  %-34s %6.0f instr (%.2f gzip B per event; budget <= %s)%s\n' \
			"writer per event, $n (callgrind)" "$2" "$3" "$wb" \
			"$(verdict "$2 <= $wb")"
	done
fi
printf '  %-34s %6.1f ns\n' "ring append alone" "$ring_warm"
printf '  %-34s %6.1f ns\n' "ring append alone, 1st pass" "$ring_fresh"
printf '  %-34s %6.2f M events/s  (%s; %.0f MB/s JSON; judged by the writer instruction rows)\n' \
	"writer throughput (1 core)" "$w_meps" "$w_codec" "$w_mbps"
printf '  %-34s %6.2f M events/s  (%.0f MB/s JSON; %.2fx of ISA-L)\n' \
	"writer throughput, zlib only" "$wz_meps" "$wz_mbps" \
	"$(calc %.4f "$wz_meps / $w_meps")"
printf '  %-34s %6.1f B   (target <= %s; %.0f B of JSON; %.1f B with zlib)%s\n' \
	"on-disk bytes per launch event" "$w_bpe" $TARGET_BYTES "$w_rawpe" \
	"$wz_bpe" "$(verdict "$w_bpe <= $TARGET_BYTES && $wz_bpe <= $TARGET_BYTES")"
printf '  (writer CPU time alone: %.2f M events/s)\n' "$w_cpu_meps"
printf '  %-34s %6.2f M events/s  (CPU alone %.2f M; JSON writer %.2f M, CPU %.2f M; target >= JSON)%s\n' \
	"writer, TPROF_FORMAT=perfetto" "$wp_meps" "$wp_cpu_meps" "$w_meps" \
	"$w_cpu_meps" "$(verdict "$wp_cpu_meps >= $w_cpu_meps")"
printf '  %-34s %6.1f B   (%.1f B raw; JSON %.1f B, %.0f B raw; target <= half, raw <= 40)%s\n' \
	"writer, perfetto: bytes per launch" "$wp_bpe" "$wp_rawpe" "$w_bpe" \
	"$w_rawpe" "$(verdict "$wp_bpe * 2 <= $w_bpe && $wp_rawpe <= 40")"
printf '  %-34s %6.1f B   (CPU alone %.2f M events/s; opt-in, one run)\n' \
	"perfetto, TPROF_GZIP_LEVEL=6" "$wp6_bpe" "$wp6_cpu_meps"
printf '  %-34s %6.1f ns   (%+.1f ns vs a recorded one: the drop path)\n' \
	"ring append to a full ring" "$ring_full" \
	"$(calc %.1f "$ring_full - $ring_warm")"
echo "  drops vs offered load, one thread, default ring and spill pool; the writer's own throughput on these records, this run: $(calc %.2f "$d_tput / 1e6") M events/s of its CPU (target: 0 drops up to 1.0x and for the burst)"
printf '    %-22s %-12s %-9s %-14s %-11s %-13s %s\n' load offered dropped \
	"writer rate" "writer CPU" "writer waited" "load avg"
# One row: the load offered (the rate achieved, as a ratio of the
# writer's throughput), dropped, the writer's rate (events written over
# the loop's time, or its own busy time when longer: what it drained
# after the loop), its CPU share of the loop's wall time, its wait for a
# core, the load average.
drops_row() {
	awk -v label="$1" -v tput=$d_tput -v goal="$2" '
	function max(a, b) { return a > b ? a : b }
	{ v[$1] = $2 } END {
		c = v["written"] + v["dropped"]
		pct = c ? 100 * v["dropped"] / c : -1
		miss = goal != "" && pct != 0 ? "  MISSED" : ""
		printf "    %-22s %-12s %-9s %-14s %-11s %-13s %s%s\n", label,
			sprintf("%.2fx", v["achieved"] / tput),
			pct < 0 ? "?" : sprintf("%.2f %%", pct),
			sprintf("%.2fx", v["written"] / (max(v["wall_ns"], v["writer_busy_ns"]) / 1e9) / tput),
			sprintf("%.0f %%", 100 * v["writer_cpu_ns"] / v["wall_ns"]),
			(v["writer_wait_ns"] < 0 ? "?" : sprintf("%.1f ms", v["writer_wait_ns"] / 1e6)),
			v["load"], miss
	}' "$3"
}
drops_row "burst of $DROP_BURST" goal "$tmp/drops-burst.out"
drops_row "  same, no spill pool" "" "$tmp/drops-burst-nospill.out"
for ratio in $DROP_RATIOS; do
	goal=
	[ "$(calc %d "$ratio <= 1.0")" = 1 ] && goal=goal
	drops_row "sustained ${ratio}x, ${DROP_SECONDS} s" "$goal" \
		"$tmp/drops-r$ratio.out"
done
drops_row "$DROP_CHUNK every $DROP_GAP_MS ms" goal "$tmp/drops-chunks.out"
# Exact accounting: every call is written or counted as dropped.
for f in "$tmp"/drops-*.out; do
	awk -v f="$(basename "$f" .out)" '{ v[$1] = $2 } END {
		if (v["written"] + v["dropped"] != v["calls"])
			printf "    WARNING: %s: %d written + %d dropped != %d calls\n", \
				f, v["written"], v["dropped"], v["calls"]
	}' "$f"
done
printf '    (the burst: %.1f ns per hooked call with the spill pool, %.1f ns without it)\n' \
	"$(awk '$1 == "achieved" { print 1e9 / $2 }' "$tmp/drops-burst.out")" \
	"$(awk '$1 == "achieved" { print 1e9 / $2 }' "$tmp/drops-burst-nospill.out")"
printf '  %-34s %6.1f B   (%s; JSON %.1f B; target <= half, aim <= 6)%s\n' \
	"Perfetto bytes per launch event" "$enc_pbpe" "$enc_codec" "$enc_jbpe" \
	"$(verdict "$enc_pbpe * 2 <= $enc_jbpe")"
printf '  %-34s %6.1f B   (JSON %.1f B; target <= 40)%s\n' \
	"Perfetto raw bytes per launch event" "$enc_praw" "$enc_jraw" \
	"$(verdict "$enc_praw <= 40")"
printf '  %-34s %6.2f M events/s  (JSON encoder %.2f M; with gzip %.2f vs %.2f M; target >= JSON)%s\n' \
	"Perfetto encoder (CPU, 1 core)" "$enc_pmeps" "$enc_jmeps" \
	"$enc_ptmeps" "$enc_jtmeps" "$(verdict "$enc_pmeps >= $enc_jmeps")"
printf '  %-34s %6.0f ns   (libunwind + interning; only calls over the threshold)\n' \
	"one captured stack, depth 32" "$stack_ns"
printf '  %-34s %6.0f ns   (through Python perf trampolines: frame by frame)\n' \
	"one captured stack, 32, JIT frames" "$stack_jit_ns"
printf '  %-34s %6.1f ns   (%+.1f ns over %.1f ns without tprof)\n' \
	"cuBLAS GEMM call, tracing on" "$lib_cublas_on" \
	"$(calc %.1f "$lib_cublas_on - $lib_cublas_none")" "$lib_cublas_none"
printf '  %-34s %6.1f ns   (%+.1f ns over %.1f ns without tprof)\n' \
	"NVTX push/pop pair, tracing on" "$lib_nvtx_on" \
	"$(calc %.1f "$lib_nvtx_on - $lib_nvtx_none")" "$lib_nvtx_none"
printf '  %-34s %6.1f ns   (reused object; %.1f ns a new one per use; %s ns quiet: judged by its instructions)\n' \
	"tprof.range enter+exit (C ext)" "$py_ext_reuse" "$py_ext_new" \
	$TARGET_PY_NS
if [ $pinstr_ok = 1 ]; then
	p_py=$(values py "$tmp/pinstr")
	p_c=$(values c "$tmp/pinstr")
	printf '  %-34s %6.0f instr (%s; C push+pop %.0f, %.2fx; budgets <= %s, %s)%s\n' \
		"tprof.range enter+exit (callgrind)" "$p_py" \
		"$(values impl "$tmp/pinstr")" "$p_c" \
		"$(calc %.4f "$p_py / $p_c")" "$(budget pyrange_py)" \
		"$(budget pyrange_c)" \
		"$(verdict "$p_py <= $(budget pyrange_py) && $p_c <= $(budget pyrange_c)")"
fi
printf '  %-34s %6.1f ns   (over the undecorated call)\n' \
	"@tprof.timed call (C ext)" "$py_ext_timed"
printf '  %-34s %6.1f ns   (reused object; %.1f ns a new one; %.1f ns per @timed call)\n' \
	"tprof.range, ctypes path" "$py_ctypes_reuse" "$py_ctypes_new" \
	"$py_ctypes_timed"
printf '  %-34s %6.1f ns   (reused object; %.1f ns a new one)\n' \
	"tprof.range without tprof (C ext)" "$py_off_reuse" "$py_off_new"
printf '  %-34s %6.1f ns   (tprof_range_push + pop, from C)\n' \
	"range push+pop from C" "$py_c"
printf '  %-34s %6.2f x    (new object: %.2f x; ctypes: %.1f x; target <= %s; thread CPU time, load %s)%s\n' \
	"tprof.range C ext / C push+pop" \
	"$(calc %.4f "$py_ext_reuse / $py_c")" \
	"$(calc %.4f "$py_ext_new / $py_c")" \
	"$(calc %.4f "$py_ctypes_new / $py_c")" $TARGET_PY_RATIO "$py_load" \
	"$(verdict "$py_ext_reuse <= $TARGET_PY_RATIO * $py_c")"
printf '  %-34s %6.0f MB/s  (uncompressed JSON in, gzip out; %s MB/s: judged by its instructions)\n' \
	"tprof merge (1 core)" "$merge_mbps" $TARGET_MERGE_MBPS
if [ $cinstr_ok = 1 ]; then
	for n in check report merge; do
		f=$(values $n "$tmp/cinstr")
		printf '  %-34s %6.1f instr (per byte of JSON, 2 ranks of 20,000 launches; budget <= %s)%s\n' \
			"tprof $n (callgrind)" "$f" "$(budget cli_$n)" \
			"$(verdict "$f <= $(budget cli_$n)")"
	done
	f=$(values report_summaries "$tmp/cinstr")
	printf '  %-34s %6.1f M instr (8 summaries of 10,000 steps; budget <= %s)%s\n' \
		"tprof report, summaries (callgrind)" "$f" \
		"$(budget cli_report_summaries)" \
		"$(verdict "$f <= $(budget cli_report_summaries)")"
fi
printf '  %-34s %6.1f ns   (simulated CUDA 13 launch, no tprof)\n' \
	"launch, simulated machine" "$sim_none"
printf '  %-34s %6.1f ns   (%+.1f ns: hooks only)\n' \
	"launch, tprof hooks" "$sim_hooks" \
	"$(calc %.1f "$sim_hooks - $sim_none")"
printf '  %-34s %6.1f ns   (%+.1f ns: hooks + CUPTI callbacks and records)\n' \
	"launch, tprof with CUPTI" "$sim_cupti" \
	"$(calc %.1f "$sim_cupti - $sim_none")"
printf '  %-34s %6.2f M records/s  (%.0f B of JSON each, flows included)\n' \
	"GPU record conversion (1 core)" "$gpu_mrps" "$gpu_bpr"
if [ $tp_ok = 1 ]; then
	printf '  %-34s %6.2fx    (import CPU: JSON %.2f s, Perfetto %.2f s; %s vs %s slices; %.1f vs %.1f MB gz; load %s; target >= %s)%s\n' \
		"trace_processor import, JSON/pf" "$(values ratio "$tmp/tp")" \
		"$(values json_cpu_s "$tmp/tp")" "$(values pf_cpu_s "$tmp/tp")" \
		"$(values json_slices "$tmp/tp")" "$(values pf_slices "$tmp/tp")" \
		"$(calc %.1f "$(values json_bytes "$tmp/tp") / 1e6")" \
		"$(calc %.1f "$(values pf_bytes "$tmp/tp") / 1e6")" \
		"$(values load "$tmp/tp")" $TARGET_TP_RATIO \
		"$(verdict "$(values ratio "$tmp/tp") >= $TARGET_TP_RATIO")"
else
	printf '  %-34s skipped (set TRACE_PROCESSOR to a trace_processor_shell)\n' \
		"trace_processor import, JSON/pf"
fi

# --- 7. tprof report and check (after the table: they add their own lines) -

# REPORT_RANKS summaries as a long run's are (REPORT_ROWS calls rows with
# histograms, REPORT_STEPS steps, 2 x 512 memory points), then
# REPORT_RANKS traces of REPORT_EVENTS launch events with no summary
# beside them, each reported REPORT_RUNS times; the median is shown. The
# trace figure is uncompressed JSON read per second of wall time, on one
# core (taskset, where there is one), inflate included. The HTA
# comparison lets report use every core, as HTA does.
REPORT_RANKS=8
REPORT_ROWS=500
REPORT_STEPS=10000
REPORT_EVENTS=250000
REPORT_RUNS=3
TARGET_REPORT_SUM_MS=500
TARGET_REPORT_MBPS=100
report_cli=$(dirname "$lib")/tprof

# One rank's summary.json in the aggregator's layout; the last rank's
# steps are 30% slower.
report_summary() {
	awk -v r="$1" -v n="$REPORT_RANKS" -v rows=$REPORT_ROWS \
	    -v steps=$REPORT_STEPS 'BEGIN {
		srand(r + 1)
		step = 100000000 * (r == n - 1 ? 1.3 : 1)
		wall = steps * step
		printf "{\n\"schema\": \"tprof.summary\",\n\"schema_version\": 1,\n"
		printf "\"tprof_version\": \"bench\",\n\"source\": \"tprof\",\n"
		printf "\"name\": \"bench\", \"trace\": null, \"host\": \"b\",\n"
		printf "\"pid\": %d, \"rank\": %d, \"world_size\": %d,\n",
			1000 + r, r, n
		printf "\"base_time_ns\": 0,\n\"start_ns\": 0, "
		printf "\"end_ns\": %.0f, \"wall_ns\": %.0f,\n", wall, wall
		printf "\"events\": 10000000,\n\"dropped\": 0,\n"
		printf "\"steps\": {\"count\": %d, \"times\": [", steps
		for (i = 0; i < steps; i++)
			printf "%s[%d,%.0f,%.0f]", i ? ", " : "", i, i * step,
				step + int(rand() * 1000)
		printf "]},\n\"calls\": ["
		for (k = 0; k < rows; k++) {
			c = 1000 + k
			m = 1000 * (rows - k) + int(rand() * 100)
			printf "%s\n {\"cat\": \"kernel\", \"name\": " \
				"\"kernel_%d<float, 128>\", \"count\": %d, " \
				"\"total_ns\": %.0f, \"mean_ns\": %.3f, " \
				"\"std_ns\": 1.000, \"min_ns\": %d, \"max_ns\": " \
				"%d, \"p50_ns\": %d, \"p90_ns\": %d, \"p99_ns\": " \
				"%d, \"share\": 0.001, \"dropped\": 0, " \
				"\"hist\": [", k ? "," : "", k, c, c * m, m, m,
				m, m, m, m
			for (b = 0; b < 48; b++)
				printf "%s[%d,%d]", b ? "," : "", 100 + b, 10 + b
			printf "]}"
		}
		printf "],\n\"gemm\": [],\n\"nccl\": [],\n\"ranges\": [],\n"
		printf "\"memory\": ["
		for (d = 0; d < 2; d++) {
			printf "%s\n {\"device\": %d, \"peak_bytes\": %.0f, " \
				"\"points\": [", d ? "," : "", d, 2e10
			for (i = 0; i < 512; i++)
				printf "%s[%.0f,%.0f]", i ? "," : "",
					i * wall / 512, 1e10 + rand() * 1e10
			printf "]}"
		}
		printf "]\n}\n"
	}'
}

# The median wall time in ms of REPORT_RUNS runs of tprof report ARGS.
# report reads its inputs on one thread per core; $report_pin ("taskset
# -c 0" for the one-core figures) holds it to one.
report_pin=
report_ms() {
	: >"$tmp/report.ms"
	i=1
	while [ $i -le $REPORT_RUNS ]; do
		t0=$(date +%s%N)
		$report_pin "$report_cli" report --json "$@" >"$tmp/report.out" \
			2>"$tmp/report.err" || {
			cat "$tmp/report.err" >&2
			die "tprof report failed"
		}
		t1=$(date +%s%N)
		echo "$t0 $t1" | awk '{ printf "%.3f\n", ($2 - $1) / 1e6 }' \
			>>"$tmp/report.ms"
		i=$((i + 1))
	done
	median <"$tmp/report.ms"
}

# The median wall time in ms of REPORT_RUNS runs of tprof check FILES
# (one process for all of them, as a user would run it).
check_ms() {
	: >"$tmp/check.ms"
	i=1
	while [ $i -le $REPORT_RUNS ]; do
		t0=$(date +%s%N)
		"$report_cli" check "$@" >"$tmp/check.out" 2>&1 || {
			cat "$tmp/check.out" >&2
			die "tprof check failed"
		}
		t1=$(date +%s%N)
		echo "$t0 $t1" | awk '{ printf "%.3f\n", ($2 - $1) / 1e6 }' \
			>>"$tmp/check.ms"
		i=$((i + 1))
	done
	median <"$tmp/check.ms"
}

# HTA (when HTA_PYTHON, default python3, imports it: `make bench` passes
# the venv `make hta-venv` installs): its load + temporal breakdown
# against tprof report on the same torch.profiler traces; see
# bench/bench_hta.sh (the traces above hold launches only, which HTA's
# breakdown cannot take).
hta_compare() {
	sh "$(dirname "$0")/bench_hta.sh" "$report_cli"
}

# The last report read WANT inputs of KIND, or a warning.
report_read() {
	got=$(grep -c "\"kind\": \"$2\"" "$tmp/report.out")
	[ "$got" = "$1" ] ||
		echo "  WARNING: the report read $got ${2}s, not $1"
}

if [ ! -x "$report_cli" ]; then
	printf '  %-34s (skipped: %s not built)\n' "tprof report" "$report_cli"
else
	mkdir -p "$tmp/report-sum" "$tmp/report-trace"
	r=0
	while [ $r -lt $REPORT_RANKS ]; do
		report_summary $r >"$tmp/report-sum/bench-rank$r.summary.json"
		RANK=$r WORLD_SIZE=$REPORT_RANKS \
			"$bin/bench_writer" "$tmp/report-trace" $REPORT_EVENTS \
			>"$tmp/report-w$r.out" 2>"$tmp/report-w$r.err" || {
			cat "$tmp/report-w$r.err" >&2
			die "bench_writer (report input, rank $r) failed"
		}
		r=$((r + 1))
	done
	# the traces alone: a summary beside a trace would be read instead
	rm -rf "$tmp"/report-trace/summaries "$tmp"/report-trace/*.summary.*
	sum_bytes=$(cat "$tmp"/report-sum/*.json | wc -c)
	sum_ms=$(report_ms "$tmp/report-sum")
	report_read $REPORT_RANKS summary
	trace_raw=$(values raw "$tmp"/report-w*.out |
		awk '{ s += $1 } END { print s }')
	trace_gz=$(cat "$tmp"/report-trace/*.trace.json.gz | wc -c)
	command -v taskset >/dev/null && report_pin="taskset -c 0"
	trace_ms=$(report_ms "$tmp/report-trace")
	report_pin=
	report_read $REPORT_RANKS trace
	trace_mbps=$(calc %.1f "$trace_raw / ($trace_ms * 1000)")
	printf '  %-34s %6.1f ms   (%.1f MB of summary.json; %s ms: judged by its instructions)\n' \
		"tprof report, $REPORT_RANKS summaries" "$sum_ms" \
		"$(calc %.1f "$sum_bytes / 1e6")" $TARGET_REPORT_SUM_MS
	printf '  %-34s %6.0f MB/s  (%.0f MB of JSON, %.0f MB gzipped, in %.0f ms; %s MB/s: judged by its instructions)\n' \
		"tprof report, $REPORT_RANKS traces (1 core)" "$trace_mbps" \
		"$(calc %.1f "$trace_raw / 1e6")" \
		"$(calc %.1f "$trace_gz / 1e6")" "$trace_ms" \
		$TARGET_REPORT_MBPS
	check_ms=$(check_ms "$tmp"/report-trace/*.trace.json.gz)
	check_mbps=$(calc %.1f "$trace_raw / ($check_ms * 1000)")
	printf '  %-34s %6.0f MB/s  (the same %.0f MB of JSON, in %.0f ms; %s MB/s: judged by its instructions)\n' \
		"tprof check, $REPORT_RANKS traces (1 core)" "$check_mbps" \
		"$(calc %.1f "$trace_raw / 1e6")" "$check_ms" \
		$TARGET_REPORT_MBPS
	hta_compare
	rm -rf "$tmp"/report-*
fi

# --- 8. memory of tprof check and report -------------------------------------

# Peak RSS (GNU time's %M) and MB/s of check --foreign and report --json,
# one run each on one core, on one torch.profiler-schema trace of each of MEM_SIZES
# MB of plain JSON written by tests/integration/bigtrace.py (8 steps,
# fixed names; launches, kernels and ac2g flows out of time order), with
# the default budget (TPROF_CLI_MEM_BUDGET, 64 MiB): memory grows with
# the trace until the sorts fill the budget, then stays flat.
MEM_SIZES="100 400"
TARGET_MEM_MB=96	# the budget, plus the parser's and inflater's buffers
mem_rows() {
	if [ ! -x /usr/bin/time ]; then
		printf '  %-34s (skipped: no /usr/bin/time)\n' "check/report peak RSS"
		return 0
	fi
	mem_pin=
	command -v taskset >/dev/null && mem_pin="taskset -c 0"
	for mb in $MEM_SIZES; do
		f=$tmp/mem-$mb.pt.trace.json
		bytes=$(python3 -c '
import sys
sys.path.insert(0, "tests/integration")
import bigtrace
print(bigtrace.write(sys.argv[1], float(sys.argv[2])))' "$f" $mb) ||
			{ echo "  WARNING: could not write the trace"; return 0; }
		for cmd in check report; do
			opt=--foreign
			[ $cmd = report ] && opt=--json
			t0=$(date +%s%N)
			$mem_pin /usr/bin/time -f %M -o "$tmp/mem.rss" \
				"$report_cli" $cmd \
				$opt "$f" >"$tmp/mem.out" 2>&1 || {
				tail -3 "$tmp/mem.out" >&2
				die "tprof $cmd failed on $f"
			}
			t1=$(date +%s%N)
			ms=$(echo "$t0 $t1" | awk '{ printf "%.1f", ($2 - $1) / 1e6 }')
			rss=$(calc %.1f "$(tail -1 "$tmp/mem.rss") / 1024")
			mbps=$(calc %.1f "$bytes / ($ms * 1000)")
			printf '  %-34s %6.0f MB/s  (%.0f MB of JSON in %.0f ms; load %s)\n' \
				"tprof $cmd, ${mb} MB trace (1 core)" "$mbps" \
				"$(calc %.1f "$bytes / 1e6")" "$ms" "$(load_now)"
			printf '  %-34s %6.1f MiB   (peak RSS; target <= %s)%s\n' \
				"tprof $cmd, ${mb} MB trace" "$rss" \
				$TARGET_MEM_MB "$(verdict "$rss <= $TARGET_MEM_MB")"
		done
		rm -f "$f"
	done
}

printf '  %-34s %6.3f %%    (of one core: thread CPU / wall, %s samples)\n' \
	"gpu metrics sampler, 10 Hz" "$gm10" "$gm10_n"
printf '  %-34s %6.3f %%    (of one core: thread CPU / wall, %s samples)\n' \
	"gpu metrics sampler, 100 Hz" "$gm100" "$gm100_n"

if [ -x "$report_cli" ]; then
	mem_rows
fi
