# A thin wrapper over CMake and CTest. `make run` shows what greenctx sees (quietly built); `make test`
# builds and runs every test (plainly, under ASan+UBSan, and the threaded ones under TSan), showing
# only what failed, then one summary: each run's counts, each skipped test and why, and as its
# last line `N passed, N failed, N skipped` over the three runs.
CMAKE ?= cmake
CTEST ?= ctest
PYTHON ?= python3
# Parallel build jobs: the machine's cores.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
BUILD_TYPE ?= RelWithDebInfo
# Sanitizer builds use clang when it is installed, else gcc.
SAN_CC ?= $(shell command -v clang >/dev/null 2>&1 && echo clang || echo gcc)
comma := ,
# No "Entering directory" lines from the builds' own makes.
MAKEFLAGS += --no-print-directory

.PHONY: all build run test test-plain test-asan test-tsan test-gpu bench-gpu fuzz clean

all: build

# build_quietly DIR,[CMAKE ARGS],[BUILD ARGS]: configure DIR once, then (re)build; the log
# (DIR/build.log) is shown only when a step fails.
define build_quietly
	@mkdir -p $(1); log=$(1)/build.log; \
	if ! { [ -f $(1)/CMakeCache.txt ] || $(CMAKE) -S . -B $(1) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(2); } \
	     >$$log 2>&1 || ! $(CMAKE) --build $(1) -j$(JOBS) $(3) >>$$log 2>&1; then \
	  cat $$log; echo "make: building $(1) failed (log above, also in $$log)"; exit 1; \
	fi
endef

# run_tests DIR,NAME,[CTEST ARGS]: the tests of DIR; on screen only the failed tests' output
# and the counts (the whole log: DIR/ctest.log; the results: DIR/ctest.xml).
define run_tests
	@rm -f $(1)/ctest.xml; echo "$(2): running the tests of $(1)"; \
	cd $(1) && $(CTEST) -j$(JOBS) --output-on-failure --output-junit ctest.xml $(3) >ctest.log 2>&1; \
	cd $(CURDIR) && $(PYTHON) tests/summary.py --run $(2)=$(1)/ctest.xml
endef

build:
	$(call build_quietly,build)

# `make run`: builds quietly only what it runs (the tool and the simulated driver; the build's
# log is shown only when it fails), then shows what greenctx sees and what its words mean. On
# a machine without a CUDA driver, `greenctx info` fails: then both commands run on the
# simulated H200, and the banner says so. RUN_BUILD is where (tests/make_run_test.sh uses
# another folder).
RUN_BUILD ?= build
RUN_TOOL = $(RUN_BUILD)/tools/greenctx
run:
	$(call build_quietly,$(RUN_BUILD),,--target greenctx_tool greenctx_sim)
	@if $(RUN_TOOL) info >/dev/null 2>&1; then sim=; else \
	  echo "No CUDA driver found on this machine: showing the simulated H200 (a CUDA 13.0 driver, R580) instead."; \
	  echo; sim="--sim h200@13000"; \
	fi; \
	$(RUN_TOOL) $$sim info && echo && $(RUN_TOOL) $$sim plan 24 40 rest && echo && \
	echo "What the words mean:" && \
	echo "  SM               a streaming multiprocessor: the GPU's unit of compute. A partition is" && \
	echo "                   a set of SMs its green contexts are confined to (work outside green" && \
	echo "                   contexts, in the primary context, may still run there)." && \
	echo "  minimum partition, co-scheduled alignment" && \
	echo "                   the smallest partition the driver makes, and the step partition" && \
	echo "                   sizes come in (the SMs the driver schedules together)." && \
	echo "  locality domains groups of SMs nearer to one part of the GPU (B200 on driver 13.4+);" && \
	echo "                   0 or 1: the device is one domain." && \
	echo "  features         what this driver can do: green_contexts (12.4+), green_streams," && \
	echo "                   structured_split (13.1+: the driver's own per-group split), ..." && \
	echo "                   each with the reason it is on or off." && \
	echo "  granule          before driver 13.1 a split cuts the SMs into equal granules and gives" && \
	echo "                   each group whole granules (13.1+: the structured split instead)." && \
	echo "  unit             the SMs a group is made of: a thread-block cluster fits in one." && \
	echo "  rest, remainder  the SMs no group asked for: usable, but without the co-scheduling" && \
	echo "                   guarantee." && \
	echo && \
	echo "Next:" && \
	echo "  $(RUN_TOOL) $$sim map 24 40 rest   # which physical SMs each partition gets" && \
	echo "  $(RUN_TOOL) $$sim info --sizes     # every partition size, and how many fit" && \
	echo "  $(RUN_TOOL) help                   # every command (make test: the tests)"

test:
	@rc=0; for run in plain asan tsan; do $(MAKE) test-$$run || rc=1; done; echo; \
	$(PYTHON) tests/summary.py plain=build/ctest.xml asan=build-asan/ctest.xml \
	  tsan=build-tsan/ctest.xml || rc=1; exit $$rc

test-plain:
	$(call build_quietly,build)
	$(call run_tests,build,plain)

test-asan:
	$(call build_quietly,build-asan,-DCMAKE_C_COMPILER=$(SAN_CC) -DGREENCTX_SANITIZE=address$(comma)undefined)
	$(call run_tests,build-asan,asan)

test-tsan:
	$(call build_quietly,build-tsan,-DCMAKE_C_COMPILER=$(SAN_CC) -DGREENCTX_SANITIZE=thread)
	$(call run_tests,build-tsan,tsan,-L threads)

# The planner's fuzzer (clang's libFuzzer, in the ASan build) for SECONDS seconds.
SECONDS ?= 600
fuzz:
	$(call build_quietly,build-asan,-DCMAKE_C_COMPILER=$(SAN_CC) -DGREENCTX_SANITIZE=address$(comma)undefined)
	build-asan/tests/fuzz_plan -max_total_time=$(SECONDS) -print_final_stats=1

# On a machine with an NVIDIA GPU and driver: the driver-facing tests against libcuda.so.1
# (a few minutes: the wall time is printed), and the benchmarks' checks (label bench_gpu).
test-gpu:
	$(call build_quietly,build-gpu,-DGREENCTX_TEST_DRIVER=real)
	@start=$$(date +%s); cd build-gpu && $(CTEST) --output-on-failure -L driver; rc=$$?; \
	echo "make test-gpu: $$(($$(date +%s) - start)) s"; exit $$rc

bench-gpu:
	$(call build_quietly,build-gpu,-DGREENCTX_TEST_DRIVER=real)
	@start=$$(date +%s); cd build-gpu && $(CTEST) --output-on-failure -L bench_gpu; rc=$$?; \
	echo "make bench-gpu: $$(($$(date +%s) - start)) s"; exit $$rc

clean:
	rm -rf build build-asan build-tsan build-gpu
