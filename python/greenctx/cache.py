"""The context cache (the C library's gctx_cache_*; docs/python.md, "The context cache")."""
from __future__ import annotations

from dataclasses import dataclass

from ._capi import lib
from ._errors import check, out, out_int
from ._object import count, device_ordinal, from_struct


@dataclass(frozen=True)
class CacheStats:
    """A device's cache counters since the process started."""
    hits: int       # contexts made from a cached driver context
    misses: int     # contexts the cache had nothing for (while on)
    evictions: int  # cached contexts destroyed: limit, set_cache_limit, trim_cache
    cached: int     # idle driver contexts kept now
    live: int       # contexts greenctx made that are in use now
    limit: int      # the device's limit; 0: the cache is off


def cache_stats(device_id: int | None = None) -> CacheStats:
    return from_struct(CacheStats, out("gctx_cache_get_stats", device_ordinal(device_id)))


def cache_limit(device_id: int | None = None) -> int:
    """The most idle contexts the device's cache keeps."""
    return out_int("gctx_cache_get_limit", device_ordinal(device_id))


def set_cache_limit(limit: int, device_id: int | None = None) -> None:
    """Sets the limit; cached contexts beyond it are destroyed now. 0 turns the cache off."""
    check(lib.gctx_cache_set_limit(device_ordinal(device_id), count("limit", limit)))


def trim_cache(device_id: int | None = None) -> None:
    """Destroys every context the device's cache holds (the limit stays)."""
    check(lib.gctx_cache_trim(device_ordinal(device_id)))
