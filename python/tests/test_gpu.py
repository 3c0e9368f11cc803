"""On a real GPU with PyTorch (make test-gpu: python.gpu): PyTorch's two
documented examples run verbatim with `from greenctx import SMPartition, GreenContext` and
give what the docs say, checked with %smid; a matmul under torch.cuda.stream(ctx.Stream())
is right and slower on 16 SMs than on the whole GPU; a CUDA graph captured on a green
stream replays on its SMs; cuda.core runs a kernel on a greenctx stream through
__cuda_stream__. Skipped on the simulated driver, and without PyTorch or a GPU."""
import os
import time

import pytest

if os.environ.get("GREENCTX_CUDA_LIBRARY"):
    pytest.skip("needs the real driver (GREENCTX_CUDA_LIBRARY names another)",
                allow_module_level=True)
torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("needs a CUDA GPU visible to PyTorch", allow_module_level=True)

import pytorch_examples  # noqa: E402
from greenctx import GreenContext, SMPartition  # noqa: E402

torch.cuda.init()
torch.zeros(1, device="cuda")  # the primary context exists before any green context

SMID_SOURCE = r"""
extern "C" __global__ void smid(unsigned *out)
{
    if (threadIdx.x == 0) {
        unsigned id;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
        long long start = clock64();
        while (clock64() - start < 20000) { }  /* linger: later blocks spread to other SMs */
        out[blockIdx.x] = id;
    }
}
"""


@pytest.fixture(scope="module")
def smid_kernel():
    """launch(stream, out_tensor): the %smid kernel through cuda.core, which takes the stream
    object through __cuda_stream__ (Device.create_stream)."""
    core = pytest.importorskip("cuda.core")
    dev = core.Device(0)
    dev.set_current()
    prog = core.Program(SMID_SOURCE, code_type="c++",
                        options=core.ProgramOptions(arch=f"sm_{dev.arch}"))
    kernel = prog.compile("cubin").get_kernel("smid")

    def as_core(stream):
        core_stream = dev.create_stream(stream)  # reads stream.__cuda_stream__()
        assert int(core_stream.handle) == stream.__cuda_stream__()[1]
        return core_stream

    def launch(core_stream, out):
        config = core.LaunchConfig(grid=out.numel(), block=32)
        core.launch(core_stream, config, kernel, out.data_ptr())  # an int is a pointer
    launch.as_core = as_core
    return launch


def observed(context):
    ids = context.observe_sms()
    assert len(ids) == len(set(ids))
    return set(ids)


def test_pytorch_docs_example_split_a_remainder_through_a_context():
    first, second = pytorch_examples.split_a_remainder_through_a_context()
    assert (first.sm_count, second.sm_count) == (4, 4)
    one, two = GreenContext(sm_partition=first), GreenContext(sm_partition=second)
    seen_one, seen_two = observed(one), observed(two)
    print(f"first: SMs {sorted(seen_one)}; second: SMs {sorted(seen_two)}")
    assert len(seen_one) == 4 and len(seen_two) == 4 and not seen_one & seen_two


def test_pytorch_docs_example_split_contexts():
    a, b = pytorch_examples.split_contexts()
    seen_a, seen_b = observed(a), observed(b)
    print(f"a: {len(seen_a)} SMs, b: {len(seen_b)} SMs, shared {len(seen_a & seen_b)}")
    assert (a.sm_count, b.sm_count) == (24, 40)
    assert (len(seen_a), len(seen_b)) == (24, 40) and not seen_a & seen_b


def _matmul_seconds(stream, a, b, reps):
    with torch.cuda.stream(stream):
        a @ b  # warm-up (cuBLAS handle, workspace)
        stream.synchronize()
        start = time.perf_counter()
        for _ in range(reps):
            c = a @ b
        stream.synchronize()
    return (time.perf_counter() - start) / reps, c


def test_matmul_on_a_green_stream_is_right_and_slower_on_16_sms():
    ctx = GreenContext(num_sms=16)
    stream = ctx.Stream()
    assert isinstance(stream, torch.cuda.Stream)
    assert stream.__cuda_stream__() == (0, stream.cuda_stream)
    torch.set_float32_matmul_precision("highest")
    gen = torch.Generator().manual_seed(0)
    a_cpu, b_cpu = torch.randn(1024, 1024, generator=gen), torch.randn(1024, 1024, generator=gen)
    a, b = a_cpu.cuda(), b_cpu.cuda()
    stream.wait_stream(torch.cuda.current_stream())  # green streams don't sync with it
    with torch.cuda.stream(stream):
        c = a @ b
    stream.synchronize()
    ref = (a_cpu.double() @ b_cpu.double()).float()
    assert torch.allclose(c.cpu(), ref, rtol=1e-4, atol=1e-3)

    x = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    y = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    torch.cuda.synchronize()
    stream.wait_stream(torch.cuda.current_stream())
    whole, _ = _matmul_seconds(torch.cuda.current_stream(), x, y, 5)
    green, _ = _matmul_seconds(stream, x, y, 5)
    print(f"8192^3 bf16 matmul: whole GPU {whole * 1e3:.2f} ms, 16 SMs {green * 1e3:.2f} ms "
          f"({green / whole:.1f}x)")
    assert green > 2 * whole
    del c, x, y
    torch.cuda.synchronize()


