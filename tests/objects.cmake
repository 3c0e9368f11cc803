# Tests of the planner, partitions, contexts and streams (included from tests/CMakeLists.txt).

# The planner against models of the driver: no driver at all. A pure module: its own header
# (src/plan.h), linked from the static library.
add_executable(test_plan test_plan.c plan_model.c harness.c)
target_include_directories(test_plan PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(test_plan PRIVATE greenctx_static ${CMAKE_DL_LIBS} Threads::Threads)
greenctx_test(plan COMMAND test_plan LABELS unit)

# The elastic controller against synthetic workloads: pure arithmetic, no driver.
greenctx_test_binary(test_controller test_controller.c)
target_link_libraries(test_controller PRIVATE m)
greenctx_test(controller COMMAND test_controller LABELS unit)

# The planner's fuzz target: libFuzzer needs clang and its runtime; CI runs it briefly.
include(CheckCSourceCompiles)
set(CMAKE_REQUIRED_FLAGS -fsanitize=fuzzer)
set(CMAKE_REQUIRED_LINK_OPTIONS -fsanitize=fuzzer)
check_c_source_compiles("#include <stddef.h>
#include <stdint.h>
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }"
  GREENCTX_HAVE_LIBFUZZER)
unset(CMAKE_REQUIRED_FLAGS)
unset(CMAKE_REQUIRED_LINK_OPTIONS)
if(GREENCTX_HAVE_LIBFUZZER AND NOT GREENCTX_SANITIZE MATCHES "thread")
  # The library's own sources, compiled again with the fuzzer's coverage instrumentation:
  # instrumenting only the target would leave the fuzzer blind to the planner it drives.
  get_target_property(library_sources greenctx_objects SOURCES)
  list(TRANSFORM library_sources PREPEND ${PROJECT_SOURCE_DIR}/src/)
  add_executable(fuzz_plan fuzz_plan.c plan_model.c ${library_sources}
    $<TARGET_OBJECTS:greenctx_ptx>)
  target_include_directories(fuzz_plan PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/include
    ${PROJECT_SOURCE_DIR}/common)
  target_compile_options(fuzz_plan PRIVATE -fsanitize=fuzzer-no-link,address,undefined)
  target_link_options(fuzz_plan PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_libraries(fuzz_plan PRIVATE ${CMAKE_DL_LIBS} Threads::Threads)
  # CI runs it briefly; `make fuzz SECONDS=600` runs it longer (tests/README.md).
  greenctx_test(plan.fuzz COMMAND fuzz_plan -max_total_time=20 -seed=1 LABELS unit fuzz)
endif()

# Objects: the static library, for the live-object count (src/testing.h), and raw driver
# calls of the tests' own (raw_calls.h).
function(greenctx_object_test_binary name)
  add_executable(${name} ${ARGN} sm_ids.c harness.c raw_calls.c)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(${name} PRIVATE greenctx_static greenctx_raw_driver ${CMAKE_DL_LIBS}
    Threads::Threads)
endfunction()

# These check when driver objects are destroyed, so they run with the context cache off
# (GREENCTX_CONTEXT_CACHE=0); test_cache checks the cache.
greenctx_object_test_binary(test_partitions test_partitions.c)
foreach(model h200 a100 l4)
  foreach(version 12040 12050 13000 13010)
    greenctx_driver_test(partitions.${model}.${version} COMMAND test_partitions SIM_ONLY
      SIM_ENV GREENCTX_SIM_DEVICES=${model} GREENCTX_SIM_DRIVER_VERSION=${version}
      GREENCTX_CONTEXT_CACHE=0)
  endforeach()
endforeach()
# On the real driver (make test-gpu) the same tests run once, on device 0.
if(GREENCTX_TEST_DRIVER STREQUAL "real")
  greenctx_driver_test(partitions COMMAND test_partitions)
endif()

greenctx_object_test_binary(test_contexts test_contexts.c)
foreach(version 12040 12050 13000 13010)
  greenctx_driver_test(contexts.${version} COMMAND test_contexts SIM_ONLY
    SIM_ENV GREENCTX_SIM_DEVICES=h200 GREENCTX_SIM_DRIVER_VERSION=${version}
    GREENCTX_CONTEXT_CACHE=0)
endforeach()
greenctx_driver_test(contexts.threads COMMAND test_contexts many_threads_create_use_release
  threads_race_the_first_hold_and_last_drop_of_the_primary_context SIM_ONLY SIM_ENV GREENCTX_SIM_DEVICES=h200 GREENCTX_CONTEXT_CACHE=0 LABELS threads)
if(GREENCTX_TEST_DRIVER STREQUAL "real")
  greenctx_driver_test(contexts COMMAND test_contexts)
endif()

# Every entry point the library resolves, failing call by call (tests/test_faults.c). They
# count the driver objects left after each release, so the context cache is off (test_cache
# puts the cache's own paths under faults).
greenctx_object_test_binary(test_faults test_faults.c)
foreach(version 12040 13000 13010)
  greenctx_driver_test(faults.${version} COMMAND test_faults SIM_ONLY
    SIM_ENV GREENCTX_SIM_DEVICES=h200 GREENCTX_SIM_DRIVER_VERSION=${version}
    GREENCTX_CONTEXT_CACHE=0
    GREENCTX_RUNTIME_DIR=${CMAKE_CURRENT_BINARY_DIR}/claims-runtime/faults.${version})
endforeach()
foreach(entry cuEventDestroy cuStreamDestroy cuGreenCtxDestroy cuDevicePrimaryCtxRelease)
  greenctx_driver_test(faults.release.${entry} COMMAND test_faults release_failure_from_environment
    SIM_ONLY SIM_ENV GREENCTX_SIM_DEVICES=h200 GREENCTX_SIM_FAIL=${entry}:1
    GREENCTX_CONTEXT_CACHE=0)
endforeach()
greenctx_driver_test(faults.primary_context COMMAND test_faults primary_context_held_once
  SIM_ONLY SIM_ENV GREENCTX_SIM_DEVICES=h200 GREENCTX_CONTEXT_CACHE=0)
foreach(entry cuInit cuDriverGetVersion)
  greenctx_driver_test(faults.load.${entry} COMMAND test_faults load_fails_naming_the_entry_point
    SIM_ONLY SIM_ENV GREENCTX_SIM_DEVICES=h200 GREENCTX_SIM_FAIL=${entry}:1)
endforeach()

# After a fault every call fails cleanly with it (issue 18): one process per test, since a
# fault is for the process's life. On a GPU (make test-gpu) a kernel really faults.
greenctx_object_test_binary(test_sticky_fault test_sticky_fault.c)
foreach(first cached_context cached_context_with_a_stream cached_stream)
  greenctx_driver_test(faults.sticky.${first} COMMAND test_sticky_fault fault_met_by_a_${first}
    SIM_ENV GREENCTX_SIM_DEVICES=h200)
endforeach()
greenctx_driver_test(faults.sticky.siblings_stream COMMAND test_sticky_fault
  fault_met_by_the_siblings_stream SIM_ENV GREENCTX_SIM_DEVICES=h200)

# What only a GPU shows (kernels, graph replay); skipped on the simulated driver.
greenctx_object_test_binary(test_gpu test_gpu.c)
greenctx_driver_test(gpu COMMAND test_gpu)
# Locality domains: the simulated B200 has two from driver 13.4.
foreach(version 13000 13040)
  greenctx_driver_test(contexts.b200.${version} COMMAND test_contexts locality_domains
    context_from_each_kind_of_partition SIM_ONLY
    SIM_ENV GREENCTX_SIM_DEVICES=b200 GREENCTX_SIM_DRIVER_VERSION=${version}
    GREENCTX_CONTEXT_CACHE=0)
endforeach()

# `greenctx plan` and `greenctx map` on the simulated driver.
foreach(case plan_exact plan_claimable plan_json plan_strict_and_rounding plan_usage counts_exact preferred_said
    every_model map_on_sim)
  greenctx_test(tool.${case} LABELS tool
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/plan_tool_test.sh ${case} $<TARGET_FILE:greenctx_tool>
    ENV GREENCTX_SIM_LIBRARY=${GREENCTX_TEST_SIM_LIBRARY})
endforeach()

# Structs of older and newer headers, reserved fields of group arrays.
greenctx_object_test_binary(test_sized test_sized.c)
greenctx_driver_test(sized COMMAND test_sized SIM_ENV GREENCTX_SIM_DEVICES=h200)

# Handles with generations: stale, double and foreign handles; threads under TSan.
greenctx_object_test_binary(test_handles test_handles.c)
greenctx_driver_test(handles COMMAND test_handles SIM_ENV GREENCTX_SIM_DEVICES=h200)
greenctx_driver_test(handles.threads COMMAND test_handles
  threads_create_release_and_poke_stale_handles SIM_ENV GREENCTX_SIM_DEVICES=h200
  LABELS threads)

include(${CMAKE_CURRENT_SOURCE_DIR}/cache.cmake)
include(${CMAKE_CURRENT_SOURCE_DIR}/claims.cmake)
include(${CMAKE_CURRENT_SOURCE_DIR}/costs.cmake)

# The C++ wrapper (include/greenctx.hpp), where a C++ compiler exists: built with the
# configured one and run on the simulator; the header is also compiled by g++ and clang++
# (whichever are installed) with -Wall -Wextra -Werror, so both accept it.
if(CMAKE_CXX_COMPILER)
  add_executable(test_cpp test_cpp.cpp)
  set_target_properties(test_cpp PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON
    CXX_EXTENSIONS OFF)
  target_link_libraries(test_cpp PRIVATE greenctx_test_harness)
  greenctx_driver_test(cpp.wrapper COMMAND test_cpp SIM_ONLY
    SIM_ENV GREENCTX_SIM_DEVICES=h200 GREENCTX_CONTEXT_CACHE=0)
  foreach(compiler g++ clang++)
    string(REPLACE "+" "x" id ${compiler})
    find_program(GREENCTX_${id} ${compiler})
    if(GREENCTX_${id})
      greenctx_test(cpp.header_${id} LABELS unit
        COMMAND ${GREENCTX_${id}} -std=c++17 -Wall -Wextra -Werror -pedantic-errors -fsyntax-only
                -I${PROJECT_SOURCE_DIR}/include -I${CMAKE_CURRENT_SOURCE_DIR}
                ${CMAKE_CURRENT_SOURCE_DIR}/test_cpp.cpp)
    else()
      greenctx_test(cpp.header_${id} LABELS unit
        COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/skip.sh "${compiler} is not installed")
    endif()
  endforeach()
endif()

# Contexts straight from a device in one call (src/context_device.c).
greenctx_object_test_binary(test_context_device test_context_device.c)
foreach(version 12040 13010)
  greenctx_driver_test(context_device.${version} COMMAND test_context_device SIM_ONLY
    SIM_ENV GREENCTX_SIM_DEVICES=h200 GREENCTX_SIM_DRIVER_VERSION=${version}
    GREENCTX_CONTEXT_CACHE=0)
endforeach()
if(GREENCTX_TEST_DRIVER STREQUAL "real")
  greenctx_driver_test(context_device COMMAND test_context_device)
endif()
