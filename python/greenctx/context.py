"""GreenContext: a CUDA green context, with the constructor, properties and methods of
PyTorch's torch.cuda.green_contexts.GreenContext, made by the C library.
"""
import ctypes
import warnings

from . import _capi, _driver
from ._capi import lib
from ._errors import UnsupportedError, check
from ._object import Handle, count, device_ordinal, info_field
from .partition import SMPartition, relation

# PyTorch's workqueue_scope strings -> gctx_workqueue_scope (None: no workqueue configuration).
_WORKQUEUE_SCOPES = {None: _capi.GCTX_WORKQUEUE_SCOPE_DEFAULT,
                     "device_ctx": _capi.GCTX_WORKQUEUE_SCOPE_DEVICE_CTX,
                     "balanced": _capi.GCTX_WORKQUEUE_SCOPE_BALANCED}
_SCOPE_NAMES = {v: k for k, v in _WORKQUEUE_SCOPES.items()}

_CONTEXT_STACK_DEPRECATION = (
    "GreenContext.set_context and GreenContext.pop_context are deprecated: create a stream "
    "with GreenContext.Stream() and use torch.cuda.stream(stream) instead.")


def context_options(workqueue_scope, workqueue_concurrency_limit, fresh=False):
    if workqueue_scope not in _WORKQUEUE_SCOPES:
        raise ValueError(f"workqueue_scope must be 'device_ctx' or 'balanced', "
                         f"got {workqueue_scope!r}")
    if workqueue_concurrency_limit is not None and workqueue_scope is None:
        raise RuntimeError("workqueue_concurrency_limit requires workqueue_scope to be set")
    options = _capi.ContextOptions()
    options.workqueue_scope = _WORKQUEUE_SCOPES[workqueue_scope]
    if workqueue_concurrency_limit is not None:
        options.workqueue_concurrency_limit = count("workqueue_concurrency_limit",
                                                    workqueue_concurrency_limit)
    if fresh:
        options.flags = _capi.GCTX_CONTEXT_FRESH
    return options


