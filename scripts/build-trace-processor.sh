#!/bin/bash
# Builds Perfetto's trace_processor_shell from a Perfetto git repository
# with Debian 12's libraries, for tests/optional/test_trace_processor.py
# (`make test-trace-processor`). Nothing is downloaded but Debian's
# packages: Perfetto's tools/install-build-deps fetches its third-party
# sources from the internet, so this build uses the system's protobuf,
# sqlite, zlib and jsoncpp instead (Perfetto's GN args for distribution
# builds), and leaves out what needs other sources (linenoise, httpd,
# percentile, LLVM demangling).
#
#   scripts/build-trace-processor.sh PERFETTO_GIT_DIR [TAG]
#
# TAG defaults to v43.0 (2024-03): the last Perfetto whose pinned
# protobuf is 3.21.12, Debian 12's (later tags need protobuf 22+ and
# abseil). It reads every TrackEvent feature tprof writes (interning,
# incremental state, sequence-scoped incremental clocks, clock
# snapshots, track descriptors, flow ids, debug annotations). The shell
# is left in build-tp/trace_processor_shell; about 20 minutes on 2 cores.
set -euo pipefail

git_dir=${1:?usage: $0 PERFETTO_GIT_DIR [TAG]}
tag=${2:-v43.0}
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/build-tp
src=$out/src

if [ "$(id -u)" = 0 ]; then
	apt-get update -qq
	apt-get install -y -qq generate-ninja ninja-build libprotobuf-dev \
		libprotoc-dev protobuf-compiler libsqlite3-dev zlib1g-dev \
		libjsoncpp-dev >/dev/null
fi

. "$root/scripts/git-extract.sh"
git_extract "$git_dir" "$tag" "$src"

# jsoncpp from the system: its headers and library, not buildtools/.
python3 - "$src/buildtools/BUILD.gn" <<'EOF'
import sys
p = sys.argv[1]
s = open(p).read()
s = s.replace('rebase_path("jsoncpp/include", root_build_dir)',
              '"/usr/include/jsoncpp"')
s = s.replace('''  sources = [
    "jsoncpp/src/lib_json/json_reader.cpp",
    "jsoncpp/src/lib_json/json_value.cpp",
    "jsoncpp/src/lib_json/json_writer.cpp",
  ]
''', '  libs = [ "jsoncpp" ]\n')
open(p, "w").write(s)
EOF

# Without linenoise the shell reads lines into new char[] held by a
# unique_ptr<char>, which GCC 12 refuses under -Werror
# (mismatched-new-delete): the array form.
sed -i 's/^using ScopedLine = std::unique_ptr<char>;$/using ScopedLine = std::unique_ptr<char[]>;/' \
	"$src/src/trace_processor/trace_processor_shell.cc"

mkdir -p "$src/out/tp"
cat >"$src/out/tp/args.gn" <<'EOF'
is_debug = false
is_clang = false
use_custom_libcxx = false
perfetto_use_system_protobuf = true
perfetto_use_system_sqlite = true
perfetto_use_system_zlib = true
skip_buildtools_check = true
enable_perfetto_trace_processor_linenoise = false
enable_perfetto_trace_processor_httpd = false
enable_perfetto_trace_processor_percentile = false
enable_perfetto_trace_processor_json = true
enable_perfetto_llvm_demangle = false
enable_perfetto_fuzzers = false
enable_perfetto_heapprofd = false
enable_perfetto_traced_perf = false
enable_perfetto_stderr_crash_dump = false
# No debug info: a 9 MB binary instead of 200 MB.
extra_cflags = "-g0"
EOF
(cd "$src" && gn gen out/tp &&
	nice -n 10 ninja -C out/tp trace_processor_shell)
cp "$src/out/tp/trace_processor_shell" "$out/trace_processor_shell"
echo "built $out/trace_processor_shell ($tag)"
