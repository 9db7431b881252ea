# Benchmarks: `make bench` builds the programs below into build/bench/ and
# runs bench/bench.sh, which prints one table. A missed target is reported
# in the table, never turned into a failed build.

BENCH_B := $(B)/bench
BENCH_BIN := $(BENCH_B)/bench_calls $(BENCH_B)/bench_drops \
	     $(BENCH_B)/bench_host \
	     $(BENCH_B)/bench_ring \
	     $(BENCH_B)/bench_writer $(BENCH_B)/bench_stack \
	     $(BENCH_B)/bench_libcalls $(BENCH_B)/bench_gpu \
	     $(BENCH_B)/bench_enc
BENCH_HDR := $(ALL_HDR) $(wildcard bench/*.h)
# The launch formatter and what it needs, but not lifecycle.o: its
# constructor would start tracing the benchmark programs themselves.
BENCH_PRELOAD_OBJ := $(filter %/cudart_args.o %/resolve.o,$(PRELOAD_OBJ))
BENCH_LIBS := $(CORE_OBJ) $(BENCH_PRELOAD_OBJ) $(CUPTI_OBJ) -lz -ldl -lpthread -lm

# The program the preload is measured on: linked to the real libcudart
# only, as an application is.
$(BENCH_B)/bench_calls $(BENCH_B)/bench_drops $(BENCH_B)/bench_host: \
		$(BENCH_B)/%: bench/%.c \
		bench/bench_time.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< -L$(CUDA_HOME)/lib64 -lcudart \
		-Wl,-rpath,$(CUDA_HOME)/lib64

# cuBLAS and NVTX calls, the same way: real libcublas, NVTX header-only.
$(BENCH_B)/bench_libcalls: bench/bench_libcalls.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< -L$(CUDA_HOME)/lib64 -lcublas -ldl \
		-Wl,-rpath,$(CUDA_HOME)/lib64

$(BENCH_B)/bench_ring $(BENCH_B)/bench_writer $(BENCH_B)/bench_stack \
		$(BENCH_B)/bench_gpu $(BENCH_B)/bench_enc: \
		$(BENCH_B)/%: bench/%.c \
		$(CORE_OBJ) $(BENCH_PRELOAD_OBJ) $(CUPTI_OBJ) $(BENCH_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(BENCH_LIBS)

# On the simulated CUDA 13 machine, with nvcc's real <<<>>> launches.
$(BENCH_B)/bench_sim_launch: bench/bench_sim_launch.cu
	@mkdir -p $(dir $@)
	$(NVCC) -cudart shared -o $@ $<

# HTA for the comparison rows is installed on first use (make hta-venv,
# from PyPI); without it (offline) those rows say skipped.
bench: $(LIB) $(CLI) pyext $(BENCH_BIN) $(BENCH_B)/bench_sim_launch sim
	@$(MAKE) --no-print-directory hta-venv >/dev/null || \
		echo "bench: HTA not installed in $(HTA_VENV): its rows are skipped"
	@HTA_PYTHON=$(HTA_PY) sh bench/bench.sh $(BENCH_B) $(LIB)
	@sh bench/bench_host.sh $(BENCH_B) $(LIB)

# The HTA comparison alone (bench/bench_hta.sh; HTA_RANKS, HTA_STEPS,
# HTA_KERNELS, HTA_RUNS, TPROF_RUNS in the environment change it).
bench-hta: $(CLI) hta-venv
	@HTA_PYTHON=$(HTA_PY) sh bench/bench_hta.sh $(CLI)

# The instruction budgets (bench/instr_budgets, callgrind): a hooked
# call, recorded, dropped and outside any window, an osrt-hooked C
# library call with osrt off and on, the writer per event, the tprof
# command per byte of JSON, and tprof.range from Python and from C;
# fails when one is exceeded. make test runs the same check but the
# Python one (tests/integration/test_instr.py).
bench-instr: $(LIB) $(CLI) $(BENCH_B)/bench_calls $(BENCH_B)/bench_writer \
	     $(BENCH_B)/bench_host $(BENCH_B)/bench_libcalls pyext
	@INSTR_PYRANGE=1 sh bench/instr_check.sh $(BENCH_B) $(LIB)

test-build: $(BENCH_B)/bench_calls $(BENCH_B)/bench_writer $(BENCH_B)/bench_host

# tprof report over 4096 generated summaries (bench/bench_report.sh;
# RANKS, RUNS in the environment change it): seconds, peak memory and
# output size of the Markdown, --json and --html, and whether the
# findings name the slow ranks. A minute, most of it generating.
bench-report: $(CLI)
	@sh bench/bench_report.sh $(CLI) $(B)/bench/report

# trace_processor's import of the Perfetto trace against the JSON of the
# same workload (bench/tp_import.sh; make bench prints the same row when
# TRACE_PROCESSOR is set): TRACE_PROCESSOR=PATH, TP_CALLS, TP_ROUNDS.
bench-tp-import: $(LIB) $(BENCH_B)/bench_calls
	@test -n "$(TRACE_PROCESSOR)" || { echo "bench-tp-import: set TRACE_PROCESSOR=PATH of a trace_processor_shell"; exit 1; }
	@sh bench/tp_import.sh $(BENCH_B) $(LIB) $(TRACE_PROCESSOR) $(or $(TP_CALLS),1048576) $(or $(TP_ROUNDS),3)

.PHONY: bench-hta bench-instr bench-report bench-tp-import
