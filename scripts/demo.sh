#!/usr/bin/env bash
# make demo: build the example, run it under tprof-run, and end with what
# `tprof report` says of the run and where the HTML report and the trace
# are. B: the build directory (make's, default build); TPROF_DEMO_DIR:
# where the traces go (default demo-traces).
set -eu
cd "$(dirname "$0")/.."
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
b=${B:-build}
out=${TPROF_DEMO_DIR:-demo-traces}
export TPROF_LIB="$(cd "$b" && pwd)/libtprof.so"

mkdir -p "$b/examples"
if [ ! "$b/examples/vector_add" -nt examples/vector_add.cu ]; then
	"$CUDA_HOME/bin/nvcc" -cudart shared -o "$b/examples/vector_add" \
		examples/vector_add.cu
fi
rm -rf "$out"
# --no-report: the report comes below, after the check
echo "\$ scripts/tprof-run --no-report -o $out -n demo -- $b/examples/vector_add"
scripts/tprof-run --no-report -o "$out" -n demo -- "$b/examples/vector_add"
trace="$out/demo-rank0.trace.json.gz"
html="$out/report.html"
echo
echo "\$ $b/tprof check $trace"
"$b/tprof" check "$trace"
echo
echo "\$ $b/tprof report --html $html $out"
"$b/tprof" report --html "$html" "$out"
echo
echo "The report: $html (open it in a browser)"
echo "The trace:  $trace (https://ui.perfetto.dev, 'Open trace file')"
