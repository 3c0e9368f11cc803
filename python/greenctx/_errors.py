"""greenctx's exceptions: each failed C call becomes one, carrying the library's message, also
the built-in exception a PyTorch user expects (docs/python.md, "Errors")."""
from __future__ import annotations

import ctypes
from typing import Any

from ._capi import SIGNATURES, lib


class Error(RuntimeError):
    """A failed greenctx call."""

    def __init__(self, message: str, status: str = "GCTX_ERROR_DRIVER",
                 cuda_result: int = 0) -> None:
        super().__init__(message)
        self.status = status
        self.cuda_result = cuda_result


class InvalidArgumentError(Error, ValueError):
    """A count or option the device or driver can't take; the message says what would work."""


class InsufficientSMsError(Error, ValueError):
    """The groups asked for don't fit in the partition's SMs."""


class UnsupportedError(Error):
    """Not available on this driver or device (the message names the version it needs)."""


class NoDriverError(Error):
    """No CUDA driver could be loaded."""


class NoDeviceError(Error):
    """No such CUDA device."""


class InvalidHandleError(Error):
    """An object that was already released."""


class DriverError(Error):
    """The CUDA driver failed a call (see .cuda_result)."""


class OutOfMemoryError(Error, MemoryError):
    """Host memory ran out."""


class BusyError(Error):
    """The SMs asked for are held by other claims (the message names the holders)."""


class RegistryError(Error):
    """The claims registry can't be trusted: foreign, corrupt or unsafe."""


_BY_STATUS = {
    "GCTX_ERROR_INVALID_ARGUMENT": InvalidArgumentError,
    "GCTX_ERROR_INVALID_HANDLE": InvalidHandleError,
    "GCTX_ERROR_NO_DRIVER": NoDriverError,
    "GCTX_ERROR_NO_DEVICE": NoDeviceError,
    "GCTX_ERROR_UNSUPPORTED": UnsupportedError,
    "GCTX_ERROR_DRIVER": DriverError,
    "GCTX_ERROR_OUT_OF_MEMORY": OutOfMemoryError,
    "GCTX_ERROR_INSUFFICIENT_SMS": InsufficientSMsError,
    "GCTX_ERROR_BUSY": BusyError,
    "GCTX_ERROR_REGISTRY": RegistryError,
}


def error_from_status(code: int) -> Error:
    """The exception for a failed call's status, with this thread's message."""
    name = lib.gctx_status_name(code).decode()
    message = lib.gctx_last_error().decode(errors="replace")
    return _BY_STATUS.get(name, Error)(message, name, lib.gctx_last_cuda_result())


def check(code: int) -> None:
    if code:
        raise error_from_status(code)


def out(name: str, *args: Any) -> Any:
    """What lib.<name>(*args, &out) writes to out (its last parameter's type), checked."""
    value = SIGNATURES[name][1][-1]._type_()
    check(getattr(lib, name)(*args, ctypes.byref(value)))
    return value


def out_int(name: str, *args: Any) -> int:
    """out()'s value, for an int, unsigned or handle output."""
    value: int = out(name, *args).value
    return value
