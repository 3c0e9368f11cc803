/* Devices: count, facts, SM partitioning rules, the primary context's hold, identity. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

/* One device: its count and compute capability, asked once, and the hold of the primary
 * context, which each green context creation would otherwise initialise again (BENCHMARKS.md). */
typedef struct device_state {
    pthread_mutex_t lock;  /* the first hold and the last drop of the primary context */
    atomic_uint holds;     /* live partitions of the device: one driver retain for all */
    atomic_int cc_major;   /* 0 until asked */
} device_state;

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(device_state *) table; /* set (release) once, with table_size entries */
static int table_size;

/* The table, made on first use (a failed count is asked again). */
static gctx_status device_table(const gctx__driver *drv, int *count)
{
    if (atomic_load_explicit(&table, memory_order_acquire)) {
        *count = table_size; /* written before the table was published */
        return GCTX_SUCCESS;
    }
    gctx_status s = GCTX_SUCCESS;
    pthread_mutex_lock(&table_lock);
    if (!atomic_load_explicit(&table, memory_order_relaxed)) {
        int n = 0;
        device_state *t = NULL;
        s = gctx__check_cuda(gctx__driver_has_no_device() ? GCU_SUCCESS : drv->cuDeviceGetCount(&n),
                             "cuDeviceGetCount");
        if (s == GCTX_SUCCESS && !(t = calloc(n > 0 ? (size_t)n : 1, sizeof *t)))
            s = gctx__fail(GCTX_ERROR_OUT_OF_MEMORY, "out of memory for the device table");
        if (t) {
            for (int d = 0; d < n; d++)
                pthread_mutex_init(&t[d].lock, NULL);
            table_size = n;
            atomic_store_explicit(&table, t, memory_order_release);
        }
    }
    *count = table_size;
    pthread_mutex_unlock(&table_lock);
    return s;
}

static gctx_status state_of(const gctx__driver *drv, int device, device_state **out)
{
    gctx_status s = gctx__check_device(drv, device);
    if (s == GCTX_SUCCESS)
        *out = &atomic_load_explicit(&table, memory_order_acquire)[device];
    return s;
}

gctx_status gctx_device_count(int *count)
{
    if (!count)
        return gctx__fail(GCTX_ERROR_INVALID_ARGUMENT, "count is NULL");
    const gctx__driver *drv;
    GCTX_TRY(gctx__driver_load(&drv));
    int n = 0;
    if (!gctx__driver_has_no_device())
        GCTX_TRY(gctx__check_cuda(drv->cuDeviceGetCount(&n), "cuDeviceGetCount"));
    *count = n;
    return GCTX_SUCCESS;
}

