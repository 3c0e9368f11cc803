"""GreenContext (PyTorch's torch.cuda.green_contexts.GreenContext, made by the C library) and
the Streams and Events it makes: they refer to each other, so they live in one module."""
from __future__ import annotations

import ctypes
import warnings
from typing import TYPE_CHECKING, Any

from . import _capi, _driver, _interop
from ._capi import lib
from ._errors import Error, UnsupportedError, check, error_from_status, out_int
from ._object import (INT_MAX, UINT_MAX, Handle, count, cuda_torch, device_ordinal,
                      driver_handle, info_field, instance, int_in, integer, stream_handle)
from ._torch import as_torch_stream
from .partition import Relation, Rounding, SMPartition, prepare, relation

if TYPE_CHECKING:
    from collections.abc import Sequence


# PyTorch's workqueue_scope strings -> gctx_workqueue_scope (None: no workqueue configuration).
_WORKQUEUE_SCOPES = {None: _capi.GCTX_WORKQUEUE_SCOPE_DEFAULT,
                     "device_ctx": _capi.GCTX_WORKQUEUE_SCOPE_DEVICE_CTX,
                     "balanced": _capi.GCTX_WORKQUEUE_SCOPE_BALANCED}
_SCOPE_NAMES = {v: k for k, v in _WORKQUEUE_SCOPES.items()}

_MAX_SMS = 4096  # room for the %smid map of any GPU
_DEFAULT_STREAM_OPTIONS = _capi.StreamOptions()  # priority 0; the C library only reads it
STREAMS_PER_CONTEXT = 32  # PyTorch's pool of streams per green context

_CONTEXT_STACK_DEPRECATION = (
    "GreenContext.set_context and GreenContext.pop_context are deprecated: create a stream "
    "with GreenContext.Stream() and use torch.cuda.stream(stream) instead.")


# The options without workqueue settings, by fresh (the C library only reads them).
_PLAIN_OPTIONS = {False: _capi.ContextOptions(),
                  True: _capi.ContextOptions(flags=_capi.GCTX_CONTEXT_FRESH)}


def context_options(workqueue_scope: str | None, workqueue_concurrency_limit: int | None,
                    fresh: bool = False) -> _capi.Struct:
    if workqueue_scope is None and workqueue_concurrency_limit is None:
        return _PLAIN_OPTIONS[bool(fresh)]
    if workqueue_scope not in _WORKQUEUE_SCOPES:
        raise ValueError(f"workqueue_scope must be 'device_ctx' or 'balanced', "
                         f"got {workqueue_scope!r}")
    if workqueue_concurrency_limit is not None and workqueue_scope is None:
        raise RuntimeError("workqueue_concurrency_limit requires workqueue_scope to be set")
    limit = workqueue_concurrency_limit
    return _capi.ContextOptions(
        workqueue_scope=_WORKQUEUE_SCOPES[workqueue_scope],
        workqueue_concurrency_limit=0 if limit is None else count("workqueue_concurrency_limit",
                                                                  limit),
        flags=_capi.GCTX_CONTEXT_FRESH if fresh else 0)


def _create_with_sms(device: int, num_sms: Any, rounding: Rounding | str | None,
                     options: _capi.Struct) -> int:
    """A context of num_sms SMs of a device, in one C call: rounding None is PyTorch's (its
    range, the driver's rounding up), "strict" the C library's check, others a split's."""
    if rounding is None:
        n = integer("num_sms", num_sms)
        error = None  # stays None for a count out of PyTorch's range (ctypes would wrap it)
        if 0 < n <= UINT_MAX:
            try:
                return out_int("gctx_context_create_at_least", device, n, options)
            except Error as e:
                error = _one_group_message(e)
        with SMPartition.from_device(device) as whole:  # PyTorch's message for its range
            if error is None or n > whole.sm_count:
                raise RuntimeError("Invalid number of SMs requested for green context: "
                                   f"{n} (device has {whole.sm_count} SMs)")
        raise error
    n = count("num_sms", num_sms)
    out = ctypes.c_void_p()
    if rounding == "strict":
        code = lib.gctx_context_create_with_sms(device, n, options, ctypes.byref(out))
    else:
        groups, _, split_opts, _, _ = prepare(n, 0, 0, False, None, rounding)
        code = lib.gctx_context_split_device(device, groups, 1, split_opts, options,
                                             ctypes.byref(out), None)
    if code:
        raise _one_group_message(error_from_status(code))
    return out.value or 0


