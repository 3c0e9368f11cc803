# Claims across processes (tests/test_claims.c; included from tests/CMakeLists.txt). Each entry
# has its own runtime directory under the build tree, so runs and entries never share claims.
greenctx_object_test_binary(test_claims test_claims.c)
add_executable(claim_child claim_child.c)
target_link_libraries(claim_child PRIVATE greenctx)
add_dependencies(test_claims claim_child)
set(claims_runtime ${CMAKE_CURRENT_BINARY_DIR}/claims-runtime)

# claims_test(NAME TESTS... [SIM_ONLY] [ENV var=value...] [LABELS l...] [TIMEOUT s])
function(claims_test name)
  cmake_parse_arguments(T "SIM_ONLY" "TIMEOUT" "TESTS;ENV;LABELS" ${ARGN})
  set(env GREENCTX_RUNTIME_DIR=${claims_runtime}/${name}
    GREENCTX_CLAIM_CHILD=$<TARGET_FILE:claim_child> ${T_ENV})
  if(GREENCTX_TEST_DRIVER STREQUAL "real")
    if(NOT T_SIM_ONLY)
      greenctx_test(claims.${name} COMMAND test_claims ${T_TESTS} LABELS driver ${T_LABELS}
        ENV ${env} TIMEOUT ${T_TIMEOUT})
    endif()
    return()
  endif()
  set(sim_only "")
  if(T_SIM_ONLY)
    set(sim_only SIM_ONLY)
  endif()
  greenctx_driver_test(claims.${name} COMMAND test_claims ${T_TESTS} ${sim_only}
    SIM_ENV GREENCTX_SIM_DEVICES=h200 ${env} LABELS ${T_LABELS})
  if(T_TIMEOUT)
    set_tests_properties(claims.${name} PROPERTIES TIMEOUT ${T_TIMEOUT})
  endif()
endfunction()

claims_test(h200 SIM_ONLY TESTS h200_granules exact_sizes_and_best_fit counts_no_granules_give
  contexts_run_on_exactly_their_granules reacquire_hits_the_cache_and_leaks_nothing
  busy_names_the_holder)
