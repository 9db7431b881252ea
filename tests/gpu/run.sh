#!/usr/bin/env bash
# GPU validation suite for tprof; see docs/gpu-validation.md.
#   tests/gpu/run.sh --build-only   build build/ (library, CLI, build/gpu/*)
#   tests/gpu/run.sh [RESULT_DIR [CHECK...]]
#                                   run the checks (default: all, into gpu-results)
# Exit: 0 all run checks passed, 1 a check failed, 3 every check skipped.
set -u
cd "$(dirname "$0")/../.." || exit 2
ROOT=$PWD
GPU=$ROOT/build/gpu
LIB=$ROOT/build/libtprof.so
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
NVCC=${NVCC:-$(command -v nvcc || echo "$CUDA_HOME/bin/nvcc")}
NVFLAGS="-O2 -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90"
TC() { python3 "$ROOT/tests/gpu/tracecheck.py" "$@"; }
have() { command -v "$1" >/dev/null 2>&1; }

# build: make the library and CLI, then each CUDA program with the shared
# and the static cudart. A failed compile keeps the previous binary. The
# toolkit's libcudart and libcupti go next to the programs (found through
# $ORIGIN and, for libtprof's CUPTI loader, LD_LIBRARY_PATH): the GPU
# machine may have only the driver.
build() {
	local ok=0 p
	if [ "${1:-}" = always ] || [ ! -f "$LIB" ] || [ ! -x build/tprof ]; then
		make -j2 all || ok=1
	fi
	mkdir -p "$GPU"
	cp -a "$CUDA_HOME"/lib64/libcudart.so.[0-9]* "$CUDA_HOME"/lib64/libcupti.so.[0-9]* "$GPU/" || ok=1
	# The simulation's programs run on a real GPU too (simNextKernelDuration
	# is then absent: the kernels take what they take, or spin for it).
	for p in two_threads exit_inflight graph churn; do
		nv shared "tests/sim/progs/$p.cu" "truth_$p" || ok=1
	done
	for p in known_work:shared known_work:static empty_launch:shared; do
		nv "${p#*:}" "tests/gpu/progs/${p%:*}.cu" "${p%:*}_${p#*:}" || ok=1
	done
	# make gpu-check's own programs (tests/gpu/gpucheck.py).
	for p in pdl_pair event_timing; do
		nv shared "tests/gpu/progs/$p.cu" "$p" || ok=1
	done
	return $ok
}

# nv RUNTIME SOURCE NAME: build/gpu/NAME for sm_90, with the shared or
# static cudart; a failed compile keeps the previous binary.
nv() {
	echo "nvcc -cudart $1 $2 -> build/gpu/$3"
	# shellcheck disable=SC2086,SC2016
	if "$NVCC" $NVFLAGS -cudart "$1" -Xlinker -rpath='$ORIGIN' -Itests/sim/progs \
		-o "$GPU/$3.new" "$2" -ldl -lpthread; then
		mv -f "$GPU/$3.new" "$GPU/$3"
	else
		rm -f "$GPU/$3.new"
		return 1
	fi
}

if [ "${1:-}" = --build-only ]; then
	build && echo "built: build/libtprof.so build/tprof build/gpu/*" && exit 0
	echo "tests/gpu/run.sh: build failed" >&2
	exit 1
fi
ALL="native native_static gpu_truth torch_vs_profiler torch_libs torch_steps torch_stacks overhead_torch overhead_native"
usage() {
	echo "usage: tests/gpu/run.sh --build-only | [RESULT_DIR [CHECK...]]; checks: $ALL" >&2
	exit 2
}
RES=${1:-gpu-results}
case "$RES" in -*) usage ;; esac
[ $# -gt 0 ] && shift
for c in "$@"; do
	case " $ALL " in *" $c "*) ;; *) usage ;; esac