def test_graph_captured_on_a_green_stream_replays_on_its_sms(smid_kernel):
    ctx = GreenContext(num_sms=16)
    sms = observed(ctx)
    stream = ctx.Stream()
    out = torch.full((16 * 64,), -1, dtype=torch.int32, device="cuda")
    a = torch.randn(512, 512, device="cuda")
    torch.cuda.synchronize()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        a @ a  # warm-up outside the capture
    stream.synchronize()
    core_stream = smid_kernel.as_core(stream)  # cuda.core's view of the same stream
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        smid_kernel(core_stream, out)
        b = a @ a
    out.fill_(-1)
    torch.cuda.synchronize()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        graph.replay()
    stream.synchronize()
    replayed = set(out.cpu().tolist())
    print(f"graph replay on the green stream ran on SMs {sorted(replayed)}")
    assert -1 not in replayed and replayed <= sms
    assert torch.allclose(b, a @ a, rtol=1e-3, atol=1e-3)


def test_cuda_core_runs_a_kernel_on_a_greenctx_stream(smid_kernel):
    (part,), _ = SMPartition.from_device(0).split(num_sms=8)
    ctx = GreenContext(sm_partition=part)
    sms = observed(ctx)
    s = ctx.stream()  # a greenctx Stream, not PyTorch's: cuda.core takes __cuda_stream__
    out = torch.full((8 * 64,), -1, dtype=torch.int32, device="cuda")
    torch.cuda.synchronize()
    smid_kernel(smid_kernel.as_core(s), out)
    s.synchronize()
    ran = set(out.cpu().tolist())
    print(f"cuda.core kernel on a greenctx stream ran on SMs {sorted(ran)} "
          f"(partition {sorted(sms)})")
    assert -1 not in ran and ran <= sms


def test_events_order_two_partitions():
    a, b = GreenContext.split(num_sms=(16, 16))
    sa, sb = a.Stream(), b.Stream()
    x = torch.ones(4096, 4096, device="cuda")
    torch.cuda.synchronize()
    sa.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(sa):
        for _ in range(4):
            x = x @ x / 4096
    event = sa.greenctx_stream.record_event()
    sb.greenctx_stream.wait_event(event)
    with torch.cuda.stream(sb):
        y = x * 2
    sb.synchronize()
    assert torch.allclose(y, torch.full_like(y, 2.0))
    sa.synchronize()


def test_deprecated_context_stack_runs_work_on_the_context():
    ctx = GreenContext(num_sms=16)
    x = torch.ones(256, 256, device="cuda")
    parent = torch.cuda.current_stream()
    with pytest.warns(FutureWarning):
        ctx.set_context()
    try:
        y = x * 2 + 1
    finally:
        with pytest.warns(FutureWarning):
            ctx.pop_context()
    assert torch.cuda.current_stream() == parent
    torch.cuda.synchronize()
    assert torch.allclose(y, torch.full_like(y, 3.0))


def test_layouts_switch_runs_work_on_the_new_partitions():
    from greenctx import Layouts
    layouts = Layouts([(16, 0), (64, 0)], device_id=0)
    x = torch.ones(1024, 1024, device="cuda")
    torch.cuda.synchronize()
    a, _ = layouts.switch(0)
    a.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(a):
        y = x @ x
    big, _ = layouts.switch(1)  # waits for y's matmul on layout 0
    with torch.cuda.stream(big):
        z = y + 1
    big.synchronize()
    assert torch.allclose(z, torch.full_like(z, 1025.0))
    seen = set(layouts.stream(1, 0).observe_sms())
    print(f"layout 1, partition 0: {len(seen)} SMs")
    assert len(seen) == 64
    layouts.close()


def test_cuda_core_sm_resources_and_contexts_convert_both_ways():
    core = pytest.importorskip("cuda.core")
    dev = core.Device(0)
    dev.set_current()
    (part,), _ = SMPartition.from_device(0).split(num_sms=16)
    # SMPartition -> SMResource -> a cuda.core green context on the same SMs.
    resource = part.to_sm_resource()
    assert resource.sm_count == 16
    core_ctx = dev.create_context(core.ContextOptions(resources=[resource]))
    # A cuda.core green Context adopted: same SMs, not destroyed by greenctx.
    adopted = GreenContext.adopt(core_ctx)
    assert adopted.adopted and adopted.sm_count == 16
    ours = GreenContext(sm_partition=part)
    assert observed(adopted) == observed(ours)
    adopted.close()
    stream = core_ctx.create_stream()  # still alive after greenctx let go of it
    stream.sync()
    stream.close()
    # SMResource -> SMPartition: the same SMs again.
    back = SMPartition.from_sm_resource(resource, device_id=0)
    assert back.sm_count == 16
    assert observed(GreenContext(sm_partition=back)) == observed(ours)
    core_ctx.close()
