/* A device's UUID and PCI bus id, as nvidia-smi prints them. */
#include <stdio.h>

#include "internal.h"

void gctx__format_uuid(const gcu_uuid *u, char *out, size_t size)
{
    const unsigned char *b = (const unsigned char *)u->bytes;
    snprintf(out, size,
             "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
             b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
             b[14], b[15]);
}

/* The driver and the device checked, and out big enough for `need` bytes. */
static gctx_status begin(int device, char *out, size_t size, size_t need, const char *what,
                         const gctx__driver **drv)
{
    if (!out || size < need)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT,
                          "the %s needs a buffer of %zu bytes; got %zu%s", what, need,
                          out ? size : 0, out ? "" : " (NULL)");
    out[0] = '\0';
    GCTX_TRY(gctx__driver_load(drv));
    return gctx__check_device(*drv, device);
}

gctx_status gctx_device_uuid(int device, char *uuid, size_t size)
{
    const gctx__driver *drv;
    GCTX_TRY(begin(device, uuid, size, GCTX_UUID_SIZE, "UUID", &drv));
    if (!drv->cuDeviceGetUuid)
        return gctx__fail(GCTX_ERROR_UNSUPPORTED, "the driver has no cuDeviceGetUuid (CUDA 11.4+)");
    gcu_uuid u;
    GCTX_TRY(gctx__check_cuda(drv->cuDeviceGetUuid(&u, device), "cuDeviceGetUuid on device %d",
                              device));
    gctx__format_uuid(&u, uuid, size);
    return GCTX_SUCCESS;
}

gctx_status gctx_device_pci_bus_id(int device, char *bus_id, size_t size)
{
    const gctx__driver *drv;
    GCTX_TRY(begin(device, bus_id, size, GCTX_PCI_BUS_ID_SIZE, "PCI bus id", &drv));
    if (!drv->cuDeviceGetPCIBusId)
        return gctx__fail(GCTX_ERROR_UNSUPPORTED, "the driver has no cuDeviceGetPCIBusId");
    gctx_status s = gctx__check_cuda(drv->cuDeviceGetPCIBusId(bus_id, (int)size, device),
                                     "cuDeviceGetPCIBusId on device %d", device);
    if (s != GCTX_SUCCESS)
        bus_id[0] = '\0';
    return s;
}
