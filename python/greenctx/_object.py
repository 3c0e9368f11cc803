"""What every greenctx Python object shares: it owns one reference to a C object, dropped once
(close(), else the garbage collector); the C library keeps alive what each was made from.
"""
from __future__ import annotations

import dataclasses
import numbers
import operator
import os
import sys
from typing import Any, ClassVar, TypeVar

from ._capi import lib
from ._errors import out, out_int


_H = TypeVar("_H", bound="Handle")
_T = TypeVar("_T")


class Handle:
    """Owns one reference to a C object (docs/python.md, "What every object shares"): made by
    the package only (_wrap); equal and hashed by the C handle, kept in _key after release."""

    __slots__ = ("_h", "_key", "_info", "__weakref__")
    _h: int | None    # the C handle; None once released
    _key: int | None  # the C handle, kept after release: equality and hash
    _info: Any        # the info struct, once asked
    _how: ClassVar[str] = ""  # how a user gets one, for the TypeError of Class(...)
    _release: ClassVar[str]  # the name of gctx_<type>_release
    _info_call: ClassVar[str] = ""  # the name of gctx_<type>_get_info

    def __init__(self, *args: object, **kwargs: object) -> None:
        raise TypeError(f"greenctx.{type(self).__name__} is not made from a handle: "
                        f"{self._how}")

    @classmethod
    def _wrap(cls: type[_H], h: int | None) -> _H:
        """An object owning a reference the C library handed out."""
        self = cls.__new__(cls)
        self._own(h)
        return self

    @classmethod
    def _made_by(cls: type[_H], name: str, *args: Any) -> _H:
        """An object owning the handle lib.<name>(*args, &handle) gives."""
        return cls._wrap(out_int(name, *args))

    def _own(self, h: int | None) -> None:
        self._h = self._key = h
        self._info = None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Handle):
            return NotImplemented
        return self._release == other._release and self._key == other._key

    def __hash__(self) -> int:
        return hash((self._release, self._key))

    def __repr__(self) -> str:
        if self._h is None:
            return f"<greenctx.{type(self).__name__} released>"
        return f"<greenctx.{type(self).__name__} {self._describe()}>"

    def _describe(self) -> str:
        """What repr() says of a live object after its class name: its driver handle."""
        return f"0x{getattr(self, 'handle', 0) or 0:x}"

    def _get_info(self) -> Any:
        info = self._info
        if info is None:
            info = self._info = out(self._info_call, self._handle)
        return info

    @property
    def _handle(self) -> int:
        h = self._h
        if h is None:
            raise RuntimeError(f"{type(self).__name__} has been released")
        return h

    def close(self) -> None:
        """Drops this object's reference now (idempotent)."""
        h, self._h = self._h, None
        if h is not None:
            getattr(lib, self._release)(h)

    def __del__(self) -> None:
        if sys.is_finalizing():  # the library may be unloaded already; the process is ending
            return
        try:
            self.close()
        except Exception:  # noqa: BLE001 - nothing can be raised from __del__
            pass

    def __enter__(self: _H) -> _H:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def from_struct(cls: type[_T], c: Any, **given: Any) -> _T:
    """The dataclass cls of a C struct: each field not given is the struct's of its name (text
    decoded, a bool field's int as a bool)."""
    values = dict(given)
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]  # cls is a dataclass
        if f.name not in given:
            v = getattr(c, f.name)
            values[f.name] = (v.decode(errors="replace") if isinstance(v, bytes) else
                              bool(v) if f.type == "bool" else v)
    return cls(**values)


def info_field(field: str, doc: str) -> Any:
    """A read-only property: one field of the object's info struct."""
    return property(lambda self: getattr(self._get_info(), field), doc=doc)


INT_MAX = 2**31 - 1   # a C int
UINT_MAX = 2**32 - 1  # a C unsigned
PTR_MAX = 2**64 - 1   # a driver handle (a pointer)


