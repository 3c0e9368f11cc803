# NCCL where it is installed, for the NCCL example. Optional: the library and the tool never
# link it. Sets, NOTFOUND when absent:
#   GREENCTX_NCCL_INCLUDE_DIR  (nccl.h)     GREENCTX_NCCL_LIB   (libnccl.so.2)
# Looked for in $NCCL_HOME, the CUDA toolkit, and python3's nvidia-nccl-cu13 package (the
# GPU machine has NCCL only there).
include_guard(GLOBAL)

set(greenctx_nccl_python_dir "")
find_program(GREENCTX_PYTHON3 python3)
if(GREENCTX_PYTHON3)
  execute_process(
    COMMAND ${GREENCTX_PYTHON3} -c
      "import importlib; print(list(importlib.import_module('nvidia.nccl').__path__)[0])"
    OUTPUT_VARIABLE greenctx_nccl_python_dir OUTPUT_STRIP_TRAILING_WHITESPACE
    ERROR_QUIET RESULT_VARIABLE greenctx_python_status)
  if(NOT greenctx_python_status EQUAL 0)
    set(greenctx_nccl_python_dir "")
  endif()
endif()

find_path(GREENCTX_NCCL_INCLUDE_DIR nccl.h
  HINTS $ENV{NCCL_HOME}/include ${greenctx_nccl_python_dir}/include /usr/local/cuda/include
  DOC "NCCL's include directory (optional: the NCCL example)")
find_library(GREENCTX_NCCL_LIB NAMES nccl libnccl.so.2
  HINTS $ENV{NCCL_HOME}/lib ${greenctx_nccl_python_dir}/lib /usr/local/cuda/lib64
  DOC "libnccl.so.2 (optional: the NCCL example)")
