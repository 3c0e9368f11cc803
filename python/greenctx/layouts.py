"""Layouts (the C library's gctx_layouts_*): alternative partitionings of one device made up
front, each partition with its context and stream; switching the work between them makes no
driver object, only events.
"""
from __future__ import annotations

import ctypes
from collections.abc import Sequence
from typing import Any

from ._capi import GCTX_LAYOUTS_ORDER_ALL, GCTX_LAYOUTS_ORDER_BY_PART, lib
from ._errors import check, out_int
from ._object import Handle, count, device_ordinal
from ._torch import as_torch_stream
from .context import GreenContext, Stream, context_options
from .partition import SMPartition

_ORDERS = {"all": GCTX_LAYOUTS_ORDER_ALL, "by_part": GCTX_LAYOUTS_ORDER_BY_PART}


class Layouts(Handle):
    """sm_counts: one row of SM counts per layout, one per partition (a last 0: the rest);
    layout 0 is active at first (docs/python.md, "Layouts")."""

    __slots__ = ("_nb_layouts", "_nb_parts", "_streams")
    _nb_layouts: int
    _nb_parts: int
    _streams: dict[int, tuple[Any, ...]]  # streams(layout), made once
    _release = "gctx_layouts_release"

    def __init__(self, sm_counts: Sequence[Sequence[int]], device_id: int | None = None, *,
                 workqueue_scope: str | None = None,
                 workqueue_concurrency_limit: int | None = None, fresh: bool = False) -> None:
        rows = [list(row) for row in sm_counts]
        if not rows or len({len(row) for row in rows}) != 1 or not rows[0]:
            raise ValueError("sm_counts must be a nonempty list of rows of one nonzero length")
        self._nb_layouts, self._nb_parts = len(rows), len(rows[0])
        counts = [count("sm_counts entries", v) for row in rows for v in row]
        options = context_options(workqueue_scope, workqueue_concurrency_limit, fresh)
        self._own(out_int("gctx_layouts_create", device_ordinal(device_id),
                          (ctypes.c_uint * len(counts))(*counts), self._nb_layouts,
                          self._nb_parts, options))
        self._streams = {}

    def __len__(self) -> int:
        return self._nb_layouts

    @property
    def nb_parts(self) -> int:
        return self._nb_parts

    @property
    def active(self) -> int:
        """The index of the active layout."""
        return out_int("gctx_layouts_get_active", self._handle)

    def _get(self, layout: int, part: int, which: int) -> int:
        layout, part = count("layout", layout), count("part", part)
        outs: list[Any] = [None, None, None]
        out = ctypes.c_void_p()
        outs[which] = ctypes.byref(out)
        check(lib.gctx_layouts_get(self._handle, layout, part, *outs))
        return out.value or 0

    def partition(self, layout: int, part: int) -> SMPartition:
        """Partition `part` of layout `layout`, as an SMPartition of its own."""
        return SMPartition._wrap(lib.gctx_partition_retain(self._get(layout, part, 0)))

    def context(self, layout: int, part: int) -> GreenContext:
        return GreenContext._wrap(lib.gctx_context_retain(self._get(layout, part, 1)))

    def stream(self, layout: int, part: int) -> Stream:
        """The greenctx Stream of a partition of a layout."""
        return Stream._wrap(lib.gctx_stream_retain(self._get(layout, part, 2)))

    def streams(self, layout: int) -> tuple[Any, ...]:
        """The layout's streams as GreenContext.Stream() gives them (torch.cuda.Streams when
        PyTorch sees CUDA), one per partition; made once."""
        layout = count("layout", layout)
        streams = self._streams.get(layout)
        if streams is None:
            streams = tuple(as_torch_stream(self.stream(layout, p))
                            for p in range(self._nb_parts))
            self._streams[layout] = streams
        return streams

    def switch(self, index: int, order: str = "all") -> tuple[Any, ...]:
        """Makes layout `index` active and returns its streams, as streams(index), after the
        work on every stream of the active layout ("all") or on its own part's ("by_part")."""
        flags = _ORDERS.get(order) if type(order) is str else None
        if flags is None:
            raise ValueError(f"order is {order!r}: give one of {', '.join(map(repr, _ORDERS))}")
        streams = self._streams.get(index) if type(index) is int else None
        if streams is None:  # a layout not switched to yet, or an index to check
            streams = self.streams(count("index", index))  # before anything changes
        check(lib.gctx_layouts_switch_ordered(self._handle, index, flags, None))
        return streams

    def close(self) -> None:
        self._streams = {}
        super().close()

    def _describe(self) -> str:
        return f"{self._nb_layouts} layouts of {self._nb_parts} partitions"
