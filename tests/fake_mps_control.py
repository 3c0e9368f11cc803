#!/usr/bin/env python3
"""A stand-in for nvidia-cuda-mps-control, for test_tenant_mps (no GPU, no MPS here).

`-d` starts a "daemon" (a process listening on $CUDA_MPS_PIPE_DIRECTORY/control, as the real
one does) and returns once it listens; with no argument it reads commands on stdin, and
`quit` ends that daemon. Each call appends a line to $GREENCTX_TEST_MPS_RECORD:
"start PIPE LOG" or "quit PIPE", so the test sees what the bench ran and with which
environment. $GREENCTX_TEST_MPS_FAIL=1 makes -d fail, as a daemon that cannot start."""
import os
import signal
import socket
import sys
import time


def record(line):
    with open(os.environ["GREENCTX_TEST_MPS_RECORD"], "a") as f:
        f.write(line + "\n")


def main():
    pipe = os.environ.get("CUDA_MPS_PIPE_DIRECTORY", "/tmp/nvidia-mps")
    log = os.environ.get("CUDA_MPS_LOG_DIRECTORY", "/var/log/nvidia-mps")
    control, pidfile = os.path.join(pipe, "control"), os.path.join(pipe, "fake.pid")
    if sys.argv[1:] == ["-d"]:
        record("start %s %s" % (pipe, log))
        if os.environ.get("GREENCTX_TEST_MPS_FAIL") == "1":
            return 1
        if os.fork() == 0:  # the daemon, in a session of its own as the real one
            os.setsid()
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.bind(control)
            s.listen(8)
            with open(pidfile, "w") as f:
                f.write(str(os.getpid()))
            devnull = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(devnull, fd)
            while True:
                conn, _ = s.accept()
                conn.close()
        for _ in range(200):
            if os.path.exists(pidfile):
                return 0
            time.sleep(0.01)
        return 1
    if sys.argv[1:]:
        return 2
    for line in sys.stdin:
        if line.strip() == "quit":
            record("quit %s" % pipe)
            try:
                with open(pidfile) as f:
                    os.kill(int(f.read()), signal.SIGTERM)
            except (OSError, ValueError):
                pass
            for path in (control, pidfile):
                try:
                    os.unlink(path)
                except OSError:
                    pass
    return 0


sys.exit(main())