def _one_group_message(error: Error) -> Error:
    """The library's message for a one-group request, without its group index: the
    constructor asks for one context, not for groups."""
    message = str(error)
    if message.startswith("group 0: "):
        error.args = (message[len("group 0: "):],)
    elif message.startswith("group 0 "):
        error.args = ("the context " + message[len("group 0 "):],)
    return error


class Stream(Handle):
    """A non-blocking CUDA stream whose work runs on one green context's SMs."""

    __slots__ = ("_cu_stream",)  # the CUstream, once asked (it never changes)
    _cu_stream: int | None
    _release = "gctx_stream_release"
    _how = "get one from GreenContext.stream(), GreenContext.Stream() or Stream.adopt()"

    def _own(self, h: int | None) -> None:
        super()._own(h)
        self._cu_stream = None

    @classmethod
    def adopt(cls, stream: Any) -> Stream:
        """Wraps a green context's stream made elsewhere (a CUstream or __cuda_stream__),
        never destroying it."""
        return cls._made_by("gctx_stream_adopt", stream_handle(stream))

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
        return GreenContext._made_by("gctx_stream_context", self._handle)

    @property
    def device_id(self) -> int:
        device: int = self._info
        if device is None:  # a stream's device never changes: ask its context once
            with self.context as ctx:
                device = self._info = ctx.device_id
        return device

    @property
    def priority(self) -> int:
        return out_int("gctx_stream_priority", self._handle)

    def synchronize(self) -> None:
        """Waits until the work submitted so far is done."""
        check(lib.gctx_stream_synchronize(self._handle))

    def record_event(self, event: Event | None = None) -> Event:
        """Records an event (a new one when None) after the work submitted so far."""
        if event is None:
            with self.context as ctx:
                event = Event(ctx)
        check(lib.gctx_event_record(instance("event", event, Event)._handle, self._handle))
        return event

    def wait_event(self, event: Event) -> None:
        """Makes later work on this stream wait for the event (no host sync)."""
        check(lib.gctx_stream_wait_event(self._handle, instance("event", event, Event)._handle))

    def wait_stream(self, stream: Any) -> None:
        """Makes later work on this stream wait for the work submitted so far to another."""
        with green_stream(stream).record_event() as event:
            self.wait_event(event)

    def observe_sms(self) -> list[int]:
        """The physical SM ids (%smid) a kernel on this stream ran on, sorted."""
        ids = (ctypes.c_uint * _MAX_SMS)()
        n = out_int("gctx_stream_observe_sms", self._handle, ids, _MAX_SMS)
        return list(ids[:min(n, _MAX_SMS)])


class Event(Handle):
    """An event of a green context's device (timing disabled), to order work across streams."""

    __slots__ = ()
    _release = "gctx_event_release"

    def __init__(self, context: GreenContext) -> None:
        self._own(out_int("gctx_event_create", instance("context", context, GreenContext)._handle))

    @property
    def handle(self) -> int:
        """The CUevent, as an int."""
        event: int = lib.gctx_event_handle(self._handle)
        return event

    def record(self, stream: Any) -> None:
        """Records the event after the work submitted so far to a stream of greenctx."""
        check(lib.gctx_event_record(self._handle, green_stream(stream)._handle))

    def wait(self, stream: Any) -> None:
        """Makes later work on a greenctx stream wait for this event."""
        green_stream(stream).wait_event(self)

    def synchronize(self) -> None:
        check(lib.gctx_event_synchronize(self._handle))


def green_stream(stream: Any) -> Stream:
    """The greenctx Stream behind a stream object GreenContext gave."""
    if isinstance(stream, Stream):
        return stream
    held = getattr(stream, "greenctx_stream", None)
    if isinstance(held, Stream):
        return held
    raise TypeError(f"expected a greenctx stream, got {type(stream).__name__}")


# GreenContext's methods Stream and Event hide the classes inside its body: these names
# don't, for its annotations.
_Stream = Stream
_Event = Event


