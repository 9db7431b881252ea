#!/bin/sh
# Lists, per cli/*.c file, the other cli/ files whose functions it calls
# (from nm of build/cli/*.o), and reports any cycle among them.
# Usage: scripts/cli-deps.sh [BUILD_DIR]   (run after make)
set -eu
B=${1:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for o in "$B"/cli/*.o; do
	f=$(basename "$o" .o)
	nm "$o" | awk -v f="$f" '$2 ~ /^[TDBR]$/ { print $3, f }' >>"$tmp/defs"
	nm "$o" | awk -v f="$f" '$1 == "U" { print $2, f }' >>"$tmp/uses"
done
sort -k1,1 "$tmp/defs" >"$tmp/defs.s"
sort -k1,1 "$tmp/uses" >"$tmp/uses.s"
# edge: user -> definer
join "$tmp/uses.s" "$tmp/defs.s" | awk '$2 != $3 { print $2, $3 }' |
	sort -u >"$tmp/edges"
awk '{ d[$1] = d[$1] " " $2 } END { for (f in d) print f ":" d[f] }' \
	"$tmp/edges" | sort
if tsort "$tmp/edges" >/dev/null 2>"$tmp/err"; then
	echo "no cycles among cli/ files"
	exit 0
fi
echo "cycles:"
cat "$tmp/err"
exit 1
