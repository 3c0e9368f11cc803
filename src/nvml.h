/* The device's clocks, throttle reasons and memory utilisation from NVML, loaded at run time
 * (dlopen libnvidia-ml.so.1, or GREENCTX_NVML_LIBRARY: the tests' fake): never linked, and
 * nothing when it isn't there. The guard's only use of it (claim_guard.c). */
#ifndef GREENCTX_NVML_H
#define GREENCTX_NVML_H

#include "guard_policy.h"

/* The device with this UUID ("GPU-..."), into out; -1 (out zeroed) when NVML can't say. */
int gctx__nvml_read(const char *uuid, gctx__guard_device *out);

#endif
