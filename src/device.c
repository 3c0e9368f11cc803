/* Device count, device facts and SM partitioning rules. */
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "log.h"

gctx_status gctx_device_count(int *count)
{
    if (!count)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT, "count is NULL");
    const gctx__driver *drv;
    gctx_status s = gctx__driver_load(&drv);
    if (s != GCTX_SUCCESS)
        return s;
    if (gctx__driver_has_no_device()) {
        *count = 0;
        return GCTX_SUCCESS;
    }
    int n = 0;
    gcu_result r = drv->cuDeviceGetCount(&n);
    if (r != GCU_SUCCESS)
        return gctx__fail_cuda(r, "cuDeviceGetCount");
    *count = n;
    return GCTX_SUCCESS;
}

gctx_status gctx__check_device(const gctx__driver *drv, int device)
{
    int n = 0;
    if (!gctx__driver_has_no_device()) {
        gcu_result r = drv->cuDeviceGetCount(&n);
        if (r != GCU_SUCCESS)
            return gctx__fail_cuda(r, "cuDeviceGetCount");
    }
    if (device < 0 || device >= n) {
        if (n == 0)
            return gctx__fail(GCTX_ERROR_NO_DEVICE, "device %d: the driver sees no CUDA device",
                              device);
        if (n == 1)
            return gctx__fail(GCTX_ERROR_NO_DEVICE,
                              "device %d does not exist: the only device is 0", device);
        return gctx__fail(GCTX_ERROR_NO_DEVICE, "device %d does not exist: valid devices are 0 to %d",
                          device, n - 1);
    }
    return GCTX_SUCCESS;
}

static gctx_status attribute(const gctx__driver *drv, int device, int attrib, int *value)
{
    gcu_result r = drv->cuDeviceGetAttribute(value, attrib, device);
    return r == GCU_SUCCESS ? GCTX_SUCCESS
                            : gctx__fail_cuda(r, "cuDeviceGetAttribute(%d) on device %d", attrib,
                                              device);
}

/* The CUDA 13.0 documentation's rule for drivers that report none: Volta/Turing and older
 * minimum 2, Ampere/Ada minimum 4 in steps of 2, Hopper and later 8 in steps of 8. */
gctx_status gctx__device_arch_rules(const gctx__driver *drv, int device, gctx__sm_rules *rules)
{
    int major = 0;
    gctx_status s = attribute(drv, device, GCU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &major);
    if (s != GCTX_SUCCESS)
        return s;
    rules->derived = 1;
    GCTX__INFO("device %d: the driver reports no SM rules (before 13.0): they come from the "
               "architecture (compute capability %d)", device, major);
    if (major >= 9) {
        rules->min_partition = 8;
        rules->alignment = 8;
    } else if (major == 8) {
        rules->min_partition = 4;
        rules->alignment = 2;
    } else {
        rules->min_partition = 2;
        rules->alignment = 2;
    }
    return GCTX_SUCCESS;
}

gctx_status gctx__resource_rules(const gctx__driver *drv, int device,
                                 const gcu_dev_resource *resource, gctx__sm_rules *rules)
{
    if (gctx__driver_reaches(drv, GCTX_FEATURE_REPORTED_SM_RULES) &&
        resource->u.sm.minSmPartitionSize &&
        resource->u.sm.smCoscheduledAlignment) {
        rules->min_partition = resource->u.sm.minSmPartitionSize;
        rules->alignment = resource->u.sm.smCoscheduledAlignment;
        rules->derived = 0;
        return GCTX_SUCCESS;
    }
    return gctx__device_arch_rules(drv, device, rules);
}

gctx_status gctx_device_get_info(int device, gctx_device_info *info)
{
    gctx_status s = gctx__sized_check(info, GCTX__MIN_DEVICE_INFO, "info", "GCTX_DEVICE_INFO_INIT");
    if (s != GCTX_SUCCESS)
        return s;
    const gctx__driver *drv;
    s = gctx__driver_load(&drv);
    if (s == GCTX_SUCCESS)
        s = gctx__check_device(drv, device);
    if (s != GCTX_SUCCESS)
        return s;

    gctx_device_info out = GCTX_DEVICE_INFO_INIT;
    out.ordinal = device;
    gcu_result r = drv->cuDeviceGetName(out.name, (int)sizeof out.name, device);
    if (r != GCU_SUCCESS)
        return gctx__fail_cuda(r, "cuDeviceGetName on device %d", device);
    if ((s = attribute(drv, device, GCU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &out.cc_major)) ||
        (s = attribute(drv, device, GCU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &out.cc_minor)))
        return s;

    gctx__sm_rules rules;
    if (drv->features[GCTX_FEATURE_GREEN_CONTEXTS].available) {
        gcu_dev_resource resource;
        memset(&resource, 0, sizeof resource);
        r = drv->cuDeviceGetDevResource(device, &resource, GCU_DEV_RESOURCE_TYPE_SM);
        if (r != GCU_SUCCESS)
            return gctx__fail_cuda(r, "cuDeviceGetDevResource(SM) on device %d", device);
        out.sm_count = resource.u.sm.smCount;
        s = gctx__resource_rules(drv, device, &resource, &rules);
    } else {
        /* No SM resource before 12.4: the multiprocessor count tells the size. */
        int sms = 0;
        s = attribute(drv, device, GCU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &sms);
        out.sm_count = (unsigned)sms;
        if (s == GCTX_SUCCESS)
            s = gctx__device_arch_rules(drv, device, &rules);
    }
    if (s != GCTX_SUCCESS)
        return s;
    out.min_partition_sms = rules.min_partition;
    out.coscheduled_alignment = rules.alignment;
    out.sm_rules_derived = rules.derived;

    if (drv->features[GCTX_FEATURE_LOCALITY_DOMAINS].available) {
        int domains = 0;
        /* Some 13.4 devices have no domains; the attribute's failure then just means none. */
        if (drv->cuDeviceGetAttribute(&domains, GCU_DEVICE_ATTRIBUTE_LOCALITY_DOMAIN_COUNT,
                                      device) == GCU_SUCCESS && domains > 0)
            out.locality_domain_count = (unsigned)domains;
    }
    gctx__sized_out(info, &out, sizeof out);
    return GCTX_SUCCESS;
}
