#!/bin/sh
# The first program of docs/api.md (the C block under "### A first program") as a C program
# (on stdout), so the guide's example is compiled and run: inside main(), with a stand-in for
# cuLaunchKernel that checks it got a stream.
set -eu
guide=$1
cat <<'PROLOGUE'
#include <stdio.h>
#include <stdlib.h>

#include "greenctx.h"

typedef struct CUfunc_st *CUfunction;
static int cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                          unsigned by, unsigned bz, unsigned shared, CUstream stream,
                          void **args, void **extra)
{
    (void)f, (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shared;
    (void)args, (void)extra;
    if (!stream) {
        puts("not ok: the example launched on no stream");
        exit(1);
    }
    return 0;
}

int main(void)
{
    CUfunction fn = NULL;
    void **args = NULL;
    /* make test-gpu on a machine without a GPU: skipped (77), not failed. */
    int devices = 0;
    if (gctx_device_count(&devices) == GCTX_ERROR_NO_DRIVER || devices == 0) {
        printf("skip: no CUDA device here (%s)\n", gctx_last_error());
        return 77;
    }
PROLOGUE
body=$(sed -n '/^### A first program/,/^### /p' "$guide" | sed -n '/^```c$/,/^```$/p' |
    sed '/^```/d')
[ -n "$body" ] || { echo "no example found in $guide" >&2; exit 1; }
printf '%s\n' "$body"
printf '    puts("ok: the guide'"'"'s example ran");\n    return 0;\n}\n'
