# A thin wrapper over CMake and CTest. `make run` shows what greenctx sees (quietly built); `make test` builds
# and runs every test (plainly, under ASan+UBSan, and the threaded ones under TSan).
CMAKE ?= cmake
CTEST ?= ctest
JOBS ?= 2
BUILD_TYPE ?= RelWithDebInfo
# Sanitizer builds use clang when it is installed, else gcc.
SAN_CC ?= $(shell command -v clang >/dev/null 2>&1 && echo clang || echo gcc)
CTEST_FLAGS = --output-on-failure -j$(JOBS)
comma := ,

.PHONY: all build run test test-plain test-asan test-tsan test-gpu fuzz clean

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

# `make run`: builds quietly (the build's log is shown only when it fails), then shows what
# greenctx sees. On a machine without a CUDA driver, `greenctx info` fails: then both commands
# run on the simulated H200, and the banner says so.
run:
	@log=build/run-build.log; mkdir -p build; \
	if ! { [ -f build/CMakeCache.txt ] || $(CMAKE) -S . -B build -DCMAKE_BUILD_TYPE=$(BUILD_TYPE); } \
	     >$$log 2>&1 || ! $(CMAKE) --build build -j$(JOBS) >>$$log 2>&1; then \
	  cat $$log; echo "make run: the build failed (log above, also in $$log)"; exit 1; \
	fi; rm -f $$log
	@echo "A partition is a set of SMs that only its own green contexts run on. Partitions come"
	@echo "in multiples of the alignment: the SMs the driver schedules together. The remainder"
	@echo "is the SMs no group asked for, usable but without that guarantee."
	@echo
	@if build/tools/greenctx info >/dev/null 2>&1; then \
	  build/tools/greenctx info && echo && build/tools/greenctx plan 24 40 rest; \
	else \
	  echo "No CUDA driver found on this machine: showing the simulated H200 (driver 13.0) instead."; \
	  echo; \
	  build/tools/greenctx --sim h200@13000 info && echo && \
	  build/tools/greenctx --sim h200@13000 plan 24 40 rest; \
	fi

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

# On a machine with an NVIDIA GPU and driver: the driver-facing tests against libcuda.so.1.
test-gpu:
	$(call configure,build-gpu,-DGREENCTX_TEST_DRIVER=real)
	cd build-gpu && $(CTEST) --output-on-failure -L driver

clean:
	rm -rf build build-asan build-tsan build-gpu
