# The SPANK plugin (slurm/, included from tests/CMakeLists.txt) in a real single-node Slurm
# that slurm_test.sh starts and stops itself (root, Debian's munge, slurmctld, slurmd and
# slurm-client; it skips saying why where they are missing). Not in sanitizer builds: srun
# and slurmstepd are not instrumented, so they can't load an instrumented plugin.
if(GREENCTX_SANITIZE)
  return()
endif()
if(TARGET greenctx_spank AND TARGET greenctx_sim)
  greenctx_test(slurm LABELS slurm tool TIMEOUT 170
    COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/slurm_test.sh ${CMAKE_CURRENT_BINARY_DIR}/slurm-test
            $<TARGET_FILE:greenctx_spank> $<TARGET_FILE:greenctx_preload>
            $<TARGET_FILE:greenctx_sim> $<TARGET_FILE:greenctx_tool> $<TARGET_FILE:run_probe>)
  greenctx_test(slurm.symbols LABELS unit slurm
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/plugin_symbols.sh $<TARGET_FILE:greenctx_spank>)
else()
  greenctx_test(slurm LABELS slurm
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/skip.sh
    "the SPANK plugin (Slurm's headers: Debian's libslurm-dev) or the simulated driver was not built")
endif()