done
CHECKS=${*:-$ALL}
mkdir -p "$RES" && RES=$(cd "$RES" && pwd) || exit 2
# The runs below set their own TPROF_* variables; inherited ones would skew them.
for v in $(compgen -v TPROF_); do unset "$v"; done
unset LD_PRELOAD
NATIVE_LIBS=$GPU${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

if have make && [ -x "$NVCC" ]; then
	if build always >"$RES/build.log" 2>&1; then
		echo "rebuilt here with make and $NVCC" >"$RES/build.txt"
	else
		echo "rebuild failed (see build.log); using the prebuilt build/ where present" >"$RES/build.txt"
	fi
else
	echo "make or nvcc not found: using the prebuilt build/ (from run.sh --build-only)" >"$RES/build.txt"
fi
cat "$RES/build.txt"

# step DIR LABEL SECONDS CMD...: runs CMD, keeping its stdout, stderr, exit
# status and command line in DIR/LABEL.{out,err,rc,cmd}.
step() {
	local d=$1 label=$2 secs=$3; shift 3
	echo "   $label: $*"
	echo "$*" >"$d/$label.cmd"
	if have timeout; then timeout -k 10 "$secs" "$@"; else "$@"; fi \
		>"$d/$label.out" 2>"$d/$label.err"
	echo $? >"$d/$label.rc"
}

# check NAME FUNCTION: runs one check in RES/NAME; whatever happens in it,
# it ends with a result.json there and the next check runs.
check() {
	local name=$1 d=$RES/$1
	echo "== $name"
	rm -rf "$d" && mkdir -p "$d"
	"$2" "$d" >"$d/check.log" 2>&1
	local rc=$?
	[ -f "$d/result.json" ] ||
		TC fail "$d" "the check stopped without a result (rc $rc); see $name/check.log" >/dev/null
	TC show "$d"
}

need_build() { # d, files...
	local d=$1 f; shift
	for f in "$@"; do
		[ -e "$f" ] || { TC fail "$d" "$f is missing: run tests/gpu/run.sh --build-only"; return 1; }
	done
}

native_run() { # d, program variant
	local d=$1 name; name=$(basename "$d")
	need_build "$d" "$LIB" build/tprof "$GPU/known_work_$2" || return
	step "$d" run 120 env LD_PRELOAD="$LIB" LD_LIBRARY_PATH="$NATIVE_LIBS" \
		TPROF_OUTPUT_DIR="$d/trace" TPROF_NAME="$name" TPROF_LOG=info "$GPU/known_work_$2"
	TC native "$d" "$name"
}
check_native() { native_run "$1" shared; }
check_native_static() { native_run "$1" static; }

# The GPU-truth properties the simulation checks exactly (test_gpu_truth.py),
# on real kernels: every op linked to its launch, no overlap on a track,
# work in flight at exit kept, nothing lost.
check_gpu_truth() {
	local d=$1 p
	need_build "$d" "$LIB" build/tprof "$GPU/truth_two_threads" "$GPU/truth_exit_inflight" \
		"$GPU/truth_graph" || return
	for p in two_threads:600 exit_inflight:85 graph:50; do
		step "$d" "${p%:*}" 120 env LD_PRELOAD="$LIB" LD_LIBRARY_PATH="$NATIVE_LIBS" \
			TPROF_OUTPUT_DIR="$d/${p%:*}" TPROF_NAME="${p%:*}" TPROF_LOG=info \
			"$GPU/truth_${p%:*}" "${p#*:}"
	done
	TC truth "$d"
}

torch_ok() {
	[ "$TORCH_RC" = 0 ] && return 0
	TC skip "$1" "$(tail -n 1 "$RES/torch.txt")"
	return 1
}

check_torch_vs_profiler() {
	local d=$1
	torch_ok "$d" && need_build "$d" "$LIB" build/tprof || return
	step "$d" tprof 300 env TPROF_LOG=info scripts/tprof-run -o "$d/trace" -n torch \
		python3 tests/gpu/torch_loop.py --window "$d/window.json"
	step "$d" profiler 300 python3 tests/gpu/torch_loop.py --torch-profiler "$d/profiler.json"
	TC torch "$d"
}

check_torch_libs() {
	local d=$1
	torch_ok "$d" && need_build "$d" "$LIB" build/tprof || return
	step "$d" run 300 env TPROF_LOG=info scripts/tprof-run -o "$d/trace" -n libs \
		python3 tests/gpu/torch_libs.py
	TC libs "$d"
}

# --torch-steps with a schedule, on real torch: steps 0 wait, 1 warmup,
# 2-3 kept, then CUPTI is let go.
check_torch_steps() {
	local d=$1
	torch_ok "$d" && need_build "$d" "$LIB" build/tprof || return
	step "$d" run 300 env TPROF_LOG=info scripts/tprof-run -o "$d/trace" -n steps \
		--torch-steps --wait 1 --warmup 1 --active 2 --repeat 1 \
		python3 tests/gpu/torch_loop.py --steps 8
	TC steps "$d"
}

# Call stacks of torch's syncs and copies, through the Python perf
# trampoline where the interpreter has one (3.12 and later).
check_torch_stacks() {
	local d=$1
	torch_ok "$d" && need_build "$d" "$LIB" build/tprof || return
	step "$d" run 300 env TPROF_LOG=info scripts/tprof-run -o "$d/trace" -n stacks \
		--backtrace all:sync,memcpy --python-stacks \
		python3 tests/gpu/torch_loop.py --steps 4
	TC stacks "$d"
}

check_overhead_torch() {
	local d=$1
	torch_ok "$d" && need_build "$d" "$LIB" build/tprof || return
	step "$d" base 300 python3 tests/gpu/overhead.py
	step "$d" tprof 300 scripts/tprof-run -o "$d/trace" -n overhead python3 tests/gpu/overhead.py
	step "$d" torch_profiler 300 python3 tests/gpu/overhead.py --torch-profiler
	TC overhead "$d" base tprof torch_profiler
}

check_overhead_native() {
	local d=$1
	need_build "$d" "$LIB" "$GPU/empty_launch_shared" || return
	step "$d" base 120 "$GPU/empty_launch_shared" 100000
	step "$d" tprof 120 env LD_PRELOAD="$LIB" LD_LIBRARY_PATH="$NATIVE_LIBS" \
		TPROF_OUTPUT_DIR="$d/trace" TPROF_NAME=empty "$GPU/empty_launch_shared" 100000
	TC overhead "$d" base tprof
}

TC torch-probe >"$RES/torch.txt" 2>&1
TORCH_RC=$?
echo "torch: $(tail -n 1 "$RES/torch.txt")"
for c in $CHECKS; do
	check "$c" "check_$c"
done
# shellcheck disable=SC2086
TC report "$RES" $CHECKS
