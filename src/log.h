/*
 * Diagnostics on stderr, chosen by GREENCTX_LOG (read when the driver is loaded):
 *   unset, "" or "off"  nothing (the default)
 *   "info"              what the library decided: the driver loaded, each split's path
 *                       (structured split or granules) and its fallbacks, context-cache hits
 *                       and misses, releases that failed
 *   "debug"             info, and the driver calls behind those decisions with their results
 * Anything else is refused: the driver does not load and the message names the variable.
 *
 * Off costs one relaxed atomic load per site: the arguments are not evaluated.
 */
#ifndef GREENCTX_LOG_H
#define GREENCTX_LOG_H

#include <stdatomic.h>

#include "internal.h"

enum { GCTX__LOG_OFF = 0, GCTX__LOG_INFO = 1, GCTX__LOG_DEBUG = 2 };

extern atomic_int gctx__log_level;

#define GCTX__LOG(level, ...)                                                                  \
    do {                                                                                       \
        if (atomic_load_explicit(&gctx__log_level, memory_order_relaxed) >= (level))          \
            gctx__log_write((level), __VA_ARGS__);                                             \
    } while (0)
#define GCTX__INFO(...) GCTX__LOG(GCTX__LOG_INFO, __VA_ARGS__)
#define GCTX__DEBUG(...) GCTX__LOG(GCTX__LOG_DEBUG, __VA_ARGS__)
/* A driver call and what it answered, at debug: "cuGreenCtxCreate -> CUDA_SUCCESS (0)". */
#define GCTX__DEBUG_CALL(call, result)                                                         \
    GCTX__DEBUG("%s -> %s (%d)", (call), gctx__cuda_result_name(result), (int)(result))

/* One line "greenctx[PID] LEVEL: MESSAGE" on stderr, written with one call. */
void gctx__log_write(int level, const char *fmt, ...) GCTX_PRINTF(2, 3);

/* Reads GREENCTX_LOG into gctx__log_level; GCTX_ERROR_INVALID_ARGUMENT (with the message
 * set) for a value it does not know. */
gctx_status gctx__log_configure(void);

#endif
