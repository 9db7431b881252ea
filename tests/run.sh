#!/usr/bin/env bash
# Runs every test program and adds their PASS/FAIL lines up.
# Each unit test binary and each integration script prints one line per
# check: "PASS name" or "FAIL name: why". A program that exits non-zero
# (a crash, an exception, a failed assertion) is one more FAIL, whatever
# it printed: its status is taken before anything else runs, so no later
# command can reset it.
#
# The programs run TPROF_TEST_JOBS at a time (default: the number of
# CPUs), the slowest first; each one's output is printed whole when it
# ends, so lines of two programs never interleave. TPROF_TEST_JOBS=1
# runs them one after the other.
#
# With arguments, runs only those commands (each a path to an executable
# or a .py script): tests/runner/test_runner.sh uses that to test the
# runner itself.
set -u
cd "$(dirname "$0")/.."

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
log=$work/log
times=$work/times
: >"$log"
: >"$times"
jobs=${TPROF_TEST_JOBS:-$(nproc 2>/dev/null || echo 2)}

now_ms() {
	date +%s%3N
}

# One program, its output kept in $work/N.out and its status in N.rc.
run_one() {
	local n=$1 name=$2 path=$3 t0 rc
	t0=$(now_ms)
	case $path in
	*.py) python3 "$path" >"$work/$n.out" 2>&1 </dev/null ;;
	*) "$path" >"$work/$n.out" 2>&1 </dev/null ;;
	esac
	rc=$?
	echo "$(( $(now_ms) - t0 )) $name" >"$work/$n.ms"
	echo "$rc" >"$work/$n.rc"
}

# What one program said: its lines but the passes, and a FAIL line for
# a non-zero exit.
report() {
	local n=$1 name=$2 rc
	rc=$(cat "$work/$n.rc")
	echo "== $name ($(grep -c '^PASS ' "$work/$n.out") passed," \
		"$(awk '{ printf "%.1f", $1 / 1000 }' "$work/$n.ms") s)"
	cat "$work/$n.out" >>"$log"
	grep -v '^PASS ' "$work/$n.out"
	cat "$work/$n.ms" >>"$times"
	if [ "$rc" -ne 0 ]; then
		echo "FAIL $name: exited with status $rc" | tee -a "$log"
	fi
}

names=()
cmds=()
add() {
	names+=("$(basename "$1")")
	cmds+=("$1")
}

# Programs known to take longest start first, so the last one to end is
# not a long one started late.
SLOW="test_robust.py test_crash.py test_gpu_truth.py test_ringfile.py
test_gpu_versions.py test_flight.py test_pftrace_flight.py"

if [ $# -gt 0 ]; then
	for t in "$@"; do
		add "$t"
	done
else
	for s in $SLOW; do
		[ -f "tests/integration/$s" ] && add "tests/integration/$s"
	done
	for t in tests/integration/test_*.py; do
		case " $(echo $SLOW) " in
		*" $(basename "$t") "*) continue ;;
		esac
		add "$t"
	done
	for t in "${TPROF_TEST_BUILD:-build}"/tests/unit/test_*; do
		[ -x "$t" ] || continue
		add "$t"
	done
	# The runner counts a script that fails without saying so.
	add tests/runner/test_runner.sh
	# The GPU suite's checkers, against synthetic traces (no GPU needed).
	add tests/gpu/selftest.py
fi

declare -A running=()
next=0
total=${#cmds[@]}
t_start=$(now_ms)
while [ "$next" -lt "$total" ] || [ ${#running[@]} -gt 0 ]; do
	while [ "$next" -lt "$total" ] && [ ${#running[@]} -lt "$jobs" ]; do
		run_one "$next" "${names[$next]}" "${cmds[$next]}" &
		running[$!]=$next
		next=$((next + 1))
	done
	wait -n 2>/dev/null
	for pid in "${!running[@]}"; do
		n=${running[$pid]}
		[ -f "$work/$n.rc" ] || continue
		wait "$pid" 2>/dev/null
		report "$n" "${names[$n]}"
		unset "running[$pid]"
	done
done

passed=$(grep -c '^PASS ' "$log")
failed=$(grep -c '^FAIL ' "$log")
# "SKIP name: why": a check this build cannot make (a sanitizer's).
skipped=$(grep -c '^SKIP ' "$log")
echo
# Where the time went, so a slow test is seen before it slows everyone.
echo "$total programs, $jobs at a time, in $(( ($(now_ms) - t_start) / 1000 )) s;" \
	"slowest (s):" $(sort -rn "$times" | head -5 |
	awk '{ printf "%s %.1f,", $2, $1 / 1000 }' | sed 's/,$//')
grep '^FAIL ' "$log"
if [ "$skipped" -gt 0 ]; then
	grep '^SKIP ' "$log"
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]
