"""What tenants.py, elastic.py and overlap.py share: the greenctx tool, a runtime directory and
an MPS daemon of their own, their tenants' start, cuBLAS's SM count target and driver events on
a green context's stream (docs/architecture.md, "Scenario benches")."""
import contextlib
import ctypes
import functools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time


@contextlib.contextmanager
def runtime(name, dry):
    """(tool, runtime directory, environment), the directory (with an empty no-mps/) removed at
    the end; --dry: the simulated H200. SIGTERM and SIGHUP end the script as Ctrl-C does."""
    tool = os.environ.get("GREENCTX_TOOL") or shutil.which("greenctx")
    if not tool:
        sys.exit("the greenctx tool is needed (PATH or GREENCTX_TOOL): its MPS daemon")
    runtime = tempfile.mkdtemp(prefix=f"greenctx-{name}-", dir="/tmp")
    os.mkdir(os.path.join(runtime, "no-mps"), 0o700)
    env = dict(os.environ, GREENCTX_RUNTIME_DIR=runtime, NCCL_NVLS_ENABLE="0")
    if dry:
        env.setdefault("GREENCTX_CUDA_LIBRARY", os.environ.get("GREENCTX_SIM_LIBRARY", ""))
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda *_: sys.exit(128 + 15))
    try:
        yield [tool, "--sim", "h200"] if dry else [tool], runtime, env
    finally:
        shutil.rmtree(runtime, ignore_errors=True)


@contextlib.contextmanager
def mps(tool, env):
    """`greenctx mps start`, stopped at the end: (env reaching it, None) or (None, why not)."""
    out = subprocess.run([*tool, "mps", "start", "--print-env"], env=env, text=True,
                         capture_output=True)
    if out.returncode:
        yield None, (out.stderr or out.stdout).strip()
        return
    started = dict(env)
    for line in out.stdout.splitlines():  # export CUDA_MPS_PIPE_DIRECTORY=... lines
        key, _, value = line.removeprefix("export ").partition("=")
        started[key] = value.strip("'\"")
    try:
        yield started, None
    finally:
        subprocess.run([*tool, "mps", "stop"], env=started, check=False, stdout=sys.stderr)


def no_mps(env):
    """env for tenants that find no MPS daemon."""
    return dict(env, CUDA_MPS_PIPE_DIRECTORY=os.path.join(env["GREENCTX_RUNTIME_DIR"], "no-mps"))


@contextlib.contextmanager
def tenants(arm, specs):
    """[(role, cmd, env)] started in turn, each ready before the next starts (a victim's claim
    before the hog asks for "rest"), then one start time for all (none measures while another
    warms up): the processes, stopped at the end. RuntimeError if one did not start."""
    procs = []
    try:
        for role, cmd, env in specs:
            procs.append(subprocess.Popen(cmd, env=env, stdin=subprocess.PIPE,
                                          stdout=subprocess.PIPE, text=True))
            if procs[-1].stdout.readline().strip() != "ready":
                raise RuntimeError(f"{arm}: the {role} did not start")
        at = f"{time.time() + 0.2}\n"
        for p in procs:
            p.stdin.write(at)
            p.stdin.close()
        yield procs
    finally:
        stop(procs)


def ready():
    """A tenant's side of tenants(): "ready", then the start time its parent gives."""
    print("ready", flush=True)
    time.sleep(max(0.0, float(sys.stdin.readline()) - time.time()))


def result(proc):
    """The last line proc printed, its result, as JSON."""
    return json.loads(proc.stdout.read().strip().splitlines()[-1])


def itself(*args):
    """This script run again, with its own arguments and args."""
    return [sys.executable, os.path.abspath(sys.argv[0]), *sys.argv[1:], *args]


def cu_check(result, what):
    if result:
        raise RuntimeError(f"{what}: CUDA error {result}")


def stop(procs):
    """Kills those of procs still running (an arm that failed or was interrupted)."""
    for p in procs:
        if p.poll() is None:
            p.kill()
            p.wait()


