/* The device models and their SM layouts, and the device queries (name, UUID, PCI bus id).
 *
 * GH100 parts (H200, H100) reproduce the physical SM ids measured on an H200: coscheduled
 * 8-SM granules take one TPC pair from each of four blocks (GPCs), 16-SM units are dealt as
 * measured (gh100_unit16). Which 120 (granules) or 128 (16-units) SMs take part is what makes
 * split-by-count give floor(120/s) or floor(128/s) groups; which SMs a context holds decides
 * how many granules it splits into (gh100_more_granules). Other parts use a uniform layout
 * (TPC pairs in id order), as nothing was measured on them. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "greenctx_sim.h"
#include "sim_internal.h"

static const sim_model models[] = {
    /* Memory: the H200's 143 GB as cuMemGetInfo totals it; the others their nominal size. A
     * coscheduled unit of cuDevSmResourceSplit is at most 32 SMs from compute capability 9.0. */
    {"h200", "NVIDIA H200", 132, 9, 0, 8, 8, 32, 1, SIM_LAYOUT_GH100, 143156},
    {"h100", "NVIDIA H100 80GB HBM3", 132, 9, 0, 8, 8, 32, 1, SIM_LAYOUT_GH100, 81559},
    {"a100", "NVIDIA A100-SXM4-80GB", 108, 8, 0, 4, 2, 2, 1, SIM_LAYOUT_UNIFORM, 81920},
    {"l4", "NVIDIA L4", 58, 8, 9, 4, 2, 2, 1, SIM_LAYOUT_UNIFORM, 23034},
    {"b200", "NVIDIA B200", 148, 10, 0, 8, 8, 32, 2, SIM_LAYOUT_UNIFORM, 183359},
};

const sim_model *sim_model_find(const char *key)
{
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++)
        if (strcasecmp(models[i].key, key) == 0)
            return &models[i];
    return NULL;
}

GCTXSIM_API const char *gctxsim_models(void)
{
    static char keys[64];
    size_t n = 0;
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++)
        n += (size_t)snprintf(keys + n, sizeof keys - n, "%s%s", i ? " " : "", models[i].key);
    return keys;
}

enum { GH100_GRANULES = 15, GH100_BLOCKS = 8 };

/* The eight blocks (GPCs) of co-schedulable SMs: four of 8 TPCs, four of 7. SMs 120..131
 * belong to none: they join 16-SM units only (128 SMs), never 8-SM granules (120). */
static const unsigned gh100_block_first[GH100_BLOCKS] = {0, 16, 32, 48, 64, 78, 92, 106};
static const unsigned gh100_block_tpcs[GH100_BLOCKS] = {8, 8, 8, 8, 7, 7, 7, 7};

/* Granule k: the k-th TPC of each of four blocks (the low four for k < 8). */
static void gh100_granule(unsigned k, unsigned out[8])
{
    unsigned first_block = k < 8 ? 0 : 4, tpc = k < 8 ? k : k - 8;
    for (unsigned i = 0; i < 8; i++)
        out[i] = gh100_block_first[first_block + i / 2] + 2 * tpc + i % 2;
}

/* 16-SM unit u: the low half pairs granule k with k+2 (u = 0..3); the high half, whose blocks
 * are 14 SMs wide, is dealt by SM id (SMs 64..127 whose id % 4 is 0-1 or 2-3, in two halves),
 * so that two groups of 64 get SMs 0 1 4 5 ... 124 125 and 2 3 6 7 ... 126 127 as on the
 * H200 (testdata/h200-context-identity.txt). */
