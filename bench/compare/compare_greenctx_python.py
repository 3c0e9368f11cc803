"""greenctx's Python package (python/greenctx): the same operations as cuda.core's, through
SMPartition.split, GreenContext and its stream (PYTHONPATH must reach the package, or it is
installed)."""
from common import capabilities, emit, fail, made_by, time_op

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


def close(*made):
    """What a call made, last first (tuples opened): off the clock."""
    for o in reversed(made):
        if isinstance(o, tuple):
            close(*o)
        elif o is not None:
            o.close()


def context_and_stream(part):
    ctx = GreenContext(sm_partition=part)
    return ctx, ctx.stream()


def one_context():
    (group,), rest = whole.split(num_sms=16)
    return (group, rest, *context_and_stream(group))


def two_disjoint():
    (group,), rest = whole.split(num_sms=16)
    return (group, rest, *context_and_stream(group), *context_and_stream(rest))


time_op(LIB, "split 16", made_by(lambda: whole.split(num_sms=16), close))
time_op(LIB, "16 SMs: context + stream", made_by(one_context, close))
time_op(LIB, "{16, rest}: 2 disjoint contexts + streams", made_by(two_disjoint, close))


# The package's other hot paths (one C call each), with contexts from the cache as a
# program's loop gets them.
ctx = GreenContext(sm_partition=whole)
layouts = greenctx.Layouts([(16, 0), (32, 0)])
layouts.switch(1)
flip = [0]


def switch():
    flip[0] ^= 1
    return made_by(lambda: layouts.switch(flip[0]))()


time_op(LIB, "GreenContext(num_sms=16)", made_by(lambda: GreenContext(num_sms=16), close))
time_op(LIB, "GreenContext.split {16, rest}", made_by(
    lambda: GreenContext.split(num_sms=(16, 0), backfill=(False, True)), close))
time_op(LIB, "stream on a context", made_by(ctx.stream, close))
time_op(LIB, "Stream() of a context's pool", made_by(ctx.Stream, close))
time_op(LIB, "layout switch, 2 layouts of 2", switch)
layouts.close()
ctx.close()


def probe(kwargs):
    contexts = GreenContext.split(**kwargs)
    sizes = [c.sm_count for c in contexts]
    close(contexts)
    return f"groups {sizes}"


capabilities(LIB, probe, dict(num_sms=(16, 32)), dict(num_sms=(8, 8, 8), coscheduled_sm_count=8),
             dict(num_sms=(16, 0), backfill=(False, True)))
