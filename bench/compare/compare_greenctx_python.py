"""greenctx's Python package (python/greenctx): the same operations as cuda.core's, through
SMPartition.split, GreenContext and its stream (PYTHONPATH must reach the package, or it is
installed)."""
from common import capability, emit, fail, time_op, timed

LIB = "greenctx-py"
try:
    import greenctx
    from greenctx import GreenContext, SMPartition
except Exception as e:  # noqa: BLE001
    fail(LIB, f"cannot import greenctx: {type(e).__name__}: {e}")

emit(lib=LIB, version=greenctx.__version__, device=greenctx.device_info(0).name,
     driver_version=greenctx.driver_version())
# Holding the whole-device partition keeps the primary context active (as cuda.core's
# Device.set_current does), so no creation pays its initialisation.
whole = SMPartition.from_device(0)


def close_all(*objects):
    for o in objects:
        if o is not None:
            o.close()


def split_only():
    ns, (groups, rest) = timed(lambda: whole.split(num_sms=16))
    return ns, lambda: close_all(*groups, rest)


def context_and_stream(part):
    ctx = GreenContext(sm_partition=part)
    return ctx, ctx.stream()


def one_context():
    def make():
        (group,), rest = whole.split(num_sms=16)
        return (group, rest, *context_and_stream(group))
    ns, made = timed(make)
    return ns, lambda: close_all(*reversed(made))


def two_disjoint():
    def make():
        (group,), rest = whole.split(num_sms=16)
        return (group, rest, *context_and_stream(group), *context_and_stream(rest))
    ns, made = timed(make)
    return ns, lambda: close_all(*reversed(made))


time_op(LIB, "split 16", split_only)
time_op(LIB, "16 SMs: context + stream", one_context)
time_op(LIB, "{16, rest}: 2 disjoint contexts + streams", two_disjoint)


# The package's other hot paths (one C call each; python/tests/test_hot_paths.py), with
# contexts from the cache as a program's loop gets them.
def made_by(make):
    def once():
        ns, made = timed(make)
        return ns, lambda: close_all(*(made if isinstance(made, tuple) else (made,)))
    return once


ctx = GreenContext(sm_partition=whole)
layouts = greenctx.Layouts([(16, 0), (32, 0)])
layouts.switch(1)
flip = [0]


def switch():
    flip[0] ^= 1
    ns, _ = timed(lambda: layouts.switch(flip[0]))
    return ns, None


time_op(LIB, "GreenContext(num_sms=16)", made_by(lambda: GreenContext(num_sms=16)))
time_op(LIB, "GreenContext.split {16, rest}",
        made_by(lambda: GreenContext.split(num_sms=(16, 0), backfill=(False, True))))
time_op(LIB, "stream on a context", made_by(ctx.stream))
time_op(LIB, "Stream() of a context's pool", made_by(ctx.Stream))
time_op(LIB, "layout switch, 2 layouts of 2", switch)
layouts.close()
ctx.close()


def probe(**kwargs):
    contexts = GreenContext.split(**kwargs)
    sizes = [c.sm_count for c in contexts]
    close_all(*contexts)
    return f"groups {sizes}"


capability(LIB, "per-group counts (16, 32)", lambda: probe(num_sms=(16, 32)))
capability(LIB, "coscheduled count 8, three groups of 8",
           lambda: probe(num_sms=(8, 8, 8), coscheduled_sm_count=8))
capability(LIB, "{16, rest} disjoint by construction",
           lambda: probe(num_sms=(16, 0), backfill=(False, True)))
