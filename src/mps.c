/* MPS as this process sees it, with no driver call: a tool says so before it loads CUDA. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "greenctx_claims.h"
#include "internal.h"

#define GCTX__MIN_MPS_INFO GCTX__SIZE_THROUGH(gctx_mps_info, pinned_mem_limit) /* sized.h */

/* 1 when a daemon answers on the control endpoint: a FIFO someone reads (opening it for
 * writing without blocking fails with ENXIO when nobody does), or a socket someone listens on. */
static int daemon_answers(const char *control)
{
    struct stat st;
    if (stat(control, &st) != 0)
        return 0;
    if (S_ISFIFO(st.st_mode)) {
        int fd = open(control, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
            return 0;
        close(fd);
        return 1;
    }
    if (!S_ISSOCK(st.st_mode))
        return 0;
    struct sockaddr_un addr;
    if (strlen(control) >= sizeof addr.sun_path)
        return 0;
    memset(&addr, 0, sizeof addr);
    addr.sun_family = AF_UNIX;
    strcpy(addr.sun_path, control);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return 0;
    /* The daemon listens on a SOCK_SEQPACKET socket: a stream socket's connect is refused
     * with EPROTOTYPE while it listens, without the daemon seeing a connection, and with
     * ECONNREFUSED once it has quit (the socket file stays). */
    int ok = connect(fd, (struct sockaddr *)&addr, sizeof addr) == 0 || errno == EPROTOTYPE;
    close(fd);
    return ok;
}

gctx_status gctx_mps_get_info(gctx_mps_info *info)
{
    GCTX_TRY(gctx__sized_check(info, GCTX__MIN_MPS_INFO, "info", "GCTX_MPS_INFO_INIT"));
    gctx_mps_info out = GCTX_MPS_INFO_INIT;
    const char *pipe_dir = getenv("CUDA_MPS_PIPE_DIRECTORY");
    snprintf(out.pipe_dir, sizeof out.pipe_dir, "%s",
             pipe_dir && *pipe_dir ? pipe_dir : "/tmp/nvidia-mps");
    char control[600];
    snprintf(control, sizeof control, "%s/control", out.pipe_dir);
    out.daemon_running = daemon_answers(control);
    const char *pct = getenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE");
    if (pct && *pct) {
        char *end;
        errno = 0;
        double v = strtod(pct, &end);
        if (errno || end == pct || *end || v < 0 || v > 100)
            return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                              "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE is \"%s\": MPS takes a "
                              "percentage from 0 to 100 (unset it for 100)",
                              pct);
        out.active_thread_percentage = (int)v;
    }
    const char *limit = getenv("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT");
    snprintf(out.pinned_mem_limit, sizeof out.pinned_mem_limit, "%s", limit ? limit : "");
    gctx__sized_out(info, &out, sizeof out);
    return GCTX_SUCCESS;
}
