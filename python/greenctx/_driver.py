"""The driver calls the deprecated GreenContext.set_context/pop_context need, which the C
library leaves to its caller (it never changes the calling thread's context): resolved with
cuGetProcAddress from the same driver file the library loaded.
"""
from __future__ import annotations

import ctypes
from typing import Any

from ._capi import lib
from ._errors import Error, check

_entry_points: dict[str, Any] = {}


def _call(name: str, argument: Any) -> None:
    """name(argument) (one pointer: a CUcontext, or where one is written), checked."""
    fn = _entry_points.get(name)
    if fn is None:
        check(lib.gctx_init())
        get_proc = ctypes.CDLL(lib.gctx_driver_path().decode()).cuGetProcAddress_v2
        get_proc.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_int,
                             ctypes.c_uint64, ctypes.POINTER(ctypes.c_int)]
        pfn, found = ctypes.c_void_p(), ctypes.c_int()
        # 4000: the ABI both calls have had since CUDA 4.0 (cuCtxPushCurrent_v2).
        r = get_proc(name.encode(), ctypes.byref(pfn), 4000, 0, ctypes.byref(found))
        if r or not pfn.value:
            raise Error(f"the CUDA driver gives no {name} (cuGetProcAddress returned {r})",
                        cuda_result=r)
        fn = _entry_points[name] = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)(pfn.value)
    r = fn(argument)
    if r:
        raise Error(f"{name} failed: CUresult {r}", cuda_result=r)


def push_context(cu_context: int) -> None:
    _call("cuCtxPushCurrent", cu_context)


def set_current_context(cu_context: int) -> None:
    _call("cuCtxSetCurrent", cu_context)


def pop_context() -> int | None:
    out = ctypes.c_void_p()
    _call("cuCtxPopCurrent", ctypes.byref(out))
    return out.value


def current_context() -> int | None:
    out = ctypes.c_void_p()
    _call("cuCtxGetCurrent", ctypes.byref(out))
    return out.value
