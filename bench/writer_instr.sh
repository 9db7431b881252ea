#!/bin/sh
# Instructions the writer spends per event, counted by callgrind: its
# whole path (drain the ring, make the typed event, feed the summary,
# encode, compress, write), which wall-clock figures on a shared machine
# cannot show to a few percent.
#
# usage: writer_instr.sh BENCH_BIN_DIR [EVENTS]
#
# Runs bench_writer (the launch events of make bench's writer row) under
# callgrind four times, counting only inside tp_writer_open,
# tp_writer_drain and tp_writer_finish: the JSON and the Perfetto trace,
# each with ISA-L (when libisal.so.2 is there) and with zlib alone, at
# the default gzip level. Prints "<format>_<compressor> <instr/event>
# <gzip bytes/event>" per run, e.g. "json_isal 3232.1 16.03"; a
# compressor that is not there is left out. Exits 77 when valgrind is
# not installed.
set -u

bin=$1
events=${2:-50000}

command -v valgrind >/dev/null 2>&1 || exit 77
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tprof-winstr.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# One run: FORMAT, CODEC ("" = what it finds, or "zlib").
run() {
	out=$tmp/$1-$2
	mkdir -p "$out"
	TPROF_FORMAT=$1 TPROF_GZIP_LEVEL=1 \
	valgrind --tool=callgrind --collect-atstart=no \
		--toggle-collect=tp_writer_open \
		--toggle-collect=tp_writer_drain \
		--toggle-collect=tp_writer_finish \
		--callgrind-out-file="$out.cg" \
		"$bin/bench_writer" "$out" "$events" $2 \
		>"$out.out" 2>"$out.err" || {
		echo "writer_instr: bench_writer $1 $2 failed:" \
			"$(tail -1 "$out.err")" >&2
		return 1
	}
	awk -v ir="$(sed -n 's/^summary: //p' "$out.cg")" -v f=$1 '
		{ v[$1] = $2 }
		END {
			if (!v["events"] || v["dropped"] || ir == "") exit 1
			c = v["compressor"] == "isa-l" ? "isal" : v["compressor"]
			printf "%s_%s %.1f %.2f\n", f, c, ir / v["events"],
				v["file"] / v["events"]
		}' "$out.out"
}

for f in json perfetto; do
	a=$(run $f "") || exit 1
	echo "$a"
	# Without ISA-L the first run was zlib already.
	case $a in *_zlib*) continue ;; esac
	run $f zlib || exit 1
done
