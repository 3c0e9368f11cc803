#!/bin/sh
# fake_mps_control.sh: stands in for nvidia-cuda-mps-control in the tests of `greenctx mps`
# (GREENCTX_MPS_CONTROL names it), on machines with no GPU. Like the real one it uses
# $CUDA_MPS_PIPE_DIRECTORY (default /tmp/nvidia-mps) and $CUDA_MPS_LOG_DIRECTORY:
#   fake_mps_control.sh -d       starts the "daemon": a FIFO named control in the pipe
#                                directory, read by a background process, and returns
#   echo CMD | fake_mps_control.sh   sends CMD: quit ends the daemon (it removes the FIFO);
#                                get_server_list prints the fake server's pid
# With no daemon it fails as the real one does ("Cannot find MPS control daemon process").
pipe=${CUDA_MPS_PIPE_DIRECTORY:-/tmp/nvidia-mps}
log=${CUDA_MPS_LOG_DIRECTORY:-/var/log/nvidia-mps}
fifo=$pipe/control
pidfile=$pipe/fake-daemon.pid

alive() { [ -p "$fifo" ] && [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }

if [ "${1:-}" = "-d" ]; then
    if alive; then
        echo "An instance of this daemon is already running" >&2
        exit 1
    fi
    mkdir -p "$pipe" "$log" || exit 1
    rm -f "$fifo"
    mkfifo -m 600 "$fifo" || exit 1
    (
        # Held open for reading and writing: the FIFO has a reader for as long as this lives,
        # and never reads end-of-file between commands.
        exec 3<>"$fifo"
        while read -r command <&3; do
            echo "$(date +%T) $command" >>"$log/control.log"
            [ "$command" = quit ] && break
        done
        rm -f "$fifo" "$pidfile"
    ) </dev/null >/dev/null 2>&1 &
    echo $! >"$pidfile"
    exit 0
fi

read -r command || command=
if ! alive; then
    echo "Cannot find MPS control daemon process" >&2
    exit 1
fi
case "$command" in
get_server_list) echo 4242 ;;
quit) echo quit >"$fifo" ;;
*) echo "$command" >"$fifo" ;;
esac
exit 0
