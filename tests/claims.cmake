# Claims across processes (tests/test_claims.c; included from tests/CMakeLists.txt). Each entry
# has its own runtime directory under the build tree, so runs and entries never share claims.
greenctx_object_test_binary(test_claims test_claims.c claims_common.c)
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

claims_test(h200 TESTS h200_granules exact_sizes_and_best_fit the_sets_a_split_gives_are_held_at_once
  counts_no_granules_give
  contexts_run_on_exactly_their_granules reacquire_hits_the_cache_and_leaks_nothing
  busy_names_the_holder)
# The rule for claimable counts against the planner's, on every simulated device.
claims_test(agree SIM_ONLY TESTS claimable_counts_agree_with_the_planner_on_every_device
  ENV GREENCTX_SIM_DEVICES=h200,h100,a100,l4,b200)
claims_test(processes TESTS killed_holder_frees_its_sms wait_times_out_then_succeeds_when_released
  a_forked_child_keeps_only_an_inherited_claim a_fork_while_a_claim_is_made_gets_none_of_it)
# A fake MPS control daemon of the test's own: the simulator only.
claims_test(fault SIM_ONLY TESTS a_fault_names_the_tenant_that_died_first
  ENV CUDA_MPS_PIPE_DIRECTORY=${claims_runtime}/fault/fake-mps)
# Forked children use the driver their parent loaded: the simulator allows it, CUDA doesn't.
claims_test(stress SIM_ONLY TESTS sixty_four_processes_never_overlap TIMEOUT 120)
claims_test(registry TESTS foreign_or_corrupt_registry_refused_while_live_rebuilt_when_not
  runtime_directory_permissions export_join_across_exec
  a_registry_removed_while_kept_open_is_made_again only_an_inherited_claim_survives_exec
  registries_kept_open_are_bounded
  a_command_with_line_breaks_is_listed_on_one_line)
# Issue 28: members of one claim (C3, C4), and a descriptor the program closed.
claims_test(members TESTS a_join_in_the_exporting_process_holds_the_claim_apart
  a_shared_claim_is_not_resized_under_its_members
  a_claim_descriptor_closed_by_the_program_is_reported
  a_token_names_its_descriptor_only_while_it_is_the_claim_file)
# The order of a release: the simulator's gctxsim_on_call (on the GPU: tenants.gpu.resize).
claims_test(release_idle SIM_ONLY TESTS a_release_waits_for_the_claims_context_first)
claims_test(resize TESTS resize_keeps_work_ordered_and_never_overlaps
  resize_back_and_forth_hits_the_cache
  tenants_moving_sms_back_and_forth_get_the_same_sets_from_the_cache)
# Objects are counted after each failed call: the cache off.
claims_test(faults SIM_ONLY TESTS rollback_under_injected_faults ENV GREENCTX_CONTEXT_CACHE=0)
claims_test(mps_percentage TESTS active_thread_percentage_below_100_is_refused
  ENV CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50)
claims_test(mps_info TESTS mps_info_from_a_fake_pipe_directory
  ENV CUDA_MPS_PIPE_DIRECTORY=${claims_runtime}/mps_info/fake-mps
  CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=2G)
claims_test(threads TESTS threads_claim_resize_and_share_without_overlap LABELS threads)
# Elastic claims: a waiter's want, the holders' pressure, priorities, the bound (issue 17).
claims_test(elastic TESTS a_want_is_seen_then_granted_once_the_holder_shrinks
  a_killed_waiters_want_disappears a_latency_holder_ignores_throughput_wants
  two_waits_of_one_process_both_wake_at_one_shrink LABELS threads
  TIMEOUT 60)
claims_test(elastic_default_granules TESTS
  a_rest_holding_the_left_over_sms_gives_them_back_with_the_pressure LABELS threads)
