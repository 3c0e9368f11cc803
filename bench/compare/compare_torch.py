"""torch.cuda.green_contexts (PyTorch 2.11): GreenContext.create(num_sms) and its Stream."""
import gc

from common import capabilities, capability, emit, made_by, skip, time_op

LIB = "torch"
try:
    import torch
except Exception as e:  # noqa: BLE001
    skip(LIB, f"cannot import torch: {type(e).__name__}: {e}")
emit(lib=LIB, version=torch.__version__)
try:
    from torch.cuda.green_contexts import GreenContext
except Exception as e:  # noqa: BLE001
    skip(LIB, f"no torch.cuda.green_contexts: {type(e).__name__}: {e}")
if not torch.cuda.is_available():
    skip(LIB, f"torch {torch.__version__} sees no CUDA device")
torch.cuda.init()
torch.zeros(1, device="cuda")  # the primary context exists before the first green context


def create(n):
    ctx = GreenContext.create(num_sms=n, device_id=0)
    return ctx, ctx.Stream()


def drop(made):
    # No destroy call in the API: the objects go when Python collects them.
    made.clear()
    gc.collect()


time_op(LIB, "16 SMs: context + stream", made_by(lambda: [create(16)], drop), reps=30)
emit(lib=LIB, op="split 16", error="no split-only call: GreenContext.create splits and creates")
emit(lib=LIB, op="{16, rest}: 2 disjoint contexts + streams",
     error="no API: each create() is its own split, and two splits may share SMs "
           "(pytorch#195378)")


def structured_split(kwargs):
    """The multi-group split, where this torch has one (SMPartition, later releases)."""
    from torch.cuda import green_contexts as gcmod
    if not hasattr(gcmod, "SMPartition"):
        raise NotImplementedError(f"torch {torch.__version__} has no multi-group split "
                                  "(no SMPartition): only create(num_sms), one group per call")
    groups = gcmod.SMPartition.from_device(0).split(**kwargs)
    return f"groups {[p.sm_count for p in groups[0]]}"


capabilities(LIB, structured_split, dict(num_sms=[16, 32]),
             dict(num_sms=[8, 8, 8], coscheduled_sm_count=8),
             dict(num_sms=[16, 0], backfill=[False, True]))
capability(LIB, "count that is not a multiple of 8 (20)", lambda: create(20) and "made")
