/* libFuzzer target for the split planner: any request either fails with a message or gives
 * groups of exactly the asked sizes from disjoint granules of one split. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plan_model.h"

static unsigned take(const uint8_t **data, size_t *size)
{
    if (*size == 0)
        return 0;
    unsigned v = **data;
    (*data)++;
    (*size)--;
    return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const plan_model models[] = {{MODEL_H200_DEVICE, 132, 8, 8, 0},
                                        {MODEL_UNIFORM, 64, 8, 8, 0},
                                        {MODEL_UNIFORM, 108, 4, 2, 0},
                                        {MODEL_UNIFORM, 58, 4, 2, 0}};
    plan_model m = models[take(&data, &size) % 4];
    gctx__plan_input in = plan_model_input(&m);
    unsigned shape = take(&data, &size);
    in.structured = !(shape & 1);
    in.fine_flag = !(shape & 2);
    gctx_rounding mode = (gctx_rounding)((shape >> 2) % 5); /* 4: an invalid mode */
    unsigned n = take(&data, &size) % 9;
    gctx_group groups[8];
    for (unsigned i = 0; i < n; i++) {
        groups[i].num_sms = take(&data, &size);
        groups[i].coscheduled_sm_count = take(&data, &size) % 40;
        groups[i].preferred_coscheduled_sm_count = take(&data, &size) % 70;
        groups[i].backfill = take(&data, &size) & 1;
    }
    gctx__plan p;
    if (gctx__plan_make(&in, groups, n, mode, &p) != GCTX_SUCCESS) {
        if (!gctx_last_error()[0])
            abort();
        return 0;
    }
    gctx__granule_split split;
    plan_model_oracle(&m, p.granule, p.split_groups, p.flags, &split);
    unsigned used = 0, total = 0;
    for (unsigned i = 0; i < n; i++) {
        unsigned sms = p.assign[i].granules * p.granule +
                       (p.assign[i].takes_remainder ? split.remainder : 0);
        if (p.assign[i].first_granule != used || sms != p.groups[i].sm_count || sms == 0 ||
            (groups[i].num_sms && !p.groups[i].rounded && sms != groups[i].num_sms))
            abort();
        used += p.assign[i].granules;
        total += sms;
    }
    if (used > split.groups || total + p.remainder_sms != m.sm_count)
        abort();
    gctx__plan_free(&p);
    return 0;
}
