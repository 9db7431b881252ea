#!/bin/sh
# How fast Perfetto's trace_processor imports tprof's Perfetto trace,
# against the JSON trace of the same workload: the CPU time (user + sys)
# of `trace_processor_shell -q QUERY TRACE` on each, interleaved rounds,
# the median of each and their ratio.
#
# usage: tp_import.sh BENCH_BIN_DIR LIBTPROF TRACE_PROCESSOR [CALLS] [ROUNDS]
#
# The workload is bench_calls' (a launch, a copy and a sync, each with
# its args, on one thread, no GPU): CALLS hooked calls (default 1048576,
# the size users measured), traced once with TPROF_FORMAT=json and once
# with TPROF_FORMAT=perfetto. Both traces hold the same calls with the
# same names and args; only the times differ. Prints "key value" lines:
# json_cpu_s, pf_cpu_s (medians), ratio (JSON / Perfetto), json_bytes,
# pf_bytes, json_slices, pf_slices (what the importer found), load (the
# load average when the rounds ended).
set -u

bin=$1
lib=$2
tp=$3
calls=${4:-1048576}
rounds=${5:-3}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tprof-tpimport.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM HUP

die() {
	echo "tp_import: $*" >&2
	exit 1
}

median() {
	sort -g | awk '{ v[NR] = $1 }
		END {
			if (!NR) { print "nan"; exit }
			m = int((NR + 1) / 2)
			print (NR % 2) ? v[m] : (v[m] + v[m + 1]) / 2
		}'
}

[ -x "$tp" ] || die "$tp: not an executable trace_processor_shell"
[ -x /usr/bin/time ] || die "/usr/bin/time (GNU time) is needed"

# bench_calls makes CHUNK * (FRESH + WARM) calls; 4 chunks, a pause
# after each so that the writer drains it and nothing is dropped.
chunk=$((calls / 4))
for f in json perfetto; do
	LD_PRELOAD=$lib TPROF_OUTPUT_DIR=$tmp/$f TPROF_FORMAT=$f \
	TPROF_BUFFER_MB=64 TPROF_SUMMARY=none TPROF_LOG=quiet \
		"$bin/bench_calls" $chunk 2 2 100 >/dev/null 2>"$tmp/$f.err" ||
		die "bench_calls ($f) failed: $(cat "$tmp/$f.err")"
done
jt=$(ls "$tmp"/json/*.trace.json.gz 2>/dev/null | head -1)
pt=$(ls "$tmp"/perfetto/*.pftrace.gz 2>/dev/null | head -1)
[ -n "$jt" ] && [ -n "$pt" ] || die "a trace is missing"

echo "select count(*) from slice;" >"$tmp/q.sql"
# One import: its CPU seconds on stdout; the slice count kept aside.
import() {
	/usr/bin/time -f 'cpu %U %S' -o "$tmp/time" \
		"$tp" -q "$tmp/q.sql" "$2" >"$tmp/$1.q" 2>"$tmp/$1.qerr" ||
		die "trace_processor_shell failed on $2: $(tail -3 "$tmp/$1.qerr")"
	awk '$1 == "cpu" { print $2 + $3 }' "$tmp/time"
}
i=1
while [ $i -le "$rounds" ]; do
	import json "$jt" >>"$tmp/json.cpu"
	import pf "$pt" >>"$tmp/pf.cpu"
	i=$((i + 1))
done
j=$(median <"$tmp/json.cpu")
p=$(median <"$tmp/pf.cpu")
echo "json_cpu_s $j"
echo "pf_cpu_s $p"
awk -v j="$j" -v p="$p" 'BEGIN { printf "ratio %.2f\n", (p > 0 ? j / p : 0) }'
echo "json_bytes $(wc -c <"$jt")"
echo "pf_bytes $(wc -c <"$pt")"
echo "json_slices $(tail -1 "$tmp/json.q")"
echo "pf_slices $(tail -1 "$tmp/pf.q")"
echo "load $(cut -d' ' -f1 /proc/loadavg)"
