# The context cache and layouts (included from tests/objects.cmake).
greenctx_object_test_binary(test_cache test_cache.c)
set(cache_tests hits_only_for_the_same_sms other_sms_miss nested_partitions_hit_through_their_context
  bounded_least_recently_used_first fresh_flag_and_bad_flags bad_arguments
  workqueue_options_are_in_the_key adopted_contexts_are_never_cached a_hit_makes_no_driver_call
  streams_come_back_with_their_context
  rollback_under_injected_faults off_switch memory_flat_over_1000_repartitions)
foreach(version 12040 12050 13000 13010)
  greenctx_driver_test(cache.${version} COMMAND test_cache ${cache_tests} SIM_ONLY
    SIM_ENV GREENCTX_SIM_DEVICES=h200 GREENCTX_SIM_DRIVER_VERSION=${version})
endforeach()
greenctx_driver_test(cache.a100 COMMAND test_cache ${cache_tests} memory_lost_without_the_cache
  SIM_ONLY SIM_ENV GREENCTX_SIM_DEVICES=a100)
greenctx_driver_test(cache.memory COMMAND test_cache memory_lost_without_the_cache
  memory_flat_over_100000_repartitions SIM_ONLY)
greenctx_driver_test(cache.env_off COMMAND test_cache environment_turns_it_off SIM_ONLY
  SIM_ENV GREENCTX_CONTEXT_CACHE=0)
greenctx_driver_test(cache.env_malformed COMMAND test_cache environment_malformed SIM_ONLY
  SIM_ENV GREENCTX_CONTEXT_CACHE=lots)
greenctx_driver_test(cache.env_empty COMMAND test_cache environment_empty SIM_ONLY
  SIM_ENV GREENCTX_CONTEXT_CACHE=)
greenctx_driver_test(cache.threads COMMAND test_cache many_threads SIM_ONLY LABELS threads)
# On a GPU (make test-gpu): the same, the %smid proof of hits, and 100,000 re-partitions.
if(GREENCTX_TEST_DRIVER STREQUAL "real")
  greenctx_driver_test(cache COMMAND test_cache ${cache_tests} many_threads
    memory_flat_over_100000_repartitions)
endif()

# Layouts: made up front, switched with events only.
greenctx_object_test_binary(test_layouts test_layouts.c)
set(layout_tests made_up_front_with_relations one_partition_of_every_sm
  switch_orders_with_events_and_makes_nothing bad_arguments rollback_under_injected_faults
  stray_release_retires_only_the_callers_handle)
foreach(version 12040 12050 13000 13010)
  greenctx_driver_test(layouts.${version} COMMAND test_layouts ${layout_tests} SIM_ONLY
    SIM_ENV GREENCTX_SIM_DEVICES=h200 GREENCTX_SIM_DRIVER_VERSION=${version})
endforeach()
greenctx_driver_test(layouts.threads COMMAND test_layouts many_threads_switch SIM_ONLY
  LABELS threads)
if(GREENCTX_TEST_DRIVER STREQUAL "real")
  greenctx_driver_test(layouts COMMAND test_layouts made_up_front_with_relations
    one_partition_of_every_sm bad_arguments stray_release_retires_only_the_callers_handle
    many_threads_switch
    graphs_per_layout_run_in_switch_order)
endif()
