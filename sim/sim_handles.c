/* Object pools behind the opaque CUDA handles (sim_internal.h says what a handle packs). */
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

_Static_assert(sizeof(uintptr_t) >= 8, "handles pack 64 bits");

#define SIM_INDEX_BITS 24u

uintptr_t sim_handle_make(uint8_t tag, uint32_t index, uint16_t gen)
{
    return ((uintptr_t)(sim.epoch & 0xffffu) << 48) | ((uintptr_t)gen << 32) |
           ((uintptr_t)tag << SIM_INDEX_BITS) | (uintptr_t)(index + 1u);
}

static uint8_t handle_tag(uintptr_t h) { return (uint8_t)(h >> SIM_INDEX_BITS); }

uintptr_t sim_handle_retag(uintptr_t h, uint8_t tag)
{
    return (h & ~((uintptr_t)0xff << SIM_INDEX_BITS)) | ((uintptr_t)tag << SIM_INDEX_BITS);
}

static sim_slot *slot_at(const sim_pool *p, uint32_t index)
{
    return (sim_slot *)(void *)(p->mem + (size_t)index * p->item_size);
}

void *sim_pool_alloc(sim_pool *p, uintptr_t *handle)
{
    uint32_t index = 0;
    while (index < p->count && slot_at(p, index)->live)
        index++;
    if (index == p->count) {
        if (p->count == (1u << SIM_INDEX_BITS) - 1u)
            return NULL;
        if (p->count == p->cap) {
            uint32_t cap = p->cap ? p->cap * 2u : 16u;
            unsigned char *mem = realloc(p->mem, (size_t)cap * p->item_size);
            if (!mem)
                return NULL;
            p->mem = mem;
            p->cap = cap;
        }
        memset(slot_at(p, index), 0, p->item_size);
        p->count++;
    }
    sim_slot *s = slot_at(p, index);
    uint16_t gen = (uint16_t)(s->gen + 1u);
    memset(s, 0, p->item_size);
    s->gen = gen;
    s->live = true;
    *handle = sim_handle_make(p->tag, index, gen);
    return s;
}

void *sim_pool_at(const sim_pool *p, uint32_t index)
{
    if (index >= p->count || !slot_at(p, index)->live)
        return NULL;
    return slot_at(p, index);
}

void *sim_pool_get(const sim_pool *p, uintptr_t h)
{
    uint32_t index = (uint32_t)(h & ((1u << SIM_INDEX_BITS) - 1u));
    if (handle_tag(h) != p->tag || index == 0 || (h >> 48) != (sim.epoch & 0xffffu))
        return NULL;
    sim_slot *s = sim_pool_at(p, index - 1u);
    return s && s->gen == (uint16_t)(h >> 32) ? s : NULL;
}

void *sim_pool_get_as(const sim_pool *p, uintptr_t h, uint8_t tag)
{
    return handle_tag(h) == tag ? sim_pool_get(p, sim_handle_retag(h, p->tag)) : NULL;
}

int sim_pool_live(const sim_pool *p, bool (*counts)(const void *item))
{
    int n = 0;
    for (uint32_t i = 0; i < p->count; i++) {
        const void *item = sim_pool_at(p, i);
        n += item && (!counts || counts(item));
    }
    return n;
}

uintptr_t sim_pool_handle(const sim_pool *p, const void *item)
{
    uint32_t index = (uint32_t)(((const unsigned char *)item - p->mem) / p->item_size);
    return sim_handle_make(p->tag, index, ((const sim_slot *)item)->gen);
}

void sim_pool_free(void *item)
{
    ((sim_slot *)item)->live = false;
}

void sim_pool_clear(sim_pool *p)
{
    free(p->mem);
    p->mem = NULL;
    p->count = p->cap = 0;
}
