"""The two examples of PyTorch's torch.cuda.green_contexts documentation, verbatim but for
the import, so that the simulated tests and the GPU tests run the same code."""
from greenctx import GreenContext, SMPartition


def split_a_remainder_through_a_context():
    """SMPartition.split's example: 4 SMs, then 4 more from the remainder."""
    sms = SMPartition.from_device(device_id=0)
    (first,), rest = sms.split(num_sms=4, coscheduled_sm_count=2)
    rest_ctx = GreenContext(sm_partition=rest)
    (second,), rest = rest_ctx.sm_partition.split(
        num_sms=4, coscheduled_sm_count=2
    )
    return first, second


def split_contexts():
    """GreenContext.split's example: contexts of 24 and 40 SMs."""
    a, b = GreenContext.split(
        num_sms=(24, 40), coscheduled_sm_count=8, device_id=0
    )
    return a, b
