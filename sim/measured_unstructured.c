/* Split-by-count of an unstructured SM resource (the resource of a green context made from a
 * remainder) without IGNORE_SM_COSCHEDULING. The H200 gives groups smaller than asked here,
 * by rules read off the measurements (testdata/h200-split-sweep.txt, the rem_after_* rows):
 * with s = minCount rounded up to even, groups = min(11, floor(N/s)), and the size is s capped
 * by a per-group-count limit that depends on N and on the flags. The limits below reproduce
 * every measured row for N = 124, 100 and 68. */
#include "sim_internal.h"

#define SIM_UNSTRUCTURED_MAX_GROUPS 11u

typedef struct measured_caps {
    unsigned sms;
    unsigned flags;                                   /* 0 or MAX_POTENTIAL_CLUSTER_SIZE */
    unsigned char cap[SIM_UNSTRUCTURED_MAX_GROUPS + 1]; /* by group count; 0: no cap seen */
} measured_caps;

static const measured_caps measured[] = {
    {124, 0, {0, 0, 56, 34, 18, 18, 16, 0, 2, 2, 2, 2}},
    {124, 2, {0, 0, 54, 36, 18, 18, 18, 0, 2, 2, 2, 2}},
    {100, 0, {0, 0, 46, 26, 18, 10, 10, 10, 2, 2, 2, 2}},
    {100, 2, {0, 0, 46, 28, 20, 10, 10, 10, 2, 2, 2, 2}},
    {68, 0, {0, 0, 30, 20, 10, 10, 0, 0, 2, 2, 2, 2}},
    {68, 2, {0, 0, 30, 20, 10, 10, 0, 0, 2, 2, 2, 2}},
};

void sim_unstructured_split(const sim_model *m, unsigned sms, unsigned min_count, unsigned flags,
                            unsigned *groups, unsigned *size)
{
    unsigned s = min_count > 2 ? (min_count + 1) / 2 * 2 : 2;
    unsigned g = sms / s;
    if (g > SIM_UNSTRUCTURED_MAX_GROUPS)
        g = SIM_UNSTRUCTURED_MAX_GROUPS;
    *groups = g;
    *size = s;
    if (g < 2)
        return;
    for (size_t i = 0; i < sizeof measured / sizeof measured[0]; i++) {
        if (m->layout == SIM_LAYOUT_GH100 && measured[i].sms == sms && measured[i].flags == flags) {
            if (measured[i].cap[g] && measured[i].cap[g] < s)
                *size = measured[i].cap[g];
            return;
        }
    }
    /* Unmeasured sizes (an approximation): a group keeps one TPC pair plus whole 8-SM
     * granules, the largest 8k+2 not above s, so most counts give less than asked as on the
     * H200. */
    *size = s < 10 ? 2 : (s - 2) / 8 * 8 + 2;
}
