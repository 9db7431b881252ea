# make test: unit tests (C), integration tests (programs run under the
# preload, checked with a real JSON parser and `tprof check`).
TEST_CFLAGS = -std=gnu11 -O1 -g -Wall -Wextra -Werror -I$(CUDA_HOME)/include -Iinclude -I.
# Unit tests link the library's objects: sanitized with them.
UNIT_CFLAGS = $(TEST_CFLAGS) $(SAN_FLAGS) $(if $(SANITIZE),-DTP_TEST_SANITIZED)
UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(B)/tests/unit/%)
TRACE_LIB_OBJ := $(CORE_OBJ)
# tprof check and the readers under it, for the check unit tests.
CHECK_OBJ := $(addprefix $(B)/cli/check/,check.o check_cmd.o check_out.o check_ranges.o \
	check_sweep.o check_tab.o) \
	$(addprefix $(B)/cli/read/,json.o json_tree.o gzread.o pftrace_read.o pftrace_seq.o \
	pftrace_clock.o pftrace_tracks.o pftrace_event.o pftrace_flows.o pftrace_args.o \
	trace_dir.o trace_sniff.o) \
	$(B)/cli/usage/usage.o
CUDA_LIBDIR := $(CUDA_HOME)/lib64

# Programs the integration tests run under LD_PRELOAD.
PROG_C := $(wildcard tests/integration/progs/*.c)
PROG_LIB := $(wildcard tests/integration/libs/*.c)
PROG_CU := $(wildcard tests/integration/progs/*.cu)
PROG_CC := $(wildcard tests/integration/progs/*.cc)
PROG_BIN := $(PROG_C:tests/integration/progs/%.c=$(B)/tests/bin/%) \
	    $(PROG_CC:tests/integration/progs/%.cc=$(B)/tests/bin/%) \
	    $(PROG_CU:tests/integration/progs/%.cu=$(B)/tests/bin/%) \
	    $(PROG_CU:tests/integration/progs/%.cu=$(B)/tests/bin/%_ptds) \
	    $(PROG_CU:tests/integration/progs/%.cu=$(B)/tests/bin/%_static) \
	    $(PROG_LIB:tests/integration/libs/%.c=$(B)/tests/bin/%.so) \
	    $(B)/tests/bin/stacks_stripped

$(B)/tests/unit/test_check $(B)/tests/unit/test_check_ranges: $(B)/tests/unit/%: \
		tests/unit/%.c $(CHECK_OBJ) $(B)/summary/xsort.o $(B)/encode/json.o \
		$(B)/gzip/gzip_isal.o
	@mkdir -p $(dir $@)
	$(CC) $(UNIT_CFLAGS) -Icli/check -Icli/read -o $@ $^ -lz -ldl -lpthread -lm

$(B)/tests/unit/test_json_parser: tests/unit/test_json_parser.c $(CHECK_OBJ) $(B)/summary/xsort.o $(B)/encode/json.o \
		$(B)/gzip/gzip_isal.o
	@mkdir -p $(dir $@)
	$(CC) $(UNIT_CFLAGS) -Icli/check -Icli/read -o $@ $^ -lz -ldl -lpthread -lm

$(B)/tests/unit/test_gpu_tracks: tests/unit/test_gpu_tracks.c $(TRACE_LIB_OBJ) \
		$(CUPTI_OBJ) $(filter %/cudart_args.o %/resolve.o,$(PRELOAD_OBJ))
	@mkdir -p $(dir $@)
	$(CC) $(UNIT_CFLAGS) -o $@ $^ -lz -ldl -lpthread -lm

$(B)/tests/unit/test_clockmap: tests/unit/test_clockmap.c $(TRACE_LIB_OBJ) \
		$(CUPTI_OBJ) $(filter %/cudart_args.o %/resolve.o,$(PRELOAD_OBJ))
	@mkdir -p $(dir $@)
	$(CC) $(UNIT_CFLAGS) -o $@ $^ -lz -ldl -lpthread -lm

$(B)/tests/unit/%: tests/unit/%.c $(TRACE_LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(UNIT_CFLAGS) -o $@ $^ -lz -ldl -lpthread -lm

# Plain C programs calling the CUDA runtime API, linked to the shared
# libcudart; libs/ holds shared libraries the programs dlopen.
$(B)/tests/bin/%.so: tests/integration/libs/%.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -shared -fPIC -o $@ $< -L$(CUDA_LIBDIR) -lcudart -Wl,-rpath,$(CUDA_LIBDIR)

# The libraries tprof hooks, each kept only by the programs that call it.
PROG_LIBS := -lcudart -lcublas -lcublasLt -lcudnn -lnccl

$(B)/tests/bin/%: tests/integration/progs/%.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $< -L$(CUDA_LIBDIR) -Wl,--as-needed $(PROG_LIBS) -Wl,-rpath,$(CUDA_LIBDIR) -ldl -lpthread

# C++, for demangled stack frames.
$(B)/tests/bin/%: tests/integration/progs/%.cc
	@mkdir -p $(dir $@)
	$(CXX) -std=gnu++17 -O1 -g -Wall -Wextra -Werror -I$(CUDA_HOME)/include -o $@ $< \
		-L$(CUDA_LIBDIR) -lcudart -Wl,-rpath,$(CUDA_LIBDIR)

# Symbolization must fall back to library+offset without a symbol table.
$(B)/tests/bin/stacks_stripped: $(B)/tests/bin/stacks
	strip -o $@ $<

$(B)/tests/bin/%: tests/integration/progs/%.cu
	@mkdir -p $(dir $@)
	$(NVCC) -cudart shared -o $@ $<

$(B)/tests/bin/%_ptds: tests/integration/progs/%.cu
	@mkdir -p $(dir $@)
	$(NVCC) -cudart shared --default-stream per-thread -o $@ $<

$(B)/tests/bin/%_static: tests/integration/progs/%.cu
	@mkdir -p $(dir $@)
	$(NVCC) -cudart static -o $@ $<

test-build: all $(UNIT_BIN) $(PROG_BIN)

# The tests find this build (and, sanitized, its runtime) from these.
test: test-build
	@TPROF_TEST_BUILD=$(abspath $(B)) TPROF_TEST_SANITIZE=$(SANITIZE) CC=$(CC) tests/run.sh

.PHONY: test test-build

# HTA from PyPI (holistictraceanalysis, psutil) in a venv of its own,
# installed once: make clean keeps it (build-*/ is not build/).
HTA_VENV ?= build-hta-venv
HTA_PY := $(HTA_VENV)/bin/python
$(HTA_VENV)/.installed:
	python3 -m venv $(HTA_VENV)
	$(HTA_VENV)/bin/pip install -q holistictraceanalysis psutil
	@touch $@

