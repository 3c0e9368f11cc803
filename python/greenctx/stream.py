"""Streams and events on green contexts.

A greenctx Stream owns a green stream of the C library; GreenContext.Stream() hands it to
PyTorch as a torch.cuda.ExternalStream subclass that holds it, so the stream lives as long
as PyTorch's object. Every stream object speaks the __cuda_stream__ protocol (version 0,
the CUstream as an int), which cuda.core, CuPy and Numba take.

GreenContext (context.py) makes streams and events; this module names its class through
_object.handle_class rather than importing context.py.
"""
from __future__ import annotations

import ctypes
import sys
from typing import TYPE_CHECKING, Any

from . import _capi
from ._capi import lib
from ._errors import check
from ._object import INT_MAX, Handle, driver_handle, handle_class, instance, int_in

if TYPE_CHECKING:
    from .context import GreenContext


_MAX_SMS = 4096  # room for the %smid map of any GPU
_DEFAULT_OPTIONS = _capi.StreamOptions()  # priority 0; the C library only reads it


class Stream(Handle):
    """A CUDA stream whose work runs on one green context's SMs. Non-blocking: it never
    synchronises with the legacy default stream. Its release waits for its work."""

    __slots__ = ("_cu_stream",)  # the CUstream, once asked (it never changes)
    _kind, _release = "stream", "gctx_stream_release"

    def __init__(self, h):
        super().__init__(h)
        self._cu_stream = None

    @classmethod
    def _wrap(cls, h, cu_stream=None):
        self = super()._wrap(h)
        self._cu_stream = cu_stream
        return self

    @classmethod
    def _create(cls, context, priority=0):
        if priority == 0 and type(priority) is int:
            options = _DEFAULT_OPTIONS
        else:
            options = _capi.StreamOptions()
            options.priority = int_in("priority", priority, -INT_MAX - 1, INT_MAX)
        out = ctypes.c_void_p()
        check(lib.gctx_stream_create(context._handle, options, ctypes.byref(out)))
        return cls._wrap(out.value)

    @classmethod
    def adopt(cls, stream: Any) -> Stream:
        """Wraps a stream of a green context made by someone else (an int CUstream, or an
        object with __cuda_stream__), never destroying it: its maker keeps it alive."""
        out = ctypes.c_void_p()
        check(lib.gctx_stream_adopt(stream_handle(stream), ctypes.byref(out)))
        return cls(out.value)

    @property
    def handle(self) -> int:
        """The CUstream, as an int (for cudart, cuBLAS, NCCL, ExternalStream)."""
        h = self._handle  # refused once closed
        cu = self._cu_stream
        if cu is None:
            cu = self._cu_stream = lib.gctx_stream_handle(h)
        return cu

    @property
    def cuda_stream(self) -> int:  # PyTorch's and CuPy's name for the same thing
        return self.handle

    def __cuda_stream__(self) -> tuple[int, int]:
        return (0, self.handle)

    @property
    def context(self) -> GreenContext:
        """The GreenContext this stream runs on."""
        out = ctypes.c_void_p()
        check(lib.gctx_stream_context(self._handle, ctypes.byref(out)))
        return handle_class("context")._wrap(out.value)

    @property
    def device_id(self) -> int:
        if self._info is None:  # a stream's device never changes: ask its context once
            with self.context as ctx:
                self._info = ctx.device_id
        return self._info

    @property
    def priority(self) -> int:
        out = ctypes.c_int()
        check(lib.gctx_stream_priority(self._handle, ctypes.byref(out)))
        return out.value

    def synchronize(self) -> None:
        """Waits until the work submitted so far is done."""
        check(lib.gctx_stream_synchronize(self._handle))

    def record_event(self, event: Event | None = None) -> Event:
        """Records an event after the work submitted so far (a new one when none is given,
        of this stream's context); returns it."""
        if event is None:
            with self.context as ctx:
                event = Event(ctx)
        check(lib.gctx_event_record(instance("event", event, Event)._handle, self._handle))
        return event

    def wait_event(self, event: Event) -> None:
        """Makes later work on this stream wait for the event (no host sync)."""
        check(lib.gctx_stream_wait_event(self._handle, instance("event", event, Event)._handle))

    def wait_stream(self, stream: Any) -> None:
        """Makes later work on this stream wait for the work submitted so far to another
        greenctx stream (one on another partition, typically)."""
        with green_stream(stream).record_event() as event:
            self.wait_event(event)

    def observe_sms(self) -> list[int]:
        """The physical SM ids (%smid) a kernel on this stream ran on, sorted. The simulated
        driver runs this kernel too, on the SMs of the stream's partition."""
        ids = (ctypes.c_uint * _MAX_SMS)()
        n = ctypes.c_uint()
        check(lib.gctx_stream_observe_sms(self._handle, ids, _MAX_SMS, ctypes.byref(n)))
        return list(ids[:min(n.value, _MAX_SMS)])

    def __repr__(self):
        if self._h is None:
            return "<greenctx.Stream destroyed>"
        return f"<greenctx.Stream 0x{self.handle or 0:x}>"


