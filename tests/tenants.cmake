# Tenants on one GPU (included from tests/CMakeLists.txt): `greenctx run`'s claims, `ps`,
# `mps` with a fake control program, on the simulated driver; each case has its own runtime
# directory. Several processes at once, so a little longer than the default.
foreach(case claims killed ps mps mps_refusals fault sweep closefrom removed classes
  structured pacing paced_kernels paced_copies)
  greenctx_test(tenants.${case} LABELS tool TIMEOUT 120 ENV ${tool_sim_env}
      GREENCTX_TEST_FAKE_NVML=$<TARGET_FILE:fake_nvml>
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/tenants_test.sh ${case} $<TARGET_FILE:greenctx_tool>
            $<TARGET_FILE:run_probe> ${CMAKE_CURRENT_SOURCE_DIR}/fake_mps_control.sh)
endforeach()
greenctx_default_granules(tenants.structured)
# The preload's pacer thread beside the program's launching thread: under TSan too.
set_property(TEST tenants.pacing tenants.paced_kernels tenants.paced_copies APPEND PROPERTY LABELS threads)
# A shared directory between two users the test makes (root only; skipped otherwise).
greenctx_test(tenants.shared_users LABELS tool TIMEOUT 120
  ENV ${tool_sim_env} GREENCTX_TEST_SANITIZE=${GREENCTX_SANITIZE}
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/shared_registry_test.sh $<TARGET_FILE:greenctx_tool>)
# Two tenants' arms (bench/compare/tenants.py) in --dry mode: the simulated driver, a stand-in
# MPS daemon started and quit, every arm of the fma and read pairs and both fault arms run and
# printed, and the bursty pair's guarded arms (sleeps for steps: the plumbing, not the figures; tenants.gpu.bench runs it on a GPU).
if(GREENCTX_PYTHON AND NOT GREENCTX_SANITIZE) # Python loads the library: not under a sanitizer
  greenctx_test(tenants.bench_dry LABELS tool TIMEOUT 180
    ENV ${tool_sim_env} GREENCTX_TOOL=$<TARGET_FILE:greenctx_tool>
        GREENCTX_MPS_CONTROL=${CMAKE_CURRENT_SOURCE_DIR}/fake_mps_control.sh
        PYTHONPATH=${PROJECT_SOURCE_DIR}/python GREENCTX_LIBRARY=$<TARGET_FILE:greenctx>
        PYTHONDONTWRITEBYTECODE=1
    COMMAND sh -c "python3 \"$0\" --dry --pairs fma,read >\"$1\" && python3 \"$2\" \"$1\" 16 2 &&
                   python3 \"$0\" --dry --pairs bursty --arms claims_guard,claims_paced >\"$1\" &&
                   python3 \"$2\" \"$1\" 4 0"
            ${PROJECT_SOURCE_DIR}/bench/compare/tenants.py ${CMAKE_CURRENT_BINARY_DIR}/tenants_dry.json
            ${CMAKE_CURRENT_SOURCE_DIR}/tenants_rows.py)
  # The bursty hog's delays: the first shrink and return of each burst, on made-up actions.
  greenctx_test(tenants.burst_delays LABELS unit
    COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/tenants_bursts.py)
endif()
