/*
 * The device models and their SM layouts, and the device queries.
 *
 * GH100 parts (H200, H100) reproduce the physical SM ids measured on an H200: coscheduled
 * 8-SM granules take one TPC pair from each of four blocks, and 16-SM units pair granule k
 * with granule k+2. Which 120 (granules) or 128 (16-units) SMs take part is what makes
 * split-by-count give floor(120/s) or floor(128/s) groups. Other parts use a uniform layout
 * (TPC pairs in id order), as nothing was measured on them.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "sim_internal.h"

static const sim_model models[] = {
    {"h200", "NVIDIA H200", 132, 9, 0, 8, 8, 1, SIM_LAYOUT_GH100},
    {"h100", "NVIDIA H100 80GB HBM3", 132, 9, 0, 8, 8, 1, SIM_LAYOUT_GH100},
    {"a100", "NVIDIA A100-SXM4-80GB", 108, 8, 0, 4, 2, 1, SIM_LAYOUT_UNIFORM},
    {"l4", "NVIDIA L4", 58, 8, 9, 4, 2, 1, SIM_LAYOUT_UNIFORM},
    {"b200", "NVIDIA B200", 148, 10, 0, 8, 8, 2, SIM_LAYOUT_UNIFORM},
};

const sim_model *sim_model_find(const char *key)
{
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++)
        if (strcasecmp(models[i].key, key) == 0)
            return &models[i];
    return NULL;
}

const char *sim_model_keys(void)
{
    static char keys[64];
    size_t n = 0;
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++)
        n += (size_t)snprintf(keys + n, sizeof keys - n, "%s%s", i ? " " : "", models[i].key);
    return keys;
}

enum { GH100_GRANULES = 16, GH100_REAL_GRANULES = 15 };

/* Granules 0..14 are the measured ones; 15 (SMs 120..127) only completes the eighth 16-unit. */
static void gh100_granule(unsigned k, unsigned out[8])
{
    static const unsigned low_blocks[4] = {0, 16, 32, 48}, high_blocks[4] = {64, 78, 92, 106};
    for (unsigned i = 0; i < 8; i++) {
        if (k < 8)
            out[i] = low_blocks[i / 2] + 2 * k + i % 2;
        else if (k < GH100_REAL_GRANULES)
            out[i] = high_blocks[i / 2] + 2 * (k - 8) + i % 2;
        else
            out[i] = 120 + i;
    }
}

/* Appends `unit` (n ids) to order if every id is in set. */
static unsigned take_unit(const sim_smset *set, const unsigned *unit, unsigned n, unsigned *order,
                          unsigned len)
{
    for (unsigned i = 0; i < n; i++)
        if (!sim_set_has(set, unit[i]))
            return len;
    memcpy(order + len, unit, n * sizeof *unit);
    return len + n;
}

unsigned sim_layout_units(const sim_model *m, const sim_smset *set, unsigned size, unsigned *order)
{
    unsigned len = 0, unit[16];
    if (m->layout == SIM_LAYOUT_GH100 && size % 16 == 0) {
        for (unsigned q = 0; q < GH100_GRANULES / 2; q++) {
            unsigned a = 4 * (q / 2) + q % 2;
            gh100_granule(a, unit);
            gh100_granule(a + 2, unit + 8);
            len = take_unit(set, unit, 16, order, len);
        }
    } else if (m->layout == SIM_LAYOUT_GH100 && size % 8 == 0) {
        for (unsigned k = 0; k < GH100_REAL_GRANULES; k++) {
            gh100_granule(k, unit);
            len = take_unit(set, unit, 8, order, len);
        }
    } else {
        for (unsigned id = 0; id + 1 < m->sms; id += 2) {
            unit[0] = id;
            unit[1] = id + 1;
            len = take_unit(set, unit, 2, order, len);
        }
    }
    return len;
}

/* Domains split the SM ids into equal halves (B200: two dies of 74 SMs). */
sim_smset sim_domain_set(const sim_model *m, unsigned domain)
{
    unsigned per = m->sms / m->locality_domains;
    return sim_set_range(domain * per, per);
}

int sim_set_domain(const sim_model *m, const sim_smset *set)
{
    if (m->locality_domains < 2 || sim_set_count(set) == 0)
        return -1;
    for (unsigned d = 0; d < m->locality_domains; d++) {
        sim_smset outside = *set, dom = sim_domain_set(m, d);
        sim_set_minus(&outside, &dom);
        if (sim_set_count(&outside) == 0)
            return (int)d;
    }
    return -1;
}

gcu_result sim_check_device(gcu_device dev)
{
    return dev >= 0 && dev < sim.ndev ? GCU_SUCCESS : GCU_ERROR_INVALID_DEVICE;
}

gcu_result sim_cuDeviceGetCount(int *count)
{
    SIM_BEGIN(cuDeviceGetCount);
    if (!count)
        SIM_FAIL(GCU_ERROR_INVALID_VALUE);
    *count = sim.ndev;
    SIM_END();
}

gcu_result sim_cuDeviceGet(gcu_device *device, int ordinal)
{
    SIM_BEGIN(cuDeviceGet);
    if (!device)
        SIM_FAIL(GCU_ERROR_INVALID_VALUE);
    SIM_CHECK(sim_check_device(ordinal));
    *device = ordinal;
    SIM_END();
}

gcu_result sim_cuDeviceGetName(char *name, int len, gcu_device dev)
{
    SIM_BEGIN(cuDeviceGetName);
    if (!name || len <= 0)
        SIM_FAIL(GCU_ERROR_INVALID_VALUE);
    SIM_CHECK(sim_check_device(dev));
    size_t n = strlen(sim.dev[dev]->name);
    if (n >= (size_t)len)
        n = (size_t)len - 1;
    memcpy(name, sim.dev[dev]->name, n);
    name[n] = '\0';
    SIM_END();
}

gcu_result sim_cuDeviceGetAttribute(int *value, int attrib, gcu_device dev)
{
    SIM_BEGIN(cuDeviceGetAttribute);
    if (!value)
        SIM_FAIL(GCU_ERROR_INVALID_VALUE);
    SIM_CHECK(sim_check_device(dev));
    const sim_model *m = sim.dev[dev];
    switch (attrib) {
    case GCU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
        *value = (int)m->sms;
        break;
    case GCU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
        *value = m->cc_major;
        break;
    case GCU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
        *value = m->cc_minor;
        break;
    case GCU_DEVICE_ATTRIBUTE_LOCALITY_DOMAIN_COUNT:
        if (!sim_version_at_least(13040))
            SIM_FAIL(GCU_ERROR_INVALID_VALUE);
        *value = (int)m->locality_domains;
        break;
    default:
        SIM_FAIL(GCU_ERROR_INVALID_VALUE);
    }
    SIM_END();
}
