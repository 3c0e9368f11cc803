/* Diagnostics on stderr, chosen by GREENCTX_LOG: off (unset, ""), "info" (what the library
 * decided) or "debug" (and the driver calls behind it). Off costs one relaxed load a site. */
#ifndef GREENCTX_LOG_H
#define GREENCTX_LOG_H

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

void gctx__log_write(int level, const char *fmt, ...) GCTX_PRINTF(2, 3);

gctx_status gctx__log_configure(void);

#endif
