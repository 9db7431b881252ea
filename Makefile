# tprof: see README.md.
comma := ,
CUDA_HOME ?= /usr/local/cuda
CC ?= gcc
NVCC ?= $(CUDA_HOME)/bin/nvcc
PREFIX ?= /usr/local
DESTDIR ?=

# As many jobs as processors unless -j is given (on the command line or
# in MAKEFLAGS); a sub-make shares its parent's jobs.
ifeq ($(MAKELEVEL),0)
ifeq ($(filter -j% --jobs%,$(MAKEFLAGS) $(shell printenv MAKEFLAGS)),)
MAKEFLAGS += -j$(shell nproc 2>/dev/null || echo 2)
endif
endif

CFLAGS ?= -O2 -g
CFLAGS += -std=gnu11 -Wall -Wextra -Werror -fPIC -fvisibility=hidden \
	  -I$(CUDA_HOME)/include -Iinclude -I.
LDLIBS_LIB = -lz -ldl -lpthread -lm

B := build

# Sanitizer builds (docs/design/sanitizers.md): make test SANITIZE=address,undefined
# or SANITIZE=thread builds everything into build-san-<list>/ and runs the
# tests with the sanitizer's runtime first in LD_PRELOAD.
SANITIZE ?=
ifneq ($(SANITIZE),)
B := build-san-$(subst $(comma),-,$(SANITIZE))
SAN_FLAGS := -fsanitize=$(SANITIZE) -fno-omit-frame-pointer
ifneq ($(filter undefined,$(subst $(comma), ,$(SANITIZE))),)
# A report must fail the test that caused it, not scroll by.
SAN_FLAGS += -fno-sanitize-recover=undefined
endif
ifneq ($(filter thread,$(subst $(comma), ,$(SANITIZE))),)
# gcc warns that TSan does not model standalone fences (-Wtsan); the
# ring's fences pair with atomics TSan does see.
SAN_FLAGS += -Wno-tsan
endif
CFLAGS += $(SAN_FLAGS)
# The C library's blocking calls (hooks/osrt/) are called by other
# libraries' constructors, which may run before the sanitizer's runtime
# is set up (Python 3.13's mimalloc calls syscall() from one): code
# instrumented then writes to shadow memory not mapped yet. They are
# left uninstrumented; what they call once recording runs is not.
$(B)/hooks/osrt/%.o: CFLAGS += -fno-sanitize=all
endif

# The library's folders, lowest layer first (docs/design/layout.md):
# each folder calls only into the ones listed before it, and
# scripts/layering.py checks that on the built objects.
LIB_DIRS := util gzip encode perfetto config files record session stacks \
	    summary capture sampling output cupti nvml hooks preload
CORE_DIRS := util gzip encode perfetto config files record session stacks \
	     summary capture sampling output
HOOK_DIRS := hooks hooks/cudart hooks/cublas hooks/cudnn hooks/nccl hooks/nvtx \
	     hooks/osrt
CLI_DIRS := cli cli/usage cli/cleanup cli/read cli/check cli/convert cli/recover \
	    cli/merge cli/report cli/diff
# The report's rule engine and its HTML page, subfolders of its layer
# (cli/report).
CLI_DIRS += cli/report/findings cli/report/html

