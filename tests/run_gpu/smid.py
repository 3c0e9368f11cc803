"""A %smid kernel loaded through the driver API (ctypes, PTX): which SMs the blocks of a
launch on a stream ran on. Used by the GPU tests of `greenctx run`; the program stays
unmodified apart from this observer, which goes through the same driver entry points."""
import ctypes

PTX = rb"""
.version 7.0
.target sm_70
.address_size 64
.visible .entry smid(.param .u64 out)
{
  .reg .b32 r<3>;
  .reg .b64 rd<6>;
  .reg .pred q;
  mov.u32 r0, %tid.x;
  setp.ne.u32 q, r0, 0;
  @q bra END;
  ld.param.u64 rd0, [out];
  cvta.to.global.u64 rd0, rd0;
  mov.u32 r1, %ctaid.x;
  mul.wide.u32 rd1, r1, 4;
  add.s64 rd2, rd0, rd1;
  mov.u32 r2, %smid;
  st.global.u32 [rd2], r2;
  mov.u64 rd3, %globaltimer;
  add.u64 rd4, rd3, 20000;
LOOP:
  mov.u64 rd5, %globaltimer;
  setp.lt.u64 q, rd5, rd4;
  @q bra LOOP;
END:
  ret;
}
"""


class SmidKernel:
    """Load once with the program's context current (its module lives in that context)."""

    def __init__(self):
        self.cuda = ctypes.CDLL("libcuda.so.1")
        self.module = ctypes.c_void_p()
        self.fn = ctypes.c_void_p()
        self._check(self.cuda.cuModuleLoadData(ctypes.byref(self.module), PTX), "cuModuleLoadData")
        self._check(self.cuda.cuModuleGetFunction(ctypes.byref(self.fn), self.module, b"smid"),
                    "cuModuleGetFunction")

    @staticmethod
    def _check(r, what):
        if r != 0:
            raise RuntimeError(f"{what} failed: CUDA error {r}")

    def launch(self, stream_handle, out_ptr, blocks):
        """Queues the kernel on a raw stream handle (0: the current context's default)."""
        arg = ctypes.c_uint64(out_ptr)
        params = (ctypes.c_void_p * 1)(ctypes.cast(ctypes.byref(arg), ctypes.c_void_p))
        self._check(self.cuda.cuLaunchKernel(self.fn, blocks, 1, 1, 32, 1, 1, 0,
                                             ctypes.c_void_p(stream_handle), params, None),
                    "cuLaunchKernel")