hta-venv: $(HTA_VENV)/.installed

# Opt-in: HTA reads our traces, and its analyses equal tprof report's.
test-hta: test-build hta-venv
	@$(HTA_PY) tests/optional/test_hta.py

# Opt-in: PyTorch from PyPI (pip install torch; a large download) runs
# under tprof-run on this machine without a GPU.
test-torch: test-build
	@python3 tests/optional/test_torch.py

# Opt-in: the CUPTI 12.6-12.9 headers from PyPI (nvidia-cuda-cupti-cu12
# wheels, ~10 MB each) against the record offsets tprof reads.
test-cupti-layouts:
	@python3 tests/optional/test_cupti_layouts.py

# Opt-in: Perfetto's own importer (trace_processor_shell) reads the
# Perfetto traces: TRACE_PROCESSOR=PATH, or one on PATH, or build-tp/
# from scripts/build-trace-processor.sh PERFETTO_GIT_DIR (builds it from
# a Perfetto repository with Debian's libraries, ~20 minutes). Needs the
# perfetto and protobuf modules as test-pftrace does.
test-trace-processor: test-build
	@TPROF_TEST_BUILD=$(abspath $(B)) python3 tests/optional/test_trace_processor.py

.PHONY: hta-venv test-hta test-torch test-cupti-layouts test-trace-processor

