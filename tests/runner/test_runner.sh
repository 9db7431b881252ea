#!/usr/bin/env bash
# tests/run.sh must count every program that exits non-zero, including
# one that printed only PASS lines and one that crashed after a FAIL
# line printed by the same program.
set -u
cd "$(dirname "$0")/../.."
d=tests/runner
out=$(tests/run.sh $d/ok.sh $d/silent_fail.sh $d/crash.sh $d/ok.sh 2>&1)
rc=$?
status=0
expect() {
	if [ "$2" = "$3" ]; then
		echo "PASS runner: $1"
	else
		echo "FAIL runner: $1: got '$2', want '$3'"
		status=1
	fi
}
expect "totals with a silent failure and a crash" \
	"$(printf '%s\n' "$out" | tail -n 1)" "3 passed, 3 failed"
expect "exit status" "$rc" 1
expect "the silent failure is named" \
	"$(printf '%s\n' "$out" | grep -c '^FAIL silent_fail.sh: exited with status 3$')" 2
expect "the crash is named" \
	"$(printf '%s\n' "$out" | grep -c '^FAIL crash.sh: exited with status 139$')" 2
out=$(tests/run.sh $d/ok.sh 2>&1)
expect "all passing exits 0" "$?" 0
exit $status
