# The Python package (python/greenctx) and its pytest suite (python/tests), included from
# tests/CMakeLists.txt. Not in sanitizer builds: the interpreter can't load an instrumented
# library. Each test runs with the build tree's library (GREENCTX_LIBRARY) and the package
# from the source tree; run_pytest.py exits 77 when pytest is missing or all was skipped.
find_program(GREENCTX_PYTHON NAMES python3 python DOC "Python for the package's tests")
if(NOT GREENCTX_PYTHON OR GREENCTX_SANITIZE)
  return()
endif()

set(py_tests ${PROJECT_SOURCE_DIR}/python/tests)
set(py_run ${CMAKE_COMMAND} -E env PYTHONPATH=${PROJECT_SOURCE_DIR}/python
  GREENCTX_LIBRARY=$<TARGET_FILE:greenctx> PYTHONDONTWRITEBYTECODE=1
  ${GREENCTX_PYTHON} ${py_tests}/run_pytest.py -q)

# The binding against the header: signatures, struct layouts, enum values.
greenctx_test(python.abi COMMAND ${py_run} test_abi.py LABELS unit python)

# The API on the simulated H200, on a driver of each split path.
foreach(version 12040 13000 13010)
  greenctx_driver_test(python.sim.${version} SIM_ONLY LABELS python
    COMMAND ${py_run} test_partition.py test_context.py test_stream.py test_lifetimes.py
            test_cache_layouts.py test_claims.py
    SIM_ENV GREENCTX_SIM_DEVICES=h200 GREENCTX_SIM_DRIVER_VERSION=${version})
endforeach()

# What needs the GPU and PyTorch (make test-gpu); skipped elsewhere.
greenctx_driver_test(python.gpu LABELS python COMMAND ${py_run} test_gpu.py)
set_tests_properties(python.gpu PROPERTIES TIMEOUT 300)  # PyTorch's import, cuda.core's compile

# pip install from the checkout into a fresh folder, then the installed copy alone.
if(GREENCTX_TEST_SIM_LIBRARY)
  greenctx_test(python.install LABELS install python TIMEOUT 180
    COMMAND ${GREENCTX_PYTHON} ${py_tests}/install_check.py ${PROJECT_SOURCE_DIR}
            ${CMAKE_CURRENT_BINARY_DIR}/python-install
    ENV GREENCTX_CUDA_LIBRARY=${GREENCTX_TEST_SIM_LIBRARY} GREENCTX_SIM_DEVICES=h200)
endif()
