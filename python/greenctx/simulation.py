"""greenctx.simulate(): the package's simulated driver (the tests' sim/) instead of the GPU's,
to try everything on a machine without one."""
from __future__ import annotations

import ctypes
import os
import re

from ._capi import PACKAGED_SIM, lib

_SPEC = re.compile(r"^([A-Za-z0-9]+(?:,[A-Za-z0-9]+)*)(?:@(\d+))?$")


def simulate(spec: str = "h200") -> str:
    """Points greenctx at its simulated driver, before the driver's first use: spec is
    MODEL[,MODEL...][@DRIVER] as the tool's --sim takes it ("h200@13000"). Returns its path."""
    if not isinstance(spec, str):
        raise TypeError(f"spec must be a str, got {spec!r}")
    match = _SPEC.match(spec)
    if match is None:
        raise ValueError(f"simulate() needs MODEL[,MODEL...][@DRIVER], e.g. 'h200@13000'; "
                         f"got {spec!r}")
    models, driver = match.groups()
    if driver is not None and not 2000 <= int(driver) <= 99999:
        raise ValueError(f"the driver version after @ is 1000 * major + 10 * minor, e.g. "
                         f"13000 for 13.0; got {driver!r}")
    loaded = lib.gctx_driver_path()
    if loaded is not None:
        raise RuntimeError(f"simulate() must come before the first use of the driver: "
                           f"greenctx already loaded {loaded.decode(errors='replace')}")
    path = os.environ.get("GREENCTX_SIM_LIBRARY") or PACKAGED_SIM
    if not os.path.isfile(path):
        raise FileNotFoundError(f"the simulated driver {path} is missing: install greenctx "
                                f"with pip, or set GREENCTX_SIM_LIBRARY to a "
                                f"libgreenctx_sim.so")
    models_of = ctypes.CDLL(path).gctxsim_models  # the simulated driver's model table
    models_of.restype = ctypes.c_char_p
    known = models_of().decode().split()
    unknown = [m for m in models.split(",") if m.lower() not in known]
    if unknown:
        raise ValueError(f"simulate(): no simulated model {unknown[0]!r}; the models are "
                         f"{', '.join(known)}")
    os.environ["GREENCTX_CUDA_LIBRARY"] = path
    os.environ["GREENCTX_SIM_DEVICES"] = models
    if driver is None:
        os.environ.pop("GREENCTX_SIM_DRIVER_VERSION", None)
    else:
        os.environ["GREENCTX_SIM_DRIVER_VERSION"] = driver
    return path