class GreenContext(Handle):
    """A CUDA green context: work on its streams runs only on its SMs.

    GreenContext(num_sms=N) takes N SMs of a device; GreenContext(sm_partition=p) the SMs of
    a partition (several contexts on one partition share them); workqueue_scope alone takes
    the whole device with a workqueue configuration (driver 13.1+). Put work on it through
    Stream():

        ctx = GreenContext(num_sms=16)
        with torch.cuda.stream(ctx.Stream()):
            ...

    Work in the primary context (ordinary streams) still runs on every SM, this context's
    included: order work across streams with events, as with any other stream.
    """

    __slots__ = ("_pushed",)
    _release = "gctx_context_release"
    _info_call, _info_type = "gctx_context_get_info", _capi.ContextInfo

    def __init__(self, *, num_sms=None, sm_partition=None, workqueue_scope=None,
                 workqueue_concurrency_limit=None, device_id=None, fresh=False):
        self._h, self._info, self._pushed = None, None, None
        options = context_options(workqueue_scope, workqueue_concurrency_limit, fresh)
        if sm_partition is not None and not isinstance(sm_partition, SMPartition):
            raise TypeError("sm_partition must be an SMPartition")
        if num_sms is not None and sm_partition is not None:
            raise ValueError("num_sms and sm_partition are mutually exclusive")
        if num_sms is None and sm_partition is None and workqueue_scope is None:
            raise RuntimeError("At least one of num_sms, sm_partition, or workqueue_scope "
                               "must be specified")
        out = ctypes.c_void_p()
        if sm_partition is not None:
            if device_id is not None and device_ordinal(device_id) != sm_partition.device_id:
                raise ValueError("device_id must match the SM partition's device")
            check(lib.gctx_context_create(sm_partition._handle, ctypes.byref(options),
                                          ctypes.byref(out)))
        elif num_sms is not None:
            check(lib.gctx_context_create_with_sms(device_ordinal(device_id),
                                                   count("num_sms", num_sms),
                                                   ctypes.byref(options), ctypes.byref(out)))
        else:  # the whole device, with a workqueue configuration
            with SMPartition.from_device(device_id) as whole:
                check(lib.gctx_context_create(whole._handle, ctypes.byref(options),
                                              ctypes.byref(out)))
        self._h = out.value

    @classmethod
    def _wrap(cls, handle):
        self = super()._wrap(handle)
        self._pushed = None
        return self

    @classmethod
    def adopt(cls, green_handle):
        """Wraps a CUgreenCtx someone else made (PyTorch, cuda.core), never destroying it:
        its maker must keep it alive while this object lives."""
        out = ctypes.c_void_p()
        check(lib.gctx_context_adopt(green_handle, ctypes.byref(out)))
        return cls._wrap(out.value)

    @staticmethod
    def create(*, num_sms=None, sm_partition=None, workqueue_scope=None,
               workqueue_concurrency_limit=None, device_id=None, fresh=False):
        """Same as the constructor (kept as PyTorch keeps it)."""
        return GreenContext(num_sms=num_sms, sm_partition=sm_partition,
                            workqueue_scope=workqueue_scope,
                            workqueue_concurrency_limit=workqueue_concurrency_limit,
                            device_id=device_id, fresh=fresh)

    @staticmethod
    def split(*, num_sms=0, coscheduled_sm_count=0, preferred_coscheduled_sm_count=0,
              backfill=False, workqueue_scope=None, workqueue_concurrency_limit=None,
              device_id=None, rounding="strict", fresh=False):
        """Contexts on disjoint SMs of a device, one per group (options as SMPartition.split;
        the workqueue options and fresh apply to each). The SMs left over are not used."""
        options = context_options(workqueue_scope, workqueue_concurrency_limit, fresh)
        with SMPartition.from_device(device_id) as whole:
            parts, rest = whole.split(num_sms=num_sms, coscheduled_sm_count=coscheduled_sm_count,
                                      preferred_coscheduled_sm_count=preferred_coscheduled_sm_count,
                                      backfill=backfill, rounding=rounding)
        try:
            contexts = []
            for p in parts:
                out = ctypes.c_void_p()
                check(lib.gctx_context_create(p._handle, ctypes.byref(options),
                                              ctypes.byref(out)))
                contexts.append(GreenContext._wrap(out.value))
            return tuple(contexts)
        except BaseException:
            for c in contexts:
                c.close()
            raise
        finally:
            for p in parts:
                p.close()
            if rest is not None:
                rest.close()

    device_id = info_field("device", "The device index of this green context.")
    sm_count = info_field("sm_count", "The number of SMs this context's work may use.")

    @property
    def id(self):
        """The driver's unique id of the context (12.9+), else None."""
        info = self._get_info()
        return info.id if info.has_id else None

    @property
    def adopted(self):
        return bool(self._get_info().adopted)

    @property
    def workqueue_scope(self):
        """"device_ctx", "balanced", or None when the driver's default was left."""
        return _SCOPE_NAMES.get(self._get_info().workqueue_scope)

    @property
    def workqueue_concurrency_limit(self):
        """The limit set at creation, or None when unknown or not set."""
        return self._get_info().workqueue_concurrency_limit or None

    @property
    def sm_partition(self):
        """The context's SMs as an SMPartition, which can be split further; it keeps this
        context alive while it is in use."""
        out = ctypes.c_void_p()
        check(lib.gctx_context_partition(self._handle, ctypes.byref(out)))
        return SMPartition(out.value)

    @property
    def locality_domain_id(self):
        """The context's locality domain (driver 13.4+ and a device that has domains), or
        None."""
        out = ctypes.c_uint()
        try:
            check(lib.gctx_context_locality_domain(self._handle, ctypes.byref(out)))
        except UnsupportedError:
            return None
        return out.value

    @staticmethod
    def max_workqueue_concurrency(device_id=None):
        """The workqueue concurrency limit a device's contexts get by default (13.1+)."""
        out = ctypes.c_uint()
        check(lib.gctx_device_get_max_workqueue_concurrency(device_ordinal(device_id),
                                                            ctypes.byref(out)))
        return out.value

    @property
    def green_handle(self):
        """The raw CUgreenCtx, as an int (owned by this context)."""
        return lib.gctx_context_green_handle(self._handle)

    @property
    def cu_context(self):
        """The CUcontext of cuCtxFromGreenCtx, as an int."""
        return lib.gctx_context_cu_context(self._handle)

    def stream(self, priority=0):
        """A greenctx Stream on this context (whether PyTorch is there or not)."""
        from .stream import Stream
        return Stream._create(self, priority)

    def Stream(self):  # noqa: N802 - PyTorch's name
        """A stream whose work runs on this context's SMs: a torch.cuda.Stream (usable with
        torch.cuda.stream()) when PyTorch can be imported, else a greenctx Stream. Either
        keeps the green stream, and so this context, alive, and speaks __cuda_stream__."""
        from .stream import as_torch_stream
        return as_torch_stream(self.stream())

    def Event(self):  # noqa: N802 - as Stream()
        """An event of this context's device, to order work across partitions."""
        from .stream import Event
        return Event(self)

    def record_event(self, event=None):
        """Records an event after the work submitted so far to every stream of this context
        (a new event when none is given); returns it."""
        event = event if event is not None else self.Event()
        check(lib.gctx_event_record_context(event._handle, self._handle))
        return event

    def wait_event(self, event):
        """Makes later work of every stream of this context wait for the event."""
        check(lib.gctx_context_wait_event(self._handle, event._handle))

    def relation(self, other):
        """Relation.DISJOINT, MAY_OVERLAP or OVERLAP: what is known of two contexts' SMs."""
        return relation(lib.gctx_context_relation, self, other)

    def observe_sms(self):
        """The physical SM ids (%smid) a kernel on this context's stream ran on, sorted (the
        simulated driver runs this kernel too)."""
        with self.stream() as s:
            return s.observe_sms()

    def set_context(self):
        """Deprecated (as in PyTorch): pushes this context on the calling thread's context
        stack and, with PyTorch, makes its default stream current after the current work."""
        warnings.warn(_CONTEXT_STACK_DEPRECATION, FutureWarning, stacklevel=2)
        if self._pushed is not None:
            raise RuntimeError("set_context called twice before pop_context")
        torch = _driver.loaded_torch()
        parent = torch.cuda.current_stream() if torch else None
        if torch:
            event = torch.cuda.Event()
            event.record(parent)
        _driver.push_context(self.cu_context)
        self._pushed = (parent,)
        if torch:
            stream = torch.cuda.default_stream(self.device_id)
            event.wait(stream)
            torch.cuda.set_stream(stream)

    def pop_context(self):
        """Deprecated: undoes set_context (this context must be the current one)."""
        warnings.warn(_CONTEXT_STACK_DEPRECATION, FutureWarning, stacklevel=2)
        if self._pushed is None:
            raise RuntimeError("pop_context called without matching set_context")
        (parent,), self._pushed = self._pushed, None
        torch = _driver.loaded_torch() if parent is not None else None
        if torch:
            event = torch.cuda.Event()
            event.record(torch.cuda.current_stream())
        popped = _driver.pop_context()
        if popped != self.cu_context:
            raise RuntimeError("expected popped context to be the current ctx")
        if torch:
            event.wait(parent)
            torch.cuda.set_stream(parent)

    def __repr__(self):
        if self._h is None:
            return "<greenctx.GreenContext destroyed>"
        return f"<greenctx.GreenContext on device {self.device_id}: {self.sm_count} SMs>"
