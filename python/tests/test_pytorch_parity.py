"""greenctx as a drop-in for torch.cuda.green_contexts (PyTorch main's API and words).

1. PyTorch's own green-context tests (test/test_matmul_cuda.py: test_greencontext_carveout,
   test_greencontext_stream_carveout, test_greencontext_graphs), their logic written again
   here with only the module changed; run against greenctx, and against PyTorch to compare,
   where PyTorch sees a CUDA GPU. On the simulated driver, their green-context calls alone
   (no matmul) with the SMs each gets.
2. A table of PyTorch's calls, each with what PyTorch gives (value, or exception type and
   message word for word): greenctx must give it on the simulated H200; on a GPU with PyTorch
   both run and must agree (type and value; message differences between PyTorch releases
   are printed).
3. With a CPU-only PyTorch imported, greenctx works as without PyTorch.
"""
import ctypes
import sys
import time
import types
import warnings

import pytest

import greenctx
from greenctx import _driver
from conftest import SIM

H200_SMS = 132


def _torch_with_cuda():
    if SIM is not None:
        return None  # the simulated driver: PyTorch would use the real one
    try:
        import torch
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


TORCH = _torch_with_cuda()
needs_torch_cuda = pytest.mark.skipif(TORCH is None, reason="needs PyTorch with a CUDA GPU "
                                      "(and the real driver)")
needs_sim = pytest.mark.skipif(SIM is None, reason="needs the simulated driver")


def torch_green_contexts():
    import torch.cuda.green_contexts as gc
    if not getattr(gc, "SUPPORTED", True) and not hasattr(gc, "SMPartition"):
        pytest.skip("this PyTorch was built without green contexts")
    return gc


# ---- 1. PyTorch's own tests, with the module changed ----

