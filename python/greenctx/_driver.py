"""The driver calls the deprecated GreenContext.set_context/pop_context need, which the C
library leaves to its caller (it never changes the calling thread's context): resolved with
cuGetProcAddress from the same driver file the library loaded.
"""
from __future__ import annotations

import ctypes
from typing import Any

from ._capi import lib
from ._errors import Error, check

_CUDA_SUCCESS = 0
_entry_points: dict[str, Any] = {}


def _entry_point(name: str, argtypes: list[Any]) -> Any:
    fn = _entry_points.get(name)
    if fn is None:
        check(lib.gctx_init())
        driver = ctypes.CDLL(lib.gctx_driver_path().decode())
        get_proc = driver.cuGetProcAddress_v2
        get_proc.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_int,
                             ctypes.c_uint64, ctypes.POINTER(ctypes.c_int)]
        pfn, found = ctypes.c_void_p(), ctypes.c_int()
        # 4000: the ABI both calls have had since CUDA 4.0 (cuCtxPushCurrent_v2).
        r = get_proc(name.encode(), ctypes.byref(pfn), 4000, 0, ctypes.byref(found))
        if r != _CUDA_SUCCESS or not pfn.value:
            raise Error(f"the CUDA driver gives no {name} (cuGetProcAddress returned {r})",
                        cuda_result=r)
        fn = ctypes.CFUNCTYPE(ctypes.c_int, *argtypes)(pfn.value)
        _entry_points[name] = fn
    return fn


def _call(name: str, argtypes: list[Any], *args: Any) -> None:
    r = _entry_point(name, argtypes)(*args)
    if r != _CUDA_SUCCESS:
        raise Error(f"{name} failed: CUresult {r}", cuda_result=r)


def push_context(cu_context: int) -> None:
    _call("cuCtxPushCurrent", [ctypes.c_void_p], cu_context)


def set_current_context(cu_context: int) -> None:
    _call("cuCtxSetCurrent", [ctypes.c_void_p], cu_context)


def pop_context() -> int | None:
    out = ctypes.c_void_p()
    _call("cuCtxPopCurrent", [ctypes.POINTER(ctypes.c_void_p)], ctypes.byref(out))
    return out.value


def current_context() -> int | None:
    out = ctypes.c_void_p()
    _call("cuCtxGetCurrent", [ctypes.POINTER(ctypes.c_void_p)], ctypes.byref(out))
    return out.value
