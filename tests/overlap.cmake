# Communication beside compute (issue 12), included from tests/CMakeLists.txt after the
# object tests: the caller's current context kept across a library's init, and the NCCL
# example where it cannot run (bench/compare/overlap.py's dry run: tests/bench.cmake).

# gctx_current_context_save / _restore against a fake init that changes the current context.
greenctx_object_test_binary(test_current test_current.c)
greenctx_driver_test(current_context COMMAND test_current SIM_ENV GREENCTX_SIM_DEVICES=h200)

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
