#!/bin/bash
# Builds Perfetto v58.2's trace_processor_shell (the current release,
# 2026-08) on Debian 12 for tests/optional/test_trace_processor.py
# (`TRACE_PROCESSOR=build-tp58/trace_processor_shell make
# test-trace-processor`). v58 needs protobuf 22+ and abseil, which Debian
# 12 lacks: their sources, at the commits Perfetto's
# tools/install-build-deps pins, go into buildtools/ and Perfetto's own GN
# build compiles them; sqlite and zlib are Debian's, as is gn. Nothing is
# downloaded but Debian's packages: give git repositories (bare or not)
# of Perfetto, protobuf and abseil-cpp that hold those commits.
#
#   scripts/build-trace-processor-v58.sh PERFETTO_GIT PROTOBUF_GIT ABSEIL_GIT
#
# One patch: v58.2 refuses sqlite before 3.41.2 at compile time, for an
# sqlite3_error_offset bug that AsTracebackForSqliteOffset() already
# clamps; Debian 12 has 3.40.1. Perfetto is otherwise unchanged (v58.2
# aborts on a debug annotation whose legacy JSON is a bare null: tprof no
# longer writes one, and the test must see that). The shell is left in
# build-tp58/trace_processor_shell; about 30 minutes on 2 cores.
set -euo pipefail

usage="usage: $0 PERFETTO_GIT PROTOBUF_GIT ABSEIL_GIT"
perfetto=${1:?$usage}
protobuf=${2:?$usage}
abseil=${3:?$usage}
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/build-tp58
src=$out/src

if [ "$(id -u)" = 0 ]; then
	apt-get update -qq
	apt-get install -y -qq generate-ninja ninja-build libsqlite3-dev \
		zlib1g-dev >/dev/null
fi

. "$root/scripts/git-extract.sh"
git_extract "$perfetto" v58.2 "$src"
# tools/install-build-deps at v58.2: protobuf v31.1, abseil 20250512.1.
git_extract "$protobuf" 74211c0dfc2777318ab53c2cd2c317a2ef9012de \
	"$src/buildtools/protobuf"
git_extract "$abseil" 76bb24329e8bf5f39704eb10d21b9a80befa7c81 \
	"$src/buildtools/abseil-cpp"

cd "$src"
sed -i 's|^#error "SQLite version is too old."$|// sqlite 3.40: the offset is clamped (AsTracebackForSqliteOffset)|' \
	src/trace_processor/sqlite/sql_source.cc

mkdir -p out/tp
cat >out/tp/args.gn <<'GN'
is_debug = false
is_clang = false
use_custom_libcxx = false
perfetto_use_system_sqlite = true
perfetto_use_system_zlib = true
skip_buildtools_check = true
enable_perfetto_trace_processor_linenoise = false
enable_perfetto_trace_processor_httpd = false
enable_perfetto_trace_processor_percentile = false
enable_perfetto_trace_processor_mac_instruments = false
enable_perfetto_llvm_demangle = false
enable_perfetto_etm_importer = false
enable_perfetto_zstd = false
enable_perfetto_re2 = false
enable_perfetto_fuzzers = false
enable_perfetto_heapprofd = false
enable_perfetto_traced_perf = false
enable_perfetto_stderr_crash_dump = false
extra_cflags = "-g0"
GN
gn gen out/tp
[ -n "${TP_GEN_ONLY:-}" ] && exit 0
ninja -C out/tp trace_processor_shell
cp out/tp/trace_processor_shell "$out/trace_processor_shell"
"$out/trace_processor_shell" --version