static void gh100_unit16(unsigned u, unsigned out[16])
{
    if (u < 4) {
        unsigned a = 4 * (u / 2) + u % 2;
        gh100_granule(a, out);
        gh100_granule(a + 2, out + 8);
        return;
    }
    unsigned first = u < 6 ? 64 : 96, phase = 2 * (u % 2), n = 0;
    for (unsigned id = first; id < first + 32; id++)
        if (id % 4 / 2 * 2 == phase)
            out[n++] = id;
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

/* After the whole granules: more 8-SM units from any four TPCs of four different blocks, as
 * many as the leftover TPCs allow (the fullest blocks first). A context holding SMs 0 1 4 5
 * ... 124 125 holds four whole granules and, from its 30 TPCs in the high blocks, three more:
 * the H200 split it into 7 granules and 8 SMs left. */
static unsigned gh100_more_granules(const sim_smset *set, unsigned *order, unsigned len)
{
    sim_smset free_sms = *set, used = sim_set_of(order, len);
    sim_set_minus(&free_sms, &used);
    unsigned next[GH100_BLOCKS] = {0}, left[GH100_BLOCKS] = {0};
    for (unsigned b = 0; b < GH100_BLOCKS; b++)
        for (unsigned t = 0; t < gh100_block_tpcs[b]; t++) {
            unsigned id = gh100_block_first[b] + 2 * t;
            left[b] += sim_set_has(&free_sms, id) && sim_set_has(&free_sms, id + 1);
        }
    for (;;) {
        bool chosen[GH100_BLOCKS] = {false};
        for (unsigned n = 0; n < 4; n++) {
            int best = -1;
            for (unsigned b = 0; b < GH100_BLOCKS; b++)
                if (!chosen[b] && left[b] && (best < 0 || left[b] > left[best]))
                    best = (int)b;
            if (best < 0)
                return len;
            chosen[best] = true;
        }
        for (unsigned b = 0, id; b < GH100_BLOCKS; b++) {
            if (!chosen[b])
                continue;
            do
                id = gh100_block_first[b] + 2 * next[b]++;
            while (!(sim_set_has(&free_sms, id) && sim_set_has(&free_sms, id + 1)));
            order[len++] = id;
            order[len++] = id + 1;
            left[b]--;
        }
    }
}

unsigned sim_layout_units(const sim_model *m, const sim_smset *set, unsigned size, unsigned *order)
{
    unsigned len = 0, unit[16];
    if (m->layout == SIM_LAYOUT_GH100 && size % 16 == 0) {
        for (unsigned u = 0; u < 8; u++) {
            gh100_unit16(u, unit);
            len = take_unit(set, unit, 16, order, len);
        }
    } else if (m->layout == SIM_LAYOUT_GH100 && size % 8 == 0) {
        for (unsigned k = 0; k < GH100_GRANULES; k++) {
            gh100_granule(k, unit);
            len = take_unit(set, unit, 8, order, len);
        }
        len = gh100_more_granules(set, order, len);
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

gcu_result sim_cuDeviceGetCount(int *count)
{
    SIM_BEGIN_ARGS(cuDeviceGetCount, !count);
    *count = sim.ndev;
    SIM_END();
}

gcu_result sim_cuDeviceGet(gcu_device *device, int ordinal)
{
    SIM_BEGIN_DEVICE(cuDeviceGet, !device, ordinal);
    *device = ordinal;
    SIM_END();
}

gcu_result sim_cuDeviceGetName(char *name, int len, gcu_device dev)
{
    SIM_BEGIN_DEVICE(cuDeviceGetName, !name || len <= 0, dev);
    snprintf(name, (size_t)len, "%s", sim.dev[dev]->name);
    SIM_END();
}

gcu_result sim_cuDeviceGetAttribute(int *value, int attrib, gcu_device dev)
{
    SIM_BEGIN_DEVICE(cuDeviceGetAttribute, !value, dev);
    const sim_model *m = sim.dev[dev];
    /* The attributes modelled, each with the driver version that has it. */
    const struct {
        int attrib, since, value;
    } attribs[] = {
        {GCU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0, (int)m->sms},
        {GCU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 0, m->cc_major},
        {GCU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 0, m->cc_minor},
        {GCU_DEVICE_ATTRIBUTE_LOCALITY_DOMAIN_COUNT, 13040, (int)m->locality_domains},
    };
    rc = GCU_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < sizeof attribs / sizeof attribs[0]; i++)
        if (attribs[i].attrib == attrib && sim_version_at_least(attribs[i].since)) {
            *value = attribs[i].value;
            rc = GCU_SUCCESS;
        }
    SIM_END();
}

/* The same UUID for a slot and model in every process and run, as a real GPU's (claims
 * registries are keyed by it): FNV-1a of "<model>/<slot>", stretched to 16 bytes. */
gcu_result sim_cuDeviceGetUuid(gcu_uuid *uuid, gcu_device dev)
{
    SIM_BEGIN_DEVICE(cuDeviceGetUuid, !uuid, dev);
    char seed[64];
    int n = snprintf(seed, sizeof seed, "%s/%d", sim.dev[dev]->key, dev);
    uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned i = 0; i < sizeof uuid->bytes; i++) {
        for (int k = 0; k < n; k++)
            h = (h ^ (unsigned char)seed[k]) * 0x100000001b3ull;
        h = (h ^ i) * 0x100000001b3ull;
        uuid->bytes[i] = (char)(h >> 56);
    }
    SIM_END();
}

/* Slot d on bus 0x18 + 0x10 * d, as an 8-GPU HGX board numbers them ("0000:18:00.0"). */
gcu_result sim_cuDeviceGetPCIBusId(char *bus_id, int len, gcu_device dev)
{
    SIM_BEGIN_DEVICE(cuDeviceGetPCIBusId, !bus_id || len <= 0, dev);
    snprintf(bus_id, (size_t)len, "0000:%02x:00.0", (0x18 + 0x10 * (unsigned)dev) & 0xff);
    SIM_END();
}
