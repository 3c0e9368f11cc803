"""cuda.core interop: SMPartition <-> cuda.core SMResource, and cuda.core green Contexts as
greenctx GreenContexts. cuda.core is imported only when these are called.

The C library's partitions are opaque (no CUdevResource goes in or out of it), so both
directions go through a green context, which both libraries can name: a cuda.core stream
on a green context says which CUgreenCtx it belongs to (cuStreamGetGreenCtx, driver 13.0+),
and a cuda.core stream on a greenctx stream reports its context's resources.

This module speaks the C library's handles only (SMPartition.to_sm_resource,
SMPartition.from_sm_resource and GreenContext.adopt wrap what it returns), so that it sits
below the modules of the objects and imports none of them.
"""
from __future__ import annotations

import contextlib
from typing import Any

from . import _capi
from ._capi import lib
from ._errors import out_int
from ._object import device_ordinal, stream_handle


def _core() -> Any:
    try:
        import cuda.core as core  # noqa: PLC0415 - optional
    except ImportError as e:
        raise ImportError("greenctx needs cuda.core for this (pip install cuda-core)") from e
    return core


def _owned(held: contextlib.ExitStack, kind: str, name: str, *args: Any) -> int:
    """The handle lib.<name> makes, released (gctx_<kind>_release) when held closes."""
    h = out_int(name, *args)
    held.callback(getattr(lib, f"gctx_{kind}_release"), h)
    return h


def adopt_core_context(core_context: Any) -> int:
    """A gctx_context (a handle the caller owns) adopting a cuda.core green Context
    (Device.create_context), never destroying it: the cuda.core Context must stay alive
    while the context is used."""
    if not getattr(core_context, "is_green", False):
        raise ValueError("adopt needs a green cuda.core Context (Device.create_context with "
                         "ContextOptions(resources=[...])), got a primary one")
    with contextlib.ExitStack() as held:
        core_stream = core_context.create_stream()
        held.callback(core_stream.close)
        stream = _owned(held, "stream", "gctx_stream_adopt", stream_handle(core_stream))
        return out_int("gctx_stream_context", stream)


def to_sm_resource(partition: int) -> Any:
    """A gctx_partition's SMs as a cuda.core SMResource (of a green context made on them)."""
    core = _core()
    with contextlib.ExitStack() as held:
        context = _owned(held, "context", "gctx_context_create", partition,
                         _capi.ContextOptions())
        stream = _owned(held, "stream", "gctx_stream_create", context, _capi.StreamOptions())
        core_stream = core.Stream.from_handle(lib.gctx_stream_handle(stream))
        held.callback(core_stream.close)
        return core_stream.resources.sm


def from_sm_resource(resource: Any, device_id: int | None = None) -> int:
    """A cuda.core SMResource as a gctx_partition (a handle the caller owns) with the same
    SMs: the partition of a greenctx context made on them (it keeps that context alive)."""
    core = _core()
    with contextlib.ExitStack() as held:
        core_context = core.Device(device_ordinal(device_id)).create_context(
            core.ContextOptions(resources=[resource]))
        held.callback(core_context.close)
        adopted = adopt_core_context(core_context)
        held.callback(lib.gctx_context_release, adopted)
        sms = _owned(held, "partition", "gctx_context_partition", adopted)
        own = _owned(held, "context", "gctx_context_create", sms, _capi.ContextOptions())
        return out_int("gctx_context_partition", own)
