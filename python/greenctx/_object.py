"""What every greenctx Python object shares: it owns one reference to a C object.

The C library refcounts its objects and every object keeps alive what it was made from, so
Python only has to drop its own reference, once: close() does it at once, the garbage
collector otherwise. Releasing in any order is safe.
"""
from __future__ import annotations

import ctypes
import numbers
import operator
import os
import sys
from typing import Any, ClassVar

from ._capi import lib
from ._errors import check


# The Python class of each kind of C object ("context": GreenContext, ...), filled as the
# modules defining them load (the package's __init__ loads them all). A module that hands out
# an object of a kind defined in a module above it (a stream's context) finds its class here,
# so that the package's modules import each other in one direction only
# (python/tests/test_imports.py).
_CLASSES: dict[str, type] = {}


def handle_class(kind):
    """The class of a kind of C object ("partition", "context", "stream", "event")."""
    return _CLASSES[kind]


class Handle:
    """Owns one reference to a C object; _release names the C function that drops it, and
    _info_call / _info_type the one that describes it (asked once, when first needed: objects
    are immutable). _kind, where set, registers the class for handle_class()."""

    __slots__ = ("_h", "_info", "__weakref__")
    _kind: ClassVar[str | None] = None
    _release: ClassVar[str | None] = None    # the name of gctx_<type>_release
    _info_call: ClassVar[str | None] = None  # the name of gctx_<type>_get_info
    _info_type: ClassVar[Any] = None         # its struct

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "_kind" in cls.__dict__:
            _CLASSES[cls._kind] = cls

    def __init__(self, h):
        self._h, self._info = h, None

    @classmethod
    def _wrap(cls, h):
        """An object owning a reference the C library handed out."""
        self = cls.__new__(cls)
        self._h, self._info = h, None
        return self

    def _get_info(self):
        info = self._info
        if info is None:
            info = self._info_type()
            check(getattr(lib, self._info_call)(self._handle, info))
            self._info = info
        return info

    @property
    def _handle(self):
        h = self._h
        if h is None:
            raise RuntimeError(f"{type(self).__name__} has been destroyed")
        return h

    def close(self):
        """Drops this object's reference now (idempotent). What it was made from, and what
        was made from it, stay alive as long as something else holds them."""
        h, self._h = self._h, None
        if h is not None:
            getattr(lib, self._release)(h)

    def __del__(self):
        if sys.is_finalizing():  # the library may be unloaded already; the process is ending
            return
        try:
            self.close()
        except Exception:  # noqa: BLE001 - nothing can be raised from __del__
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def info_field(field, doc):
    """A read-only property: one field of the object's info struct."""
    return property(lambda self: getattr(self._get_info(), field), doc=doc)


INT_MAX = 2**31 - 1   # a C int
UINT_MAX = 2**32 - 1  # a C unsigned
PTR_MAX = 2**64 - 1   # a driver handle (a pointer)


def integer(name, value):
    """An int argument as an int: TypeError for anything else (bool included, as PyTorch
    refuses it), so that nothing but a number reaches a C parameter."""
    if isinstance(value, bool) or not hasattr(type(value), "__index__"):
        raise TypeError(f"{name} must be an int, got {value!r}")
    return operator.index(value)


def int_in(name, value, low, high):
    """An int argument within [low, high]: ctypes would wrap anything outside silently."""
    v = integer(name, value)
    if not low <= v <= high:
        raise ValueError(f"{name} must be between {low} and {high}, got {v}")
    return v


def count(name, value):
    """A nonnegative integer argument below 2**32 (a C unsigned), as an int; ValueError
    otherwise, as PyTorch's split gives for its counts."""
    what = "nonnegative integers" if name.endswith(" entries") else "a nonnegative integer"
    if isinstance(value, bool) or not hasattr(type(value), "__index__"):
        raise ValueError(f"{name} must be {what}, got {value!r}")
    v = operator.index(value)
    if v < 0:
        raise ValueError(f"{name} must be {what}, got {v!r}")
    if v > UINT_MAX:
        raise ValueError(f"{name} must be below 2**32, got {v}")
    return v


def real(name, value):
    """A real number argument as the C double it becomes; TypeError for anything else (a str
    is not read as a number). Its range is the C library's to check."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__} "
                        f"{value!r:.60}")
    return float(value)


def text(name, value):
    """A str argument as the C string it becomes (UTF-8): TypeError for another type,
    ValueError for an embedded NUL (C would end the text there) or a lone surrogate."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__} {value!r:.60}")
    if "\0" in value:
        raise ValueError(f"{name} has an embedded NUL (\\x00): C would end it there")
    try:
        return value.encode()
    except UnicodeEncodeError as e:
        raise ValueError(f"{name} is not encodable as UTF-8: {e.reason} at {e.start}") from None


def path(name, value):
    """A str or os.PathLike argument as the C string it becomes (the file system's encoding);
    TypeError for another type, ValueError for an embedded NUL."""
    try:
        raw = os.fsencode(value)
    except TypeError:
        raise TypeError(f"{name} must be a str or os.PathLike, got {type(value).__name__} "
                        f"{value!r:.60}") from None
    if b"\0" in raw:
        raise ValueError(f"{name} has an embedded NUL (\\x00): C would end it there")
    return raw


def driver_handle(name, value):
    """A raw driver handle (CUgreenCtx, CUstream) as a nonzero int: an int, or an object
    that converts to one as cuda.bindings' handle types do (int(h)). Strings, floats and
    other Python objects are refused before anything reaches the driver."""
    if isinstance(value, (bool, float, complex, str, bytes, bytearray)):
        raise TypeError(f"{name} must be an int or a CUDA handle object, got {value!r}")
    if hasattr(type(value), "__index__"):
        v = operator.index(value)
    elif hasattr(type(value), "__int__"):
        v = int(value)
    else:
        raise TypeError(f"{name} must be an int or a CUDA handle object, "
                        f"got {type(value).__name__}")
    if not 0 < v <= PTR_MAX:
        raise ValueError(f"{name} must be a nonzero handle below 2**64, got {v}")
    return v


def instance(name, value, kind):
    """value when it is a kind (a greenctx class), else TypeError naming what was given."""
    if not isinstance(value, kind):
        raise TypeError(f"{name} must be a greenctx.{kind.__name__}, "
                        f"got {type(value).__name__}")
    return value


def cuda_torch():
    """PyTorch when the program imported it and it sees CUDA (a CPU-only PyTorch is as good
    as none: greenctx never asks it for a device or a stream)."""
    torch = sys.modules.get("torch")
    if torch is None or getattr(torch, "cuda", None) is None:
        return None
    try:
        return torch if torch.cuda.is_available() else None
    except Exception:  # noqa: BLE001 - a broken CUDA install: act as without PyTorch
        return None


def current_device():
    """PyTorch's current device when PyTorch with CUDA is loaded, else device 0."""
    torch = cuda_torch()
    return torch.cuda.current_device() if torch is not None else 0


def device_ordinal(device_id):
    if device_id is None:
        return current_device()
    if type(device_id) is int and 0 <= device_id <= INT_MAX:  # the common case, quickly
        return device_id
    return int_in("device_id", device_id, 0, INT_MAX)


def driver_version():
    """The CUDA driver's version, 1000*major + 10*minor (13000 for 13.0)."""
    out = ctypes.c_int()
    check(lib.gctx_driver_version(ctypes.byref(out)))
    return out.value
