# Tenants on a GPU (each skips with its reason on the simulated driver or without a GPU):
# bench/compare/tenants.py --quick (make bench-gpu) and two `greenctx run --sms 64` tenants under
# an MPS daemon each case starts and quits itself (tenants_gpu_test.sh), and a claim resized
# from 16 to 64 SMs while its kernels run (test_claims_gpu.c). include()d after the object
# tests and the tool's, whose helpers it uses.
greenctx_object_test_binary(test_claims_gpu test_claims_gpu.c claims_common.c)
greenctx_driver_test(tenants.gpu.resize COMMAND test_claims_gpu)
foreach(case bench disjoint)
  greenctx_driver_test(tenants.gpu.${case} LABELS tool
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/tenants_gpu_test.sh ${case} $<TARGET_FILE:greenctx_tool>)
endforeach()
# bench: 2 x 8 arms and two fault arms of 3 s, each with fresh processes that import torch;
# disjoint: nvcc, then three rounds of tenants started 2 s apart, their kernels 5-7 s ahead.
set_tests_properties(tenants.gpu.bench PROPERTIES TIMEOUT 600)
set_property(TEST tenants.gpu.bench APPEND PROPERTY ENVIRONMENT GREENCTX_LIBRARY=$<TARGET_FILE:greenctx>)
set_tests_properties(tenants.gpu.disjoint PROPERTIES TIMEOUT 150)
# The bench's arms measure, the disjoint case checks: the arms go to make bench-gpu.
set_tests_properties(tenants.gpu.bench PROPERTIES LABELS "bench_gpu;tool")
greenctx_default_granules(tenants.gpu.bench tenants.gpu.disjoint)