def loaded(part):
    """The path of a library loaded in this process with part in it, or ""."""
    with open("/proc/self/maps") as maps:
        return next((line.split()[-1] for line in maps if part in line), "")


class BlasTarget:
    """cuBLAS's kernels (and by torch's SM carveout cuBLASLt's) sized for a count of SMs, set on
    the current thread's handle when it changes; 0: cuBLAS's own. lenient: where cuBLAS refuses
    a count (MPS's active-thread percentage), its own choice."""
    def __init__(self, torch, device_sms, lenient=False):
        self.torch, self.device_sms, self.lenient, self.targets = torch, device_sms, lenient, {}
        x = torch.ones(8, 8, device="cuda", dtype=torch.bfloat16)
        torch.mm(x, x)  # cuBLAS is loaded by the first GEMM
        self.fn = ctypes.CDLL(loaded("/libcublas.so")).cublasSetSmCountTarget \
            if loaded("/libcublas.so") else None
        if self.fn:
            self.fn.argtypes = [ctypes.c_void_p, ctypes.c_int]
        self.carveout = getattr(torch._C, "_set_sm_carveout_experimental", None)

    def __call__(self, sms):
        sms, handle = min(sms, self.device_sms), self.fn and self.torch.cuda.current_blas_handle()
        if not handle or self.targets.get(handle) == sms:
            return
        self.targets[handle] = sms
        if self.fn(handle, sms) and (not self.lenient or self.fn(handle, 0)):
            raise RuntimeError(f"cublasSetSmCountTarget({sms}) failed")
        if self.carveout:
            self.carveout(self.device_sms - sms if 0 < sms < self.device_sms else None)


@functools.cache
def libcuda():
    return ctypes.CDLL("libcuda.so.1")


def stream_context(cu, stream):
    ctx = ctypes.c_void_p()
    cu_check(cu.cuStreamGetCtx(stream, ctypes.byref(ctx)), "cuStreamGetCtx")
    return ctx


def stream_events(cache, stream, n):
    """stream's StreamEvents, made once per stream and context (a handle may come again on
    another context)."""
    key = (stream.cuda_stream,
           stream_context(libcuda(), ctypes.c_void_p(stream.cuda_stream)).value)
    if key not in cache:
        cache[key] = StreamEvents(stream, n)
    return cache[key]


@contextlib.contextmanager
def stream_current(cu, stream):
    """The stream handle's own context current in the block."""
    cu_check(cu.cuCtxPushCurrent_v2(stream_context(cu, stream)), "cuCtxPushCurrent")
    try:
        yield
    finally:
        cu.cuCtxPopCurrent_v2(ctypes.byref(ctypes.c_void_p()))


class StreamEvents:
    """n CUevents made in a stream's own context, to time work on it: the driver records no
    event of another context (torch's: its primary context's) on a green context's stream."""
    def __init__(self, stream, n):
        self.cu, self.stream = libcuda(), ctypes.c_void_p(stream.cuda_stream)
        self.events = [ctypes.c_void_p() for _ in range(n)]
        with stream_current(self.cu, self.stream):
            for e in self.events:
                cu_check(self.cu.cuEventCreate(ctypes.byref(e), 0), "cuEventCreate")
        self.elapsed = getattr(self.cu, "cuEventElapsedTime_v2", None) or \
            self.cu.cuEventElapsedTime

    def record(self, i):
        cu_check(self.cu.cuEventRecord(self.events[i], self.stream), "cuEventRecord")

    def wait(self, i):
        cu_check(self.cu.cuEventSynchronize(self.events[i]), "cuEventSynchronize")

    def ms(self, i, j):
        """From event i to event j, both done."""
        ms = ctypes.c_float()
        cu_check(self.elapsed(ctypes.byref(ms), self.events[i], self.events[j]),
                 "cuEventElapsedTime")
        return ms.value
