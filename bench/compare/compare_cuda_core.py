"""cuda.core (1.2): SMResource.split, Device.create_context, Context.create_stream."""
from common import capabilities, emit, made_by, skip, time_op

LIB = "cuda.core"
try:
    import cuda.core as cc
    from cuda.core import ContextOptions, Device, SMResourceOptions
except Exception as e:  # noqa: BLE001
    skip(LIB, f"cannot import cuda.core: {type(e).__name__}: {e}")

emit(lib=LIB, version=getattr(cc, "__version__", "?"))
try:
    dev = Device(0)
    dev.set_current()
    sm = dev.resources.sm
except Exception as e:  # noqa: BLE001 - installed, but no GPU (or driver) it can use
    skip(LIB, f"cuda.core cannot use device 0: {type(e).__name__}: {e}")


def split(**options):
    return sm.split(SMResourceOptions(**options))


def context(resource):
    ctx = dev.create_context(ContextOptions(resources=[resource]))
    return ctx, ctx.create_stream()


def close(made):
    for ctx, stream in made:
        stream.close()
        ctx.close()


def two_disjoint():
    groups, rest = split(count=16)
    return [context(groups[0]), context(rest)]


time_op(LIB, "split 16", made_by(lambda: split(count=16)))
time_op(LIB, "16 SMs: context + stream", made_by(lambda: [context(split(count=16)[0][0])], close))
time_op(LIB, "{16, rest}: 2 disjoint contexts + streams", made_by(two_disjoint, close))


def probe(options):
    groups, rest = split(**options)
    made = [context(g) for g in groups]
    sizes = [g.sm_count for g in groups]
    close(made)
    return f"groups {sizes}, remainder {rest.sm_count if rest is not None else 0}"


capabilities(LIB, probe, dict(count=(16, 32)), dict(count=(8, 8, 8), coscheduled_sm_count=8),
             dict(count=16))
