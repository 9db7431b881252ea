#!/bin/sh
# tprof report at scale: RANKS generated summaries (bench/gen_summaries.py:
# a synchronous job, one rank with a slower GPU, one data-loader-bound),
# then the report as Markdown, JSON and HTML, each RUNS times: the
# median wall time, the largest peak memory, the output's size, and
# whether the findings name both ranks. One table; a missed target is
# flagged, never an error.
#
# usage: bench_report.sh TPROF_CLI [WORKDIR]
set -u

cli=$1
work=${2:-${TMPDIR:-/tmp}/tprof-bench-report}
RANKS=${RANKS:-4096}
RUNS=${RUNS:-3}
# Targets: seconds to render, MB of peak memory, MB of HTML.
TARGET_S=5
TARGET_MB=200
TARGET_HTML_MB=2

here=$(cd "$(dirname "$0")" && pwd)
dir=$work/ranks-$RANKS
if [ ! -f "$dir/job-rank$((RANKS - 1)).summary.json" ]; then
	rm -rf "$dir"
	python3 "$here/gen_summaries.py" --ranks "$RANKS" "$dir" || exit 1
fi
slow=$((RANKS / 3))
loader=$((2 * RANKS / 3))

# One run: "seconds kilobytes" of GNU time's %e %M.
one() {
	/usr/bin/time -f "%e %M" -o "$work/time" "$cli" report "$@" "$dir" \
		>"$work/out" 2>"$work/err" || { cat "$work/err" >&2; return 1; }
	cat "$work/time"
}

printf '%-10s %10s %12s %12s  %s\n' "report" "seconds" "peak MB" "output" \
	"first findings"
for mode in md json html; do
	case $mode in
	md) args= out=$work/out ;;
	json) args=--json out=$work/out ;;
	html) args="-o $work/report.html" out=$work/report.html ;;
	esac
	: >"$work/runs"
	i=0
	while [ $i -lt "$RUNS" ]; do
		# shellcheck disable=SC2086
		one $args >>"$work/runs" || exit 1
		i=$((i + 1))
	done
	secs=$(sort -n "$work/runs" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
	mb=$(awk '$2 > m {m = $2} END {printf "%.0f", m / 1024}' "$work/runs")
	size=$(wc -c <"$out")
	if [ "$mode" = json ]; then
		found=$(python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print(' '.join('%s:%s' % (f['kind'], f['who']['ranks'][0]) for f in j['findings'][:2]))" "$out")
	else
		found=$("$cli" report --json "$dir" | python3 -c "import json,sys; j=json.load(sys.stdin); print(' '.join('%s:%s' % (f['kind'], f['who']['ranks'][0]) for f in j['findings'][:2]))")
	fi
	flag=
	awk -v s="$secs" -v t=$TARGET_S 'BEGIN {exit !(s > t)}' && flag="$flag slow"
	[ "$mb" -gt $TARGET_MB ] && flag="$flag memory"
	[ "$mode" = html ] && [ "$size" -gt $((TARGET_HTML_MB << 20)) ] && \
		flag="$flag size"
	case " $found " in
	*"slow_gpu:$slow "*"host_bound:$loader "*|*"host_bound:$loader "*"slow_gpu:$slow "*) ;;
	*) flag="$flag findings" ;;
	esac
	printf '%-10s %10s %12s %12s  %s%s\n' "$mode" "$secs" "$mb" "$size" \
		"$found" "${flag:+  MISSED:$flag}"
done
echo "($RANKS ranks of $(du -sh "$dir" | cut -f1) of summaries; targets: " \
	"${TARGET_S} s, ${TARGET_MB} MB peak, ${TARGET_HTML_MB} MB of HTML)"
