"""cuda.core interop: SMPartition <-> cuda.core SMResource, and cuda.core green Contexts as
greenctx GreenContexts. cuda.core is imported only when these are called.

The C library's partitions are opaque (no CUdevResource goes in or out of it), so both
directions go through a green context, which both libraries can name: a cuda.core stream
on a green context says which CUgreenCtx it belongs to (cuStreamGetGreenCtx, driver 13.0+),
and a cuda.core stream on a greenctx stream reports its context's resources.

SMPartition and GreenContext call this module, so it names their classes through
_object.handle_class rather than importing their modules.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._object import device_ordinal, handle_class, instance

if TYPE_CHECKING:
    from .context import GreenContext
    from .partition import SMPartition


def _core():
    try:
        import cuda.core as core  # noqa: PLC0415 - optional
    except ImportError as e:
        raise ImportError("greenctx.interop needs cuda.core (pip install cuda-core)") from e
    return core


def adopt_core_context(core_context: Any) -> GreenContext:
    """A greenctx GreenContext on a cuda.core green Context (Device.create_context), never
    destroying it: the cuda.core Context must stay alive while the GreenContext is used."""
    if not getattr(core_context, "is_green", False):
        raise ValueError("adopt needs a green cuda.core Context (Device.create_context with "
                         "ContextOptions(resources=[...])), got a primary one")
    core_stream = core_context.create_stream()
    try:
        with handle_class("stream").adopt(core_stream) as stream:
            return stream.context
    finally:
        core_stream.close()


def to_sm_resource(partition: SMPartition) -> Any:
    """The partition's SMs as a cuda.core SMResource (of a green context made on them)."""
    core = _core()
    instance("partition", partition, handle_class("partition"))
    with handle_class("context")(sm_partition=partition) as ctx, ctx.stream() as stream:
        core_stream = core.Stream.from_handle(stream.handle)
        try:
            return core_stream.resources.sm
        finally:
            core_stream.close()


def from_sm_resource(resource: Any, device_id: int | None = None) -> SMPartition:
    """A cuda.core SMResource as an SMPartition with the same SMs: the partition of a
    greenctx context made on them (it keeps that context alive while it is in use)."""
    core = _core()
    core_context = core.Device(device_ordinal(device_id)).create_context(
        core.ContextOptions(resources=[resource]))
    try:
        with adopt_core_context(core_context) as adopted, adopted.sm_partition as sms, \
                handle_class("context")(sm_partition=sms) as own:
            return own.sm_partition
    finally:
        core_context.close()