greenctx_default_granules(claims.elastic_default_granules)
# The bound on the simulator, whose resize costs microseconds; on the GPU a context not yet
# cached adds a cuGreenCtxCreate (docs/elastic.md).
claims_test(elastic_bound SIM_ONLY TESTS want_to_grant_within_50_ms_of_a_holder_polling_every_10_ms
  a_waiter_is_granted_within_3_ms_of_the_shrink
  TIMEOUT 60)
# Claims whatever other processes put in the registry: planted links and FIFOs, scan errors,
# a held registry lock, a clock stepped back, shared directories, bad tokens (issue 28).
# Holders are forked children: the simulator only.
greenctx_object_test_binary(test_claims_trust test_claims_trust.c claims_common.c)
greenctx_driver_test(claims.trust COMMAND test_claims_trust SIM_ONLY TIMEOUT 60
  SIM_ENV GREENCTX_SIM_DEVICES=h200 GREENCTX_RUNTIME_DIR=${claims_runtime}/trust)
# The guard (issue 33): classes, steps, signals, a latency tenant's death, its cost (the
# driver calls counted on the simulator only; the rest on the GPU too, under make test-gpu).
claims_test(guard TESTS tenant_classes_are_recorded_checked_and_listed
  guard_steps_over_target_hold_best_effort_back_then_give_back guard_names_the_power_cap_and_hbm
  a_dead_latency_tenant_leaves_nothing_held_back reporting_steps_calls_no_driver
  a_state_line_no_step_can_have_is_none short_steps_are_published_once_a_window_at_their_p99
  a_window_closes_at_500_steps_six_over_target_or_1_s
  a_factor_target_closes_a_window_once_its_step_alone_is_known
  a_state_line_read_while_it_is_replaced_is_read
  a_guard_wait_ends_at_a_latency_tenants_line_not_another_guards
  ENV GREENCTX_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1)
claims_test(guard_threads TESTS steps_reported_and_info_read_while_the_claim_resizes
  a_latency_tenants_lines_are_written_by_a_thread_joined_at_release LABELS threads)
# A fork's child acquires a claim of its own: the simulator's driver works after a fork (TSan
# makes no thread in the child of a process that has threads: not labelled threads).
claims_test(guard_publisher_fork SIM_ONLY TESTS
  a_forks_child_publishes_its_own_claims_lines_and_the_parent_still_publishes)
# NVML's signals through a fake of it: the power cap (0x4: SwPowerCap), then busy HBM.
add_dependencies(test_claims fake_nvml) # tests/CMakeLists.txt's: the tool's and the guard's
claims_test(guard_nvml_power SIM_ONLY TESTS guard_reads_nvml_when_given_no_signals
  ENV GREENCTX_NVML_LIBRARY=$<TARGET_FILE:fake_nvml> FAKE_NVML_SM_CLOCK=1450
      FAKE_NVML_MAX_CLOCK=1980 FAKE_NVML_REASONS=0x4 FAKE_NVML_MEMORY=40 FAKE_NVML_EXPECT=power)
claims_test(guard_nvml_hbm SIM_ONLY TESTS guard_reads_nvml_when_given_no_signals
  ENV GREENCTX_NVML_LIBRARY=$<TARGET_FILE:fake_nvml> FAKE_NVML_SM_CLOCK=1980
      FAKE_NVML_MAX_CLOCK=1980 FAKE_NVML_REASONS=0 FAKE_NVML_MEMORY=97 FAKE_NVML_EXPECT=hbm)
# NVML slow to answer (30 ms a look): the latency tenant's line is as old as when it was read,
# not as when NVML answered, or every look would read it as ended and give everything back.
claims_test(guard_nvml_slow SIM_ONLY TESTS a_slow_nvml_ages_no_latency_tenants_line
  ENV GREENCTX_NVML_LIBRARY=$<TARGET_FILE:fake_nvml> FAKE_NVML_SM_CLOCK=1450
      FAKE_NVML_MAX_CLOCK=1980 FAKE_NVML_REASONS=0x4 FAKE_NVML_MEMORY=40 FAKE_NVML_DELAY_MS=30)
