"""What every greenctx Python object shares: it owns one reference to a C object.

The C library refcounts its objects and every object keeps alive what it was made from, so
Python only has to drop its own reference, once: close() does it at once, the garbage
collector otherwise. Releasing in any order is safe.
"""
import ctypes
import operator
import sys

from ._capi import lib
from ._errors import check


class Handle:
    """Owns one reference to a C object; _release names the C function that drops it, and
    _info_call / _info_type the one that describes it (asked once: objects are immutable)."""

    __slots__ = ("_h", "_info", "__weakref__")
    _release = None      # the name of gctx_<type>_release
    _info_call = None    # the name of gctx_<type>_get_info
    _info_type = None    # its struct

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
            check(getattr(lib, self._info_call)(self._handle, ctypes.byref(info)))
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


def count(name, value):
    """A nonnegative integer argument, as an int (bool is refused, as PyTorch does)."""
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a nonnegative integer, got {value!r}")
    try:
        v = operator.index(value)
    except TypeError:
        raise ValueError(f"{name} must be a nonnegative integer, got {value!r}") from None
    if v < 0:
        raise ValueError(f"{name} must be a nonnegative integer, got {v}")
    if v > 0xFFFFFFFF:
        raise ValueError(f"{name} must be below 2**32, got {v}")
    return v


def current_device():
    """PyTorch's current device when PyTorch is loaded, else device 0."""
    torch = sys.modules.get("torch")
    if torch is not None and getattr(torch, "cuda", None) is not None:
        return torch.cuda.current_device()
    return 0


def device_ordinal(device_id):
    if device_id is None:
        return current_device()
    if isinstance(device_id, bool):
        raise TypeError(f"device_id must be an int, got {device_id!r}")
    try:
        return operator.index(device_id)
    except TypeError:
        raise TypeError(f"device_id must be an int, got {device_id!r}") from None
