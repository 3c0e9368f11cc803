"""The elastic controller (the C library's gctx_controller_*): which candidate allocation of
SMs the workloads run on, decided from their scaling priors corrected by observed steps,
their demand, a bandwidth term and their targets. All the arithmetic is the C library's
(docs/elastic.md).
"""
from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Dict, Sequence, Tuple

from ._capi import (GCTX_WORKLOAD_LATENCY, GCTX_WORKLOAD_THROUGHPUT, ControllerOptions,
                    Workload as _CWorkload, lib)
from ._errors import check, out, out_int
from ._object import Handle, count, from_struct, real


@dataclass(frozen=True)
class Workload:
    """One workload: its kind and target, and its calibration prior {SMs: step seconds} at
    ref_demand (measured with `greenctx run --sweep` or `bench scaling`)."""
    kind: int
    prior: Dict[int, float]
    target_s: float = 0.0
    floor_per_s: float = 0.0
    ref_demand: float = 1.0
    demand_weight: float = 1.0
    bytes_per_step: float = 0.0

    @classmethod
    def latency(cls, target_s: float, prior: Dict[int, float], **kwargs: float) -> Workload:
        return cls(GCTX_WORKLOAD_LATENCY, dict(prior), target_s=target_s, **kwargs)

    @classmethod
    def throughput(cls, prior: Dict[int, float], floor_per_s: float = 0.0,
                   **kwargs: float) -> Workload:
        return cls(GCTX_WORKLOAD_THROUGHPUT, dict(prior), floor_per_s=floor_per_s, **kwargs)


# Workload's real numbers, named as gctx_workload's fields, in the order they are checked.
_REAL_FIELDS = ("target_s", "floor_per_s", "ref_demand", "demand_weight", "bytes_per_step")


@dataclass(frozen=True)
class Decision:
    candidate: int
    no_split: bool
    changed: bool
    unmet: Tuple[int, ...]          # workloads whose target no candidate meets
    sm_counts: Tuple[int, ...]
    predicted_step_s: Tuple[float, ...]
    reason: str


class Controller(Handle):
    """candidates: rows of one SM count per workload; "no split" is added as the last unless a
    row of zeros is given, or disjoint (workloads that can't share SMs) leaves it out."""

    __slots__ = ("_nb_workloads",)
    _nb_workloads: int
    _release = "gctx_controller_release"

    def __init__(self, workloads: Sequence[Workload], candidates: Sequence[Sequence[int]], *,
                 device_sms: int = 0, hbm_bytes_per_s: float = 0.0, hysteresis: float = 0.05,
                 dwell: int = 3, learning_rate: float = 0.25, latency_margin: float = 1.10,
                 shared_slowdown: float = 1.0, disjoint: bool = False) -> None:
        workloads = list(workloads)
        rows = [list(row) for row in candidates]
        if any(len(row) != len(workloads) for row in rows):
            raise ValueError("every candidate row needs one SM count per workload "
                             f"({len(workloads)})")
        keep = []  # the prior arrays must live through the C call
        c_workloads = (_CWorkload * max(len(workloads), 1))()
        for i, w in enumerate(workloads):
            points = sorted(w.prior.items())
            sms = (ctypes.c_uint * len(points))(*[count("prior SM counts", s)
                                                  for s, _ in points])
            steps = (ctypes.c_double * len(points))(*[real("prior step times", t)
                                                     for _, t in points])
            keep += [sms, steps]
            c_workloads[i] = _CWorkload(kind=w.kind, nb_points=len(points), prior_sms=sms,
                                        prior_step_s=steps,
                                        **{f: real(f, getattr(w, f)) for f in _REAL_FIELDS})
        flat = [count("candidate SM counts", v) for row in rows for v in row]
        c_rows = (ctypes.c_uint * max(len(flat), 1))(*flat)
        options = ControllerOptions(
            device_sms=count("device_sms", device_sms),
            hbm_bytes_per_s=real("hbm_bytes_per_s", hbm_bytes_per_s),
            hysteresis=real("hysteresis", hysteresis), dwell=count("dwell", dwell),
            learning_rate=real("learning_rate", learning_rate),
            latency_margin=real("latency_margin", latency_margin),
            shared_slowdown=real("shared_slowdown", shared_slowdown), disjoint=int(bool(disjoint)))
        self._own(out_int("gctx_controller_create", c_workloads, len(workloads), c_rows,
                          len(rows), options))
        self._nb_workloads = len(workloads)

    @property
    def nb_candidates(self) -> int:
        return out_int("gctx_controller_candidates", self._handle)

    def set_demand(self, workload: int, demand: float) -> None:
        check(lib.gctx_controller_set_demand(self._handle, count("workload", workload),
                                             real("demand", demand)))

    def observe(self, workload: int, step_s: float) -> None:
        check(lib.gctx_controller_observe(self._handle, count("workload", workload),
                                          real("step_s", step_s)))

    def predict(self, candidate: int, workload: int) -> float:
        return float(out("gctx_controller_predict", self._handle, count("candidate", candidate),
                         count("workload", workload)).value)

    def decide(self) -> Decision:
        d = out("gctx_controller_decide", self._handle)
        n = self._nb_workloads
        return from_struct(Decision, d, unmet=tuple(w for w in range(n) if d.unmet >> w & 1),
                           sm_counts=tuple(d.sm_counts[:n]),
                           predicted_step_s=tuple(d.predicted_step_s[:n]))

    def _describe(self) -> str:
        return f"{self._nb_workloads} workloads, {self.nb_candidates} candidates"


__all__ = ["Controller", "Workload", "Decision"]
