# Fuzzing (docs/design/fuzzing.md): libFuzzer harnesses for the CLI's
# readers and the TPROF_* parser. `make fuzz` builds them with clang into
# build-fuzz/ and runs each for FUZZ_SECONDS; not part of make test, which
# needs no clang but builds each harness with gcc and a replay main
# (replay.c) and replays the committed corpus (tests/fuzz/corpus/NAME).
FUZZ_NAMES := check report merge config pftrace
FUZZ_SECONDS ?= 60
FUZZ_CC ?= clang
FUZZ_B := build-fuzz
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS := -std=gnu11 -O1 -g -Wall -Wextra -Werror -fno-omit-frame-pointer \
	-I$(CUDA_HOME)/include -Iinclude -I. $(filter -D%,$(CFLAGS))

# What the harnesses call: the CLI less its main(), and the trace/ and
# summary/ files it shares with the library.
FUZZ_SRC := $(filter-out cli/main.c,$(CLI_SRC)) \
	    $(patsubst $(B)/%.o,%.c,$(CLI_LIB_OBJ))
FUZZ_OBJ := $(FUZZ_SRC:%.c=$(FUZZ_B)/%.o)
FUZZ_BIN := $(FUZZ_NAMES:%=$(FUZZ_B)/fuzz_%)
FUZZ_HDR := $(ALL_HDR) $(wildcard tests/fuzz/*.h)

$(FUZZ_B)/%.o: %.c $(FUZZ_HDR)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(OBJ_FLAGS) $(FUZZ_SAN) -fsanitize=fuzzer-no-link -c -o $@ $<

# As the library's: ISA-L when its header is there (Makefile, ISAL_STAMP).
$(FUZZ_B)/gzip/gzip_isal.o: $(ISAL_STAMP)
$(FUZZ_B)/gzip/gzip_isal.o: OBJ_FLAGS = $(ISAL_FLAGS)

$(FUZZ_B)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_OBJ) $(FUZZ_HDR)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $< \
		$(FUZZ_OBJ) -lz -ldl -lpthread -lm

fuzz-build: $(FUZZ_BIN)

# Kept between runs (pattern-rule prerequisites would be deleted).
.SECONDARY: $(FUZZ_OBJ)

# Each harness for FUZZ_SECONDS from the seeds; what it finds new goes to
# build-fuzz/corpus/NAME, a crashing input to build-fuzz/crash-NAME-*.
# -close_fd_mask=3: the CLI's messages would drown libFuzzer's own lines
# (sanitizer reports still reach the terminal).
fuzz: fuzz-build
	@for n in $(FUZZ_NAMES); do \
		mkdir -p $(FUZZ_B)/corpus/$$n; \
		echo "== fuzz_$$n for $(FUZZ_SECONDS) s"; \
		rc=0; \
		$(FUZZ_B)/fuzz_$$n -max_total_time=$(FUZZ_SECONDS) \
			-close_fd_mask=3 -timeout=20 -rss_limit_mb=2048 \
			-max_len=65536 -print_final_stats=1 \
			-artifact_prefix=$(FUZZ_B)/crash-$$n- \
			$(FUZZ_B)/corpus/$$n tests/fuzz/corpus/$$n \
			>$(FUZZ_B)/fuzz_$$n.log 2>&1 || rc=$$?; \
		grep -E '^(#[0-9]+ +DONE|stat::number_of_executed_units|stat::peak_rss_mb)' \
			$(FUZZ_B)/fuzz_$$n.log; \
		if [ $$rc -ne 0 ]; then \
			tail -n 60 $(FUZZ_B)/fuzz_$$n.log; \
			echo "fuzz_$$n failed (status $$rc): see $(FUZZ_B)/fuzz_$$n.log"; \
			exit 1; \
		fi; \
	done

# make test: each harness with replay.c's main, built like the unit tests
# and run by tests/run.sh from build/tests/unit/.
FUZZ_REPLAY_OBJ := $(patsubst %.c,$(B)/%.o,$(FUZZ_SRC))
FUZZ_REPLAY_BIN := $(FUZZ_NAMES:%=$(B)/tests/unit/test_fuzz_%)

$(B)/tests/unit/test_fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/replay.c \
		$(FUZZ_REPLAY_OBJ) $(FUZZ_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(UNIT_CFLAGS) -DFUZZ_NAME='"$*"' -o $@ $< tests/fuzz/replay.c \
		$(FUZZ_REPLAY_OBJ) -lz -ldl -lpthread -lm

test-build: $(FUZZ_REPLAY_BIN)

.PHONY: fuzz fuzz-build
