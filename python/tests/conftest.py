"""Shared by the Python tests. They run against the library named by GREENCTX_LIBRARY (the
build tree's, from CTest) or the installed package's own, and the driver named by
GREENCTX_CUDA_LIBRARY: the simulated one (sim/libgreenctx_sim.so, with GREENCTX_SIM_DEVICES
and GREENCTX_SIM_DRIVER_VERSION) or, unset, the machine's libcuda.
"""
import ctypes
import gc
import os
import re
import sys
import types

import pytest

import greenctx

# Every driver entry point the library calls: src/cuda_abi.h's table, as tests/test_costs.c
# counts them.
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src",
                       "cuda_abi.h")) as _f:
    DRIVER_ENTRY_POINTS = tuple(re.findall(r"^\s*X\((cu\w+),", _f.read(), re.M))
LIVE_KINDS = ("green_ctx", "stream", "event", "primary_ctx")
NONE_LIVE = {k: 0 for k in LIVE_KINDS}


class Sim:
    """The simulated driver's test API (sim/greenctx_sim.h), through ctypes."""

    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        self.lib.gctxsim_live_objects.argtypes = [ctypes.c_char_p]
        self.lib.gctxsim_live_objects.restype = ctypes.c_int
        self.lib.gctxsim_green_ctx_sm_ids.argtypes = [ctypes.c_void_p,
                                                      ctypes.POINTER(ctypes.c_uint), ctypes.c_int]
        self.lib.gctxsim_green_ctx_sm_ids.restype = ctypes.c_int
        self.lib.gctxsim_stream_sm_ids.argtypes = [ctypes.c_void_p,
                                                   ctypes.POINTER(ctypes.c_uint), ctypes.c_int]
        self.lib.gctxsim_stream_sm_ids.restype = ctypes.c_int
        self.lib.gctxsim_fail_after.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
        self.lib.gctxsim_calls.argtypes = [ctypes.c_char_p]
        self.lib.gctxsim_calls.restype = ctypes.c_long

    def live(self, kind="all"):
        return self.lib.gctxsim_live_objects(kind.encode())

    def live_counts(self):
        return {k: self.live(k) for k in LIVE_KINDS}

    def settled(self):
        """Live driver objects once Python's garbage and the context cache are gone (the cache
        keeps released contexts' driver contexts: trimming it destroys them)."""
        gc.collect()
        for device in range(greenctx.device_count()):
            greenctx.trim_cache(device)
        return self.live_counts()

    def _ids(self, fn, handle):
        ids = (ctypes.c_uint * 1024)()
        n = fn(handle, ids, 1024)
        assert n >= 0, "the simulator does not know this handle"
        return set(ids[:n])

    def context_sms(self, context):
        """The SM ids the simulator gave a GreenContext."""
        return self._ids(self.lib.gctxsim_green_ctx_sm_ids, context.green_handle)

    def stream_sms(self, stream_handle):
        return self._ids(self.lib.gctxsim_stream_sm_ids, stream_handle)

    def fail_after(self, symbol, n, code=2):
        self.lib.gctxsim_fail_after(symbol.encode(), n, code)

    def clear_faults(self):
        self.lib.gctxsim_fail_after(b"", 0, 0)

    def calls(self, symbol):
        return self.lib.gctxsim_calls(symbol.encode())

    def driver_calls(self):
        """{entry point: calls so far} for each entry point of the library's table."""
        return {name: self.calls(name) for name in DRIVER_ENTRY_POINTS}


def _sim_or_none():
    path = os.environ.get("GREENCTX_CUDA_LIBRARY", "")
    if not path or not os.path.exists(path):
        return None
    s = Sim(path)
    return s if hasattr(s.lib, "gctxsim_live_objects") else None


SIM = _sim_or_none()
DRIVER = greenctx.driver_version() if SIM else 0


@pytest.fixture
def sim():
    if SIM is None:
        pytest.skip("needs the simulated driver (GREENCTX_CUDA_LIBRARY=.../libgreenctx_sim.so)")
    yield SIM
    SIM.clear_faults()


def needs_driver(version):
    return pytest.mark.skipif(DRIVER < version, reason=f"needs (simulated) driver {version}+")


def before_driver(version):
    return pytest.mark.skipif(DRIVER >= version, reason=f"only before driver {version}")


@pytest.fixture(autouse=True, scope="module")
def no_leaks_after_module():
    """Every test module ends with no driver object left: no green context, stream, event,
    nor primary-context retain (every partition holds one). Fixtures close what they made:
    pytest still holds the last test's fixture values here."""
    yield
    if SIM is not None:
        assert SIM.settled() == NONE_LIVE


@pytest.fixture
def no_torch(monkeypatch):
    """PyTorch not importable, whether it is installed or not."""
    monkeypatch.setitem(sys.modules, "torch", None)


@pytest.fixture
def fake_torch(monkeypatch):
    """A stand-in for PyTorch with what Stream() uses: torch.cuda.ExternalStream."""
    torch = types.ModuleType("torch")
    torch.cuda = types.SimpleNamespace()

    class ExternalStream:
        def __init__(self, stream_ptr, device=None):
            self.cuda_stream, self.device = stream_ptr, device

    torch.cuda.ExternalStream = ExternalStream
    torch.cuda.current_device = lambda: 0
    torch.cuda.is_available = lambda: True
    monkeypatch.setitem(sys.modules, "torch", torch)
    monkeypatch.setattr(greenctx._torch, "_torch_stream_class", None)
    return torch