def integer(name: str, value: Any) -> int:
    """An int argument as an int: TypeError for anything else (bool included, as PyTorch)."""
    if isinstance(value, bool) or not hasattr(type(value), "__index__"):
        raise TypeError(f"{name} must be an int, got {value!r}")
    return operator.index(value)


def int_in(name: str, value: object, low: int, high: int) -> int:
    """An int argument within [low, high]: ctypes would wrap anything outside silently."""
    v = integer(name, value)
    if not low <= v <= high:
        raise ValueError(f"{name} must be between {low} and {high}, got {v}")
    return v


def count(name: str, value: Any) -> int:
    """A C unsigned argument as an int; ValueError otherwise, as PyTorch's split gives."""
    what = "nonnegative integers" if name.endswith(" entries") else "a nonnegative integer"
    if isinstance(value, bool) or not hasattr(type(value), "__index__"):
        raise ValueError(f"{name} must be {what}, got {value!r}")
    v = operator.index(value)
    if v < 0:
        raise ValueError(f"{name} must be {what}, got {v!r}")
    if v > UINT_MAX:
        raise ValueError(f"{name} must be below 2**32, got {v}")
    return v


def real(name: str, value: object) -> float:
    """A real number argument as the C double it becomes (its range the C library's to check)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__} "
                        f"{value!r:.60}")
    return float(value)


def text(name: str, value: object) -> bytes:
    """A str argument as the C string it becomes (UTF-8), refused where C would misread it."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__} {value!r:.60}")
    if "\0" in value:
        raise ValueError(f"{name} has an embedded NUL (\\x00): C would end it there")
    try:
        return value.encode()
    except UnicodeEncodeError as e:
        raise ValueError(f"{name} is not encodable as UTF-8: {e.reason} at {e.start}") from None


def path(name: str, value: Any) -> bytes:
    """A str or os.PathLike argument as the C string it becomes (the file system's encoding)."""
    try:
        raw = os.fsencode(value)
    except TypeError:
        raise TypeError(f"{name} must be a str or os.PathLike, got {type(value).__name__} "
                        f"{value!r:.60}") from None
    if b"\0" in raw:
        raise ValueError(f"{name} has an embedded NUL (\\x00): C would end it there")
    return raw


def driver_handle(name: str, value: Any) -> int:
    """A raw driver handle (CUgreenCtx, CUstream) as a nonzero int: an int, or an object that
    converts to one as cuda.bindings' handle types do (int(h))."""
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


def instance(name: str, value: object, kind: type[_T]) -> _T:
    """value when it is a kind (a greenctx class), else TypeError naming what was given."""
    if not isinstance(value, kind):
        raise TypeError(f"{name} must be a greenctx.{kind.__name__}, "
                        f"got {type(value).__name__}")
    return value


def cuda_torch() -> Any:
    """PyTorch when the program imported it and it sees CUDA, else None."""
    torch = sys.modules.get("torch")
    if torch is None or getattr(torch, "cuda", None) is None:
        return None
    try:
        return torch if torch.cuda.is_available() else None
    except Exception:  # noqa: BLE001 - a broken CUDA install: act as without PyTorch
        return None


def current_device() -> int:
    """PyTorch's current device when PyTorch with CUDA is loaded, else device 0."""
    torch = cuda_torch()
    return torch.cuda.current_device() if torch is not None else 0


def device_ordinal(device_id: object) -> int:
    if device_id is None:
        return current_device()
    if type(device_id) is int and 0 <= device_id <= INT_MAX:  # the common case, quickly
        return device_id
    return int_in("device_id", device_id, 0, INT_MAX)


def driver_version() -> int:
    """The CUDA driver's version, 1000*major + 10*minor (13000 for 13.0)."""
    return out_int("gctx_driver_version")


def stream_handle(stream: object) -> int:
    """A CUstream as a nonzero int, from an int, a cuda.bindings CUstream or an object
    speaking __cuda_stream__."""
    proto = getattr(stream, "__cuda_stream__", None)
    if proto is not None:
        version, handle = proto() if callable(proto) else proto
        return driver_handle("stream", handle)
    return driver_handle("stream", stream)
