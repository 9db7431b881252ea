# The simulated CUDA 13 (and 12) machine (tests/sim/README.md): libcuda.so.1,
# libcudart.so.13 and libcupti.so.13 in build/tests/sim/lib, and the
# programs the GPU-truth tests run on it (nvcc -cudart shared: real
# <<<>>> launches) in build/tests/sim/bin. Included from tests/tests.mk;
# also `make -f tests/sim/sim.mk sim` from the repository root.
B ?= build
CC ?= gcc
CUDA_HOME ?= /usr/local/cuda
NVCC ?= $(CUDA_HOME)/bin/nvcc
TEST_CFLAGS ?= -std=gnu11 -O1 -g -Wall -Wextra -Werror -I$(CUDA_HOME)/include

SIM_B := $(B)/tests/sim
SIM_LIB := $(SIM_B)/lib
SIM_CFLAGS = $(TEST_CFLAGS) -fPIC -fvisibility=hidden -I$(SIM_B)/gen
SIM_LIBS := $(SIM_LIB)/libcuda.so.1 $(SIM_LIB)/libcudart.so.13 \
	    $(SIM_LIB)/libcupti.so.13
SIM_PROGS := $(addprefix $(SIM_B)/bin/,two_threads exit_inflight churn graph \
	     driver_only late_main libgpu_late.so kineto_like \
	     device1 detach_race gpu_mix libtool_inject.so paced pdl \
	     static_main window_busy rules train_step \
	     diff_run host_split)

# CUPTI in parts (cupti_int.h): the callback API and the state
# (cupti.c), the activity records and buffers (cupti_records.c), the
# rules it enforces (cupti_rules.c), its start-up (cupti_init.c), a
# loaded machine's preemptions (cupti_load.c).
SIM_CUPTI_SRC := tests/sim/cupti.c tests/sim/cupti_records.c \
		 tests/sim/cupti_rules.c tests/sim/cupti_init.c \
		 tests/sim/cupti_load.c
SIM_CUPTI_DEP := $(SIM_CUPTI_SRC) tests/sim/cupti_int.h tests/sim/sim.h \
		 tests/sim/cupti_init.h tests/sim/cupti_load.h

$(SIM_B)/gen/cbid_names.h: tests/sim/gen_names.sh \
		$(CUDA_HOME)/include/cupti_runtime_cbid.h \
		$(CUDA_HOME)/include/cupti_driver_cbid.h
	@mkdir -p $(dir $@)
	sh tests/sim/gen_names.sh $(CUDA_HOME)/include >$@.tmp && mv $@.tmp $@

$(SIM_LIB)/libcuda.so.1: tests/sim/core.c tests/sim/driver.c tests/sim/sim.h
	@mkdir -p $(dir $@)
	$(CC) $(SIM_CFLAGS) -shared -Wl,-soname,libcuda.so.1 -o $@ \
		tests/sim/core.c tests/sim/driver.c -ldl -lpthread

$(SIM_LIB)/libcudart.so.13: tests/sim/runtime.c tests/sim/sim.h \
		tests/sim/libcudart.map $(SIM_LIB)/libcuda.so.1
	$(CC) $(SIM_CFLAGS) -shared -Wl,-soname,libcudart.so.13 \
		-Wl,--version-script,tests/sim/libcudart.map -o $@ \
		tests/sim/runtime.c -L$(SIM_LIB) -l:libcuda.so.1 \
		-Wl,-rpath,'$$ORIGIN' -lpthread

$(SIM_LIB)/libcupti.so.13: $(SIM_CUPTI_DEP) $(SIM_B)/gen/cbid_names.h \
		$(SIM_LIB)/libcuda.so.1
	$(CC) $(SIM_CFLAGS) -shared -Wl,-soname,libcupti.so.13 -o $@ \
		$(SIM_CUPTI_SRC) -L$(SIM_LIB) -l:libcuda.so.1 \
		-Wl,-rpath,'$$ORIGIN' -lpthread

$(SIM_B)/bin/%: tests/sim/progs/%.cu tests/sim/progs/simctl.h
	@mkdir -p $(dir $@)
	$(NVCC) -cudart shared -o $@ $< -ldl -lpthread