class Event(Handle):
    """An event of a green context's device (timing disabled): it orders work on two
    partitions without a host sync. Record it on one stream, make another wait for it."""

    __slots__ = ()
    _kind, _release = "event", "gctx_event_release"

    def __init__(self, context: GreenContext) -> None:
        super().__init__(None)
        instance("context", context, handle_class("context"))
        out = ctypes.c_void_p()
        check(lib.gctx_event_create(context._handle, ctypes.byref(out)))
        self._h = out.value

    @property
    def handle(self) -> int:
        """The CUevent, as an int."""
        return lib.gctx_event_handle(self._handle)

    def record(self, stream: Any) -> None:
        """Records the event after the work submitted so far to a greenctx stream (or the
        torch stream GreenContext.Stream() gave)."""
        check(lib.gctx_event_record(self._handle, green_stream(stream)._handle))

    def wait(self, stream: Any) -> None:
        """Makes later work on a greenctx stream wait for this event."""
        green_stream(stream).wait_event(self)

    def synchronize(self) -> None:
        check(lib.gctx_event_synchronize(self._handle))

    def __repr__(self):
        if self._h is None:
            return "<greenctx.Event destroyed>"
        return f"<greenctx.Event 0x{self.handle or 0:x}>"


def green_stream(stream):
    """The greenctx Stream behind a stream object GreenContext gave."""
    if isinstance(stream, Stream):
        return stream
    held = getattr(stream, "greenctx_stream", None)
    if isinstance(held, Stream):
        return held
    raise TypeError(f"expected a greenctx stream, got {type(stream).__name__}")


def stream_handle(stream):
    """A CUstream as a nonzero int, from an int, a cuda.bindings CUstream or an object
    speaking __cuda_stream__."""
    if hasattr(stream, "__cuda_stream__"):
        proto = stream.__cuda_stream__
        version, handle = proto() if callable(proto) else proto
        return driver_handle("stream", handle)
    return driver_handle("stream", stream)


_torch_stream_class = None


def _torch_class(torch):
    """torch.cuda.ExternalStream holding its greenctx Stream (made once)."""
    global _torch_stream_class
    if _torch_stream_class is None:
        class GreenStream(torch.cuda.ExternalStream):
            """A torch.cuda.Stream on a green context; holds the green stream alive."""

            def __cuda_stream__(self):
                return (0, self.cuda_stream)

            def close(self):
                """Drops this stream's reference to its green stream now (idempotent), as
                greenctx's Stream.close() and cuda.core's Stream.close() do (PyTorch's own
                streams have no close(): theirs goes with the object). The CUstream lives on
                while something else holds it: its context's pool, for GreenContext.Stream()."""
                self.greenctx_stream.close()

        GreenStream.__module__ = __name__
        _torch_stream_class = GreenStream
    return _torch_stream_class


_torch_missing = False  # `import torch` failed once: a retry would search sys.path each time


def _importable_torch():
    global _torch_missing
    torch = sys.modules.get("torch")
    if torch is not None or _torch_missing:
        return torch
    try:
        import torch  # noqa: PLC0415 - only when a stream is asked for
    except ImportError:
        # Not installed; a None in sys.modules is a block that may be lifted (tests do it).
        _torch_missing = "torch" not in sys.modules
        return None
    return torch


def as_torch_stream(stream, context=None):
    """The stream as a torch.cuda.Stream when PyTorch can be imported and sees CUDA, else
    itself. context: the stream's GreenContext where the caller has it (its device is known
    without asking the stream for its context)."""
    torch = _importable_torch()
    if torch is None or not torch.cuda.is_available():
        return stream
    device = stream.device_id if context is None else context.device_id
    ts = _torch_class(torch)(stream_ptr=stream.handle, device=device)
    ts.greenctx_stream = stream  # the green stream lives as long as PyTorch's object
    return ts
