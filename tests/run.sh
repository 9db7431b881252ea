#!/usr/bin/env bash
# Runs every test program and adds their PASS/FAIL lines up.
# Each unit test binary and each integration script prints one line per
# check: "PASS name" or "FAIL name: why". A program that exits non-zero
# (a crash, an exception, a failed assertion) is one more FAIL, whatever
# it printed: its status is taken from the pipeline before anything else
# runs, so no later command can reset it.
#
# With arguments, runs only those commands (each a path to an executable
# or a .py script): tests/runner/test_runner.sh uses that to test the
# runner itself.
set -u
cd "$(dirname "$0")/.."

log=$(mktemp)
times=$(mktemp)
trap 'rm -f "$log" "$times"' EXIT

now_ms() {
	date +%s%3N
}

run() {
	local name=$1 rc t0
	shift
	echo "== $name"
	t0=$(now_ms)
	"$@" 2>&1 | tee -a "$log" | grep -v '^PASS '
	rc=${PIPESTATUS[0]}
	echo "$(( $(now_ms) - t0 )) $name" >>"$times"
	if [ "$rc" -ne 0 ]; then
		echo "FAIL $name: exited with status $rc" | tee -a "$log"
	fi
}

run_path() {
	case $1 in
	*.py) run "$(basename "$1")" python3 "$1" ;;
	*) run "$(basename "$1")" "$1" ;;
	esac
}

if [ $# -gt 0 ]; then
	for t in "$@"; do
		run_path "$t"
	done
else
	for t in "${TPROF_TEST_BUILD:-build}"/tests/unit/test_*; do
		[ -x "$t" ] || continue
		run_path "$t"
	done
	for t in tests/integration/test_*.py; do
		run_path "$t"
	done
	# The runner counts a script that fails without saying so.
	run test_runner.sh tests/runner/test_runner.sh
	# The GPU suite's checkers, against synthetic traces (no GPU needed).
	run gpu-selftest python3 tests/gpu/selftest.py
fi

passed=$(grep -c '^PASS ' "$log")
failed=$(grep -c '^FAIL ' "$log")
# "SKIP name: why": a check this build cannot make (a sanitizer's).
skipped=$(grep -c '^SKIP ' "$log")
echo
# Where the time went, so a slow test is seen before it slows everyone.
echo "slowest (s):" $(sort -rn "$times" | head -5 |
	awk '{ printf "%s %.1f,", $2, $1 / 1000 }' | sed 's/,$//')
grep '^FAIL ' "$log"
if [ "$skipped" -gt 0 ]; then
	grep '^SKIP ' "$log"
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]