# The CUPTI path without a GPU: a stand-in libcupti.so.13 delivering real
# record structs, and a driver program linked to it.
FAKE_CUPTI := $(B)/tests/fakecupti/libcupti.so.13
$(FAKE_CUPTI): tests/cupti/fake_cupti.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -shared -fPIC -Wl,-soname,libcupti.so.13 -o $@ $< -lpthread

# A driver that answers: tprof calls CUPTI only when there is one.
FAKE_CUDA := $(B)/tests/fakecupti/libcuda.so.1
$(FAKE_CUDA): tests/cupti/fake_cuda.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -shared -fPIC -Wl,-soname,libcuda.so.1 -o $@ $<

$(B)/tests/bin/cupti_feed: tests/cupti/cupti_feed.c $(FAKE_CUPTI) $(FAKE_CUDA)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $< -Wl,--no-as-needed $(FAKE_CUPTI) $(FAKE_CUDA) \
		-Wl,-rpath,$(abspath $(B))/tests/fakecupti -l:libstdc++.so.6

test-build: $(B)/tests/bin/cupti_feed

# A stand-in libnccl.so.2 for the NCCL success paths (communicators with a
# rank and size, splits, groups): nccl_calls runs under it with
# LD_LIBRARY_PATH pointing at its directory.
FAKE_NCCL := $(B)/tests/fakenccl/libnccl.so.2
$(FAKE_NCCL): tests/nccl/fake_nccl.c tests/nccl/fake_nccl_barrier.c tests/nccl/fake_nccl_barrier.h
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -shared -fPIC -Wl,-soname,libnccl.so.2 -o $@ $(filter %.c,$^) -lpthread -ldl

test-build: $(FAKE_NCCL)

# The simulated CUDA 13 machine (tests/sim/) and its programs, for
# test_gpu_truth.py.
include tests/sim/sim.mk
test-build: sim

# Opt-in (several minutes): the fault-injection runs at full size (100k
# short-lived threads, SIGTERM at 64 threads, ...) and every hang case at
# 64 ranks; make test runs the quick versions.
test-stress: test-build
	@TPROF_STRESS=1 NCCL_RANKS_STRESS=64 tests/run.sh tests/integration/test_robust.py \
		tests/integration/test_hang.py tests/integration/test_pyext.py

.PHONY: test-stress

$(B)/tests/unit/test_check_scale: tests/unit/test_check_scale.c $(CHECK_OBJ) $(B)/summary/xsort.o $(B)/encode/json.o \
		$(B)/gzip/gzip_isal.o
	@mkdir -p $(dir $@)
	$(CC) $(UNIT_CFLAGS) -Icli/check -Icli/read -o $@ $^ -lz -ldl -lpthread -lm

# test_unwind_fp.c includes test_unwind.c.
$(B)/tests/unit/test_unwind_fp: tests/unit/test_unwind_fp.c tests/unit/test_unwind.c \
		$(TRACE_LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(UNIT_CFLAGS) -o $@ $< $(TRACE_LIB_OBJ) -lz -ldl -lpthread -lm

# make gpu-check, gpu-check-build, gpu-check-sim.
include tests/gpu/gpu.mk

# The GPU timing checks on a loaded machine (busy processes, preempted
# CUPTI clock reads, a slewed CUPTI clock), 10 runs in a row; make test
# runs them once (tests/integration/test_gpu_timing.py).
test-timing: test-build
	@TPROF_TEST_BUILD=$(abspath $(B)) TPROF_TEST_SANITIZE=$(SANITIZE) \
		TIMING_RUNS=10 python3 tests/integration/test_gpu_timing.py

.PHONY: test-timing
