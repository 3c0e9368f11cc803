"""A program for `greenctx run` that knows nothing of greenctx, in Python alone (for the
installed-wheel test, where no build tree and so no tests/run_probe is at hand): it loads the
driver as cudart does (dlopen, one dlsym of cuGetProcAddress_v2, the rest through it),
makes the primary context current, creates a stream, and asks the simulated driver which SMs
that stream's work runs on.

    python3 run_probe.py N     exit 0 when the stream runs on exactly N SMs
"""
import ctypes
import os
import sys

CUresult = ctypes.c_int


def main(expected):
    driver = ctypes.CDLL(os.environ.get("GREENCTX_CUDA_LIBRARY") or "libcuda.so.1",
                         mode=os.RTLD_LOCAL)
    getproc = driver.cuGetProcAddress_v2
    getproc.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_int,
                        ctypes.c_uint64, ctypes.POINTER(ctypes.c_int)]

    def entry(name, version, *argtypes):
        fn, found = ctypes.c_void_p(), ctypes.c_int()
        r = getproc(name.encode(), ctypes.byref(fn), version, 0, ctypes.byref(found))
        if r or not fn.value:
            sys.exit(f"FAIL: no {name} ({r})")
        return ctypes.CFUNCTYPE(CUresult, *argtypes)(fn.value)

    void_p = ctypes.c_void_p
    init = entry("cuInit", 2000, ctypes.c_uint)
    device_get = entry("cuDeviceGet", 2000, ctypes.POINTER(ctypes.c_int), ctypes.c_int)
    retain = entry("cuDevicePrimaryCtxRetain", 7000, ctypes.POINTER(void_p), ctypes.c_int)
    set_current = entry("cuCtxSetCurrent", 4000, void_p)
    stream_create = entry("cuStreamCreate", 2000, ctypes.POINTER(void_p), ctypes.c_uint)
    device, ctx, stream = ctypes.c_int(), void_p(), void_p()
    for what, r in (("cuInit", lambda: init(0)),
                    ("cuDeviceGet", lambda: device_get(ctypes.byref(device), 0)),
                    ("cuDevicePrimaryCtxRetain", lambda: retain(ctypes.byref(ctx), device)),
                    ("cuCtxSetCurrent", lambda: set_current(ctx)),
                    ("cuStreamCreate", lambda: stream_create(ctypes.byref(stream), 1))):
        code = r()
        if code:
            sys.exit(f"FAIL: {what} -> {code}")
    sm_ids = driver.gctxsim_stream_sm_ids
    sm_ids.argtypes = [void_p, ctypes.POINTER(ctypes.c_uint), ctypes.c_int]
    ids = (ctypes.c_uint * 1024)()
    n = sm_ids(stream, ids, 1024)
    print(f"run_probe.py: the stream runs on {n} SMs")
    return 0 if n == expected else 1


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1])))
