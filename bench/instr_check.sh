#!/bin/sh
# The instruction budgets (bench/instr_budgets) against this build: the
# hooked call, recorded, dropped and outside any window
# (bench/hook_instr.sh), the osrt hooks, the writer per event
# (bench/writer_instr.sh), the tprof command per byte of JSON
# (bench/cli_instr.sh) and, with INSTR_PYRANGE=1, tprof.range from
# Python and from C (bench/pyrange_instr.sh). One "PASS name", "FAIL name:
# why" or "SKIP name: why" line per budget, as the tests print them;
# exits 1 when one is exceeded. Without valgrind every line is a SKIP.
#
# usage: instr_check.sh BENCH_BIN_DIR LIBTPROF
set -u

here=$(dirname "$0")
bin=$1
lib=$2
budgets=$here/instr_budgets
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tprof-icheck.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
failed=0

budget() {
	sed -n "s/^$1[ 	]\{1,\}\([0-9.]*\).*/\1/p" "$budgets"
}

# verdict NAME FIGURE BUDGET TEXT: PASS when FIGURE <= BUDGET.
verdict() {
	if awk -v f="$2" -v b="$3" 'BEGIN { exit !(f <= b) }'; then
		echo "PASS instr: $1 $4 (budget $3)"
	else
		echo "FAIL instr: $1 $4, over its budget of $3" \
			"(bench/instr_budgets; see docs/design/benchmarks.md)"
		failed=1
	fi
}

if ! command -v valgrind >/dev/null 2>&1; then
	for n in hook_recorded hook_dropped hook_paused osrt_off osrt_on writer cli; do
		echo "SKIP instr: $n: valgrind is not installed" \
			"(apt-get install valgrind): instruction budgets not checked"
	done
	exit 0
fi

if sh "$here/hook_instr.sh" "$bin" "$lib" >"$tmp/hook" 2>&1; then
	v() { sed -n "s/^$1 //p" "$tmp/hook"; }
	rec=$(awk -v a="$(v recorded)" -v b="$(v none)" \
		'BEGIN { printf "%.1f", a - b }')
	drop=$(awk -v a="$(v dropped)" -v b="$(v none)" \
		'BEGIN { printf "%.1f", a - b }')
	verdict hook_recorded "$rec" "$(budget hook_recorded)" \
		"+$rec instructions per recorded call"
	verdict hook_dropped "$drop" "$(budget hook_dropped)" \
		"+$drop instructions per dropped call"
	paused=$(awk -v a="$(v paused)" -v b="$(v none)" \
		'BEGIN { printf "%.1f", a - b }')
	verdict hook_paused "$paused" "$(budget hook_paused)" \
		"+$paused instructions per call outside any window"
	if [ -n "$(v osrt_none)" ]; then
		off=$(awk -v a="$(v osrt_off)" -v b="$(v osrt_none)" \
			'BEGIN { printf "%.1f", a - b }')
		on=$(awk -v a="$(v osrt_on)" -v b="$(v osrt_none)" \
			'BEGIN { printf "%.1f", a - b }')
		verdict osrt_off "$off" "$(budget osrt_off)" \
			"+$off instructions per C library call, osrt off"
		verdict osrt_on "$on" "$(budget osrt_on)" \
			"+$on instructions per C library call under the threshold"
	else
		echo "FAIL instr: osrt: hook_instr.sh gave no osrt rows"
		failed=1
	fi
	# A dropped call does less than a recorded one.
	if awk -v d="$drop" -v r="$rec" 'BEGIN { exit !(d < r) }'; then
		echo "PASS instr: hook_dropped below recorded (+$drop vs +$rec)"
	else
		echo "FAIL instr: hook_dropped below recorded: a dropped call" \
			"costs +$drop, a recorded one +$rec"
		failed=1
	fi
else
	echo "FAIL instr: hook_instr.sh failed: $(head -1 "$tmp/hook")"
	failed=1
fi

if sh "$here/writer_instr.sh" "$bin" >"$tmp/writer" 2>"$tmp/writer.err"; then
	for n in json_isal json_zlib perfetto_isal perfetto_zlib; do
		line=$(grep "^$n " "$tmp/writer")
		if [ -z "$line" ]; then
			echo "SKIP instr: writer_$n: no libisal.so.2 here (or a" \
				"build without ISA-L): not measured"
			continue
		fi
		set -- $line
		verdict "writer_$n" "$2" "$(budget "writer_$n")" \
			"$2 instructions per event, $3 gzip bytes per event"
	done
else
	echo "FAIL instr: writer_instr.sh failed: $(head -1 "$tmp/writer.err")"
	failed=1
fi
# The command's figures: instructions per byte of JSON and for the
# summaries (bench/cli_instr.sh).
cli=$(dirname "$lib")/tprof
if [ ! -x "$cli" ]; then
	echo "SKIP instr: cli: $cli not built"
elif sh "$here/cli_instr.sh" "$bin" "$cli" >"$tmp/cli" 2>"$tmp/cli.err"; then
	for n in check report merge report_summaries; do
		f=$(sed -n "s/^$n //p" "$tmp/cli")
		unit="instructions per byte of JSON"
		[ $n = report_summaries ] &&
			unit="M instructions for 8 summaries of 10,000 steps"
		verdict "cli_$n" "$f" "$(budget "cli_$n")" "$f $unit"
	done
else
	echo "FAIL instr: cli_instr.sh failed: $(head -1 "$tmp/cli.err")"
	failed=1
fi
# tprof.range from Python and push+pop from C (bench/pyrange_instr.sh,
# 30 s of callgrind over four interpreters): make bench-instr only
# (INSTR_PYRANGE=1), not make test.
if [ "${INSTR_PYRANGE:-0}" = 1 ]; then
	if sh "$here/pyrange_instr.sh" "$bin" "$lib" >"$tmp/py" \
		2>"$tmp/py.err"; then
		impl=$(sed -n 's/^impl //p' "$tmp/py")
		py=$(sed -n 's/^py //p' "$tmp/py")
		c=$(sed -n 's/^c //p' "$tmp/py")
		if [ "$impl" = c ]; then
			verdict pyrange_py "$py" "$(budget pyrange_py)" \
				"$py instructions per tprof.range enter+exit (C extension)"
		else
			echo "SKIP instr: pyrange_py: the C extension was not" \
				"used ($impl): make pyext, python3-dev"
		fi
		verdict pyrange_c "$c" "$(budget pyrange_c)" \
			"$c instructions per tprof_range_push+pop from C"
	else
		echo "FAIL instr: pyrange_instr.sh failed: $(head -1 "$tmp/py.err")"
		failed=1
	fi
fi
exit $failed