class GreenContext(Handle):
    """A CUDA green context: work on its streams runs only on its SMs (docs/python.md)."""

    __slots__ = ("_pushed", "_pool", "_pool_next")
    _pushed: tuple[Any] | None  # set_context's parent stream, until pop_context
    _pool: list[Stream]         # Stream()'s pool
    _pool_next: int
    _release = "gctx_context_release"
    _info_call = "gctx_context_get_info"

    def __init__(self, *, num_sms: int | None = None, sm_partition: SMPartition | None = None,
                 workqueue_scope: str | None = None,
                 workqueue_concurrency_limit: int | None = None, device_id: int | None = None,
                 rounding: Rounding | str | None = None, fresh: bool = False) -> None:
        """num_sms SMs of a device, the SMs of sm_partition, or with workqueue_scope alone the
        whole device (docs/python.md has the rounding)."""
        options = context_options(workqueue_scope, workqueue_concurrency_limit, fresh)
        if sm_partition is not None and not isinstance(sm_partition, SMPartition):
            raise TypeError("sm_partition must be an SMPartition")
        if num_sms is None and workqueue_scope is None and sm_partition is None:
            raise RuntimeError("At least one of num_sms, workqueue_scope, or sm_partition "
                               "must be specified")
        if num_sms is not None and sm_partition is not None:
            raise RuntimeError("num_sms and sm_partition cannot be specified together")
        if rounding is not None and num_sms is None:
            raise ValueError("rounding applies to num_sms only")
        if sm_partition is not None:
            if device_id is not None and device_ordinal(device_id) != sm_partition.device_id:
                raise ValueError("device_id must match the SM partition's device")
            h = out_int("gctx_context_create", sm_partition._handle, options)
        elif num_sms is not None:
            h = _create_with_sms(device_ordinal(device_id), num_sms, rounding, options)
        else:  # the whole device, with a workqueue configuration
            with SMPartition.from_device(device_id) as whole:
                h = out_int("gctx_context_create", whole._handle, options)
        self._own(h)

    def _own(self, h: int | None) -> None:
        super()._own(h)
        self._pushed, self._pool, self._pool_next = None, [], 0

    @classmethod
    def adopt(cls, green_handle: Any) -> GreenContext:
        """Wraps a green context made elsewhere (a CUgreenCtx or a cuda.core green Context),
        never destroying it."""
        if hasattr(green_handle, "is_green") and hasattr(green_handle, "create_stream"):
            return cls._wrap(_interop.adopt_core_context(green_handle))
        return cls._made_by("gctx_context_adopt", driver_handle("green_handle", green_handle))

    @staticmethod
    def create(num_sms: int | None = None, device_id: int | None = None, *,
               sm_partition: SMPartition | None = None, workqueue_scope: str | None = None,
               workqueue_concurrency_limit: int | None = None,
               rounding: Rounding | str | None = None, fresh: bool = False) -> GreenContext:
        """The constructor, with num_sms and device_id positional (as PyTorch has it)."""
        return GreenContext(**locals())  # the arguments, as they came

    @staticmethod
    def split(*, num_sms: int | Sequence[int] = 0,
              coscheduled_sm_count: int | Sequence[int] = 0,
              preferred_coscheduled_sm_count: int | Sequence[int] = 0,
              backfill: bool | Sequence[bool] = False,
              locality_domain_ids: int | None | Sequence[int | None] = None,
              workqueue_scope: str | None = None, workqueue_concurrency_limit: int | None = None,
              device_id: int | None = None, rounding: Rounding | str = "strict",
              fresh: bool = False) -> tuple[GreenContext, ...]:
        """Contexts on disjoint SMs of a device, one per group (as SMPartition.split)."""
        options = context_options(workqueue_scope, workqueue_concurrency_limit, fresh)
        device = device_ordinal(device_id)
        groups, n, split_opts, outputs_type, _ = prepare(num_sms, coscheduled_sm_count,
                                                      preferred_coscheduled_sm_count, backfill,
                                                      locality_domain_ids, rounding)
        outputs = outputs_type()
        check(lib.gctx_context_split_device(device, groups, n, split_opts, options, outputs,
                                            None))
        return tuple(map(GreenContext._wrap, outputs[:]))

    device_id = info_field("device", "The device index of this green context.")
    sm_count = info_field("sm_count", "The number of SMs this context's work may use.")

    @property
    def id(self) -> int | None:
        """The driver's unique id of the context (12.9+), else None."""
        info = self._get_info()
        return info.id if info.has_id else None

    @property
    def adopted(self) -> bool:
        return bool(self._get_info().adopted)

    @property
    def workqueue_scope(self) -> str | None:
        """"device_ctx", "balanced", or None when the driver's default was left."""
        return _SCOPE_NAMES.get(self._get_info().workqueue_scope)

    @property
    def workqueue_concurrency_limit(self) -> int | None:
        """The limit set at creation, or None when unknown or not set."""
        return self._get_info().workqueue_concurrency_limit or None

    @property
    def sm_partition(self) -> SMPartition:
        """The context's SMs as an SMPartition (kind "context")."""
        return SMPartition._made_by("gctx_context_partition", self._handle)

    @property
    def locality_domain_id(self) -> int | None:
        """The context's locality domain (driver 13.4+), or None."""
        try:
            return out_int("gctx_context_locality_domain", self._handle)
        except UnsupportedError:
            return None

    @staticmethod
    def max_workqueue_concurrency(device_id: int | None = None) -> int:
        """The workqueue concurrency limit a device's contexts get by default (13.1+)."""
        return out_int("gctx_device_get_max_workqueue_concurrency", device_ordinal(device_id))

    @property
    def green_handle(self) -> int:
        """The raw CUgreenCtx, as an int (owned by this context)."""
        green: int = lib.gctx_context_green_handle(self._handle)
        return green

    @property
    def cu_context(self) -> int:
        """The CUcontext of cuCtxFromGreenCtx, as an int."""
        cu: int = lib.gctx_context_cu_context(self._handle)
        return cu

    def stream(self, priority: int = 0) -> _Stream:
        """A new greenctx Stream on this context (whether PyTorch is there or not)."""
        if priority == 0 and type(priority) is int:
            options = _DEFAULT_STREAM_OPTIONS
        else:
            options = _capi.StreamOptions(priority=int_in("priority", priority, -INT_MAX - 1,
                                                          INT_MAX))
        return Stream._made_by("gctx_stream_create", self._handle, options)

    def Stream(self) -> Any:  # noqa: N802 - PyTorch's name
        """A stream of this context's pool of 32, round-robin as PyTorch's: a
        torch.cuda.Stream when PyTorch sees CUDA, else a greenctx Stream (docs/python.md)."""
        index = self._pool_next % STREAMS_PER_CONTEXT
        if index == len(self._pool):
            self._pool.append(self.stream())
        self._pool_next = index + 1
        pooled = self._pool[index]
        own = Stream._wrap(lib.gctx_stream_retain(pooled._handle))
        own._cu_stream = pooled._cu_stream
        stream = as_torch_stream(own, self)
        pooled._cu_stream = own._cu_stream  # the CUstream, where PyTorch's stream asked for it
        return stream

    def Event(self) -> _Event:  # noqa: N802 - as Stream()
        """An event of this context's device, to order work across partitions."""
        return Event(self)

    def record_event(self, event: _Event | None = None) -> _Event:
        """Records an event (a new one when None) after the work of every stream of it."""
        event = instance("event", event, Event) if event is not None else self.Event()
        check(lib.gctx_event_record_context(event._handle, self._handle))
        return event

    def wait_event(self, event: _Event) -> None:
        """Makes later work of every stream of this context wait for the event."""
        check(lib.gctx_context_wait_event(self._handle, instance("event", event, Event)._handle))

    def relation(self, other: GreenContext) -> Relation:
        """Relation.DISJOINT, MAY_OVERLAP or OVERLAP: what is known of two contexts' SMs."""
        return relation("gctx_context_relation", self, other)

    def observe_sms(self) -> list[int]:
        """The physical SM ids (%smid) a kernel on this context ran on, sorted."""
        with self.stream() as s:
            return s.observe_sms()

    def close(self) -> None:
        """Drops this object's reference and its pool of streams (Stream()'s stay usable)."""
        pool, self._pool = self._pool, []
        for stream in pool:
            stream.close()
        super().close()

    def set_context(self) -> None:
        """Deprecated (as in PyTorch): pushes this context and switches PyTorch's stream."""
        warnings.warn(_CONTEXT_STACK_DEPRECATION, FutureWarning, stacklevel=2)
        if self._pushed is not None:
            raise RuntimeError("set_context called twice before pop_context")
        torch = cuda_torch()
        parent = torch.cuda.current_stream() if torch else None
        if torch:
            event = torch.cuda.Event()
            event.record(parent)
        if _driver.current_context():  # as PyTorch: set it when none is current
            _driver.push_context(self.cu_context)
        else:
            _driver.set_current_context(self.cu_context)
        self._pushed = (parent,)
        if torch:
            stream = torch.cuda.default_stream(self.device_id)
            event.wait(stream)
            torch.cuda.set_stream(stream)

    def pop_context(self) -> None:
        """Deprecated: undoes set_context (this context must be the current one)."""
        warnings.warn(_CONTEXT_STACK_DEPRECATION, FutureWarning, stacklevel=2)
        if self._pushed is None:
            raise RuntimeError("pop_context called without matching set_context")
        (parent,), self._pushed = self._pushed, None
        torch = cuda_torch() if parent is not None else None
        if torch:
            event = torch.cuda.Event()
            event.record(torch.cuda.current_stream())
        popped = _driver.pop_context()
        if popped != self.cu_context:
            raise RuntimeError("expected popped context to be the current ctx")
        if torch:
            event.wait(parent)
            torch.cuda.set_stream(parent)

    def _describe(self) -> str:
        return f"on device {self.device_id}: {self.sm_count} SMs"