# A Kineto-like client in a library of the program, linked to the
# simulation's libcupti as libtorch is to its CUPTI.
$(SIM_B)/bin/libkclient.so: tests/sim/progs/kclient.c $(SIM_LIB)/libcupti.so.13
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -shared -fPIC -o $@ $< -L$(SIM_LIB) \
		-l:libcupti.so.13

$(SIM_B)/bin/kineto_like: tests/sim/progs/kineto_like.cu \
		tests/sim/progs/simctl.h $(SIM_B)/bin/libkclient.so
	@mkdir -p $(dir $@)
	$(NVCC) -cudart shared -o $@ $< -L$(SIM_B)/bin -lkclient \
		-Xlinker -rpath='$$ORIGIN' -ldl

# Another tool named by CUDA_INJECTION64_PATH (nsys's place).
$(SIM_B)/bin/libtool_inject.so: tests/sim/progs/tool_inject.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -shared -fPIC -o $@ $<

# A library with its own static runtime (libstatic_rt.so) and the
# program that uses it.
$(SIM_B)/bin/libstatic_rt.so: tests/sim/progs/static_rt.c tests/sim/progs/drv_types.h
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -shared -fPIC -o $@ $< -ldl

$(SIM_B)/bin/static_main: tests/sim/progs/static_main.c \
		$(SIM_B)/bin/libstatic_rt.so
	$(CC) $(TEST_CFLAGS) -o $@ $< -L$(SIM_B)/bin -lstatic_rt \
		-Wl,-rpath,'$$ORIGIN'

# A CUPTI client that breaks the simulation's rules, one per run.
$(SIM_B)/bin/rules: tests/sim/progs/rules.cu $(SIM_LIB)/libcupti.so.13
	@mkdir -p $(dir $@)
	$(NVCC) -cudart shared -o $@ $< -L$(SIM_LIB) -l:libcupti.so.13 -ldl

$(SIM_B)/bin/libgpu_%.so: tests/sim/progs/gpu_%.cu tests/sim/progs/simctl.h
	@mkdir -p $(dir $@)
	$(NVCC) -cudart shared -shared -Xcompiler -fPIC -o $@ $<

$(SIM_B)/bin/%: tests/sim/progs/%.c tests/sim/progs/drv_types.h
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $< -ldl -lpthread

# CUDA 12 mode (tests/sim/README.md): the same sources built with
# SIM_CUDA=12 as libcudart.so.12 and libcupti.so.12 (CUPTI 12.9, API 28)
# in build/tests/sim/lib12, and the programs linked to libcudart.so.12 in
# bin12, compiled as CUDA 12.6-12.9's nvcc compiles them (its
# crt/host_runtime.h generates what nvcc 13's does: __cudaGetKernel,
# __cudaLaunchKernel); *_legacy as with __NV_LEGACY_LAUNCH (the host stub
# calls cudaLaunchKernel, as older CUDA 12 code). Programs in plain C
# (driver_only, late_main) are the same in both modes.
SIM12_LIB := $(SIM_B)/lib12
SIM12_CFLAGS = $(SIM_CFLAGS) -DSIM_CUDA=12
SIM12_LIBS := $(SIM12_LIB)/libcuda.so.1 $(SIM12_LIB)/libcudart.so.12 \
	      $(SIM12_LIB)/libcupti.so.12
SIM12_PROGS := $(addprefix $(SIM_B)/bin12/,two_threads exit_inflight churn \
	       graph libgpu_late.so kineto_like device1 detach_race \
	       two_threads_legacy paced pdl)
# libstdc++ stays needed, as in nvcc's own -cudart shared link (tprof
# demangles kernel names with its __cxa_demangle).
NVCC12 = $(NVCC) -cudart none -Xlinker --no-as-needed -lstdc++

$(SIM12_LIB)/libcuda.so.1: tests/sim/core.c tests/sim/driver.c tests/sim/sim.h
	@mkdir -p $(dir $@)
	$(CC) $(SIM12_CFLAGS) -shared -Wl,-soname,libcuda.so.1 -o $@ \
		tests/sim/core.c tests/sim/driver.c -ldl -lpthread

