# What the hot paths cost (tests/test_costs.c; included from tests/objects.cmake): driver calls
# against the same operation by hand, on every simulated version, the hot paths' allocations,
# and the claims registry's calls into libc, counted by wrapping them where the static library
# calls them.
greenctx_object_test_binary(test_costs test_costs.c)
set(costs_wrapped open openat close opendir closedir readdir rewinddir lstat stat fstat fstatat
  mkdir chmod fchmod flock read pread write pwrite ftruncate unlink rename getpwuid_r geteuid
  getpid malloc calloc realloc)
list(TRANSFORM costs_wrapped PREPEND "LINKER:--wrap=")
target_link_options(test_costs PRIVATE ${costs_wrapped})
foreach(version 12040 12050 13000 13010)
  greenctx_driver_test(costs.${version} COMMAND test_costs
    split_makes_the_driver_calls_of_a_split_by_hand
    a_split_with_a_remainder_makes_the_peers_driver_call
    repartition_through_the_cache_costs_its_checks_only
    only_the_stream_checked_with_its_context_skips_its_check layout_switch_records_and_waits_only
    hot_paths_allocate_once_per_object
    SIM_ONLY SIM_ENV GREENCTX_SIM_DEVICES=h200 GREENCTX_SIM_DRIVER_VERSION=${version})
endforeach()
# No MPS daemon to find, whatever the machine runs: its check is part of the count.
greenctx_driver_test(costs.claims COMMAND test_costs a_claim_keeps_its_registry_open SIM_ONLY
  SIM_ENV GREENCTX_SIM_DEVICES=h200
  GREENCTX_RUNTIME_DIR=${CMAKE_CURRENT_BINARY_DIR}/claims-runtime/costs
  CUDA_MPS_PIPE_DIRECTORY=${CMAKE_CURRENT_BINARY_DIR}/no-mps-here)
