#!/usr/bin/env bash
# Runs every test program and adds their PASS/FAIL lines up.
# Each unit test binary and each integration script prints one line per
# check: "PASS name" or "FAIL name: why".
set -u
cd "$(dirname "$0")/.."

log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0

run() {
	local name=$1; shift
	echo "== $name"
	"$@" 2>&1 | tee -a "$log" | grep -v '^PASS ' || true
	if [ "${PIPESTATUS[0]}" -ne 0 ] && ! grep -q '^FAIL ' "$log"; then
		echo "FAIL $name: exited non-zero without a FAIL line" | tee -a "$log"
	fi
}

for t in build/tests/unit/test_*; do
	[ -x "$t" ] || continue
	run "$(basename "$t")" "$t"
done
for t in tests/integration/test_*.py; do
	run "$(basename "$t")" python3 "$t"
done
# The GPU suite's checkers, against synthetic traces (no GPU needed).
run gpu-selftest python3 tests/gpu/selftest.py

passed=$(grep -c '^PASS ' "$log")
failed=$(grep -c '^FAIL ' "$log")
echo
grep '^FAIL ' "$log" || true
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] || status=1
exit $status
