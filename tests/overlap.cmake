# Communication beside compute (issue 12), included from tests/CMakeLists.txt after the
# object tests: the caller's current context kept across a library's init, and
# `greenctx bench overlap` / the NCCL example where they cannot run.

# gctx_current_context_save / _restore against a fake init that changes the current context.
greenctx_object_test_binary(test_current test_current.c)
greenctx_driver_test(current_context COMMAND test_current SIM_ENV GREENCTX_SIM_DEVICES=h200)

# NCCL and cuBLAS: found or not (cmake/find_nccl.cmake), never linked by the library or tool.
include(${PROJECT_SOURCE_DIR}/cmake/find_nccl.cmake)

# The bench's run-time loader (bench/overlap_libs.c): NVLS kept off, and each way NCCL can be
# missing, refused with a message saying what was tried.
add_executable(test_overlap_libs test_overlap_libs.c harness.c
  ${PROJECT_SOURCE_DIR}/bench/overlap_libs.c)
target_include_directories(test_overlap_libs PRIVATE ${PROJECT_SOURCE_DIR}/bench)
target_link_libraries(test_overlap_libs PRIVATE greenctx ${CMAKE_DL_LIBS} Threads::Threads)
greenctx_test(overlap.nvls_off COMMAND test_overlap_libs nvls_is_set_off LABELS unit
  ENV NCCL_NVLS_ENABLE=0)
greenctx_test(overlap.nvls_refused COMMAND test_overlap_libs nvls_asked_for_is_refused
  LABELS unit ENV NCCL_NVLS_ENABLE=1)
greenctx_test(overlap.nccl_missing COMMAND test_overlap_libs nccl_named_but_missing LABELS unit
  ENV GREENCTX_NCCL_LIBRARY=/nonexistent/libnccl.so.2)
greenctx_test(overlap.nccl_not_nccl COMMAND test_overlap_libs nccl_named_is_not_nccl
  LABELS unit ENV GREENCTX_NCCL_LIBRARY=$<TARGET_FILE:greenctx>)
# Never code from the current directory, never python3 run to look (issue 18); pip's layout
# under an absolute $VIRTUAL_ENV found. The test doubles below stand in for the wheels.
greenctx_test(overlap.never_from_cwd COMMAND test_overlap_libs never_from_the_current_directory
  LABELS unit ENV GREENCTX_TEST_FAKE_NCCL=$<TARGET_FILE:fake_nccl>)
greenctx_test(overlap.pip_layout COMMAND test_overlap_libs pip_layout_under_an_absolute_virtual_env
  LABELS unit ENV GREENCTX_TEST_FAKE_NCCL=$<TARGET_FILE:fake_nccl>)
if(GREENCTX_NCCL_LIB AND GREENCTX_CUBLAS_LIB AND NOT GREENCTX_SANITIZE)
  greenctx_test(overlap.libraries_load COMMAND test_overlap_libs nccl_and_cublas_load
    LABELS unit ENV GREENCTX_NCCL_LIBRARY=${GREENCTX_NCCL_LIB}
    GREENCTX_CUBLAS_LIBRARY=${GREENCTX_CUBLAS_LIB})
else()
  greenctx_test(overlap.libraries_load LABELS unit
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/skip.sh
    "NCCL or cuBLAS not found (or a sanitizer build): the run-time loader was not tried on them")
endif()

# bench/overlap_libs.h against nccl.h and cublas_api.h (nccl.h needs cuda_runtime.h).
if(GREENCTX_NCCL_INCLUDE_DIR AND GREENCTX_CUDA_INCLUDE_DIR AND
   EXISTS ${GREENCTX_CUDA_INCLUDE_DIR}/cublas_api.h)
  add_executable(overlap_abi_check overlap_abi_check.c)
  target_include_directories(overlap_abi_check PRIVATE ${PROJECT_SOURCE_DIR}/bench
    ${PROJECT_SOURCE_DIR}/include)
  target_include_directories(overlap_abi_check SYSTEM PRIVATE ${GREENCTX_NCCL_INCLUDE_DIR}
    ${GREENCTX_CUDA_INCLUDE_DIR})
  greenctx_test(overlap.abi_check COMMAND overlap_abi_check LABELS unit)
else()
  greenctx_test(overlap.abi_check LABELS unit
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/skip.sh
    "nccl.h or cublas_api.h not found: bench/overlap_libs.h was not checked against them")
endif()

# `greenctx bench overlap` on the simulated driver: its refusals and usage errors.
foreach(case usage sim_one_gpu sim_no_kernels sim_bad_sms nvls_refused)
  greenctx_test(bench.overlap.${case} LABELS tool ENV ${tool_sim_env}
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/overlap_test.sh ${case} $<TARGET_FILE:greenctx_tool>)
endforeach()

# Its whole flow on the simulated driver (host memory), with test doubles of NCCL and cuBLAS
# that compute on the host and check what the bench passes them (GREENCTX_BENCH_OVERLAP_SIM=1).
foreach(double nccl cublas)
  add_library(fake_${double} MODULE fake_${double}.c)
  target_include_directories(fake_${double} PRIVATE ${PROJECT_SOURCE_DIR}/src
    ${PROJECT_SOURCE_DIR}/include)
  target_link_libraries(fake_${double} PRIVATE ${CMAKE_DL_LIBS})
  set_target_properties(fake_${double} PROPERTIES C_VISIBILITY_PRESET default) # its API
endforeach()
greenctx_test(bench.overlap.sim_flow LABELS tool TIMEOUT 120
  ENV ${tool_sim_env} GREENCTX_BENCH_OVERLAP_SIM=1
      GREENCTX_NCCL_LIBRARY=$<TARGET_FILE:fake_nccl>
      GREENCTX_CUBLAS_LIBRARY=$<TARGET_FILE:fake_cublas>
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/overlap_test.sh sim_flow $<TARGET_FILE:greenctx_tool>)

# The CUDA examples, built with -DGREENCTX_BUILD_EXAMPLES=ON where nvcc and cuBLAS are found
# (nccl_overlap: also NCCL, and two GPUs to run), run on the real driver only
# (scripts/gpu_call.sh examples).
foreach(example two_partitions nccl_overlap)
  if(TARGET ${example} AND GREENCTX_TEST_DRIVER STREQUAL "real")
    greenctx_test(examples.${example} COMMAND ${example} LABELS driver gpu TIMEOUT 300)
  else()
    greenctx_test(examples.${example} LABELS unit COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/skip.sh
      "${example} runs on a GPU, built with -DGREENCTX_BUILD_EXAMPLES=ON and -DGREENCTX_TEST_DRIVER=real (it needs nvcc and cuBLAS; nccl_overlap NCCL too, see examples/README.md)")
  endif()
endforeach()

# The report of a made-up run: the advisor's picks, the lines to copy, the JSON.
greenctx_bench_test_binary(test_overlap_report) # tests/bench.cmake
greenctx_test(overlap.report COMMAND test_overlap_report LABELS unit)
