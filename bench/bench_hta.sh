#!/bin/sh
# HTA against tprof report, on the same torch.profiler traces: HTA's
# TraceAnalysis(trace_dir=DIR) load + get_temporal_breakdown() (the
# breakdown `tprof report` prints as "Temporal breakdown"), and
# `tprof report --json DIR`, each as the user runs it. Run by
# bench/bench.sh (`make bench`) and alone by `make bench-hta`.
#
# usage: bench_hta.sh TPROF_CLI
#
# The set: HTA_RANKS traces of HTA_STEPS profiler steps of HTA_KERNELS
# GEMM kernels each (plus per step an NCCL kernel and a memcpy), written
# by bench/kineto_set.py. Few steps with many kernels, as a profiler
# schedule records them: HTA assigns CPU events to steps by a scan over
# every step per event, so thousands of tiny steps would make it slow
# for a reason real traces do not have.
#
# HTA_RUNS rounds, each one HTA process then TPROF_RUNS tprof report
# processes, interleaved so that a busy spell of the shared machine hits
# both; medians and ranges are printed. HTA's figures: its load +
# breakdown measured inside the process (its import and the interpreter's
# start left out: the verdict is on this one), its load alone, and the
# whole process; tprof's is always the whole process.
set -u

cli=$1
py=${HTA_PYTHON:-python3}
HTA_RANKS=${HTA_RANKS:-4}
HTA_STEPS=${HTA_STEPS:-10}
HTA_KERNELS=${HTA_KERNELS:-6000}
HTA_RUNS=${HTA_RUNS:-3}
TPROF_RUNS=${TPROF_RUNS:-3}
TARGET_HTA_SPEEDUP=20
label="HTA load + temporal breakdown"

here=$(dirname "$0")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tprof-bench-hta.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM HUP

# The median, minimum and maximum of the numbers in FILE, one per line.
stats() {
	sort -g "$1" | awk '{ v[NR] = $1 }
		END {
			m = int((NR + 1) / 2)
			printf "%.1f %.1f %.1f\n",
				(NR % 2) ? v[m] : (v[m] + v[m + 1]) / 2,
				v[1], v[NR]
		}'
}

calc() {
	awk "BEGIN { printf \"$1\", $2 }"
}

now_ns() {
	date +%s%N
}

# Milliseconds from T0 to T1 (ns), on a line.
ms() {
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f\n", (b - a) / 1e6 }'
}

if ! "$py" -c 'import hta' 2>/dev/null; then
	printf '  %-34s (skipped: %s cannot import hta; make hta-venv)\n' \
		"$label" "$py"
	exit 0
fi
versions=$("$py" -c 'import importlib.metadata as m
print("HTA %s, pandas %s" % (m.version("HolisticTraceAnalysis"),
                             m.version("pandas")))') || versions="HTA ?"
# HTA_SET=DIR: a set written before by bench/kineto_set.py, reused
# (HTA_RANKS, HTA_STEPS and HTA_KERNELS must say how)
set=${HTA_SET:-$tmp/set}
if [ -n "${HTA_SET:-}" ] && [ -d "$set" ]; then
	raw=$(cat "$set"/*.gz | gzip -dc | wc -c)
else
	mkdir -p "$set"
	raw=$(python3 "$here/kineto_set.py" "$set" $HTA_RANKS $HTA_STEPS \
		$HTA_KERNELS) || {
		echo "  WARNING: could not write the Kineto traces"
		exit 0
	}
fi
gz=$(cat "$set"/*.gz | wc -c)
printf '  %-34s %s; %s ranks x %s steps x %s kernels: %.0f MB of Kineto JSON (%.1f MB gzipped); load average %s\n' \
	"HTA comparison input" "$versions" $HTA_RANKS $HTA_STEPS \
	$HTA_KERNELS "$(calc %.1f "$raw / 1e6")" "$(calc %.1f "$gz / 1e6")" \
	"$(sed 's/ [0-9]*\/.*//' /proc/loadavg)"

i=1
while [ $i -le $HTA_RUNS ]; do
	t0=$(now_ns)
	"$py" "$here/hta_time.py" "$set" >"$tmp/hta.out" \
		2>"$tmp/hta.err" || {
		tail -3 "$tmp/hta.err"
		echo "  WARNING: HTA failed"
		exit 0
	}
	t1=$(now_ns)
	ms $t0 $t1 >>"$tmp/hta-whole.ms"
	awk '{ printf "%.3f\n", $2 }' "$tmp/hta.out" >>"$tmp/hta-load.ms"
	awk '{ printf "%.3f\n", $2 + $3 }' "$tmp/hta.out" >>"$tmp/hta-lb.ms"
	k=1
	while [ $k -le $TPROF_RUNS ]; do
		t0=$(now_ns)
		"$cli" report --json "$set" >"$tmp/report.out" \
			2>"$tmp/report.err" || {
			cat "$tmp/report.err"
			echo "  WARNING: tprof report failed"
			exit 0
		}
		t1=$(now_ns)
		ms $t0 $t1 >>"$tmp/tprof.ms"
		k=$((k + 1))
	done
	i=$((i + 1))
done
# the report computed the breakdown of every rank
got=$(grep -c '"idle_ns"' "$tmp/report.out")
[ "$got" = "$HTA_RANKS" ] ||
	echo "  WARNING: tprof report gave $got temporal breakdowns, not $HTA_RANKS"

set -- $(stats "$tmp/tprof.ms")
mine=$1 mine_lo=$2 mine_hi=$3
row() {
	name=$1 file=$2 tail=$3 verdict=$4
	set -- $(stats "$file")
	printf '  %-34s %6.0f ms   (%.0f to %.0f; tprof report %.0f ms, %.0f to %.0f: %.1fx%s)%s\n' \
		"$name" "$1" "$2" "$3" "$mine" "$mine_lo" "$mine_hi" \
		"$(calc %.1f "$1 / $mine")" "$tail" "$verdict"
}
set -- $(stats "$tmp/hta-lb.ms")
verdict=$(awk "BEGIN { print ($1 >= $TARGET_HTA_SPEEDUP * $mine) ? \"\" : \"  MISSED\" }")
row "$label" "$tmp/hta-lb.ms" "; target >= ${TARGET_HTA_SPEEDUP}x" "$verdict"
row "HTA load alone" "$tmp/hta-load.ms" "" ""
row "HTA whole process" "$tmp/hta-whole.ms" \
	" (interpreter start and import included)" ""
printf '  %-34s medians of %s HTA runs and %s tprof runs\n' "" $HTA_RUNS \
	$((HTA_RUNS * TPROF_RUNS))
