#!/usr/bin/env bash
# make demo: build the example, run it under tprof-run, show the result.
set -eu
cd "$(dirname "$0")/.."
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
out=${TPROF_DEMO_DIR:-demo-traces}

mkdir -p build/examples
"$CUDA_HOME/bin/nvcc" -cudart shared -o build/examples/vector_add examples/vector_add.cu
rm -rf "$out"
echo "\$ scripts/tprof-run -o $out -n demo -- build/examples/vector_add"
scripts/tprof-run -o "$out" -n demo -- build/examples/vector_add
trace="$out/demo-rank0.trace.json.gz"
echo
build/tprof check "$trace"
echo
echo "Trace: $trace"
echo "Open it: https://ui.perfetto.dev -> 'Open trace file' (or chrome://tracing),"
echo "or look inside: zcat $trace | head"