CORE_SRC := $(foreach d,$(CORE_DIRS),$(wildcard $(d)/*.c))
PRELOAD_SRC := $(foreach d,$(HOOK_DIRS) preload,$(wildcard $(d)/*.c))
CUPTI_SRC := $(wildcard cupti/*.c) $(wildcard nvml/*.c)
CLI_SRC := $(foreach d,$(CLI_DIRS),$(wildcard $(d)/*.c))
ALL_HDR := $(foreach d,$(CORE_DIRS) cupti nvml $(HOOK_DIRS) preload $(CLI_DIRS) include,\
	     $(wildcard $(d)/*.h))

CORE_OBJ := $(CORE_SRC:%.c=$(B)/%.o)
PRELOAD_OBJ := $(PRELOAD_SRC:%.c=$(B)/%.o)
CUPTI_OBJ := $(CUPTI_SRC:%.c=$(B)/%.o)
CLI_OBJ := $(CLI_SRC:%.c=$(B)/%.o)

LIB := $(B)/libtprof.so
CLI := $(B)/tprof

all: $(LIB) $(CLI) pyext

$(B)/%.o: %.c $(ALL_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(OBJ_FLAGS) -c -o $@ $<

# ISA-L's deflate is used at run time when libisal.so.2 is there; only its
# header is needed to build. Whether the header is there is asked when
# the gzip object is built, not when make starts (make deps may install
# it first, in the same run), and the answer is kept in ISAL_STAMP: the
# object is rebuilt when it changes. make TP_ISAL=0 (or 1) answers instead.
ISAL_STAMP := $(B)/isal.stamp
ISAL_PROBE := printf '\043include <isa-l/igzip_lib.h>\n' | \
	$(CC) $(CFLAGS) -E -x c - >/dev/null 2>&1
ISAL_FLAGS = $(if $(filter 1,$(shell cat $(ISAL_STAMP) 2>/dev/null)),\
	-DTP_HAVE_ISAL)

$(ISAL_STAMP): FORCE
	@mkdir -p $(dir $@)
	@v=$(if $(TP_ISAL),$(TP_ISAL),$$($(ISAL_PROBE) && echo 1 || echo 0)); \
	[ "$$(cat $@ 2>/dev/null)" = "$$v" ] && exit 0; \
	echo $$v >$@; \
	if [ "$$v" = 1 ]; then \
		echo "tprof: the trace writer compresses with ISA-L"; \
	else \
		echo "tprof: no ISA-L headers: the trace writer compresses" \
			"with zlib, about 3x slower (make deps installs" \
			"libisal-dev; make then rebuilds with it)"; \
	fi

$(B)/gzip/gzip_isal.o: $(ISAL_STAMP)
$(B)/gzip/gzip_isal.o: OBJ_FLAGS = $(ISAL_FLAGS)

FORCE:

$(LIB): $(CORE_OBJ) $(PRELOAD_OBJ) $(CUPTI_OBJ)
	$(CC) $(SAN_FLAGS) -shared -Wl,-z,defs -Wl,-soname,libtprof.so -o $@ $^ $(LDLIBS_LIB)

# The CLI shares config parsing and file naming with the library.
# The CLI shares config parsing, file naming, the encoders and the summary
# aggregator with the library.
CLI_LIB_OBJ := $(addprefix $(B)/,util/log.o gzip/crc32.o gzip/gzip.o gzip/gzip_isal.o \
	encode/json.o encode/tev_args.o encode/tev_json.o \
	$(addprefix perfetto/,pb.o pf_tab.o perfetto_enc.o perfetto_hold.o \
	  perfetto_lanes.o perfetto_arun.o perfetto_intern.o perfetto_tracks.o \
	  perfetto_args.o perfetto_json.o perfetto_trim.o) \
	$(addprefix config/,config.o config_num.o config_capture.o \
	  config_flight.o config_names.o) \
	files/naming.o files/atomic_file.o files/owned_fd.o \
	record/ringfile_read.o record/flightfile_read.o summary/hist.o \
	$(addprefix summary/,summary.o summary_tab.o summary_args.o \
	  summary_groups.o summary_out.o summary_md.o summary_brief.o health.o gpu_feed.o \
	  gpu_heap.o gpu_sweep.o gpu_join.o gpu_json.o gpu_intern.o gpu_spill.o \
	  xsort.o host.o host_sweep.o host_out.o summary_host.o md_cell.o))
$(CLI): $(CLI_OBJ) $(CLI_LIB_OBJ)
	$(CC) $(SAN_FLAGS) -o $@ $^ -lz -ldl -lpthread -lm

include pyext/pyext.mk
include tests/tests.mk
include tests/fuzz/fuzz.mk
include bench/bench.mk

install: all
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/bin \
		$(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/share/tprof
	install -m 755 $(LIB) $(DESTDIR)$(PREFIX)/lib/libtprof.so
	install -m 755 $(CLI) $(DESTDIR)$(PREFIX)/bin/tprof
	install -m 755 scripts/tprof-run $(DESTDIR)$(PREFIX)/bin/tprof-run
	install -m 644 include/tprof.h $(DESTDIR)$(PREFIX)/include/tprof.h
	install -d $(DESTDIR)$(PREFIX)/share/tprof/python/torch_steps
	install -m 644 scripts/python/tprof.py $(DESTDIR)$(PREFIX)/share/tprof/python/
	for f in $(PYEXT_DIR)/_tprof*.so; do \
		[ ! -f "$$f" ] || install -m 644 "$$f" \
			$(DESTDIR)$(PREFIX)/share/tprof/python/ || exit 1; \
	done
	install -m 644 scripts/python/torch_steps/sitecustomize.py \
		$(DESTDIR)$(PREFIX)/share/tprof/python/torch_steps/

# deps first, then the build in a make of its own: deps may install
# ISA-L, which the build then finds.
demo: deps
	@$(MAKE) --no-print-directory all
	@B=$(B) scripts/demo.sh

deps:
	@scripts/deps.sh

clean:
	rm -rf $(B)

.PHONY: all install demo deps clean test bench FORCE
