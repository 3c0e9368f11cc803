"""cuda.core interop (imported only when called), in C handles: the objects' modules wrap them.
The C library's partitions are opaque, so both directions go through a green context, which
both libraries can name (a stream on one says which CUgreenCtx it belongs to, driver 13.0+).
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
    """A gctx_context (the caller's) adopting a cuda.core green Context, never destroying it."""
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
    """A cuda.core SMResource as a gctx_partition (the caller's) of a context made on them."""
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
