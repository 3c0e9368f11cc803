# A thin wrapper over CMake and CTest. `make run` shows what greenctx sees (quietly built); `make test` builds
# and runs every test (plainly, under ASan+UBSan, and the threaded ones under TSan).
CMAKE ?= cmake
CTEST ?= ctest
# Parallel build jobs: the machine's cores.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
BUILD_TYPE ?= RelWithDebInfo
# Sanitizer builds use clang when it is installed, else gcc.
SAN_CC ?= $(shell command -v clang >/dev/null 2>&1 && echo clang || echo gcc)
CTEST_FLAGS = --output-on-failure -j$(JOBS)
comma := ,

.PHONY: all build run test test-plain test-asan test-tsan test-gpu bench-gpu fuzz clean

all: build

# configure DIR [CMAKE ARGS...]: configure once, then only rebuild.
define configure
	@if [ ! -f $(1)/CMakeCache.txt ]; then \
	  $(CMAKE) -S . -B $(1) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(2); \
	fi
	$(CMAKE) --build $(1) -j$(JOBS)
endef

build:
	$(call configure,build)

# `make run`: builds quietly only what it runs (the tool and the simulated driver; the build's
# log is shown only when it fails), then shows what greenctx sees and what its words mean. On
# a machine without a CUDA driver, `greenctx info` fails: then both commands run on the
# simulated H200, and the banner says so. RUN_BUILD is where (tests/make_run_test.sh uses
# another folder).
RUN_BUILD ?= build
RUN_TOOL = $(RUN_BUILD)/tools/greenctx
run:
	@log=$(RUN_BUILD)/run-build.log; mkdir -p $(RUN_BUILD); \
	if ! { [ -f $(RUN_BUILD)/CMakeCache.txt ] || $(CMAKE) -S . -B $(RUN_BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE); } \
	     >$$log 2>&1 || ! $(CMAKE) --build $(RUN_BUILD) -j$(JOBS) --target greenctx_tool greenctx_sim >>$$log 2>&1; then \
	  cat $$log; echo "make run: the build failed (log above, also in $$log)"; exit 1; \
	fi; rm -f $$log
	@if $(RUN_TOOL) info >/dev/null 2>&1; then sim=; else \
	  echo "No CUDA driver found on this machine: showing the simulated H200 (driver 13.0) instead."; \
	  echo; sim="--sim h200@13000"; \
	fi; \
	$(RUN_TOOL) $$sim info && echo && $(RUN_TOOL) $$sim plan 24 40 rest && echo && \
	echo "What the words mean:" && \
	echo "  SM               a streaming multiprocessor: the GPU's unit of compute. A partition is" && \
	echo "                   a set of SMs that only its own green contexts run on." && \
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

test: test-plain test-asan test-tsan

test-plain: build
	cd build && $(CTEST) $(CTEST_FLAGS)

test-asan:
	$(call configure,build-asan,-DCMAKE_C_COMPILER=$(SAN_CC) -DGREENCTX_SANITIZE=address$(comma)undefined)
	cd build-asan && $(CTEST) $(CTEST_FLAGS)

test-tsan:
	$(call configure,build-tsan,-DCMAKE_C_COMPILER=$(SAN_CC) -DGREENCTX_SANITIZE=thread)
	cd build-tsan && $(CTEST) $(CTEST_FLAGS) -L threads

# The planner's fuzzer (clang's libFuzzer, in the ASan build) for SECONDS seconds.
SECONDS ?= 600
fuzz:
	$(call configure,build-asan,-DCMAKE_C_COMPILER=$(SAN_CC) -DGREENCTX_SANITIZE=address$(comma)undefined)
	build-asan/tests/fuzz_plan -max_total_time=$(SECONDS) -print_final_stats=1

# On a machine with an NVIDIA GPU and driver: the driver-facing tests against libcuda.so.1
# (a few minutes: the wall time is printed), and the benchmarks' checks (label bench_gpu).
test-gpu:
	$(call configure,build-gpu,-DGREENCTX_TEST_DRIVER=real)
	@start=$$(date +%s); cd build-gpu && $(CTEST) --output-on-failure -L driver; rc=$$?; \
	echo "make test-gpu: $$(($$(date +%s) - start)) s"; exit $$rc

bench-gpu:
	$(call configure,build-gpu,-DGREENCTX_TEST_DRIVER=real)
	@start=$$(date +%s); cd build-gpu && $(CTEST) --output-on-failure -L bench_gpu; rc=$$?; \
	echo "make bench-gpu: $$(($$(date +%s) - start)) s"; exit $$rc

clean:
	rm -rf build build-asan build-tsan build-gpu
