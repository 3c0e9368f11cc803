# `greenctx run` and its preload (included from tests/CMakeLists.txt): run_probe is a program
# that knows nothing of greenctx and finds the driver as cudart does; run_test.sh runs it
# under the tool and checks what it saw, the report, the refusals and the sweep.
add_executable(run_probe run_probe.c)
target_link_libraries(run_probe PRIVATE ${CMAKE_DL_LIBS} Threads::Threads)
add_dependencies(run_probe greenctx_preload)

# A later LD_PRELOAD entry that wraps execve (run.next_wrapper).
add_library(run_next_wrapper MODULE next_wrapper.c)
target_link_libraries(run_next_wrapper PRIVATE ${CMAKE_DL_LIBS})

set(run_test_args $<TARGET_FILE:greenctx_tool> $<TARGET_FILE:run_probe>
  $<TARGET_FILE:greenctx_preload>)
# On the simulated driver (--sim), whichever driver the other tests use.
foreach(case confined direct per_device refusals fail_closed inherit children wrappers report
    nested companions fault next_wrapper sweep usage sm_count)
  set(labels driver tool)
  if(case MATCHES "^(confined|direct)$")
    list(APPEND labels threads) # the probe binds from 5 threads
  endif()
  greenctx_test(run.${case} LABELS ${labels}
    ENV ${tool_sim_env} GREENCTX_TEST_SANITIZE=${GREENCTX_SANITIZE}
        GREENCTX_TEST_NEXT_WRAPPER=$<TARGET_FILE:run_next_wrapper>
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/run_test.sh ${case} ${run_test_args})
endforeach()
# On the tests' driver: under make test-gpu, the probe's kernels on the H200.
greenctx_driver_test(run.driver LABELS tool threads
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/run_test.sh driver ${run_test_args})
# On a GPU only (they skip elsewhere): PyTorch (its confinement; its copy hog paced), a
# static-cudart program, the sweep and the targets on a bf16 GEMM (tests/run_gpu/).
foreach(case torch copies static sweep targets)
  greenctx_driver_test(run.gpu.${case} LABELS tool
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/run_gpu_test.sh ${case} $<TARGET_FILE:greenctx_tool>
            $<TARGET_FILE:greenctx> $<TARGET_FILE:greenctx_preload>)
  # Several PyTorch start-ups, nvcc, hundreds of GEMMs on 16 SMs: more than the default.
  set_tests_properties(run.gpu.${case} PROPERTIES TIMEOUT 180)
endforeach()
# The sweep times a program at several sizes (30 s on an H200) and the targets time GEMMs,
# launches and some twenty PyTorch start-ups against their figures: make bench-gpu.
set_tests_properties(run.gpu.sweep run.gpu.targets PROPERTIES LABELS "bench_gpu;tool")
# The installed tool with the installed preload (install.run's prefix; not in sanitizer builds,
# as the other install tests).
if(NOT GREENCTX_SANITIZE)
  greenctx_test(run.installed LABELS install ENV ${tool_sim_env}
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/run_test.sh installed
            ${CMAKE_CURRENT_BINARY_DIR}/install-prefix/bin/greenctx $<TARGET_FILE:run_probe>
            $<TARGET_FILE:greenctx_preload>)
  set_tests_properties(run.installed PROPERTIES FIXTURES_REQUIRED greenctx_installed)
endif()

# Persistent kernels and cooperative launches sized by the SM count the program is told
# (run_gpu/persistent.cu, built for the H200's sm_90 with the shared and the static cudart),
# under `greenctx run` on a GPU (run_gpu_persistent_test.sh). Built only for the real driver,
# where nvcc is; elsewhere the entries skip.
find_program(GREENCTX_NVCC nvcc HINTS /usr/local/cuda/bin)
set(persistent_probes)
if(GREENCTX_NVCC AND GREENCTX_TEST_DRIVER STREQUAL "real")
  foreach(cudart shared static)
    set(probe ${CMAKE_CURRENT_BINARY_DIR}/persistent_${cudart})
    add_custom_command(OUTPUT ${probe}
      COMMAND ${GREENCTX_NVCC} -O2 -arch=sm_90 -cudart ${cudart} -o ${probe}
              ${CMAKE_CURRENT_SOURCE_DIR}/run_gpu/persistent.cu
      DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/run_gpu/persistent.cu
      COMMENT "nvcc persistent.cu (cudart ${cudart})")
    list(APPEND persistent_probes ${probe})
  endforeach()
  add_custom_target(persistent_probes ALL DEPENDS ${persistent_probes})
else()
  set(persistent_probes none none)
endif()
foreach(case shared static mps physical frameworks)
  greenctx_driver_test(run.gpu.persistent.${case} LABELS tool TIMEOUT 120
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/run_gpu_persistent_test.sh ${case}
            $<TARGET_FILE:greenctx_tool> ${persistent_probes})
endforeach()
