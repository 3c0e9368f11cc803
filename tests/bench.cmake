# `greenctx bench`, greenctx-bench (bench/) run through the tool, and the program itself
# (tests/bench_test.sh);
# include()d from tests/CMakeLists.txt after the tool's tests, so greenctx_test and
# greenctx_driver_test exist.
greenctx_test(bench.usage LABELS unit tool
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/bench_test.sh usage $<TARGET_FILE:greenctx_tool>)
foreach(case sim_overhead sim_devices sim_needs_gpu sim_bad_victim program)
  greenctx_driver_test(bench.${case} SIM_ONLY LABELS tool
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/bench_test.sh ${case} $<TARGET_FILE:greenctx_tool>)
endforeach()
# A test of bench/'s code: NAME.c with the harness and the bench library.
function(greenctx_bench_test_binary name)
  add_executable(${name} ${name}.c harness.c)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/bench)
  target_link_libraries(${name} PRIVATE greenctx_bench ${CMAKE_DL_LIBS} Threads::Threads m)
endfunction()
# The overhead bench's timing thread pinned to its CPU and let go again (bench_pin.c).
greenctx_bench_test_binary(test_bench_pin)
greenctx_test(bench.pin COMMAND test_bench_pin LABELS unit threads)
if(GREENCTX_TEST_DRIVER STREQUAL "real")
  # About 10 s on an H200: every kernel's result is checked on the way.
  greenctx_driver_test(bench.gpu_quick LABELS tool gpu
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/bench_test.sh gpu_quick $<TARGET_FILE:greenctx_tool>)
  set_tests_properties(bench.gpu_quick PROPERTIES TIMEOUT 120)
endif()
# Issue 20's regression check (scripts/check_regression.py, bench/results/baseline.json): the
# script itself on made-up inputs, and in make bench-gpu the quick overhead bench against the
# recorded ratios (it skips, 77, on the simulated driver: its timings mean nothing).
find_program(GREENCTX_PYTHON NAMES python3 python DOC "Python for the package's tests")
if(GREENCTX_PYTHON)
  greenctx_test(regression.script LABELS unit
    COMMAND ${GREENCTX_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/test_check_regression.py)
  # $GREENCTX_GPU_OUT, when set, keeps the bench's JSON and the comparison's output.
  greenctx_driver_test(bench.regression LABELS tool gpu
    COMMAND ${GREENCTX_PYTHON} ${PROJECT_SOURCE_DIR}/scripts/check_regression.py
      --run $<TARGET_FILE:greenctx_tool> --library $<TARGET_FILE:greenctx>)
  # About 10 s for the bench on an H200; bench/compare/run_all.py, where cuda.core imports,
  # a few minutes (four interpreters, torch among them).
  set_tests_properties(bench.regression PROPERTIES TIMEOUT 900 LABELS "bench_gpu;tool;gpu")
  # Elastic partitions (bench/compare/elastic.py). --dry: every arm on the simulated driver
  # (layouts, controller, claims, a stand-in MPS daemon started and quit; each stream a clock
  # the model's bytes and FLOPs move: the plumbing, not figures), checked by elastic_doc.py,
  # and a bad argument refused. gpu: --quick on the GPU for make bench-gpu (about 4 minutes,
  # every arm 5 s; label bench_gpu, not driver: make test-gpu stays quick), every target
  # that applies met; it skips on the simulated driver.
  set(elastic_env PYTHONPATH=${PROJECT_SOURCE_DIR}/python PYTHONDONTWRITEBYTECODE=1
    GREENCTX_LIBRARY=$<TARGET_FILE:greenctx> GREENCTX_TOOL=$<TARGET_FILE:greenctx_tool>)
  if(NOT GREENCTX_SANITIZE) # Python loads the library: not under a sanitizer
    greenctx_test(bench.elastic_dry LABELS tool TIMEOUT 180
      ENV ${tool_sim_env} ${elastic_env}
          GREENCTX_MPS_CONTROL=${CMAKE_CURRENT_SOURCE_DIR}/fake_mps_control.sh
      COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/bench_test.sh elastic_dry $<TARGET_FILE:greenctx_tool>)
  endif()
  greenctx_driver_test(bench.elastic_gpu LABELS tool gpu
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/bench_test.sh gpu_elastic $<TARGET_FILE:greenctx_tool>)
  set_tests_properties(bench.elastic_gpu PROPERTIES TIMEOUT 600 LABELS "bench_gpu;tool;gpu")
  set_property(TEST bench.elastic_gpu APPEND PROPERTY ENVIRONMENT ${elastic_env})
  # Its claim arms: on the default granules.
  greenctx_default_granules(bench.elastic_gpu)
  # NCCL beside cuBLAS (bench/compare/overlap.py), what runs without torch: the plan of arms,
  # the picks, the lines to copy and the table on a made-up run (overlap_picks.py); on the
  # simulated driver --dry's refusals and plan, and its usage errors (bench_test.sh).
  greenctx_test(bench.overlap_picks LABELS unit ENV PYTHONDONTWRITEBYTECODE=1
    COMMAND ${GREENCTX_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/overlap_picks.py)
  if(NOT GREENCTX_SANITIZE) # Python loads the library: not under a sanitizer
    greenctx_test(bench.overlap_dry LABELS tool ENV ${tool_sim_env} ${elastic_env}
      COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/bench_test.sh overlap_dry $<TARGET_FILE:greenctx_tool>)
  endif()
endif()