gctx_status gctx__check_device(const gctx__driver *drv, int device)
{
    int n = 0;
    GCTX_TRY(device_table(drv, &n));
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

gctx_status gctx__device_resource(const gctx__driver *drv, int device, gcu_dev_resource_type type,
                                  gcu_dev_resource *out)
{
    memset(out, 0, sizeof *out);
    return gctx__check_cuda(drv->cuDeviceGetDevResource(device, out, type),
                            "cuDeviceGetDevResource(%s) on device %d",
                            gctx__resource_type_name(type), device);
}

static gctx_status attribute(const gctx__driver *drv, int device, int attrib, int *value)
{
    return gctx__check_cuda(drv->cuDeviceGetAttribute(value, attrib, device),
                            "cuDeviceGetAttribute(%d) on device %d", attrib, device);
}

gctx_status gctx__device_cc_major(const gctx__driver *drv, int device, int *major)
{
    device_state *d;
    GCTX_TRY(state_of(drv, device, &d));
    int m = atomic_load_explicit(&d->cc_major, memory_order_relaxed);
    if (!m) {
        GCTX_TRY(attribute(drv, device, GCU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &m));
        atomic_store_explicit(&d->cc_major, m, memory_order_relaxed);
    }
    *major = m;
    return GCTX_SUCCESS;
}

gctx_status gctx__device_hold_primary(const gctx__driver *drv, int device)
{
    device_state *d;
    GCTX_TRY(state_of(drv, device, &d));
    /* Held already: one more partition, no driver call. From 0 the lock orders the retain
     * before any other hold sees the count above 0. */
    unsigned h = atomic_load(&d->holds);
    while (h > 0)
        if (atomic_compare_exchange_weak(&d->holds, &h, h + 1))
            return GCTX_SUCCESS;
    gctx_status s = GCTX_SUCCESS;
    pthread_mutex_lock(&d->lock);
    if (atomic_load(&d->holds) == 0) {
        CUcontext primary;
        s = gctx__check_cuda(drv->cuDevicePrimaryCtxRetain(&primary, device),
                             "cuDevicePrimaryCtxRetain on device %d", device);
    }
    if (s == GCTX_SUCCESS)
        atomic_fetch_add(&d->holds, 1);
    pthread_mutex_unlock(&d->lock);
    return s;
}

void gctx__device_drop_primary(const gctx__driver *drv, int device)
{
    /* A hold made the table and checked the device: no driver call, no error here. */
    device_state *d = &atomic_load_explicit(&table, memory_order_acquire)[device];
    unsigned h = atomic_load(&d->holds);
    while (h > 1)
        if (atomic_compare_exchange_weak(&d->holds, &h, h - 1))
            return;
    pthread_mutex_lock(&d->lock);
    if (atomic_fetch_sub(&d->holds, 1) == 1)
        GCTX__RELEASE(drv, PRIMARY_CONTEXT, device, device);
    pthread_mutex_unlock(&d->lock);
}

/* The CUDA 13.0 documentation's rule for drivers that report none, newest architecture
 * first: the first row whose compute capability the device reaches. */
static const struct {
    int major;
    unsigned min_partition, alignment;
} arch_rules[] = {
    {9, 8, 8}, /* Hopper and later */
    {8, 4, 2}, /* Ampere, Ada */
    {0, 2, 2}, /* Volta, Turing and older */
};

gctx_status gctx__device_arch_rules(const gctx__driver *drv, int device, gctx__sm_rules *rules)
{
    int major = 0;
    GCTX_TRY(gctx__device_cc_major(drv, device, &major));
    GCTX__INFO("device %d: the driver reports no SM rules (before 13.0): they come from the "
               "architecture (compute capability %d)", device, major);
    unsigned row = 0;
    while (arch_rules[row].major > 0 && major < arch_rules[row].major)
        row++;
    *rules = (gctx__sm_rules){arch_rules[row].min_partition, arch_rules[row].alignment, 1};
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
    GCTX_TRY(gctx__sized_check(info, GCTX__MIN_DEVICE_INFO, "info", "GCTX_DEVICE_INFO_INIT"));
    const gctx__driver *drv;
    GCTX_TRY(gctx__driver_load(&drv));
    GCTX_TRY(gctx__check_device(drv, device));
    gctx_device_info out = GCTX_DEVICE_INFO_INIT;
    out.ordinal = device;
    GCTX_TRY(gctx__check_cuda(drv->cuDeviceGetName(out.name, (int)sizeof out.name, device),
                              "cuDeviceGetName on device %d", device));
    GCTX_TRY(attribute(drv, device, GCU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &out.cc_major));
    GCTX_TRY(attribute(drv, device, GCU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &out.cc_minor));
    gctx__sm_rules rules;
    if (drv->features[GCTX_FEATURE_GREEN_CONTEXTS].available) {
        gcu_dev_resource resource;
        GCTX_TRY(gctx__device_resource(drv, device, GCU_DEV_RESOURCE_TYPE_SM, &resource));
        out.sm_count = resource.u.sm.smCount;
        GCTX_TRY(gctx__resource_rules(drv, device, &resource, &rules));
    } else {
        /* No SM resource before 12.4: the multiprocessor count tells the size. */
        int sms = 0;
        GCTX_TRY(attribute(drv, device, GCU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &sms));
        out.sm_count = (unsigned)sms;
        GCTX_TRY(gctx__device_arch_rules(drv, device, &rules));
    }
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

/* ---- a device's UUID and PCI bus id, as nvidia-smi prints them ---- */

void gctx__format_uuid(const gcu_uuid *u, char *out, size_t size)
{
    const unsigned char *b = (const unsigned char *)u->bytes;
    snprintf(out, size,
             "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
             b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
             b[14], b[15]);
}

/* The driver and the device checked, and out big enough for `need` bytes. */
static gctx_status identity_begin(int device, char *out, size_t size, size_t need,
                                  const char *what, const gctx__driver **drv)
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
    GCTX_TRY(identity_begin(device, uuid, size, GCTX_UUID_SIZE, "UUID", &drv));
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
    GCTX_TRY(identity_begin(device, bus_id, size, GCTX_PCI_BUS_ID_SIZE, "PCI bus id", &drv));
    if (!drv->cuDeviceGetPCIBusId)
        return gctx__fail(GCTX_ERROR_UNSUPPORTED, "the driver has no cuDeviceGetPCIBusId");
    gctx_status s = gctx__check_cuda(drv->cuDeviceGetPCIBusId(bus_id, (int)size, device),
                                     "cuDeviceGetPCIBusId on device %d", device);
    if (s != GCTX_SUCCESS)
        bus_id[0] = '\0';
    return s;
}