$(SIM12_LIB)/libcudart.so.12: tests/sim/runtime.c tests/sim/sim.h \
		tests/sim/libcudart12.map $(SIM12_LIB)/libcuda.so.1
	$(CC) $(SIM12_CFLAGS) -shared -Wl,-soname,libcudart.so.12 \
		-Wl,--version-script,tests/sim/libcudart12.map -o $@ \
		tests/sim/runtime.c -L$(SIM12_LIB) -l:libcuda.so.1 \
		-Wl,-rpath,'$$ORIGIN' -lpthread

$(SIM12_LIB)/libcupti.so.12: $(SIM_CUPTI_DEP) tests/sim/cbid_names_12.h \
		$(SIM12_LIB)/libcuda.so.1
	$(CC) $(SIM12_CFLAGS) -shared -Wl,-soname,libcupti.so.12 -o $@ \
		$(SIM_CUPTI_SRC) -L$(SIM12_LIB) -l:libcuda.so.1 \
		-Wl,-rpath,'$$ORIGIN' -lpthread

$(SIM_B)/bin12/%: tests/sim/progs/%.cu tests/sim/progs/simctl.h \
		$(SIM12_LIB)/libcudart.so.12
	@mkdir -p $(dir $@)
	$(NVCC12) -o $@ $< -L$(SIM12_LIB) -l:libcudart.so.12 -ldl -lpthread

$(SIM_B)/bin12/%_legacy: tests/sim/progs/%.cu tests/sim/progs/simctl.h \
		$(SIM12_LIB)/libcudart.so.12
	@mkdir -p $(dir $@)
	$(NVCC12) -Xcompiler -D__NV_LEGACY_LAUNCH -o $@ $< -L$(SIM12_LIB) \
		-l:libcudart.so.12 -ldl -lpthread

$(SIM_B)/bin12/libkclient.so: tests/sim/progs/kclient.c \
		$(SIM12_LIB)/libcupti.so.12
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -shared -fPIC -o $@ $< -L$(SIM12_LIB) \
		-l:libcupti.so.12

$(SIM_B)/bin12/kineto_like: tests/sim/progs/kineto_like.cu \
		tests/sim/progs/simctl.h $(SIM_B)/bin12/libkclient.so \
		$(SIM12_LIB)/libcudart.so.12
	@mkdir -p $(dir $@)
	$(NVCC12) -o $@ $< -L$(SIM_B)/bin12 -lkclient -L$(SIM12_LIB) \
		-l:libcudart.so.12 -Xlinker -rpath='$$ORIGIN' \
		-Xlinker -rpath-link=$(SIM12_LIB) -ldl

$(SIM_B)/bin12/libgpu_%.so: tests/sim/progs/gpu_%.cu tests/sim/progs/simctl.h \
		$(SIM12_LIB)/libcudart.so.12
	@mkdir -p $(dir $@)
	$(NVCC12) -shared -Xcompiler -fPIC -o $@ $< -L$(SIM12_LIB) \
		-l:libcudart.so.12

sim: $(SIM_LIBS) $(SIM_PROGS) $(SIM12_LIBS) $(SIM12_PROGS)

.PHONY: sim

# A stand-in NVML (tests/sim/nvml.c), in its own folders so that only
# the tests that ask for it (on LD_LIBRARY_PATH) get it: nvml/ is a
# current driver's, nvml_old/ one older than 530 (no ClocksEventReasons,
# no field values, no nvmlEventSetWait_v2).
SIM_NVML := $(SIM_B)/nvml/libnvidia-ml.so.1 $(SIM_B)/nvml_old/libnvidia-ml.so.1

$(SIM_B)/nvml/libnvidia-ml.so.1: tests/sim/nvml.c
	@mkdir -p $(dir $@)
	$(CC) $(SIM_CFLAGS) -shared -Wl,-soname,libnvidia-ml.so.1 -o $@ $< \
		-ldl -lpthread

$(SIM_B)/nvml_old/libnvidia-ml.so.1: tests/sim/nvml.c
	@mkdir -p $(dir $@)
	$(CC) $(SIM_CFLAGS) -DSIM_NVML_OLD -shared \
		-Wl,-soname,libnvidia-ml.so.1 -o $@ $< -ldl -lpthread

sim: $(SIM_NVML)
