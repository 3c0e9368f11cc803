/* Sets of SM ids: every resource and context carries the exact SMs it holds. */
#include "sim_internal.h"

unsigned sim_set_count(const sim_smset *s)
{
    unsigned n = 0;
    for (size_t i = 0; i < sizeof s->w / sizeof s->w[0]; i++)
        n += (unsigned)__builtin_popcount(s->w[i]);
    return n;
}

unsigned sim_set_ids(const sim_smset *s, unsigned *ids)
{
    unsigned n = 0;
    for (unsigned id = 0; id < SIM_MAX_SMS; id++)
        if (sim_set_has(s, id))
            ids[n++] = id;
    return n;
}

void sim_set_union(sim_smset *s, const sim_smset *add)
{
    for (size_t i = 0; i < sizeof s->w / sizeof s->w[0]; i++)
        s->w[i] |= add->w[i];
}

void sim_set_minus(sim_smset *s, const sim_smset *take)
{
    for (size_t i = 0; i < sizeof s->w / sizeof s->w[0]; i++)
        s->w[i] &= ~take->w[i];
}

sim_smset sim_set_range(unsigned first, unsigned count)
{
    sim_smset s = {{0}};
    for (unsigned id = first; id < first + count && id < SIM_MAX_SMS; id++)
        sim_set_add(&s, id);
    return s;
}

sim_smset sim_set_of(const unsigned *ids, unsigned n)
{
    sim_smset s = {{0}};
    for (unsigned i = 0; i < n; i++)
        sim_set_add(&s, ids[i]);
    return s;
}
