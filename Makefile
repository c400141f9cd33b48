# Entry points. `make run` and `make test` work on a fresh Debian 12 machine
# (as root): they install what is missing, build, then run.
BUILD      ?= build
MAKEFLAGS  += --no-print-directory
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
TSAN_BUILD ?= build-tsan
JOBS       ?= $(shell nproc)
DEMO_DIR   ?= $(BUILD)/demo

.PHONY: all deps build run test test-fast test-asan test-tsan test-fuzz fuzz-build fuzz-long bench clean install

all: build

deps:
	@scripts/install-deps.sh

# Quiet on success: the build's output goes to $(BUILD)/build.log, shown
# (its errors and last lines) only when the build fails.
build: deps
	@cmake -S . -B $(BUILD) -DTPROF_WERROR=ON >/dev/null
	@scripts/quiet-build.sh $(BUILD) -j $(JOBS)

# The demo (scripts/demo.sh): the tiny trainer (examples/tiny_gpt) records
# steps 2-3 of a 5-step run on this CPU and trainprof reads what it wrote; the
# same over 2 MPI ranks when built with MPI (tiny_gpt_mpi); then generated GPU
# traces of 2 ranks, what trainprof sees in them, and their merged timeline.
# Each stage is tagged (recorded: / recorded over MPI: / generated: / merged:);
# it ends with the files written and the commands to try next.
run: build
	@scripts/demo.sh $(BUILD) $(DEMO_DIR)

# Every test: the normal build, the ASan+UBSan build, the threaded reading
# under ThreadSanitizer, and a short fuzzing run.
test: test-fast test-asan test-tsan test-fuzz

test-fast: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

test-asan: deps
	@cmake -S . -B $(ASAN_BUILD) -DTPROF_WERROR=ON -DTPROF_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS)
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --test-dir $(ASAN_BUILD) --output-on-failure -j $(JOBS)

# The tests that run the parallel reader, the read-ahead thread and the
# recording library's per-thread buffers, and analyses run on the reading
# threads (cli_schema: every command through result tables; cli_summary,
# cli_ranks, cli_advice: the cross-rank parts, and summary's advice thread).
test-tsan: deps
	@CC=clang cmake -S . -B $(TSAN_BUILD) -DTPROF_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_C_FLAGS="-fsanitize=thread" >/dev/null
	@cmake --build $(TSAN_BUILD) -j $(JOBS)
	TSAN_OPTIONS=halt_on_error=1 TPROF_SANITIZED=1 \
	  ctest --test-dir $(TSAN_BUILD) --output-on-failure -R 'fast_path|cli_basics|cli_summary|cli_ranks|cli_advice|cli_schema|unit_trace|unit_ops|unit_source|unit_sink|unit_record|cli_record_cupti_fake|cli_merge'

# Fuzzing (tests/fuzz/run.sh: each target from its seed corpus in
# tests/fuzz/corpus/, prints execs/s and coverage; inputs that fail are kept
# in $(FUZZ_BUILD)/fuzz-artifacts/): 30 s per target in `make test`, 10
# minutes per target in `make fuzz-long` (an hour in all; FUZZ_SECS changes it).
FUZZ_TARGETS = fuzz_json fuzz_trace fuzz_merge fuzz_log fuzz_pickle fuzz_config fuzz_op_cost fuzz_csv
FUZZ_SECS ?= 600

fuzz-build: deps
	@CC=clang cmake -S . -B $(FUZZ_BUILD) -DTPROF_WERROR=ON -DTPROF_FUZZ=ON -DTPROF_TESTS=OFF >/dev/null
	@cmake --build $(FUZZ_BUILD) -j $(JOBS) --target $(FUZZ_TARGETS)

test-fuzz: fuzz-build
	tests/fuzz/run.sh $(FUZZ_BUILD) 30

fuzz-long: fuzz-build
	tests/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECS)

bench: build
	@scripts/install-deps.sh --bench
	bench/run_bench.sh 1G $(BUILD)
	bench/merge_bench.sh 250M $(BUILD)
	bench/ops_bench.sh 1G $(BUILD)
	bench/mem_bench.sh $(BUILD) 5000000
	bench/record_overhead.sh $(BUILD) 5

# The binary, the libraries with their headers and pkg-config files, the man
# page, the bash completion and the docs, under PREFIX (staged under DESTDIR
# when set): `cmake --install $(BUILD) --prefix $(PREFIX)` (README, Install).
PREFIX ?= /usr/local

install: build
	DESTDIR="$(DESTDIR)" cmake --install $(BUILD) --prefix "$(PREFIX)"

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD) $(FUZZ_BUILD)
