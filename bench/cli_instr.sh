#!/bin/sh
# Instructions the tprof command spends on its inputs, counted by
# callgrind: the load-independent form of make bench's MB/s and ms rows
# for check, report and merge (on a shared machine those move by tens of
# percent with the load; these do not).
#
# usage: cli_instr.sh BENCH_BIN_DIR TPROF
#
# Inputs: 2 ranks of 20,000 launch events from bench_writer (about 7 MB
# of JSON each, gzipped as the library writes them) and 8 summaries of a
# synchronous job of 10,000 steps from bench/gen_summaries.py. Each command runs once
# under callgrind, the whole process counted (its start, every thread).
# Prints "check N", "report N", "merge N" (instructions per byte of
# uncompressed JSON) and "report_summaries N" (millions of instructions
# for report over the 8 summaries); exits 77 when valgrind is not
# installed.
set -u

bin=$1
cli=$2
EVENTS=20000

command -v valgrind >/dev/null 2>&1 || exit 77
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tprof-cinstr.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

die() {
	echo "cli_instr: $*" >&2
	exit 1
}

# Instructions of one command (its arguments), whole process.
count() {
	name=$1
	shift
	valgrind --tool=callgrind --callgrind-out-file="$tmp/$name.cg" \
		"$@" >"$tmp/$name.out" 2>"$tmp/$name.err" ||
		die "$name failed: $(grep -v '^==' "$tmp/$name.err" | tail -1)"
	sed -n 's/^summary: //p' "$tmp/$name.cg"
}

for r in 0 1; do
	RANK=$r WORLD_SIZE=2 "$bin/bench_writer" "$tmp/in" $EVENTS \
		>"$tmp/w$r.out" 2>"$tmp/w$r.err" ||
		die "bench_writer (rank $r) failed: $(tail -1 "$tmp/w$r.err")"
done
# the traces alone: report would read a summary beside a trace instead
rm -rf "$tmp/in/summaries"
raw=$(sed -n 's/^raw //p' "$tmp"/w*.out | awk '{ s += $1 } END { print s }')
python3 "$(dirname "$0")/gen_summaries.py" --ranks 8 --steps 10000 "$tmp/sum" \
	>/dev/null || die "gen_summaries.py failed"

c=$(count check "$cli" check "$tmp"/in/*.trace.json.gz) || exit 1
r=$(count report "$cli" report --json "$tmp/in") || exit 1
m=$(count merge "$cli" merge "$tmp/in" -o "$tmp/merged.trace.json.gz") ||
	exit 1
s=$(count summaries "$cli" report --json "$tmp/sum") || exit 1
awk -v raw="$raw" -v c="$c" -v r="$r" -v m="$m" -v s="$s" 'BEGIN {
	printf "check %.1f\nreport %.1f\nmerge %.1f\n", c / raw, r / raw, m / raw
	printf "report_summaries %.1f\n", s / 1e6
}'
