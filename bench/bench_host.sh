#!/bin/sh
# The host side's cost (TPROF_TRACE=cpu,osrt), rows printed after the
# main table (make bench):
#   - a CPU sample: the time in its signal handler (tprof.sampling's
#     handler_ns over the samples), and all in: the work a CPU loop loses
#     against the same loop without tprof (the kernel's side included:
#     the timer or counter, the signal's delivery), per sample and as a
#     share of one core at the default rate; for each mechanism;
#   - an osrt-hooked call: ns per uncontended pthread_mutex_lock (with
#     its unlock) with tprof loaded and osrt off, and with osrt on and the
#     call under the threshold, against none; and instructions per call
#     (bench/osrt_instr.sh, callgrind, when valgrind is there);
#   - the trace's bytes per CPU sample (gzip), JSON and Perfetto.
# Medians over ROUNDS interleaved runs: the machine is shared.
#
# usage: bench_host.sh BENCH_BIN_DIR LIBTPROF
set -u

bin=$1
lib=$2
ROUNDS=${ROUNDS:-5}
SPIN_MS=1000
LOCKS=2000000

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tprof-bench-host.XXXXXX") || exit 1
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT

median() {
	sort -g | awk '{ v[NR] = $1 }
		END {
			if (!NR) { print "nan"; exit }
			m = int((NR + 1) / 2)
			print (NR % 2) ? v[m] : (v[m] + v[m + 1]) / 2
		}'
}

# KEY's value in tprof.sampling of the trace in DIR.
sampling() {
	python3 -c '
import glob, gzip, json, sys
t = json.load(gzip.open(glob.glob(sys.argv[1] + "/*.trace.json.gz")[0]))
print(t["tprof"]["sampling"][sys.argv[2]])' "$1" "$2"
}

# One spin run: "work samples handler_ns" (samples 0 without tprof).
spin() {
	d=$tmp/spin-$1-$2
	case $1 in
	none)
		w=$("$bin/bench_host" spin $SPIN_MS | awk '{ print $4 }')
		echo "$w 0 0"
		return
		;;
	esac
	w=$(LD_PRELOAD=$lib TPROF_OUTPUT_DIR=$d TPROF_TRACE=cuda,cpu \
		TPROF_SAMPLER=$1 TPROF_SUMMARY=none \
		"$bin/bench_host" spin $SPIN_MS 2>/dev/null | awk '{ print $4 }')
	echo "$w $(sampling "$d" samples) $(sampling "$d" handler_ns)"
	rm -rf "$d"
}

r=1
while [ $r -le $ROUNDS ]; do
	for v in none timer perf; do
		spin $v $r >>"$tmp/spin-$v"
	done
	r=$((r + 1))
done
work_none=$(awk '{ print $1 }' "$tmp/spin-none" | median)
for v in timer perf; do
	work=$(awk '{ print $1 }' "$tmp/spin-$v" | median)
	smp=$(awk '{ print $2 }' "$tmp/spin-$v" | median)
	hns=$(awk '$2 > 0 { print $3 / $2 }' "$tmp/spin-$v" | median)
	if [ "$smp" = "0" ] || [ "$smp" = "nan" ]; then
		printf '  %-34s (skipped: no samples; %s refused here?)\n' \
			"CPU sample ($v)" "$v"
		continue
	fi
	loss=$(awk -v w="$work" -v n="$work_none" \
		'BEGIN { l = 1 - w / n; print (l > 0 ? l : 0) }')
	printf '  %-34s %6.1f us   (%s samples a second of CPU)\n' \
		"CPU sample ($v), in the handler" \
		"$(awk -v h="$hns" 'BEGIN { print h / 1000 }')" "$smp"
	printf '  %-34s %6.1f us   (%.1f %% of a core at the default 1000 Hz: the work a CPU loop lost)\n' \
		"CPU sample ($v), all in" \
		"$(awk -v l="$loss" -v s="$smp" 'BEGIN { print l * 1e6 / s }')" \
		"$(awk -v l="$loss" 'BEGIN { print l * 100 }')"
done

# An osrt-hooked call: tprof loaded with osrt off (every process pays
# the fast path), and osrt on with the call under the threshold.
for v in none off on; do
	: >"$tmp/lock-$v"
done
r=1
while [ $r -le $ROUNDS ]; do
	"$bin/bench_host" lock $LOCKS | awk '{ print $2 }' >>"$tmp/lock-none"
	for v in off on; do
		t=cuda
		[ $v = on ] && t=cuda,osrt
		LD_PRELOAD=$lib TPROF_OUTPUT_DIR=$tmp/lock TPROF_TRACE=$t \
			TPROF_SUMMARY=none "$bin/bench_host" lock $LOCKS \
			2>/dev/null | awk '{ print $2 }' >>"$tmp/lock-$v"
	done
	r=$((r + 1))
done
l_none=$(median <"$tmp/lock-none")
i_off="instructions: valgrind not installed"
i_on=$i_off
if sh "$(dirname "$0")/osrt_instr.sh" "$bin" "$lib" >"$tmp/oi" 2>/dev/null; then
	v() { awk -v k="$1" '$1 == k { print $2 }' "$tmp/oi"; }
	i_off=$(printf '%+.1f instructions a call, callgrind' "$(awk \
		-v a="$(v osrt_off)" -v b="$(v osrt_none)" 'BEGIN { print a - b }')")
	i_on=$(printf '%+.1f instructions a call, callgrind' "$(awk \
		-v a="$(v osrt_on)" -v b="$(v osrt_none)" 'BEGIN { print a - b }')")
fi
for v in off on; do
	l=$(median <"$tmp/lock-$v")
	[ $v = off ] && what="osrt hook, osrt off" i=$i_off ||
		what="osrt hook, on, under threshold" i=$i_on
	printf '  %-34s %+6.1f ns   (uncontended pthread_mutex_lock and unlock: %.1f ns, %.1f without tprof; %s)\n' \
		"$what" "$(awk -v a="$l" -v b="$l_none" 'BEGIN { print a - b }')" \
		"$l" "$l_none" "$i"
done

# Bytes per sample: the same run with and without cpu, each format.
for f in json perfetto; do
	for s in cuda cuda,cpu; do
		d=$tmp/bytes-$f-$s
		LD_PRELOAD=$lib TPROF_OUTPUT_DIR=$d TPROF_TRACE=$s TPROF_FORMAT=$f \
			TPROF_SUMMARY=none "$bin/bench_host" spin $SPIN_MS \
			>/dev/null 2>&1
	done
	size() {
		cat "$tmp/bytes-$f-$1"/*.gz | wc -c
	}
	n=$(python3 -c '
import glob, gzip, json, sys
t = json.load(gzip.open(glob.glob(sys.argv[1] + "/*.trace.json.gz")[0]))
print(t["tprof"]["sampling"]["samples"])' "$tmp/bytes-json-cuda,cpu" 2>/dev/null)
	[ $f = perfetto ] && n=$n_json
	n_json=$n
	printf '  %-34s %6.1f B    (gzip; %s samples, 13 frames deep)\n' \
		"trace bytes per CPU sample, $f" \
		"$(awk -v a="$(size cuda,cpu)" -v b="$(size cuda)" -v n="$n" \
		   'BEGIN { print (a - b) / n }')" "$n"
done
