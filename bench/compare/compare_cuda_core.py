"""cuda.core (1.2): SMResource.split, Device.create_context, Context.create_stream."""
from common import capability, emit, skip, time_op, timed

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


def split_only():
    ns, _ = timed(lambda: split(count=16))
    return ns, None


def one_context():
    ns, made = timed(lambda: [context(split(count=16)[0][0])])
    return ns, lambda: close(made)


def two_disjoint():
    def make():
        groups, rest = split(count=16)
        return [context(groups[0]), context(rest)]
    ns, made = timed(make)
    return ns, lambda: close(made)


time_op(LIB, "split 16", split_only)
time_op(LIB, "16 SMs: context + stream", one_context)
time_op(LIB, "{16, rest}: 2 disjoint contexts + streams", two_disjoint)


def probe(**options):
    groups, rest = split(**options)
    made = [context(g) for g in groups]
    sizes = [g.sm_count for g in groups]
    close(made)
    return f"groups {sizes}, remainder {rest.sm_count if rest is not None else 0}"


capability(LIB, "per-group counts (16, 32)", lambda: probe(count=(16, 32)))
capability(LIB, "coscheduled count 8, three groups of 8",
           lambda: probe(count=(8, 8, 8), coscheduled_sm_count=8))
capability(LIB, "{16, rest} disjoint by construction", lambda: probe(count=16))
