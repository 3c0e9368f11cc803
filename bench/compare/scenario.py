"""What the scenario scripts (tenants.py, elastic.py, overlap.py) share: the greenctx tool, a
runtime directory of their own, their tenants' environment and their MPS daemon; cuBLAS's SM
count target and events on a green context's stream."""
import contextlib
import ctypes
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
    """(tool, runtime directory, environment), the directory removed at the end: the tool as a
    command (under --dry on the simulated H200, the library GREENCTX_SIM_LIBRARY), the claims
    registry and MPS in a new directory under /tmp, with an empty no-mps/ for the arms where no
    daemon answers. SIGTERM and SIGHUP end the script as Ctrl-C does (its finally clauses)."""
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
    """`greenctx mps start` in env's runtime directory, stopped at the end: (env with the
    daemon's pipe and log directories, None), or (None, why it did not start)."""
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
    """env for tenants that find no MPS daemon: setup's empty no-mps/ as the pipe directory."""
    return dict(env, CUDA_MPS_PIPE_DIRECTORY=os.path.join(env["GREENCTX_RUNTIME_DIR"], "no-mps"))


def start(cmd, env, procs):
    """cmd started and appended to procs, True once its first line says "ready"; else every
    process in procs stopped, False: none is left running with its claim after the arm."""
    procs.append(subprocess.Popen(cmd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  text=True))
    if procs[-1].stdout.readline().strip() == "ready":
        return True
    stop(procs)
    return False


def go(procs):
    """One start time for every tenant in procs, each started and ready: none measures while
    another is still warming up."""
    at = f"{time.time() + 0.2}\n"
    for p in procs:
        p.stdin.write(at)
        p.stdin.close()


def ready():
    """A tenant's side of start and go: "ready", then the start time its parent gives."""
    print("ready", flush=True)
    time.sleep(max(0.0, float(sys.stdin.readline()) - time.time()))


def result(proc):
    """The last line proc printed, its result, as JSON."""
    return json.loads(proc.stdout.read().strip().splitlines()[-1])


def cu_check(result, what):
    if result:
        raise RuntimeError(f"{what}: CUDA error {result}")


def stop(procs):
    """Kills those of procs still running (an arm that failed or was interrupted)."""
    for p in procs:
        if p.poll() is None:
            p.kill()
            p.wait()


def cublas_target(torch):
    """cublasSetSmCountTarget of the cuBLAS torch's first GEMM loads, or None."""
    x = torch.ones(8, 8, device="cuda", dtype=torch.bfloat16)
    torch.mm(x, x)
    with open("/proc/self/maps") as maps:
        paths = sorted({line.split()[-1] for line in maps if "/libcublas.so" in line})
    if not paths:
        return None
    fn = ctypes.CDLL(paths[0]).cublasSetSmCountTarget
    fn.argtypes = [ctypes.c_void_p, ctypes.c_int]
    return fn


class StreamEvents:
    """n CUevents made in a stream's own context, to time work on it: the driver records no
    event of another context on a green context's stream (torch's events are its primary
    context's)."""
    def __init__(self, stream, n):
        self.cu = ctypes.CDLL("libcuda.so.1")
        self.stream, ctx = ctypes.c_void_p(stream.cuda_stream), ctypes.c_void_p()
        self.events = [ctypes.c_void_p() for _ in range(n)]
        cu_check(self.cu.cuStreamGetCtx(self.stream, ctypes.byref(ctx)), "cuStreamGetCtx")
        cu_check(self.cu.cuCtxPushCurrent_v2(ctx), "cuCtxPushCurrent")
        try:
            for e in self.events:
                cu_check(self.cu.cuEventCreate(ctypes.byref(e), 0), "cuEventCreate")
        finally:
            self.cu.cuCtxPopCurrent_v2(ctypes.byref(ctypes.c_void_p()))
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
