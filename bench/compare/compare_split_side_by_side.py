"""The package's SMPartition.split against cuda.core's SMResource.split in one process, rep by
rep: apart, the two read apart by as much as the host's state moved between their processes."""
from common import emit, fail, made_by, skip, time_entries

try:
    import cuda.core as cc
    from cuda.core import Device, SMResourceOptions
except Exception as e:  # noqa: BLE001
    skip("cuda.core", f"cannot import cuda.core: {type(e).__name__}: {e}")
try:
    import greenctx
    from greenctx import SMPartition
except Exception as e:  # noqa: BLE001
    fail("greenctx-py", f"cannot import greenctx: {type(e).__name__}: {e}")

OP = "split 16, side by side"
emit(lib="side by side", version=f"greenctx {greenctx.__version__}, cuda.core "
                                 f"{getattr(cc, '__version__', '?')}")
dev = Device(0)
dev.set_current()
sm = dev.resources.sm
whole = SMPartition.from_device(0)

time_entries([("greenctx-py", OP, made_by(lambda: whole.split(num_sms=16),
                                          lambda made: [p.close() for p in (*made[0], made[1])])),
              ("cuda.core", OP, made_by(lambda: sm.split(SMResourceOptions(count=16))))])