def carveout(gc, torch):
    """test_greencontext_carveout's logic: a matmul under set_context is right and slower."""
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    ctx = gc.GreenContext.create(1, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        ctx.set_context()
        torch.matmul(a, a)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        partial_res = torch.matmul(a, a)
        torch.cuda.synchronize()
        t1 = time.perf_counter()
        ctx.pop_context()
    torch.matmul(a, a)
    torch.cuda.synchronize()
    t2 = time.perf_counter()
    full_res = torch.matmul(a, a)
    torch.cuda.synchronize()
    t3 = time.perf_counter()
    torch.testing.assert_close(partial_res, full_res)
    assert t1 - t0 > t3 - t2, (t1 - t0, t3 - t2)
    return (t1 - t0) / (t3 - t2)


def stream_carveout(gc, torch):
    """test_greencontext_stream_carveout's logic: the same under torch.cuda.stream()."""
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    ctx = gc.GreenContext.create(1, 0)
    ctx_stream = ctx.Stream()
    with torch.cuda.stream(ctx_stream):
        torch.matmul(a, a)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        partial_res = torch.matmul(a, a)
        torch.cuda.synchronize()
        t1 = time.perf_counter()
    torch.matmul(a, a)
    torch.cuda.synchronize()
    t2 = time.perf_counter()
    full_res = torch.matmul(a, a)
    torch.cuda.synchronize()
    t3 = time.perf_counter()
    torch.testing.assert_close(partial_res, full_res)
    assert t1 - t0 > t3 - t2, (t1 - t0, t3 - t2)
    return (t1 - t0) / (t3 - t2)


def graphs(gc, torch):
    """test_greencontext_graphs's logic: set_context/pop_context inside a graph capture."""
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    ctx = gc.GreenContext.create(1, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        ctx.set_context()
        partial_res = torch.matmul(a, a)
        ctx.pop_context()
        full_res = torch.matmul(a, a)
        full_res.zero_()
        partial_res.zero_()
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            ctx.set_context()
            partial_res = torch.matmul(a, a)
            ctx.pop_context()
            full_res = torch.matmul(a, a)
        g.replay()
    torch.testing.assert_close(partial_res, full_res)
    return None


PYTORCH_TESTS = {"test_greencontext_carveout": carveout,
                 "test_greencontext_stream_carveout": stream_carveout,
                 "test_greencontext_graphs": graphs}


@needs_torch_cuda
@pytest.mark.parametrize("name", PYTORCH_TESTS)
@pytest.mark.parametrize("module", ["greenctx", "torch.cuda.green_contexts"])
def test_pytorch_green_context_tests(name, module):
    gc = greenctx if module == "greenctx" else torch_green_contexts()
    ratio = PYTORCH_TESTS[name](gc, TORCH)
    if ratio is not None:
        print(f"{name} with {module}: on the green context {ratio:.1f}x the whole GPU's time")


@needs_sim
def test_pytorch_tests_calls_on_the_simulated_driver(sim):
    """The three tests' green-context calls, without PyTorch: create(1, 0) gives the
    driver's minimum (8 SMs on an H200); set_context makes the context current (as PyTorch,
    set when none was current, pushed otherwise) and pop_context restores what was."""
    before = _driver.current_context()
    ctx = greenctx.GreenContext.create(1, 0)
    assert ctx.sm_count == 8 and len(sim.context_sms(ctx)) == 8
    with pytest.warns(FutureWarning, match="set_context and GreenContext.pop_context"):
        ctx.set_context()
    assert _driver.current_context() == ctx.cu_context
    with pytest.warns(FutureWarning):
        ctx.pop_context()
    assert _driver.current_context() == before
    s = ctx.Stream()  # test_greencontext_stream_carveout's stream
    assert sim.stream_sms(s.cuda_stream) == sim.context_sms(ctx)
    s.close()
    ctx.close()


# ---- 2. PyTorch's calls and what PyTorch gives ----

def _outcome(call, gc):
    try:
        return ("value", call(gc))
    except Exception as e:  # noqa: BLE001 - the outcome is what is compared
        kind = next(t for t in (TypeError, ValueError, RuntimeError, Exception)
                    if isinstance(e, t))
        return (kind.__name__, str(e))


def _split_counts(result):
    parts, rest = result
    return tuple(p.sm_count for p in parts), (rest.sm_count if rest else None)


def _pool(gc):
    ctx = gc.GreenContext(num_sms=16)
    handles = [s.cuda_stream for s in (ctx.Stream() for _ in range(33))]
    return len(set(handles)), handles[0] == handles[32]


def _pop_without_set(gc):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        gc.GreenContext(num_sms=16).pop_context()


def _set_twice(gc):
    ctx = gc.GreenContext(num_sms=16)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        ctx.set_context()
        try:
            ctx.set_context()
        finally:
            ctx.pop_context()


INVALID = "Invalid number of SMs requested for green context: {} (device has 132 SMs)"
# (what, call, what PyTorch gives on an H200; driver: the driver PyTorch needs for the call,
# where greenctx gives more on older drivers and so is compared on the simulated one only)
TABLE = [
    ("GreenContext(num_sms=1).sm_count", lambda gc: gc.GreenContext(num_sms=1).sm_count,
     ("value", 8), 0),
    ("GreenContext(num_sms=4).sm_count", lambda gc: gc.GreenContext(num_sms=4).sm_count,
     ("value", 8), 0),
    ("GreenContext(num_sms=20).sm_count", lambda gc: gc.GreenContext(num_sms=20).sm_count,
     ("value", 24), 0),
    ("GreenContext(num_sms=132).sm_count", lambda gc: gc.GreenContext(num_sms=132).sm_count,
     ("value", H200_SMS), 0),
    ("GreenContext.create(1, 0).sm_count", lambda gc: gc.GreenContext.create(1, 0).sm_count,
     ("value", 8), 0),
    ("GreenContext(num_sms=0)", lambda gc: gc.GreenContext(num_sms=0),
     ("RuntimeError", INVALID.format(0)), 0),
    ("GreenContext(num_sms=133)", lambda gc: gc.GreenContext(num_sms=133),
     ("RuntimeError", INVALID.format(133)), 0),
    ("GreenContext(num_sms=-8)", lambda gc: gc.GreenContext(num_sms=-8),
     ("RuntimeError", INVALID.format(-8)), 0),
    ("GreenContext()", lambda gc: gc.GreenContext(),
     ("RuntimeError", "At least one of num_sms, workqueue_scope, or sm_partition must be "
                      "specified"), 0),
    ("GreenContext(num_sms=8, sm_partition=whole)",
     lambda gc: gc.GreenContext(num_sms=8, sm_partition=gc.SMPartition.from_device(0)),
     ("RuntimeError", "num_sms and sm_partition cannot be specified together"), 0),
    ("GreenContext(sm_partition='x')", lambda gc: gc.GreenContext(sm_partition="x"),
     ("TypeError", "sm_partition must be an SMPartition"), 0),
    ("GreenContext(num_sms=8, workqueue_concurrency_limit=4)",
     lambda gc: gc.GreenContext(num_sms=8, workqueue_concurrency_limit=4),
     ("RuntimeError", "workqueue_concurrency_limit requires workqueue_scope to be set"), 0),
    ("GreenContext(workqueue_scope='nearby')",
     lambda gc: gc.GreenContext(workqueue_scope="nearby"),
     ("ValueError", "workqueue_scope must be 'device_ctx' or 'balanced', got 'nearby'"), 0),
    ("GreenContext(sm_partition=whole, device_id=1)",
     lambda gc: gc.GreenContext(sm_partition=gc.SMPartition.from_device(0), device_id=1),
     ("ValueError", "device_id must match the SM partition's device"), 0),
    ("SMPartition.from_device(0).sm_count", lambda gc: gc.SMPartition.from_device(0).sm_count,
     ("value", H200_SMS), 0),
    ("SMPartition.from_device(0).coscheduled_sm_count",
     lambda gc: gc.SMPartition.from_device(0).coscheduled_sm_count, ("value", 8), 0),
    ("Stream() x 33: a pool of 32, round-robin", _pool, ("value", (32, True)), 0),
    ("pop_context() without set_context()", _pop_without_set,
     ("RuntimeError", "pop_context called without matching set_context"), 0),
    ("set_context() twice", _set_twice,
     ("RuntimeError", "set_context called twice before pop_context"), 0),
    ("split(num_sms=(24, 40), coscheduled_sm_count=8)",
     lambda gc: _split_counts(gc.SMPartition.from_device(0).split(
         num_sms=(24, 40), coscheduled_sm_count=8)), ("value", ((24, 40), 68)), 13010),
    ("GreenContext.split(num_sms=(24, 40), coscheduled_sm_count=8)",
     lambda gc: tuple(c.sm_count for c in gc.GreenContext.split(
         num_sms=(24, 40), coscheduled_sm_count=8, device_id=0)), ("value", (24, 40)), 13010),
    ("split(num_sms=[8, 16], coscheduled_sm_count=[8])",
     lambda gc: gc.SMPartition.from_device(0).split(num_sms=[8, 16], coscheduled_sm_count=[8]),
     ("ValueError", "All sequence options must have the same length"), 13010),
    ("split(num_sms=[])", lambda gc: gc.SMPartition.from_device(0).split(num_sms=[]),
     ("ValueError", "A split must contain at least one group"), 13010),
    ("split(num_sms=-8)", lambda gc: gc.SMPartition.from_device(0).split(num_sms=-8),
     ("ValueError", "num_sms entries must be nonnegative integers, got -8"), 13010),
    ("split(num_sms=[8, True])",
     lambda gc: gc.SMPartition.from_device(0).split(num_sms=[8, True]),
     ("ValueError", "num_sms entries must be nonnegative integers, got True"), 13010),
    ("split(coscheduled_sm_count=2.0)",
     lambda gc: gc.SMPartition.from_device(0).split(num_sms=8, coscheduled_sm_count=2.0),
     ("ValueError", "coscheduled_sm_count entries must be nonnegative integers, got 2.0"),
     13010),
    ("split(backfill=1)", lambda gc: gc.SMPartition.from_device(0).split(num_sms=8, backfill=1),
     ("ValueError", "backfill entries must be bool values"), 13010),
    ("split(locality_domain_ids=0) before 13.4",
     lambda gc: gc.SMPartition.from_device(0).split(num_sms=8, locality_domain_ids=0),
     ("RuntimeError", "Green Context localization requires user mode driver and "
                      "cuda.bindings package 13.4+"), 13010),
    ("split(locality_domain_ids=None)",
     lambda gc: _split_counts(gc.SMPartition.from_device(0).split(
         num_sms=8, locality_domain_ids=None)), ("value", ((8,), 124)), 13010),
]
IDS = [row[0] for row in TABLE]


@needs_sim
@pytest.mark.parametrize("what, call, pytorch, driver", TABLE, ids=IDS)
def test_greenctx_gives_what_pytorch_gives(sim, what, call, pytorch, driver):
    assert _outcome(call, greenctx) == pytorch


@needs_torch_cuda
@pytest.mark.parametrize("what, call, pytorch, driver", TABLE, ids=IDS)
def test_greenctx_and_pytorch_agree_on_the_gpu(what, call, pytorch, driver):
    gc = torch_green_contexts()
    if not hasattr(gc, "SMPartition") and not what.startswith("GreenContext.create("):
        pytest.skip("this PyTorch has the older green-context API (create() alone)")
    ours = _outcome(call, greenctx)
    theirs = _outcome(call, gc)
    drv = greenctx.driver_version()
    if drv < driver:
        # PyTorch refuses what greenctx does on this driver: greenctx must give what
        # PyTorch gives on a driver that has it.
        print(f"{what}: PyTorch on driver {drv}: {theirs}; greenctx: {ours}")
        assert theirs[0] == "RuntimeError" and ours == pytorch
        return
    if theirs[0] == "Exception" and "has no attribute" in theirs[1]:
        pytest.skip(f"this PyTorch has no such API: {theirs[1]}")
    assert ours[0] == theirs[0], (ours, theirs)
    if ours[0] == "value":
        assert ours == theirs
    elif ours[1] != theirs[1]:
        print(f"{what}: message differs from this PyTorch's: {ours[1]!r} vs {theirs[1]!r}")


# ---- 3. A CPU-only PyTorch ----

@pytest.fixture
def cpu_only_torch(monkeypatch):
    """A stand-in for a CPU-only PyTorch: torch.cuda is there, sees no GPU, and refuses what
    needs one (as a PyTorch built without CUDA does)."""
    torch = types.ModuleType("torch")

    def not_compiled(*args, **kwargs):
        raise AssertionError("Torch not compiled with CUDA enabled")
    torch.cuda = types.SimpleNamespace(is_available=lambda: False, current_device=not_compiled,
                                       current_stream=not_compiled, ExternalStream=not_compiled,
                                       Event=not_compiled, default_stream=not_compiled,
                                       set_stream=not_compiled)
    monkeypatch.setitem(sys.modules, "torch", torch)
    monkeypatch.setattr(greenctx._torch, "_torch_stream_class", None)
    return torch


@needs_sim
def test_a_cpu_only_torch_changes_nothing(sim, cpu_only_torch):
    whole = greenctx.SMPartition.from_device()  # device None: 0, not torch's current device
    assert whole.sm_count == H200_SMS
    ctx = greenctx.GreenContext(num_sms=16)
    s = ctx.Stream()
    assert isinstance(s, greenctx.Stream)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        ctx.set_context()
        ctx.pop_context()
    assert greenctx.cache_stats().live >= 1
    s.close()
    ctx.close()
    whole.close()


def test_a_real_cpu_only_torch_changes_nothing():
    try:
        import torch
    except ImportError:
        pytest.skip("PyTorch is not installed")
    if torch.cuda.is_available() or SIM is None:
        pytest.skip("needs a PyTorch that sees no GPU, and the simulated driver")
    ctx = greenctx.GreenContext(num_sms=16)
    assert isinstance(ctx.Stream(), greenctx.Stream)
    assert ctypes.c_void_p(ctx.green_handle).value
