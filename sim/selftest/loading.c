/* Loading and configuring the simulator: version gating, models, refused configurations. */
#include <stdio.h>
#include <string.h>

#include "selftest.h"

void check_loading(void)
{
    int count = -1;
    configure("h200", "13000", NULL);
    void *fn = (void *)1;
    int q = -1;
    check(get_proc("cuGreenCtxCreate", &fn, 13010, 0, &q) == GCU_ERROR_INVALID_VALUE,
          "cudaVersion above the driver's is INVALID_VALUE");
    check(get_proc("cuNoSuchThing", &fn, 12000, 0, &q) == 0 && !fn && q == 1, "unknown symbol");
    check(get_proc("cuGreenCtxStreamCreate", &fn, 12040, 0, &q) == 0 && !fn && q == 2,
          "a symbol newer than the version asked is VERSION_NOT_SUFFICIENT");
    const char *name = "x";
    check(D.cuGetErrorName(915, &name) == 0 &&
              strcmp(name, "CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION") == 0,
          "error names");
    check(D.cuGetErrorName(12345, &name) == GCU_ERROR_INVALID_VALUE && name == NULL,
          "an unknown error code has no name");
    char buf[64];
    check(D.cuDeviceGetName(buf, sizeof buf, 0) == 0 && strcmp(buf, "NVIDIA H200") == 0, "name");
    check(D.cuDeviceGetCount(&count) == 0 && count == 1, "one device by default");

    configure("h200", "12030", NULL);
    check(get_proc("cuDeviceGetDevResource", &fn, 12030, 0, &q) == 0 && !fn && q == 1,
          "12.3 has no green contexts");

    configure("h200", "12040", NULL);
    gcu_dev_resource dev = device_resource(0);
    static split_out o;
    split(&o, &dev, 1, 8, MAXG);
    check(!D.cuGreenCtxStreamCreate && !D.cuGreenCtxGetId, "12.4 lacks the 12.5/12.9 entry points");
    check(dev.u.sm.smCount == 132 && dev.u.sm.minSmPartitionSize == 0, "12.4 fills only smCount");
    check(o.r == GCU_ERROR_INVALID_VALUE, "12.4 has no split flags");
    CUgreenCtx g;
    check(D.cuGreenCtxCreate(&g, NULL, 0, 0) == GCU_ERROR_INVALID_VALUE,
          "12.4 requires CU_GREEN_CTX_DEFAULT_STREAM");

    configure("h200", "13030", NULL);
    check(D.cuGreenCtxCreate(&g, NULL, 0, 0) == 0 && D.cuGreenCtxDestroy(g) == 0,
          "13.3 accepts CU_GREEN_CTX_NONE");

    configure("nosuchgpu", "13000", NULL);
    check(D.cuInit(0) == GCU_ERROR_INVALID_VALUE, "an unknown model is refused");
    check(config_error() &&
              strstr(config_error(), "GREENCTX_SIM_DEVICES=nosuchgpu: 'nosuchgpu' is not a "
                                     "simulated model; valid: h200 h100 a100 l4 b200"),
          "and the refusal names the variable and the valid models");
    check(D.cuDeviceGetCount(&count) == GCU_ERROR_NOT_INITIALIZED, "and no initialisation");
    configure("h200", "13k", NULL);
    check(D.cuInit(0) == GCU_ERROR_INVALID_VALUE && strstr(config_error(),
                                                           "GREENCTX_SIM_DRIVER_VERSION=13k"),
          "a malformed driver version is refused, naming the variable");
    configure("h200", "13000", "cuGreenCtxCreate:x");
    check(D.cuInit(0) == GCU_ERROR_INVALID_VALUE &&
              strstr(config_error(), "GREENCTX_SIM_FAIL=cuGreenCtxCreate:x"),
          "a malformed fault is refused, naming the variable");
    configure("none", "13000", NULL);
    check(config_error() == NULL, "a valid configuration has no refusal");
    check(D.cuInit(0) == 0 && D.cuDeviceGetCount(&count) == 0 && count == 0, "zero devices");

    configure("h200,a100,l4,b200,h100", "13040", NULL);
    int v[5];
    D.cuDeviceGetAttribute(&v[0], GCU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 1);
    D.cuDeviceGetAttribute(&v[1], GCU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 2);
    D.cuDeviceGetAttribute(&v[2], GCU_DEVICE_ATTRIBUTE_LOCALITY_DOMAIN_COUNT, 3);
    D.cuDeviceGetAttribute(&v[3], GCU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 3);
    D.cuDeviceGetAttribute(&v[4], GCU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 4);
    check(v[0] == 108 && v[1] == 9 && v[2] == 2 && v[3] == 10 && v[4] == 132, "model table");
    dev = device_resource(1);
    split(&o, &dev, 0, 5, MAXG);
    check(o.r == 0 && o.n == 18 && o.res[0].u.sm.smCount == 6 && dev.u.sm.minSmPartitionSize == 4,
          "A100: min 4, alignment 2, uniform layout");
    dev = device_resource(3);
    split(&o, &dev, GCU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING, 74, MAXG);
    check(o.r == 0 && o.n == 2 && (o.res[1].u.sm.flags & 2) && o.res[1].u.sm.localityDomainId == 1 &&
              !(dev.u.sm.flags & 2),
          "B200 on 13.4: locality domains label single-domain partitions");
    gcu_resource_desc desc;
    check(D.cuDevResourceGenerateDesc(&desc, o.res, 2) == GCU_ERROR_INVALID_RESOURCE_CONFIGURATION,
          "13.4: one descriptor, one locality domain");

    configure("h200", "13000", NULL);
    check(D.cuDeviceGetAttribute(&v[0], GCU_DEVICE_ATTRIBUTE_LOCALITY_DOMAIN_COUNT, 0) ==
              GCU_ERROR_INVALID_VALUE,
          "no locality attribute before 13.4");
}
