"""greenctx._interop's three conversions (SMPartition.to_sm_resource / from_sm_resource,
GreenContext.adopt of a cuda.core Context) on the simulated H200, through a stand-in for
cuda.core that names SMs as the simulator does: the right SMs come back, the cuda.core
objects are closed, and no driver object is left (the module's leak check)."""
import sys
import types

import pytest

from greenctx import GreenContext, SMPartition
from conftest import SIM, needs_driver

pytestmark = [pytest.mark.skipif(SIM is None, reason="needs the simulated driver"),
              needs_driver(13000)]  # a stream names its green context from 13.0


class CoreStream:
    """cuda.core's Stream on a CUstream: its resources are the SMs the stream runs on."""
    made = []

    def __init__(self, handle, owner=None):
        self.handle, self.owner, self.closed = handle, owner, False
        CoreStream.made.append(self)

    @classmethod
    def from_handle(cls, handle):
        return cls(handle)

    def __cuda_stream__(self):
        return (0, self.handle)

    @property
    def resources(self):
        return types.SimpleNamespace(sm=frozenset(SIM.stream_sms(self.handle)))

    def close(self):
        self.closed = True
        if self.owner is not None:
            self.owner.close()


class CoreContext:
    """cuda.core's green Context on a set of SMs (here: a greenctx partition)."""
    is_green = True

    def __init__(self, partition):
        self.ctx, self.closed = GreenContext(sm_partition=partition), False

    def create_stream(self):
        s = self.ctx.stream()
        return CoreStream(s.handle, owner=s)

    def close(self):
        self.ctx.close()
        self.closed = True


@pytest.fixture
def core(monkeypatch):
    module = types.ModuleType("cuda.core")
    module.Stream = CoreStream
    module.ContextOptions = lambda resources: resources
    module.Device = lambda ordinal: types.SimpleNamespace(
        create_context=lambda resources: CoreContext(resources[0]))
    cuda = types.ModuleType("cuda")
    cuda.core = module
    monkeypatch.setitem(sys.modules, "cuda", cuda)
    monkeypatch.setitem(sys.modules, "cuda.core", module)
    CoreStream.made = []
    return module


@pytest.fixture
def sixteen(sim):
    (part,), rest = SMPartition.from_device(0).split(num_sms=16)
    rest.close()
    with GreenContext(sm_partition=part) as ctx:
        sms = sim.context_sms(ctx)
    yield part, sms
    part.close()


def test_to_sm_resource_gives_the_partitions_sms(core, sixteen):
    part, sms = sixteen
    assert part.to_sm_resource() == sms and len(sms) == 16
    assert [s.closed for s in CoreStream.made] == [True]


def test_adopt_a_core_context_runs_on_its_sms_and_leaves_it_alive(sim, core, sixteen):
    part, sms = sixteen
    core_ctx = CoreContext(part)
    with GreenContext.adopt(core_ctx) as adopted:
        assert adopted.adopted and sim.context_sms(adopted) == sms
    assert all(s.closed for s in CoreStream.made) and not core_ctx.closed
    assert core_ctx.ctx.sm_count == 16  # greenctx let go of it, never destroyed it
    core_ctx.close()


def test_a_primary_core_context_is_refused(core):
    with pytest.raises(ValueError, match="adopt needs a green cuda.core Context"):
        GreenContext.adopt(types.SimpleNamespace(is_green=False, create_stream=None))


def test_from_sm_resource_gives_a_partition_on_the_same_sms(sim, core, sixteen):
    part, sms = sixteen
    with SMPartition.from_sm_resource(part, device_id=0) as back:
        assert isinstance(back, SMPartition) and back.sm_count == 16
        with GreenContext(sm_partition=back) as ctx:
            assert sim.context_sms(ctx) == sms
    assert all(s.closed for s in CoreStream.made)
