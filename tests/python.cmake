# The Python package (python/greenctx) and its pytest suite (python/tests), included from
# tests/CMakeLists.txt. Not in sanitizer builds: the interpreter can't load an instrumented
# library. The tests run in a virtual environment of the build tree (python-venv, made by the
# python.venv fixture from GREENCTX_PYTHON, seeing that Python's packages too: PyTorch and
# cuda.core where installed), with pytest and the packaging tools installed from PyPI when
# missing, so no suite is skipped for want of them. Each test runs with the build tree's
# library (GREENCTX_LIBRARY) and the package from the source tree; run_pytest.py exits 77
# (skipped) when every test that ran was skipped, so a run that proved nothing never passes.
find_program(GREENCTX_PYTHON NAMES python3 python DOC "Python for the package's tests")
if(NOT GREENCTX_PYTHON OR GREENCTX_SANITIZE)
  return()
endif()

set(py_tests ${PROJECT_SOURCE_DIR}/python/tests)
set(py_venv ${CMAKE_CURRENT_BINARY_DIR}/python-venv)
set(py_python ${py_venv}/bin/python)
# make test-gpu's machine may have no network: there the suites need pytest alone.
set(py_requirements pytest)
if(NOT GREENCTX_TEST_DRIVER STREQUAL "real")
  list(APPEND py_requirements build auditwheel ziglang "setuptools>=77" wheel mypy)
endif()
greenctx_test(python.venv LABELS python TIMEOUT 300
  COMMAND ${GREENCTX_PYTHON} ${py_tests}/venv_setup.py ${py_venv} ${py_requirements})
set_tests_properties(python.venv PROPERTIES FIXTURES_SETUP python_venv)

set(py_run ${CMAKE_COMMAND} -E env PYTHONPATH=${PROJECT_SOURCE_DIR}/python
  GREENCTX_LIBRARY=$<TARGET_FILE:greenctx> PYTHONDONTWRITEBYTECODE=1
  ${py_python} ${py_tests}/run_pytest.py -q -rs)
set(py_tests_registered "")

# The binding against the header: signatures, struct layouts, enum values.
greenctx_test(python.abi COMMAND ${py_run} test_abi.py LABELS unit python)
list(APPEND py_tests_registered python.abi)

# The package's type annotations (py.typed: users' type checkers read them) hold: mypy
# --strict over python/greenctx (pyproject.toml).
if(NOT GREENCTX_TEST_DRIVER STREQUAL "real")
  greenctx_test(python.types LABELS unit python TIMEOUT 120
    COMMAND ${CMAKE_COMMAND} -E chdir ${PROJECT_SOURCE_DIR} ${py_python} -m mypy
            --cache-dir ${CMAKE_CURRENT_BINARY_DIR}/mypy-cache)
  list(APPEND py_tests_registered python.types)
endif()

# The package's modules import each other in one direction only (no circle), and every
# public function and method is annotated; the console script without its tool says how to install.
greenctx_test(python.imports COMMAND ${py_run} test_imports.py test_annotations.py test_console.py
  LABELS unit python)
list(APPEND py_tests_registered python.imports)

# The elastic controller: pure arithmetic, no driver.
greenctx_test(python.controller COMMAND ${py_run} test_controller.py LABELS unit python)
list(APPEND py_tests_registered python.controller)

# The API on the simulated H200, on a driver of each split path.
foreach(version 12040 13000 13010)
  greenctx_driver_test(python.sim.${version} SIM_ONLY LABELS python
    COMMAND ${py_run} test_partition.py test_context.py test_stream.py test_lifetimes.py
            test_cache_layouts.py test_claims.py test_checks.py test_hot_paths.py test_handles.py
            test_interop.py
    SIM_ENV GREENCTX_SIM_DEVICES=h200 GREENCTX_SIM_DRIVER_VERSION=${version})
  list(APPEND py_tests_registered python.sim.${version})
endforeach()

# simulate(): a model the simulated driver does not know is refused with its own list.
greenctx_driver_test(python.simulate SIM_ONLY LABELS python COMMAND ${py_run} test_simulation.py
  SIM_ENV GREENCTX_SIM_DEVICES=h200)
list(APPEND py_tests_registered python.simulate)

# bench/compare/run_all.py's greenctx-only run and its JSON record, on the simulator.
greenctx_driver_test(python.compare SIM_ONLY LABELS python COMMAND ${py_run} test_compare.py
  SIM_ENV GREENCTX_SIM_DEVICES=h200 GREENCTX_SIM_DRIVER_VERSION=13010
  TIMEOUT 120)  # a process per library
list(APPEND py_tests_registered python.compare)

# PyTorch parity: PyTorch's own green-context tests and a table of its calls, against
# greenctx (and against PyTorch where it sees CUDA); the simulated part runs everywhere.
greenctx_driver_test(python.parity LABELS python COMMAND ${py_run} test_pytorch_parity.py
  SIM_ENV GREENCTX_SIM_DEVICES=h200 GREENCTX_SIM_DRIVER_VERSION=13000)
set_tests_properties(python.parity PROPERTIES TIMEOUT 300)  # PyTorch's import, the GEMMs
list(APPEND py_tests_registered python.parity)

# What needs the GPU and PyTorch (make test-gpu); skipped elsewhere.
greenctx_driver_test(python.gpu LABELS python COMMAND ${py_run} test_gpu.py)
set_tests_properties(python.gpu PROPERTIES TIMEOUT 300)  # PyTorch's import, cuda.core's compile
list(APPEND py_tests_registered python.gpu)

if(NOT GREENCTX_TEST_DRIVER STREQUAL "real")
  # pip install from the checkout into a fresh folder, and pip install -e of a copy of it,
  # then each installed copy alone.
  greenctx_test(python.install LABELS install python TIMEOUT 300
    COMMAND ${py_python} ${py_tests}/install_check.py ${PROJECT_SOURCE_DIR}
            ${CMAKE_CURRENT_BINARY_DIR}/python-install)
  # The wheel (scripts/build_wheel.sh: sdist, wheel from it, auditwheel), then the wheel alone
  # in a fresh environment: the CLI, `greenctx run`, the examples, with no build tree.
  greenctx_test(python.wheel LABELS install python TIMEOUT 300
    COMMAND sh -c "PYTHON=\"$1\" \"$2\"/scripts/build_wheel.sh \"$3\" && \"$1\" \"$4\"/wheel_check.py \"$3\" \"$3\"/check"
            sh ${py_python} ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/python-wheel ${py_tests})
  list(APPEND py_tests_registered python.install python.wheel)
  # Both write the checkout's build-python/ (egg-info, the in-tree build).
  set_tests_properties(python.install python.wheel PROPERTIES RESOURCE_LOCK build_python)
endif()

# SIM_ONLY entries are not registered against the real driver (make test-gpu).
set(py_tests_present "")
foreach(t ${py_tests_registered})
  if(TEST ${t})
    list(APPEND py_tests_present ${t})
  endif()
endforeach()
set_tests_properties(${py_tests_present} PROPERTIES FIXTURES_REQUIRED python_venv)
