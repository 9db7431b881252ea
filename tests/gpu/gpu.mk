# make gpu-check (docs/gpu-validation.md): the GPU properties a first run
# on a real GPU must show, in one command, tests/gpu/gpucheck.py. On the
# GPU machine it runs programs prebuilt by `make gpu-check-build` on a
# machine with the CUDA toolkit (that machine may lack nvcc, make and gcc:
# then run `python3 tests/gpu/gpucheck.py` itself); with SIM=1, or as
# gpu-check-sim, it runs the same checks on the simulated CUDA 13 machine
# (tests/sim/), with the same programs built as sim.mk builds its own.
GPUCHECK_SIM := $(addprefix $(B)/tests/gpu/sim/,pdl_pair event_timing)

$(B)/tests/gpu/sim/%: tests/gpu/progs/%.cu tests/sim/progs/simctl.h
	@mkdir -p $(dir $@)
	$(NVCC) -cudart shared -Itests/sim/progs -o $@ $< -ldl -lpthread

test-build: $(GPUCHECK_SIM)

# build/gpu/: the programs for sm_90 and the toolkit's libcudart and
# libcupti next to them (tests/gpu/run.sh --build-only).
gpu-check-build: all
	tests/gpu/run.sh --build-only

gpu-check-sim: all sim $(GPUCHECK_SIM)
	@TPROF_TEST_BUILD=$(abspath $(B)) python3 tests/gpu/gpucheck.py --sim

# No prerequisites on the GPU machine: a copied tree's times would make
# make rebuild, without a compiler there.
ifneq ($(SIM),)
gpu-check: gpu-check-sim
else
gpu-check:
	@TPROF_TEST_BUILD=$(abspath $(B)) python3 tests/gpu/gpucheck.py
endif

.PHONY: gpu-check gpu-check-build gpu-check-sim
